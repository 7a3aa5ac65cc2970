"""Sweeps of the SpMV family through the worker process, and the files they produce.

A small ``wg x rows`` grid of ``gpu-tunable`` runs in a simulator worker; a plugin family
(``tests/plugins/faulty_family.py``) crashes and hangs on request, to check that a sweep
records such cells as failed and finishes.
"""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from kernels.cli import main as cli_main
from kernels.compute.local.client import WorkerClient
from kernels.compute.sweep import run_sweep
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph
from kernels.results import append_record, load_sweep, read_records, records_to_csv, save_sweep, sweep_to_csv
from kernels.run.runner import run_variant

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = "tests.plugins.faulty_family"


def worker_env(**extra) -> dict:
    # the worker must find the ``tests`` package whatever the current directory is
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, **extra}


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory):
    graph = read_graph(str(ROOT / "tests" / "data" / "lp_afiro.mtx"))
    client = WorkerClient(target="sim", env=worker_env())
    seen = []
    try:
        sweep = run_sweep(graph, "spmv", "gpu-tunable", {"wg": [1, 4], "rows": [1, 4]}, target="sim",
                          repeat=1, warmup=0, time_limit=120, client=client,
                          progress=lambda done, total, cell: seen.append((done, total)))
    finally:
        client.close()
    path = tmp_path_factory.mktemp("sweep") / "sweep.json"
    save_sweep(sweep, path)
    return sweep, path, seen


def test_sweep_runs_valid_cells_and_marks_invalid_ones(small_sweep):
    sweep, _, seen = small_sweep
    status = {(c["params"]["wg"], c["params"]["rows"]): c["status"] for c in sweep["cells"]}
    assert status == {(1, 1): "ok", (1, 4): "invalid", (4, 1): "ok", (4, 4): "ok"}
    invalid = next(c for c in sweep["cells"] if c["status"] == "invalid")
    assert "rows <= wg" in invalid["reason"] and "record" not in invalid
    assert all(c["record"]["verified"] for c in sweep["cells"] if c["status"] == "ok")
    assert sweep["target"] == "sim" and sweep["total_cells"] == 4 and not sweep["cancelled"]
    assert seen[-1] == (4, 4)


def test_sweep_names_the_best_cell_and_the_flat_region(small_sweep):
    sweep, _, _ = small_sweep
    ok = [c for c in sweep["cells"] if c["status"] == "ok"]
    fastest = min(ok, key=lambda c: c["median_s"])
    assert sweep["best"]["params"] == fastest["params"]
    assert sweep["best"]["median_s"] == fastest["median_s"]
    assert fastest["params"] in sweep["within_5pct"]
    assert all(p in sweep["within_10pct"] for p in sweep["within_5pct"])


def test_sweep_file_round_trips_and_exports_csv(small_sweep, tmp_path):
    sweep, path, _ = small_sweep
    loaded = load_sweep(path)
    assert loaded["best"] == sweep["best"]
    assert [c["status"] for c in loaded["cells"]] == [c["status"] for c in sweep["cells"]]
    out = tmp_path / "sweep.csv"
    sweep_to_csv(loaded, out)
    with open(out) as fh:
        rows = list(csv.DictReader(fh))
    assert [(int(r["wg"]), int(r["rows"]), r["status"]) for r in rows] == [
        (c["params"]["wg"], c["params"]["rows"], c["status"]) for c in sweep["cells"]]
    assert float(rows[0]["median_s"]) == pytest.approx(sweep["cells"][0]["median_s"])


def test_heatmap_command_writes_svg_and_csv(small_sweep, tmp_path, capsys):
    _, path, _ = small_sweep
    svg, table = tmp_path / "h.svg", tmp_path / "h.csv"
    assert cli_main(["heatmap", str(path), "--out", str(svg), "--csv", str(table)]) == 0
    text = capsys.readouterr().out
    assert "wg" in text and "*" in text  # the best cell is marked
    assert svg.read_text().lstrip().startswith("<") and "</svg>" in svg.read_text()
    with open(table) as fh:
        lines = list(csv.reader(fh))
    assert len(lines) >= 3  # a header and one line per wg value


@pytest.fixture
def faulty_family():
    """The plugin family registered in this process too (the sweep validates its grid here)."""
    import importlib

    from kernels.algorithms import registry

    module = importlib.import_module(PLUGIN)
    yield module.FAMILY
    registry._FAMILIES.pop("faulty", None)
    sys.modules.pop(PLUGIN, None)


def test_crashing_and_hanging_cells_are_recorded_as_failed_and_the_sweep_goes_on(faulty_family):
    graph = CSRGraph.from_edges(4, [0, 1, 1, 3], [1, 0, 2, 3], directed=True, name="tiny")
    client = WorkerClient(env=worker_env(GRAPH_KERNELS_PLUGINS=PLUGIN))
    try:
        sweep = run_sweep(graph, "faulty", "cpu-serial", {"mode": ["crash", "hang", "ok"]},
                          repeat=1, warmup=0, time_limit=4.0, client=client)
    finally:
        client.close()
    cells = sweep["cells"]
    assert [c["status"] for c in cells] == ["failed", "failed", "ok"]
    assert "crashed" in cells[0]["reason"]
    assert "timed out" in cells[1]["reason"]
    assert cells[2]["record"]["verified"]
    assert sweep["best"]["params"] == {"mode": "ok"}


def test_run_records_round_trip_through_json_lines_and_csv(tmp_path):
    graph = read_graph(str(ROOT / "tests" / "data" / "karate.mtx"))
    records = [run_variant(graph, "spmv", "cpu-serial", repeat=1).record,
               run_variant(graph, "spmv", "gpu-tunable", {"wg": 8, "rows": 2}, target="sim", repeat=1,
                           warmup=0).record]
    path = tmp_path / "runs.jsonl"
    for rec in records:
        append_record(path, rec)
    back = read_records(path)
    assert [(r["variant"], r["params"], r["verified"]) for r in back] == [
        (r["variant"], r["params"], r["verified"]) for r in records]
    assert back[1]["timing"]["kernel"]["median_s"] == pytest.approx(records[1]["timing"]["kernel"]["median_s"])
    out = tmp_path / "runs.csv"
    records_to_csv(back, out)
    with open(out) as fh:
        rows = list(csv.DictReader(fh))
    assert [r["variant"] for r in rows] == ["cpu-serial", "gpu-tunable"]
    assert rows[1]["params"] == "dtype=fp64 wg=8 rows=2 reduce=shuffle"
    assert rows[1]["target"] == "sim" and rows[1]["verified"] == "True"
    assert np.isfinite(float(rows[1]["median_s"]))
