"""Crafted and damaged result files cost the user nothing: ``graph-kernels heatmap`` and
``read_records`` refuse each in one line naming the file; files the project writes pass; CSV
exports never hand a spreadsheet a formula."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from kernels.cli import main as cli_main
from kernels.errors import GraphFormatError
from kernels.results import load_sweep, read_records, records_to_csv, save_sweep, sweep_to_csv
from kernels.results import schema as results_schema
from kernels.results.heatmap import heatmap_table, write_csv
from kernels.results.heatmap_figure import write_svg
from tests.crafted_results import crafted_records, crafted_sweeps, valid_record, valid_sweep

ROOT = Path(__file__).resolve().parent.parent
SWEEPS = crafted_sweeps()
RECORDS = crafted_records()


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def assert_one_line_naming(message: str, path: Path) -> None:
    assert message.count("\n") == 0 and message.strip(), repr(message)
    assert path.name in message and "Traceback" not in message


def test_the_crafted_corpus_is_large_enough_to_mean_something():
    assert len(SWEEPS) >= 20 and len(RECORDS) >= 10


@pytest.mark.parametrize(("name", "data"), SWEEPS, ids=[name for name, _ in SWEEPS])
def test_heatmap_refuses_a_crafted_sweep_in_one_line(tmp_path, capsys, name, data):
    path = write(tmp_path, f"{name}.json", data)
    assert cli_main(["heatmap", str(path), "--csv", str(tmp_path / "t.csv"), "--out", str(tmp_path / "t.svg")]) == 1
    out, err = capsys.readouterr()
    assert err.startswith("graph-kernels: error: ")
    assert_one_line_naming(err.rstrip("\n"), path)
    assert out == "" and not (tmp_path / "t.csv").exists() and not (tmp_path / "t.svg").exists()


@pytest.mark.parametrize(("name", "data"), RECORDS, ids=[name for name, _ in RECORDS])
def test_a_crafted_record_file_is_refused_in_one_line(tmp_path, name, data):
    path = write(tmp_path, f"{name}.jsonl", data)
    with pytest.raises(GraphFormatError) as caught:
        read_records(path)
    assert_one_line_naming(str(caught.value), path)


def test_a_huge_declared_grid_is_refused_before_anything_is_allocated(tmp_path):
    # 34 KB declaring 3000 x 3000 cells: once 2.8 GB and 85 s in 'heatmap'
    path = write(tmp_path, "huge.json", json.dumps({**valid_sweep(), "cells": [],
                                                    "grid": {"a": list(range(3000)), "b": list(range(3000))}}).encode())
    tracemalloc.start()
    try:
        with pytest.raises(GraphFormatError, match=r"9,000,000 combinations \(3,000 × 3,000\), at most 100,000"):
            load_sweep(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20


def test_a_file_over_the_size_bound_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(results_schema, "MAX_RESULT_FILE_BYTES", 1000)
    sweep = write(tmp_path, "big.json", b" " * 2000)
    records = write(tmp_path, "big.jsonl", b" " * 2000)
    with pytest.raises(GraphFormatError, match="larger than a sweep file may be"):
        load_sweep(sweep)
    with pytest.raises(GraphFormatError, match="larger than a run record file may be"):
        read_records(records)


def test_a_records_file_with_too_many_lines_is_refused(tmp_path, monkeypatch):
    import kernels.results as results

    monkeypatch.setattr(results, "MAX_RECORDS", 3)
    path = write(tmp_path, "many.jsonl", (json.dumps(valid_record()) + "\n").encode() * 4)
    with pytest.raises(GraphFormatError, match="many.jsonl, line 4: more than 3 run records"):
        read_records(path)


def test_heatmap_refuses_a_crafted_sweep_from_the_installed_command(tmp_path):
    path = write(tmp_path, "huge.json", dict(SWEEPS)["huge-declared-grid"])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-m", "kernels", "heatmap", str(path)], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 1
    assert_one_line_naming(out.stderr.rstrip("\n"), path)


def test_an_unwritable_output_is_one_line_too(tmp_path, capsys):
    path = tmp_path / "ok.json"
    save_sweep(valid_sweep(), path)
    assert cli_main(["heatmap", str(path), "--csv", str(tmp_path / "no" / "such" / "t.csv")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write" in err and "t.csv" in err


# ---- what the project writes passes ------------------------------------------------------------------------

def test_the_schemas_are_valid_json_schemas():
    from jsonschema import Draft202012Validator

    for name in ("record", "sweep"):
        Draft202012Validator.check_schema(json.loads(results_schema.schema_text(name)))


def test_the_crafted_corpus_base_files_are_valid(tmp_path):
    save_sweep(valid_sweep(), tmp_path / "s.json")
    assert load_sweep(tmp_path / "s.json")["cells"][0]["params"] == {"wg": 32, "rows": 1}
    (tmp_path / "r.jsonl").write_text(json.dumps(valid_record()) + "\n")
    assert read_records(tmp_path / "r.jsonl")[0]["variant"] == "cpu-serial"


def test_records_with_the_launch_mode_and_auto_choices_open(tmp_path):
    """The crafted launch / resolved_params lines above are refused for their values, not for
    the fields: well-formed ones open."""
    rec = valid_record()
    rec["params"] = {"dtype": "fp64", "rows": "auto"}
    rec["resolved_params"] = {"dtype": "fp64", "rows": 8}
    for launch in ("direct", "graph", "queued"):
        rec["timing"]["launch"] = launch
        (tmp_path / "r.jsonl").write_text(json.dumps(rec) + "\n")
        got = read_records(tmp_path / "r.jsonl")[0]
        assert got["timing"]["launch"] == launch and got["resolved_params"]["rows"] == 8


def test_result_files_the_project_wrote_on_a_gpu_machine_still_open():
    folder = ROOT / "benchmarks" / "results"
    sweeps = sorted(folder.glob("*sweep*.json"))
    runs = sorted(folder.glob("*-runs.jsonl"))
    assert sweeps and runs
    for path in sweeps:
        assert load_sweep(path)["cells"]
    for path in runs:
        assert read_records(path)


def test_a_sweep_written_by_run_sweep_validates(tmp_path):
    from kernels.compute.sweep import run_sweep
    from kernels.graph.csr import CSRGraph

    graph = CSRGraph.from_edges(3, [0, 1, 2], [1, 2, 0], weights=[1.0, -2.0, 3.0], directed=True, name="cycle")
    sweep = run_sweep(graph, "spmv", "gpu-tunable", {"wg": [1, 2], "rows": [1, 4]}, target="sim",
                      repeat=1, warmup=0, time_limit=120)
    save_sweep(sweep, tmp_path / "s.json")
    back = load_sweep(tmp_path / "s.json")
    assert [c["status"] for c in back["cells"]] == ["ok", "invalid", "ok", "invalid"]
    assert back["cells"][0]["record"]["verified"]


def test_a_zero_time_cell_is_kept_but_not_drawn(tmp_path):
    sweep = valid_sweep()
    sweep["cells"][0]["median_s"] = 0.0
    save_sweep(sweep, tmp_path / "s.json")
    table = heatmap_table(load_sweep(tmp_path / "s.json"))
    write_svg(table, tmp_path / "t.svg")
    assert table.status[0][0] == "ok" and table.best == (1, 0)


# ---- CSV for spreadsheets ------------------------------------------------------------------------------------

FORMULAS = ("=HYPERLINK(\"http://x\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\t=1", "\r=1")


def rows_of(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def test_csv_exports_neutralise_formula_cells_and_keep_negative_numbers(tmp_path):
    sweep = valid_sweep()
    sweep["grid"] = {"=cmd()": list(FORMULAS), "shift": [-3, 2]}
    sweep["cells"] = [{"params": {"=cmd()": f, "shift": -3}, "status": "ok", "median_s": 1e-3 * (i + 1),
                       "reason": "=BAD()"} for i, f in enumerate(FORMULAS)]
    sweep["best"] = None
    save_sweep(sweep, tmp_path / "s.json")
    sweep = load_sweep(tmp_path / "s.json")

    sweep_to_csv(sweep, tmp_path / "cells.csv")
    write_csv(heatmap_table(sweep), tmp_path / "table.csv")
    rec = valid_record()
    rec["params"] = {"wg": -1, "name": "=1+1"}
    rec["input"]["name"] = "@evil"
    records_to_csv([rec], tmp_path / "runs.csv")

    for name in ("cells.csv", "table.csv", "runs.csv"):
        for row in rows_of(tmp_path / name):
            for cell in row:
                assert not cell.startswith(("=", "+", "@", "\t", "\r")), (name, cell)
                assert not cell.startswith("-") or cell == "-" or float(cell) < 0, (name, cell)
    cells = rows_of(tmp_path / "cells.csv")
    assert cells[0][0] == "'=cmd()" and cells[1][1] == "-3"            # a negative number stays a number
    assert {row[0] for row in cells[1:]} == {"'" + f for f in FORMULAS}
    table = rows_of(tmp_path / "table.csv")
    assert table[0][0].startswith("'=cmd()") and table[0][1:] == ["-3", "2"]
    runs = rows_of(tmp_path / "runs.csv")
    assert runs[1][runs[0].index("input")] == "'@evil"


def test_json_integers_are_bounded_by_their_length_and_located():
    from kernels import json_input

    assert json_input.loads('{"a": [1, -' + "9" * 100 + "]}")["a"][1] == -int("9" * 100)
    with pytest.raises(json_input.IntegerTooLong) as info:
        json_input.loads('{"a": 1,\n "b": [2, ' + "7" * 101 + "]}")
    assert (info.value.digits, info.value.line, info.value.column) == (101, 2, 11)   # 1-based, as json says
    assert isinstance(info.value, ValueError)   # callers that refuse any malformed JSON still refuse it
    with pytest.raises(json_input.IntegerTooLong, match=r"an integer of 5,000 digits at line 1, column 2; at most 100"):
        json_input.loads(b"[" + b"7" * 5000 + b"]")


def test_import_refuses_a_kernel_tuner_cache_with_a_giant_integer_in_one_line(tmp_path, capsys):
    from tests.crafted_results import _kernel_tuner_cache

    path = write(tmp_path, "cache.json", _kernel_tuner_cache(giant=True))
    assert cli_main(["import", str(path), "--out", str(tmp_path / "s.json")]) == 1
    err = capsys.readouterr().err
    assert_one_line_naming(err.rstrip("\n"), path)
    assert "an integer of 5,000 digits" in err and not (tmp_path / "s.json").exists()
