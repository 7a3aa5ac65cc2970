"""GPU k-clique kernels under numba's CUDA simulator (tiny inputs: one Python thread per CUDA
thread, so blocks of 32 threads and 4 blocks in flight), plus real-GPU checks for the lead
(GRAPH_KERNELS_TARGET=cuda pytest -m gpu)."""

from __future__ import annotations

from math import comb

import networkx as nx
import numpy as np
import pytest

from kernels.algorithms.kclique import gpu_bitmap
from kernels.algorithms.kclique._orient_jit import oriented_csr
from kernels.algorithms.kclique.gpu_exec import GpuCliqueExecution
from kernels.algorithms.kclique.prepare import OrientedGraph, simple_undirected
from kernels.algorithms.kclique.reference import count_kclist
from kernels.algorithms.registry import Problem
from kernels.errors import ConstraintError, InputRequirementError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph
from kernels.run.runner import run_variant
from tests.conftest import data_path, reference_table

GPU_VARIANTS = ("gpu-vertex", "gpu-edge", "gpu-list")
SIM = {"block_size": 32, "group_size": 4, "max_blocks": 4}


def from_nx(g) -> CSRGraph:
    return CSRGraph.from_networkx(nx.convert_node_labels_to_integers(g), weight=None, name="nx")


def run(graph, variant, **params):
    return run_variant(graph, "kclique", variant, {**SIM, **params}, repeat=1, warmup=0)


@pytest.mark.parametrize("variant", GPU_VARIANTS)
def test_gpu_variants_on_karate_for_k_3_to_6(variant):
    graph = read_graph(data_path("karate.mtx"))
    for k in (3, 4, 5, 6):
        result = run(graph, variant, k=k)
        assert result.record["target"] == "sim"
        assert result.record["verified"], result.record["verification"]
        if k == 3:
            assert result.output == int(reference_table()["karate.mtx"]["triangles"])


@pytest.mark.parametrize("variant", GPU_VARIANTS)
def test_gpu_variants_on_the_complete_graph_stranke94_up_to_k_10(variant):
    graph = read_graph(data_path("Stranke94.mtx"))
    for k, group_size in ((3, 4), (6, 32), (10, 1)):
        assert run(graph, variant, k=k, group_size=group_size, orientation="degeneracy").output == comb(10, k)


def two_word_graph() -> CSRGraph:
    """Vertex 0 sees 1..40, vertex 1 sees 2..36 (40 and 35 out-neighbours: two bitmap words), and
    a 7-clique on 29..35 straddles the words' boundary (bit 31 of vertex 0's rows)."""
    edges = [(0, i) for i in range(1, 41)] + [(1, i) for i in range(2, 37)]
    edges += [(a, b) for a in range(29, 36) for b in range(a + 1, 36)]
    src, dst = np.array(edges).T
    return CSRGraph.from_edges(41, src, dst, directed=False, both_directions=True, name="two-words")


def by_id(graph: CSRGraph) -> OrientedGraph:
    """The orientation "lower id -> higher id": any acyclic orientation must give the same counts,
    and this one keeps the large out-degrees of two_word_graph (degree order would not)."""
    ids = np.arange(graph.n_rows, dtype=np.int32)
    indptr, indices = oriented_csr(graph.indptr, graph.indices, ids)
    return OrientedGraph(indptr, indices, ids, ids, "id")


@pytest.mark.parametrize("kind", ["vertex", "edge", "list"])
@pytest.mark.parametrize("group_size", [1, 4, 32])
def test_multi_word_bitmaps_and_every_group_size(kind, group_size):
    graph = two_word_graph()
    dag = by_id(graph)
    assert dag.max_out_degree == 40
    k = 4 if group_size == 32 else 5  # the simulator pays for every thread: keep the 32-lane case short
    # small blocks where the group allows: every simulated thread and barrier costs real time
    params = {"k": k, "per_vertex": group_size == 4, "max_blocks": 4, "group_size": group_size,
              "block_size": max(group_size, 8)}
    execution = GpuCliqueExecution(Problem(graph, data={"oriented": dag}), params, "sim", kind)
    execution.compile()
    execution.upload()
    execution.launch()
    if group_size == 1:
        execution.launch()  # launches must be repeatable: the counters are reset by each
    out = execution.download()
    total, per_vertex = count_kclist(graph, k, per_vertex=True)
    if params["per_vertex"]:
        assert out["cliques"] == total
        np.testing.assert_array_equal(out["per_vertex"], per_vertex)
    else:
        assert out == total


@pytest.mark.parametrize("variant", GPU_VARIANTS)
def test_per_vertex_counts_equal_the_reference_and_sum_to_k_times_total(variant):
    result = run(read_graph(data_path("karate.mtx")), variant, k=4, per_vertex=True, group_size=1)
    assert result.record["verified"], result.record["verification"]
    assert result.output["cliques"] == 11
    assert result.output["per_vertex"].sum() == 4 * 11


@pytest.mark.parametrize("variant", GPU_VARIANTS)
def test_graphs_without_triangles_count_zero(variant):
    for g in (nx.complete_bipartite_graph(4, 5), nx.empty_graph(6)):
        assert run(from_nx(g), variant, k=3).output == 0


def test_generated_graph_with_deep_cliques():
    g = nx.gnp_random_graph(16, 0.3, seed=7)
    g.add_edges_from((a, b) for a in range(8) for b in range(a + 1, 8))  # plant an 8-clique
    graph = from_nx(g)
    for variant in GPU_VARIANTS:
        result = run(graph, variant, k=6, group_size=2, block_size=8)
        assert result.record["verified"], result.record["verification"]


def test_out_degree_above_the_bitmap_cap_is_refused_with_the_numbers():
    n = 1100  # complete: every orientation leaves vertex 0 with 1099 out-neighbours
    src, dst = np.triu_indices(n, 1)
    graph = CSRGraph.from_edges(n, src, dst, directed=False, both_directions=True, name="K1100")
    for variant in ("gpu-vertex", "gpu-edge"):
        with pytest.raises(InputRequirementError, match=r"1099.*1024.*gpu-list or cpu-parallel"):
            run(graph, variant, k=3, orientation="degeneracy")


def test_the_cap_is_checked_against_the_actual_out_degree(monkeypatch):
    graph = read_graph(data_path("Stranke94.mtx"))  # K10: out-degree 9
    monkeypatch.setattr(gpu_bitmap, "MAX_OUT_DEGREE", 8)
    with pytest.raises(InputRequirementError, match="9, above the 8"):
        run(graph, "gpu-vertex", k=3)
    assert run(graph, "gpu-list", k=3).output == 120  # lists have no cap


def test_group_size_larger_than_block_size_is_refused():
    with pytest.raises(ConstraintError, match="group_size <= block_size"):
        run(read_graph(data_path("karate.mtx")), "gpu-vertex", block_size=16, group_size=32)


@pytest.mark.gpu
@pytest.mark.parametrize("variant", GPU_VARIANTS)
def test_real_gpu_counts_on_ca_hepth(variant):
    graph = read_graph(data_path("ca-HepTh.mtx"))
    expected = count_kclist(simple_undirected(graph), 6)[0]
    for block_size, group_size in ((128, 8), (64, 1), (256, 32)):
        result = run_variant(graph, "kclique", variant, {"k": 6, "block_size": block_size, "group_size": group_size},
                             target="cuda", repeat=1)
        assert result.output == expected
