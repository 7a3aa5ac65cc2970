"""CUDA-graph launch mode on a real GPU (``GRAPH_KERNELS_TARGET=cuda pytest -m gpu``; skipped
elsewhere): every capturable variant, on a small real graph, gives the verified result from graph
replays (``timing.launch == "graph"``), the same output as direct launches, and the CuPy
vendor SpMV either captures or says why it could not."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from kernels.graph.io import read_graph
from kernels.run.runner import run_variant
from tests.conftest import data_path

# small real graphs from tests/data; launch shapes as a user would choose them on a GPU
CASES = [
    ("spmv", "gpu-naive", {"wg": 128}, "west0067.mtx"),
    ("spmv", "gpu-tunable", {"wg": 128, "rows": 8}, "GD98_c.mtx"),
    ("spmv", "gpu-merge", {"wg": 128, "ipt": 7}, "GD98_c.mtx"),
    ("spmv", "gpu-adaptive", {}, "GD98_c.mtx"),
    ("apsp", "gpu-fw-naive", {"warps_per_block": 4}, "USAir97.mtx"),
    ("apsp", "gpu-fw-blocked", {"tile": 32, "warps_per_block": 8}, "USAir97.mtx"),
    ("apsp", "gpu-fw-staged", {"tile": 32, "stage": 2, "warps_per_block": 8}, "USAir97.mtx"),
    ("apsp", "gpu-dijkstra", {"warps_per_block": 2, "queue": "heap"}, "USAir97.mtx"),
    ("triangles", "gpu-row-block", {"block_size": 64}, "karate.mtx"),
    ("triangles", "gpu-row-shared", {"block_size": 64, "shared_capacity": 256}, "karate.mtx"),
    ("triangles", "gpu-oriented", {"block_size": 128, "group_size": 8}, "karate.mtx"),
    ("kclique", "gpu-vertex", {"k": 4}, "karate.mtx"),
    ("kclique", "gpu-edge", {"k": 4}, "karate.mtx"),
    ("kclique", "gpu-list", {"k": 4}, "karate.mtx"),
    ("bfs", "gpu-csr", {"loop": "device"}, "power.mtx"),
    ("bfs", "gpu-slotted", {"loop": "device", "direction": "optimizing"}, "delaunay_n10.mtx"),
    ("sssp", "gpu-csr", {"loop": "device"}, "USAir97.mtx"),
    ("sssp", "gpu-slotted", {"loop": "device"}, "power.mtx"),
]


def _run(family, variant, params, filename, launch):
    graph = read_graph(data_path(filename))
    return run_variant(graph, family, variant, params, target="cuda", repeat=3, warmup=1, launch=launch)


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


needs_cupy = pytest.mark.skipif(importlib.util.find_spec("cupy") is None, reason="graph mode captures through CuPy")


@pytest.mark.gpu
@needs_cupy
@pytest.mark.parametrize("family,variant,params,filename", CASES, ids=[f"{f}/{v}" for f, v, _, _ in CASES])
def test_graph_replays_give_the_verified_result_of_direct_launches(family, variant, params, filename):
    graph_run = _run(family, variant, params, filename, "graph")
    rec = graph_run.record
    assert rec["verified"], rec["verification"]
    assert rec["timing"]["launch"] == "graph", rec["notices"]
    assert not any("fell back" in n for n in rec["notices"])
    assert rec["timing"]["kernel"]["median_s"] > 0
    direct_run = _run(family, variant, params, filename, "direct")
    assert direct_run.record["timing"]["launch"] == "direct"
    if family == "spmv" and variant == "gpu-merge":   # rows split between tiles are added atomically
        np.testing.assert_allclose(graph_run.output, direct_run.output, rtol=1e-12, atol=1e-12)
    else:
        assert _same(graph_run.output, direct_run.output)


@pytest.mark.gpu
@needs_cupy
def test_auto_chooses_graph_for_a_capturable_variant_and_direct_for_a_host_loop_traversal():
    spmv = _run("spmv", "gpu-adaptive", {}, "GD98_c.mtx", "auto").record
    assert spmv["timing"]["launch"] == "graph"
    karate = read_graph(data_path("karate.mtx"))
    bfs = run_variant(karate, "bfs", "gpu-csr", {}, target="cuda", repeat=2, launch="auto").record
    assert bfs["verified"] and bfs["timing"]["launch"] == "graph"      # the device loop, the default
    host = run_variant(karate, "bfs", "gpu-csr", {"loop": "host"}, target="cuda", repeat=2, launch="auto").record
    assert host["verified"] and host["timing"]["launch"] == "direct"
    assert not any("fell back" in n for n in host["notices"])   # not capturable under auto: no notice


@pytest.mark.gpu
@needs_cupy
def test_auto_times_cusparse_as_device_time():
    """CuPy will not capture cuSPARSE: under ``auto`` it is queued (device time), so that its
    comparison with our graph replays is like with like (issue 25)."""
    rec = _run("spmv", "cusparse", {}, "GD98_c.mtx", "auto").record
    assert rec["verified"] and rec["timing"]["launch"] in ("graph", "queued")


@pytest.mark.gpu
@needs_cupy
def test_cusparse_is_captured_or_the_record_says_why_not():
    rec = _run("spmv", "cusparse", {}, "GD98_c.mtx", "graph").record
    assert rec["verified"], rec["verification"]
    if rec["timing"]["launch"] == "direct":
        assert any(n.startswith("launch=graph fell back to direct launches: ") for n in rec["notices"])
    else:
        assert rec["timing"]["launch"] == "graph"


@pytest.mark.gpu
@pytest.mark.parametrize("variant,params", [("gpu-adaptive", {}), ("cusparse", {})])
def test_queued_launches_time_the_device_alone_below_the_direct_launch_time(variant, params):
    """Queued behind a busy kernel, the host's launch overhead is hidden: never slower than
    direct launches of the same product (generous margin), and verified."""
    if variant == "cusparse" and importlib.util.find_spec("cupy") is None:
        pytest.skip("CuPy is not installed")
    direct = _run("spmv", variant, params, "delaunay_n10.mtx", "direct").record
    queued = _run("spmv", variant, params, "delaunay_n10.mtx", "queued").record
    assert queued["verified"] and queued["timing"]["launch"] == "queued"
    assert "busy kernel" in queued["timing"]["method"]
    assert queued["timing"]["kernel"]["median_s"] <= 1.5 * direct["timing"]["kernel"]["median_s"]
