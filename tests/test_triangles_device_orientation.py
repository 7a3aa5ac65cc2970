"""gpu-oriented's device preprocessing (kernels/algorithms/triangles/device_orientation.py) against
the host's (orientation.py), array by array, under the CUDA simulator on tiny graphs; the
stable counting sort it uses; and whole runs with preprocess=gpu. Real-GPU checks are marked gpu."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from numba import cuda

from kernels.algorithms.triangles import orientation
from kernels.algorithms.triangles.device_orientation import check_size, orient_on_device
from kernels.algorithms.triangles.orientation import orient, schedule
from kernels.algorithms.triangles.prepare import prepare
from kernels.graph.csr import CSRGraph
from kernels.graph.generators import rmat
from kernels.graph.io import read_graph
from kernels.operators.bin_sort import stable_bin_sort
from kernels.operators.launch import Workspace
from kernels.run.runner import run_variant
from tests.conftest import data_path, reference_table

ARRAYS = ("out_ptr", "out_idx", "part_ptr", "part_idx", "work", "light", "heavy_vertex", "heavy_lo", "heavy_hi")


def from_nx(g) -> CSRGraph:
    return CSRGraph.from_networkx(nx.convert_node_labels_to_integers(g), weight=None)


def to_device(arr: np.ndarray):
    return cuda.to_device(arr if arr.size else np.zeros(1, dtype=arr.dtype))  # as the execution's upload does


def host_and_device(graph: CSRGraph, block_size: int, group_size: int, light_slots: int):
    g = prepare(graph, {}, 0).graph
    og = orient(g.indptr, g.indices)
    sched = schedule(og, block_size, group_size, light_slots)
    host = {"out_ptr": og.out_ptr, "out_idx": og.out_idx, "part_ptr": og.part_ptr, "part_idx": og.part_idx,
            "work": og.work, "light": sched.light, "heavy_vertex": sched.heavy_vertex, "heavy_lo": sched.heavy_lo,
            "heavy_hi": sched.heavy_hi}
    dev = orient_on_device(to_device(g.indptr), to_device(g.indices), g.n_rows, g.nnz, block_size, group_size,
                           light_slots, Workspace())
    assert dev.probes() == og.total_work
    return host, dev.to_host()


def assert_same_arrays(host: dict, device: dict) -> None:
    for name in ARRAYS:
        assert device[name].dtype == host[name].dtype, name
        np.testing.assert_array_equal(device[name], host[name], err_msg=name)


def with_isolated_vertices() -> nx.Graph:
    g = nx.empty_graph(20)
    g.add_edges_from([(1, 4), (4, 7), (7, 1), (7, 10), (10, 13), (13, 7), (16, 4), (16, 1)])
    return g  # 0, 2, 3, 5, ... have no edge


def star_with_triangles() -> nx.Graph:
    g = nx.star_graph(15)
    g.add_edges_from([(1, 2), (3, 4), (4, 5), (3, 5), (5, 6)])
    return g


SHAPES = {
    "degree ties (4-regular)": nx.circulant_graph(12, [1, 2]),
    "isolated vertices": with_isolated_vertices(),
    "star": star_with_triangles(),
    "clique": nx.complete_graph(9),
    "no edges": nx.empty_graph(6),
    "no vertices": nx.empty_graph(0),
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_device_orientation_and_schedule_equal_the_hosts(name):
    host, device = host_and_device(from_nx(SHAPES[name]), 32, 4, 8)
    assert_same_arrays(host, device)


def test_device_preprocessing_of_an_input_with_self_loops_and_repeated_edges():
    base = nx.complete_graph(5)
    src = [u for u, v in base.edges()] + [0, 1, 0, 3]
    dst = [v for u, v in base.edges()] + [0, 1, 1, 4]  # two self-loops, two repeated edges: prepare drops them
    graph = CSRGraph.from_edges(5, src, dst, directed=False, both_directions=True)
    host, device = host_and_device(graph, 32, 4, 8)
    assert_same_arrays(host, device)
    assert len(device["out_idx"]) == 10


@pytest.mark.parametrize("block_size,light_slots", [(1, 2), (4, 4), (8, 8)])
def test_device_chunks_of_heavy_owners_equal_the_hosts(monkeypatch, block_size, light_slots):
    # a chunk window of block_size probes: partners heavier than a window skip windows,
    # light ones share them; small light tables make most owners heavy
    monkeypatch.setattr(orientation, "HEAVY_PROBES_PER_LANE", 1)
    host, device = host_and_device(from_nx(nx.les_miserables_graph()), block_size, 1, light_slots)
    assert_same_arrays(host, device)
    assert len(device["heavy_vertex"]) > len(np.unique(device["heavy_vertex"])) > 0  # owners were split
    assert len(device["light"]) > 0


def test_stable_bin_sort_orders_by_key_and_keeps_ties_in_index_order():
    rng = np.random.default_rng(5)
    keys = rng.integers(-1, 6, size=70).astype(np.int32)  # -1: dropped
    order = cuda.device_array(70, dtype=np.int32)
    total = cuda.device_array(1, dtype=np.int64)
    stable_bin_sort(cuda.to_device(keys), len(keys), 8, order, total, Workspace())
    kept = int(total.copy_to_host()[0])
    expected = np.flatnonzero(keys >= 0)
    expected = expected[np.argsort(keys[expected], kind="stable")]
    assert kept == len(expected)
    np.testing.assert_array_equal(order.copy_to_host()[:kept], expected)


def test_device_preprocessing_refuses_more_than_two_to_the_31_entries():
    assert check_size(2**31 - 1) and not check_size(2**31)


@pytest.mark.parametrize("name", ["karate.mtx", "dolphins.mtx"])
def test_gpu_preprocessing_counts_verified_and_both_figures_reported(name):
    graph = read_graph(data_path(name))
    params = {"block_size": 32, "group_size": 4, "preprocess": "gpu"}
    total = run_variant(graph, "triangles", "gpu-oriented", params, repeat=1, warmup=0)
    assert total.record["verified"], total.record["verification"]
    assert int(total.output) == int(reference_table()[name]["triangles"])
    summary = total.record["result"]
    assert summary["preprocess"] == "gpu" and "simulator" in summary["preprocess_timing"]
    assert summary["preprocess_s"] > 0 and summary["preprocess_readbacks"] == 1
    metrics = {m["name"]: m["value"] for m in total.record["metrics"]}
    kernel_s = total.record["timing"]["kernel"]["median_s"]
    assert metrics["end-to-end edges/s"] == pytest.approx(
        total.record["input"]["edges"] / (kernel_s + summary["preprocess_s"]))
    per_vertex = run_variant(graph, "triangles", "gpu-oriented", {**params, "per_vertex": True}, repeat=1, warmup=0)
    assert per_vertex.record["verified"], per_vertex.record["verification"]


def test_host_preprocessing_reports_the_same_figures():
    graph = from_nx(nx.karate_club_graph())
    params = {"block_size": 32, "group_size": 4}
    host = run_variant(graph, "triangles", "gpu-oriented", {**params, "preprocess": "host"}, repeat=1, warmup=0)
    device = run_variant(graph, "triangles", "gpu-oriented", {**params, "preprocess": "gpu"}, repeat=1, warmup=0)
    assert int(host.output) == int(device.output) == 45
    a, b = host.record["result"], device.record["result"]
    assert a["preprocess"] == "host" and "host" in a["preprocess_timing"]
    for key in ("probes", "max_out_degree", "heavy_rounds", "heavy_owners", "light_owners", "rounds", "grid"):
        assert a[key] == b[key], key
    assert {m["name"] for m in host.record["metrics"]} >= {"end-to-end edges/s"}


def test_variants_without_preprocessing_have_no_end_to_end_rate():
    result = run_variant(from_nx(nx.karate_club_graph()), "triangles", "cpu-serial", {}, repeat=1, warmup=0)
    metrics = {m["name"]: m["value"] for m in result.record["metrics"]}
    assert metrics["end-to-end edges/s"] is None and metrics["edges/s"] > 0


# ---- on a real GPU (GRAPH_KERNELS_TARGET=cuda pytest -m gpu) -------------------------------------

REAL = ("as-caida20071105.mtx", "ca-HepTh.mtx", "delaunay_n15.mtx", "power.mtx")


@pytest.mark.gpu
@pytest.mark.parametrize("name", REAL)
@pytest.mark.parametrize("preprocess", ["gpu", "host"])
def test_real_gpu_counts_with_both_preprocessings(name, preprocess):
    graph = read_graph(data_path(name))
    for per_vertex in (False, True):
        result = run_variant(graph, "triangles", "gpu-oriented",
                             {"block_size": 256, "group_size": 8, "preprocess": preprocess, "per_vertex": per_vertex},
                             target="cuda", repeat=2, warmup=1)
        assert result.record["verified"], result.record["verification"]
        summary = result.record["result"]
        assert summary["preprocess"] == preprocess and summary["preprocess_s"] > 0
        if preprocess == "gpu":
            assert summary["preprocess_timing"] == "cuda events"


@pytest.mark.gpu
@pytest.mark.parametrize("block_size,group_size", [(256, 8), (64, 1), (1024, 32)])
def test_real_gpu_device_arrays_equal_the_hosts_on_rmat(block_size, group_size):
    from kernels.algorithms.triangles.gpu_oriented import table_slots

    slots = table_slots(block_size) // (block_size // group_size)
    host, device = host_and_device(rmat(14, 16, seed=7), block_size, group_size, slots)
    assert_same_arrays(host, device)
    assert len(device["light"]) > 0
    if block_size <= 256:  # the larger light tables of 1024 threads may leave no owner heavy
        assert len(device["heavy_vertex"]) > 0
