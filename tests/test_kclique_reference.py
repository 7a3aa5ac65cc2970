"""The k-clique references: plain-Python kClist against NetworkX, the published triangle counts
and closed forms (complete graphs, triangle-free graphs); the family's input preparation."""

from __future__ import annotations

from math import comb

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernels.algorithms.kclique.prepare import orient, simple_undirected
from kernels.algorithms.kclique.reference import count_kclist, count_networkx, degeneracy_order
from kernels.errors import InputRequirementError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph
from kernels.run.runner import run_variant
from tests.conftest import data_path, reference_table

SMALL_REAL = ("karate.mtx", "dolphins.mtx", "football.mtx", "polbooks.mtx", "Stranke94.mtx")


def from_nx(g) -> CSRGraph:
    return CSRGraph.from_networkx(nx.convert_node_labels_to_integers(g), weight=None, name="nx")


def simple(name: str) -> CSRGraph:
    return simple_undirected(read_graph(data_path(name)))


@pytest.mark.parametrize("name", SMALL_REAL)
def test_kclist_counts_the_published_triangles(name):
    assert count_kclist(simple(name), 3)[0] == int(reference_table()[name]["triangles"])


@pytest.mark.parametrize("name", SMALL_REAL)
def test_kclist_equals_networkx_for_k_3_to_6_with_per_vertex_counts(name):
    g = simple(name)
    for k in (3, 4, 5, 6):
        total, per_vertex = count_kclist(g, k, per_vertex=True)
        nx_total, nx_per_vertex = count_networkx(g, k, per_vertex=True)
        assert total == nx_total, k
        np.testing.assert_array_equal(per_vertex, nx_per_vertex)
        assert per_vertex.sum() == k * total


@pytest.mark.parametrize("n,k", [(10, 3), (10, 7), (10, 10), (10, 11), (16, 16), (20, 8)])
def test_a_complete_graph_has_n_choose_k_cliques(n, k):
    total, per_vertex = count_kclist(from_nx(nx.complete_graph(n)), k, per_vertex=True)
    assert total == comb(n, k)
    assert (per_vertex == comb(n - 1, k - 1)).all()


@pytest.mark.parametrize("g", [nx.cycle_graph(9), nx.grid_2d_graph(5, 4), nx.complete_bipartite_graph(6, 7),
                               nx.hypercube_graph(4), nx.empty_graph(5)], ids=["C9", "grid", "K6,7", "Q4", "empty"])
def test_triangle_free_graphs_have_no_cliques_of_three_or_more(g):
    for k in (3, 4):
        assert count_kclist(from_nx(g), k)[0] == 0


def test_stranke94_is_the_complete_graph_on_ten_vertices():
    g = simple("Stranke94.mtx")
    assert [count_kclist(g, k)[0] for k in range(3, 12)] == [comb(10, k) for k in range(3, 12)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 14), st.floats(0.1, 0.9), st.integers(0, 10_000), st.integers(3, 7))
def test_kclist_equals_networkx_on_random_graphs(n, p, seed, k):
    g = from_nx(nx.gnp_random_graph(n, p, seed=seed))
    assert count_kclist(g, k, per_vertex=True)[0] == count_networkx(g, k)[0]


def test_the_degeneracy_order_leaves_at_most_degeneracy_later_neighbours():
    g = nx.gnp_random_graph(60, 0.2, seed=3)
    adjacency = [set(g.neighbors(v)) for v in range(60)]
    order = degeneracy_order(adjacency)
    position = {v: i for i, v in enumerate(order)}
    later = max(sum(position[u] > position[v] for u in adjacency[v]) for v in range(60))
    assert sorted(order) == list(range(60))
    assert later == max(nx.core_number(g).values())


@pytest.mark.parametrize("orientation", ["degree", "degeneracy"])
def test_orientation_keeps_every_edge_once_pointing_to_a_higher_id(orientation):
    g = simple("football.mtx")
    dag = orient(g, orientation)
    src = dag.sources()
    assert dag.num_edges == g.num_edges
    assert (dag.indices > src).all()
    for v in range(dag.n):
        row = dag.indices[dag.indptr[v]:dag.indptr[v + 1]]
        assert (np.diff(row) > 0).all()
    # back in original ids the oriented edges are exactly the undirected edges
    a, b = dag.original[src], dag.original[dag.indices]
    rows = g.row_of_entry()
    upper = rows < g.indices
    assert set(zip(np.minimum(a, b).tolist(), np.maximum(a, b).tolist(), strict=True)) == set(
        zip(rows[upper].tolist(), g.indices[upper].tolist(), strict=True))


def test_degeneracy_orientation_bounds_the_out_degree_by_the_core_number():
    g = simple("polbooks.mtx")
    assert orient(g, "degeneracy").max_out_degree == max(nx.core_number(g.to_networkx()).values())


def test_preparation_symmetrizes_and_drops_loops_and_duplicates_with_notices():
    # a directed triangle 0->1->2->0 with a self-loop and a repeated edge: one undirected triangle
    g = CSRGraph.from_edges(4, [0, 1, 2, 2, 0, 3], [1, 2, 0, 2, 1, 0], directed=True, name="messy")
    result = run_variant(g, "kclique", "cpu-serial", {"k": 3}, repeat=1, warmup=0)
    assert result.output == 1
    assert result.record["verified"]
    notices = " ".join(result.record["notices"])
    assert "symmetrized" in notices and "self-loop" in notices and "duplicate" in notices
    assert result.record["input"]["edges"] == 4


def test_networkx_variant_refuses_large_graphs_and_points_to_cpu_reference():
    g = simple("ca-HepTh.mtx")
    with pytest.raises(InputRequirementError, match="cpu-reference"):
        run_variant(g, "kclique", "networkx", {"k": 3}, repeat=1, warmup=0)


def test_networkx_variant_is_verified_against_the_reference():
    result = run_variant(read_graph(data_path("karate.mtx")), "kclique", "networkx", {"k": 4, "per_vertex": True},
                         repeat=1, warmup=0)
    assert result.record["verified"], result.record["verification"]
    assert result.output["cliques"] == 11
    assert result.record["result"]["cliques"] == 11
    assert result.record["metric"]["name"] == "cliques/s"


def test_a_rectangular_matrix_is_refused():
    g = CSRGraph.from_edges(3, [0, 1], [3, 2], n_cols=5, directed=True)
    with pytest.raises(InputRequirementError, match="square"):
        run_variant(g, "kclique", "cpu-reference", {"k": 3}, repeat=1, warmup=0)
