"""Result files, schema 2: what the typed builders write validates against the shipped JSON
Schemas, is standard JSON, sweeps are JSON lines a cell at a time, a file cut anywhere opens,
version 1 files are migrated and newer versions refused in one line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from kernels.compute.sweep import run_sweep
from kernels.errors import GraphFormatError
from kernels.results import append_record, load_sweep, read_records, save_sweep
from kernels.results.schema import schema_text
from tests.crafted_results import valid_record, valid_sweep
from tests.plugins.synthetic_family import synthetic_time
from tests.sweep_helpers import FakeBackend, load_synthetic, tiny_graph, unload_synthetic

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def synthetic():
    yield load_synthetic()
    unload_synthetic()


def _validator(part: str | None = None, name: str = "sweep"):
    """A validator built here from the shipped schema texts (not the reader's own code path)."""
    schemas = {n: json.loads(schema_text(n)) for n in ("record", "sweep")}
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
    schema = schemas[name] if part is None else {"$ref": f"{schemas['sweep']['$id']}#/$defs/{part}"}
    return Draft202012Validator(schema, registry=registry)


def _strict_json(text: str):
    def refuse(literal):
        raise AssertionError(f"non-standard JSON literal {literal}")
    return json.loads(text, parse_constant=refuse)


def _sweep(tmp_path, grid=None, **kw) -> tuple[dict, Path]:
    out = tmp_path / "s.json"
    sweep = run_sweep(tiny_graph(), "synthetic", "cpu-serial", grid or {"a": [5, 6, 9], "b": [0, 3, 9]},
                      target="cpu", repeat=1, warmup=0, backend=FakeBackend(synthetic_time), out=out, **kw)
    return sweep, out


def test_every_line_of_a_sweep_file_validates_against_the_shipped_schema(synthetic, tmp_path):
    sweep, out = _sweep(tmp_path)
    lines = [_strict_json(line) for line in out.read_text().splitlines()]
    assert lines[0]["kind"] == "sweep" and lines[0]["schema"] == 2 and lines[-1]["kind"] == "end"
    _validator("header").validate(lines[0])
    for line in lines[1:-1]:
        _validator("cell").validate(line)
    _validator("end").validate(lines[-1])
    assert len(lines) == 2 + 9
    _validator().validate(json.loads(json.dumps(load_sweep(out))))
    statuses = {(c["params"]["a"], c["params"]["b"]): c["status"] for c in sweep["cells"]}
    assert statuses[(9, 9)] == "invalid" and statuses[(9, 0)] == "wrong" and statuses[(6, 3)] == "ok"


def test_non_finite_numbers_are_written_as_null(synthetic, tmp_path):
    _, out = _sweep(tmp_path)
    text = out.read_text()
    assert "NaN" not in text and "Infinity" not in text
    wrong = next(c for c in load_sweep(out)["cells"] if c["status"] == "wrong")
    assert wrong["record"]["result"]["not finite"] is None
    assert wrong["record"]["verification"]["worst"] == [[0, None]]


def test_run_records_are_standard_json_and_validate(tmp_path):
    from kernels.graph.io import read_graph
    from kernels.run.runner import run_variant

    rec = run_variant(read_graph(str(ROOT / "tests" / "data" / "karate.mtx")), "spmv", "cpu-serial", repeat=1).record
    rec["result"]["odd"] = float("inf")
    path = tmp_path / "r.jsonl"
    append_record(path, rec)
    line = _strict_json(path.read_text())
    _validator(name="record").validate(line)
    assert line["schema"] == 2 and line["result"]["odd"] is None
    assert read_records(path)[0]["params"] == rec["params"]


def test_the_sweep_seen_at_any_moment_opens(synthetic, tmp_path):
    """Cut the file at every byte after its header: it opens with the cells whose lines are whole."""
    _, out = _sweep(tmp_path)
    data = out.read_bytes()
    header_end = data.index(b"\n") + 1
    cut = tmp_path / "cut.json"
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    for size in [*range(header_end, len(data) + 1, 7), len(data) - 2, len(data) - 1, len(data)]:
        cut.write_bytes(data[:size])
        sweep = load_sweep(cut)
        # a line is whole once its closing brace is there (the newline may be missing)
        whole = sum(1 for e in ends if e - 1 <= size) - 1          # minus the header
        cells_whole = min(whole, 9)
        assert len(sweep["cells"]) == cells_whole, size
        torn = size not in ends and size + 1 not in ends
        assert any("cut short" in n for n in sweep.get("notices", [])) == torn
        # the end line too is whole without its newline (a cut there hits some files' lengths only:
        # cells' elapsed_s make the length vary from run to run)
        assert sweep["interrupted"] == (size < len(data) - 1)


def test_a_damaged_line_in_the_middle_is_refused_naming_it(synthetic, tmp_path):
    _, out = _sweep(tmp_path)
    lines = out.read_text().splitlines(keepends=True)
    lines[3] = lines[3][:20] + "\n"
    out.write_text("".join(lines))
    with pytest.raises(GraphFormatError, match=r"line 4") as info:
        load_sweep(out)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("value", ['"1.5"', "-1", "1e999", "null"])
def test_a_crafted_elapsed_time_is_refused_in_one_line(synthetic, tmp_path, value):
    """Each cell says its ``elapsed_s``; a file whose value is not a non-negative number is refused."""
    _, out = _sweep(tmp_path)
    lines = out.read_text().splitlines(keepends=True)
    cell = json.loads(lines[2])
    assert isinstance(cell["elapsed_s"], float) and cell["elapsed_s"] >= 0
    lines[2] = lines[2].replace(f'"elapsed_s": {json.dumps(cell["elapsed_s"])}', f'"elapsed_s": {value}')
    assert f'"elapsed_s": {value}' in lines[2]
    out.write_text("".join(lines))
    with pytest.raises(GraphFormatError) as info:
        load_sweep(out)
    assert "\n" not in str(info.value)


def test_two_cells_with_the_same_parameters_are_refused(synthetic, tmp_path):
    _, out = _sweep(tmp_path)
    lines = out.read_text().splitlines(keepends=True)
    lines[2] = lines[1]                     # nine cells still, one of them twice
    out.write_text("".join(lines))
    with pytest.raises(GraphFormatError, match="same parameters"):
        load_sweep(out)


def test_a_newer_schema_is_refused_in_one_line(tmp_path):
    for name, doc in (("s.json", {**valid_sweep(), "schema": 3}), ("r.jsonl", {**valid_record(), "schema": 7})):
        path = tmp_path / name
        path.write_text(json.dumps(doc) + "\n")
        with pytest.raises(GraphFormatError, match="newer than this gpu-graph-explorer reads") as info:
            load_sweep(path) if name.endswith(".json") else read_records(path)
        assert "\n" not in str(info.value)


def test_version_1_files_are_migrated_with_non_finite_free_form_values_as_null(tmp_path):
    rec = valid_record()
    rec["result"] = {"norm": float("nan")}
    sweep = valid_sweep()
    sweep["cells"][0]["record"] = rec
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(sweep, allow_nan=True, indent=1))
    loaded = load_sweep(path)
    assert loaded["schema"] == 2 and loaded["strategy"] == {"name": "grid"}
    assert loaded["cells"][0]["record"]["schema"] == 2 and loaded["cells"][0]["record"]["result"]["norm"] is None
    rpath = tmp_path / "v1.jsonl"
    rpath.write_text(json.dumps(rec, allow_nan=True) + "\n")
    assert read_records(rpath)[0]["result"]["norm"] is None
    save_sweep(loaded, tmp_path / "v2.json")            # and written again as schema 2 lines
    assert load_sweep(tmp_path / "v2.json")["best"] == loaded["best"]


def test_the_version_1_files_in_benchmarks_results_still_open():
    seen = 0
    for path in sorted((ROOT / "benchmarks" / "results").glob("*.json*")):
        head = path.read_text()[:200]
        if path.suffix == ".json" and '"kind": "sweep"' in head:
            sweep = load_sweep(path)
            assert sweep["schema"] == 2 and sweep["cells"], path
            seen += 1
        elif path.suffix == ".jsonl" and '"schema": 1' in head:
            assert read_records(path), path
            seen += 1
    assert seen >= 6


def test_a_whole_sweep_saved_at_once_is_the_same_format(synthetic, tmp_path):
    sweep, _ = _sweep(tmp_path)
    save_sweep(sweep, tmp_path / "again.json")
    again = load_sweep(tmp_path / "again.json")
    assert [c["params"] for c in again["cells"]] == [c["params"] for c in sweep["cells"]]
    assert again["best"] == sweep["best"] and not again["interrupted"]
    assert math.isclose(again["best"]["median_s"], synthetic_time({"a": 6, "b": 3}))
