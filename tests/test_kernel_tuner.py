"""Kernel Tuner interchange: our sweeps exported as cache files that Kernel Tuner's own reader
and simulation mode accept and that follow its published cache schema; Kernel Tuner's cache
files (made by Kernel Tuner itself, tuning a C function with g++, and left open by a kill)
imported as sweeps, drawn by the heatmap over any two tune parameters and opened by the GUI."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

kernel_tuner = pytest.importorskip("kernel_tuner")
from kernel_tuner import util as kt_util  # noqa: E402

from kernels.cli import main as cli_main  # noqa: E402
from kernels.compute.sweep import run_sweep  # noqa: E402
from kernels.results import kerneltuner as kt  # noqa: E402
from kernels.results import load_sweep  # noqa: E402
from kernels.results.heatmap import heatmap_table, to_text  # noqa: E402
from kernels.results.records import Strategy  # noqa: E402
from tests.plugins.synthetic_family import synthetic_time  # noqa: E402
from tests.sweep_helpers import FakeBackend, load_synthetic, tiny_graph, unload_synthetic  # noqa: E402

# The requirements of Kernel Tuner's published cache schema (kernel_tuner/schema/cache/1.1.0),
# written out here: the release on PyPI does not ship the schema file.
_ENTRY_NUMBERS = ("compile_time", "verification_time", "benchmark_time", "strategy_time", "framework_time")
PUBLISHED_CACHE_SCHEMA = {
    "type": "object",
    "required": ["schema_version", "device_name", "kernel_name", "problem_size", "tune_params_keys", "tune_params",
                 "objective", "cache"],
    "properties": {
        "schema_version": {"const": "1.1.0"},
        "device_name": {"type": "string"}, "kernel_name": {"type": "string"},
        "problem_size": {"oneOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "integer"},
                                   {"type": "string"}]},
        "tune_params_keys": {"type": "array", "items": {"type": "string"}},
        "tune_params": {"type": "object", "additionalProperties": {"type": "array"}},
        "objective": {"type": "string"},
        "cache": {"type": "object", "additionalProperties": {
            "type": "object",
            "required": ["time", *_ENTRY_NUMBERS, "timestamp"],
            "properties": {
                "time": {"anyOf": [{"type": "string", "enum": ["InvalidConfig", "CompilationFailedConfig",
                                                               "RuntimeFailedConfig"]}, {"type": "number"}]},
                "times": {"type": "array", "items": {"type": "number"}},
                **{k: {"type": "number"} for k in _ENTRY_NUMBERS},
                "timestamp": {"type": "string", "format": "date-time"},
            }}},
    },
}


def cache_schema() -> dict:
    """The schema shipped with the installed Kernel Tuner if it has one, else the published one."""
    shipped = sorted(Path(kernel_tuner.__file__).parent.glob("schema/cache/*/schema.json"))
    return json.loads(shipped[-1].read_text()) if shipped else PUBLISHED_CACHE_SCHEMA


@pytest.fixture(autouse=True)
def synthetic():
    yield load_synthetic()
    unload_synthetic()


@pytest.fixture
def our_sweep(tmp_path) -> Path:
    out = tmp_path / "sweep.json"
    run_sweep(tiny_graph(), "synthetic", "cpu-serial", {"a": [5, 6, 7, 9], "b": [0, 3, 9]}, target="cpu", repeat=1,
              warmup=0, backend=FakeBackend(synthetic_time), out=out)
    return out


def export(sweep_path: Path, tmp_path: Path) -> Path:
    cache = tmp_path / "cache.json"
    assert cli_main(["export", str(sweep_path), "--format", "kernel-tuner", "--out", str(cache)]) == 0
    return cache


def test_our_error_markers_are_kernel_tuners():
    assert str(kt_util.InvalidConfig()) == kt.INVALID
    assert str(kt_util.RuntimeFailedConfig()) == kt.RUNTIME_FAILED
    assert str(kt_util.CompilationFailedConfig()) == kt.COMPILATION_FAILED


def test_an_export_validates_against_the_cache_schema_and_kernel_tuner_reads_it(our_sweep, tmp_path):
    from jsonschema import Draft202012Validator

    cache = export(our_sweep, tmp_path)
    doc = json.loads(cache.read_text(), parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))
    Draft202012Validator(cache_schema()).validate(doc)
    read = kt_util.read_cache(str(cache), open_cache=False)
    sweep = load_sweep(our_sweep)
    for cell in sweep["cells"]:
        entry = read["cache"][f"{cell['params']['a']},{cell['params']['b']}"]
        if cell["status"] == "ok":
            assert "__error__" not in entry and math.isclose(entry["time"], cell["median_s"] * 1e3)
        elif cell["status"] == "invalid":
            assert isinstance(entry["__error__"], kt_util.InvalidConfig)
        else:
            assert cell["status"] == "wrong" and isinstance(entry["__error__"], kt_util.RuntimeFailedConfig)


def test_kernel_tuners_simulation_mode_replays_an_export(our_sweep, tmp_path):
    cache = export(our_sweep, tmp_path)
    doc = json.loads(cache.read_text())
    results, _ = kernel_tuner.tune_kernel(doc["kernel_name"], "__global__ void k() {}", doc["problem_size"], [],
                                          doc["tune_params"], simulation_mode=True, cache=str(cache), lang="CUDA",
                                          quiet=True, block_size_names=["a"])
    timed = [r for r in results if isinstance(r.get("time"), float)]
    best = min(timed, key=lambda r: r["time"])
    assert (best["a"], best["b"]) == (6, 3)
    assert len(results) == 12


def test_a_sweep_round_trips_through_a_kernel_tuner_cache(our_sweep, tmp_path):
    cache = export(our_sweep, tmp_path)
    back = tmp_path / "back.json"
    assert cli_main(["import", str(cache), "--out", str(back)]) == 0
    original, imported = load_sweep(our_sweep), load_sweep(back)
    assert (imported["family"], imported["variant"]) == ("synthetic", "cpu-serial")
    assert imported["grid"] == original["grid"] and imported["strategy"]["name"] == "imported"
    assert [(c["params"], c["status"]) for c in imported["cells"]] == [(c["params"], c["status"])
                                                                       for c in original["cells"]]
    for a, b in zip(imported["cells"], original["cells"], strict=True):
        assert (a.get("median_s") is None) == (b.get("median_s") is None or b["status"] != "ok")
    assert imported["best"]["params"] == original["best"]["params"] == {"a": 6, "b": 3}


def test_a_random_sample_exports_only_what_was_measured(tmp_path):
    out = tmp_path / "r.json"
    run_sweep(tiny_graph(), "synthetic", "cpu-serial", {"a": list(range(10)), "b": list(range(10))}, target="cpu",
              repeat=1, warmup=0, backend=FakeBackend(synthetic_time), out=out,
              strategy=Strategy("random", budget_cells=15, seed=2))
    doc = kt.to_kernel_tuner(load_sweep(out))
    assert len([e for e in doc["cache"].values() if e["time"] != kt.INVALID]) == 15


# ---- files made by Kernel Tuner ---------------------------------------------------------------

C_SOURCE = """
extern "C" float work(float *out, int n) {
    /* Kernel Tuner's C backend takes the returned float as the time: a known bowl, best at 2, 1, 8 */
    out[0] = (float)n;
    return 1.0f + (STEP - 2) * (STEP - 2) + (UNROLL - 1) * (UNROLL - 1) + (TILE - 8) * (TILE - 8) / 16.0f;
}
"""


@pytest.fixture(scope="module")
def made_by_kernel_tuner(tmp_path_factory) -> Path:
    if shutil.which("g++") is None:
        pytest.skip("Kernel Tuner's C backend needs g++")
    cache = tmp_path_factory.mktemp("kt") / "kt_cache.json"
    kernel_tuner.tune_kernel("work", C_SOURCE, 1, [np.zeros(1, np.float32), np.int32(1)],
                             {"STEP": [1, 2, 4], "UNROLL": [1, 2], "TILE": [4, 8]}, lang="C", compiler="g++",
                             cache=str(cache), restrictions=["STEP * UNROLL <= 4"], quiet=True)
    return cache


def test_a_cache_made_by_kernel_tuner_imports_and_draws_over_any_two_tune_params(made_by_kernel_tuner, tmp_path):
    sweep = load_sweep(made_by_kernel_tuner)            # Open Results and heatmap take it as it is
    assert list(sweep["grid"]) == ["STEP", "UNROLL", "TILE"]
    assert sweep["family"] == "kernel-tuner" and sweep["variant"] == "work"
    assert sweep["best"]["params"] == {"STEP": 2, "UNROLL": 1, "TILE": 8}
    assert math.isclose(sweep["best"]["median_s"], 1e-3)
    table = heatmap_table(sweep, "TILE", "STEP")
    assert table.reduced_over == ["UNROLL"] and "best over UNROLL" in to_text(table)
    assert table.row_values[table.best[0]] == 8 and table.col_values[table.best[1]] == 2
    out = tmp_path / "imported.json"
    assert cli_main(["import", str(made_by_kernel_tuner), "--out", str(out)]) == 0
    assert load_sweep(out)["best"] == sweep["best"]


def test_a_cache_left_open_by_a_killed_kernel_tuner_run_imports(made_by_kernel_tuner, tmp_path):
    text = made_by_kernel_tuner.read_text().rstrip()
    assert text.endswith("}\n}")
    opened = tmp_path / "open.json"
    opened.write_text(text[:-3] + ",")                  # how Kernel Tuner leaves it while tuning
    full, partial = load_sweep(made_by_kernel_tuner), load_sweep(opened)
    assert [c["params"] for c in partial["cells"]] == [c["params"] for c in full["cells"]]


def test_a_damaged_cache_is_refused_in_one_line(made_by_kernel_tuner, tmp_path, capsys):
    doc = json.loads(made_by_kernel_tuner.read_text())
    bad = tmp_path / "bad.json"
    for change in ({"tune_params": {"STEP": [1, 2, 4]}}, {"cache": []}, {"tune_params_keys": "STEP"}):
        bad.write_text(json.dumps({**doc, **change}))
        assert cli_main(["import", str(bad), "--out", str(tmp_path / "x.json")]) == 1
        err = capsys.readouterr().err
        assert "not a valid Kernel Tuner cache file" in err and err.count("\n") == 1


def test_the_gui_opens_a_kernel_tuner_cache_as_a_sweep(qtbot, tmp_path, made_by_kernel_tuner):
    from tests.gui_support import make_window, results_of

    w = make_window(qtbot, tmp_path, size=None)
    try:
        dock = results_of(w)
        assert dock.open_result_file(made_by_kernel_tuner)
        shown = dock.current_sweep()
        assert shown["variant"] == "work" and shown["best"]["params"] == {"STEP": 2, "UNROLL": 1, "TILE": 8}
        assert "kernel-tuner/work" in dock.sweep_box.currentText()
    finally:
        w.close()
