"""GPU all-pairs shortest paths under numba's CUDA simulator (real-GPU runs: ``-m gpu``).

Inputs stay at n = 20..40 with the smallest launch shapes so that each run simulates only a
few thousand threads; every run is verified against SciPy by the runner, and predecessor
matrices are also walked back by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernels.algorithms.apsp import NegativeCycleError
from kernels.algorithms.apsp import memory as apsp_memory
from kernels.errors import InputRequirementError, ResourceLimitError
from kernels.graph.csr import CSRGraph
from kernels.run.runner import run_variant
from tests.test_apsp import load, networkx_distances, random_graph, rebuild_lengths

TARGET = "sim"


def gpu_run(graph, variant, **params):
    result = run_variant(graph, "apsp", variant, params, target=TARGET, repeat=1, warmup=0)
    assert result.record["verified"], result.record["verification"]
    return result


@pytest.mark.parametrize("variant,params", [
    ("gpu-fw-naive", {"warps_per_block": 1}),
    ("gpu-fw-blocked", {"tile": 8, "warps_per_block": 1}),      # n = 21: padded to 24
    ("gpu-fw-staged", {"tile": 8, "stage": 2, "warps_per_block": 1}),
    ("gpu-dijkstra", {"warps_per_block": 1, "queue": "heap"}),
    ("gpu-dijkstra", {"warps_per_block": 1, "queue": "array"}),
])
def test_gpu_variants_on_a_directed_disconnected_graph_with_zero_weights(variant, params):
    g = random_graph(21, 0.08, directed=True, seed=7, zero_fraction=0.2)
    expected = networkx_distances(g)
    assert np.isinf(expected).any()
    result = gpu_run(g, variant, **params)
    np.testing.assert_allclose(result.output, expected, rtol=1e-12)


@pytest.mark.parametrize("variant,params", [
    ("gpu-fw-blocked", {"tile": 16, "warps_per_block": 2}),     # 4 elements per thread
    ("gpu-fw-staged", {"tile": 16, "stage": 8, "warps_per_block": 1}),  # 8 per thread, 2 stages
])
def test_tiled_variants_on_a_dense_undirected_graph_not_a_multiple_of_the_tile(variant, params):
    g = random_graph(37, 0.5, directed=False, seed=3)
    result = gpu_run(g, variant, dtype="fp32", **params)
    assert result.output.dtype == np.float32
    np.testing.assert_allclose(result.output, networkx_distances(g), rtol=1e-5)


@pytest.mark.parametrize("variant,params", [
    ("gpu-fw-naive", {"warps_per_block": 1}),
    ("gpu-fw-blocked", {"tile": 8, "warps_per_block": 1}),
    ("gpu-fw-staged", {"tile": 8, "stage": 4, "warps_per_block": 1}),
    ("gpu-dijkstra", {"warps_per_block": 1, "queue": "heap"}),
])
def test_gpu_predecessors_rebuild_paths_of_the_reported_length(variant, params):
    g = random_graph(20, 0.15, directed=True, seed=12)
    result = gpu_run(g, variant, predecessors=True, **params)
    dist, pred = result.output["dist"], result.output["pred"]
    np.testing.assert_allclose(rebuild_lengths(dist, pred, g), dist, rtol=1e-12, atol=1e-12)


def test_karate_on_the_blocked_kernel():
    gpu_run(load("karate.mtx"), "gpu-fw-blocked", tile=16, warps_per_block=1)  # 34 -> 48: 3 x 3 tiles


def test_one_tile_element_per_thread():
    g = random_graph(16, 0.3, directed=True, seed=9)
    gpu_run(g, "gpu-fw-blocked", tile=8, warps_per_block=2)  # 64 threads for 8 x 8 tiles
    gpu_run(g, "gpu-fw-staged", tile=8, stage=8, warps_per_block=2)


def test_gpu_floyd_warshall_with_negative_edges_and_a_negative_cycle():
    rng = np.random.default_rng(1)
    n = 12
    src, dst = np.nonzero(np.triu(rng.random((n, n)) < 0.3, k=1))
    w = rng.uniform(-3, 5, len(src))
    dag = CSRGraph.from_edges(n, src, dst, w, directed=True, name="dag")
    np.testing.assert_allclose(gpu_run(dag, "gpu-fw-blocked", tile=8, warps_per_block=1).output,
                               networkx_distances(dag), rtol=1e-12, atol=1e-12)
    # close a negative cycle 2 -> ... -> 2 by adding a heavy negative back edge
    cyclic = CSRGraph.from_edges(n, np.append(src, n - 1), np.append(dst, 0), np.append(w, -100.0),
                                 directed=True, name="cyclic")
    for variant, params in (("gpu-fw-blocked", {"tile": 8, "warps_per_block": 1}),
                            ("gpu-fw-naive", {"warps_per_block": 1})):
        with pytest.raises(NegativeCycleError) as info:
            run_variant(cyclic, "apsp", variant, params, target=TARGET, repeat=1, warmup=0)
        assert info.value.cycle and info.value.weight < 0
        assert info.value.cycle[0] == 0 and n - 1 in info.value.cycle


def test_gpu_dijkstra_refuses_negative_weights():
    g = CSRGraph.from_edges(3, [0, 1], [1, 2], [1.0, -1.0], directed=True, name="neg")
    with pytest.raises(InputRequirementError, match="gpu-dijkstra needs non-negative"):
        run_variant(g, "apsp", "gpu-dijkstra", target=TARGET, repeat=1)


@pytest.mark.parametrize("variant,per_pair", [("gpu-fw-blocked", 16), ("gpu-dijkstra", 32)])
def test_device_memory_is_checked_before_allocation(monkeypatch, variant, per_pair):
    free = 300.0 * 2**20
    monkeypatch.setattr(apsp_memory, "free_device_bytes", lambda: free)
    n = 3000  # no edges: nothing but the n x n matrices counts
    g = CSRGraph(np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int32), directed=True, name="wide")
    with pytest.raises(ResourceLimitError) as info:
        run_variant(g, "apsp", variant, target=TARGET, repeat=1)
    text = str(info.value)
    assert "of device memory" in text and "the GPU has 300.0 MiB free" in text
    usable = free * apsp_memory.DEVICE_HEADROOM - apsp_memory.DEVICE_RESERVE_BYTES
    cap = int(text.split("N <= ")[1].split(" ")[0].replace(",", ""))
    assert per_pair * cap * cap <= usable * 1.01 and per_pair * (cap + 10) ** 2 > usable


@pytest.mark.gpu
@pytest.mark.parametrize("variant,params", [
    ("gpu-fw-naive", {}), ("gpu-fw-blocked", {"tile": 32}), ("gpu-fw-blocked", {"tile": 64, "dtype": "fp32"}),
    ("gpu-fw-staged", {"tile": 64, "stage": 16, "dtype": "fp32"}), ("gpu-dijkstra", {}),
    ("gpu-dijkstra", {"queue": "array"}),
])
def test_real_gpu_on_usair97(variant, params):
    g = load("USAir97.mtx")
    from kernels.algorithms.registry import get_variant

    fam, var = get_variant("apsp", variant)
    for pred in (False, True):
        chosen = dict(params, predecessors=pred)
        if fam.constraint_violation(var, fam.resolve_params(var, {**chosen, "predecessors": False}) | chosen):
            continue  # e.g. 64-wide fp32 tiles with predecessors do not fit in shared memory
        result = run_variant(g, "apsp", variant, chosen, target="cuda", repeat=2)
        assert result.record["verified"], result.record["verification"]
