"""The dynamic-graph experiment under the CUDA simulator: edit rounds, sync + gpu-slotted rerun
against rebuild + upload + gpu-csr rerun, every round verified and recorded; the command."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kernels.cli import main
from kernels.dynamic import DynamicSettings, random_edit_batch, run_dynamic
from kernels.errors import ParameterError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph
from tests.conftest import data_path


def edge_set(g: CSRGraph) -> set:
    rows = g.row_of_entry()
    return set(zip(rows.tolist(), g.indices.tolist(), strict=True))


@pytest.mark.parametrize("directed", [False, True])
def test_edit_batches_remove_existing_and_add_absent_edges(directed):
    rng = np.random.default_rng(1)
    n = 50
    src, dst = rng.integers(0, n, 200), rng.integers(0, n, 200)
    keep = src != dst
    g = CSRGraph.from_edges(n, src[keep], dst[keep], directed=directed, both_directions=not directed)
    from kernels.algorithms.traversal.common import without_duplicates

    g, _ = without_duplicates(g, keep="first")
    edges = edge_set(g)
    rem_u, rem_v, add_u, add_v = random_edit_batch(g, 41, rng)
    assert len(rem_u) == 20 and len(add_u) == 21
    assert all((u, v) in edges for u, v in zip(rem_u, rem_v, strict=True))
    assert not any((u, v) in edges for u, v in zip(add_u, add_v, strict=True))
    assert not np.any(add_u == add_v) and not np.any(rem_u == rem_v)
    assert len({(u, v) for u, v in zip(add_u, add_v, strict=True)}) == len(add_u)
    if not directed:
        assert np.all(rem_u < rem_v) and np.all(add_u < add_v)


def test_bfs_rounds_are_recorded_and_verified(tmp_path):
    records = tmp_path / "rounds.jsonl"
    result = run_dynamic(read_graph(data_path("karate.mtx")), DynamicSettings(
        algorithm="bfs", batch=0.05, rounds=2, page_size=16, source=3, block=32), target="sim",
        records_path=records)
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert [r["round"] for r in lines] == [0, 1, 2]
    for r in lines:
        assert r["dynamic"]["verified"] and r["static"]["verified"], r
    for r in lines[1:]:
        assert r["edits"]["removed"] + r["edits"]["added"] == round(0.05 * 78)   # 78 edges
        assert r["dynamic"]["sync_bytes"] > 0 and r["dynamic"]["sync_pages"] > 0
        assert r["static"]["upload_bytes"] > r["dynamic"]["sync_bytes"] or r["dirty_share"] > 0.5
        assert r["speedup"] > 0
    for r in lines:           # reruns timed as run times kernels; one call's wall time beside, out of the totals
        for path in ("dynamic", "static"):
            rerun = r[path]["rerun"]
            assert rerun["run_s"] == r[path]["run_s"] and rerun["call_s"] > 0 and "simulator" in rerun["timed"]
        assert r["dynamic"]["total_s"] == pytest.approx(r["dynamic"]["sync_s"] + r["dynamic"]["run_s"])
    summary = result["summary"]
    assert summary["rounds"] == 2 and summary["all_verified"]
    assert summary["graph"]["name"] == "karate" and "simulator" in summary["clock"]


def test_sssp_rounds_on_a_weighted_graph_keep_weights_on_new_edges():
    # the first 120 airports of USAir97 with their real weights: the simulator runs one Python
    # thread per CUDA thread, and the whole graph's SSSP rounds took a minute there
    full = read_graph(data_path("USAir97.mtx"))
    g = CSRGraph.from_scipy(full.to_scipy()[:120, :120], directed=False, name="USAir97[:120]")
    assert g.weights is not None and g.nnz > 0
    result = run_dynamic(g, DynamicSettings(algorithm="sssp", batch=0.01, rounds=1, page_size=64, block=32,
                                            balance="tpv"), target="sim")
    assert result["summary"]["all_verified"]
    assert result["records"][1]["edits"]["added"] > 0


def test_settings_are_validated():
    with pytest.raises(ParameterError, match="batch"):
        DynamicSettings(batch=0.0).validate()
    with pytest.raises(ParameterError, match="algorithm"):
        DynamicSettings(algorithm="dfs").validate()


def test_dynamic_command_writes_records_and_summary(tmp_path, capsys):
    records, summary = tmp_path / "r.jsonl", tmp_path / "s.json"
    code = main(["dynamic", str(data_path("karate.mtx")), "--algorithm", "sssp", "--batch", "0.05", "--rounds", "1",
                 "--page-size", "16", "--param", "block=32", "--target", "sim", "--records", str(records),
                 "--summary", str(summary)])
    assert code == 0
    out = capsys.readouterr().out
    assert "speedup" in out and "median over 1 rounds" in out
    assert len(records.read_text().splitlines()) == 2
    saved = json.loads(summary.read_text())
    assert saved["summary"]["algorithm"] == "sssp" and len(saved["records"]) == 2


def test_dynamic_command_refuses_bad_parameters(capsys):
    assert main(["dynamic", str(data_path("karate.mtx")), "--target", "sim", "--param", "warps=3"]) == 1
    assert "warps" in capsys.readouterr().err
    assert main(["dynamic", str(data_path("karate.mtx")), "--target", "sim", "--page-size", "100"]) == 1
    assert main(["dynamic", str(data_path("karate.mtx")), "--target", "sim", "--source", "99"]) == 1
    assert "from 0 to 33" in capsys.readouterr().err
