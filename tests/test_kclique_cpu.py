"""The numba kClist variants (cpu-serial, cpu-parallel) against the plain-Python reference."""

from __future__ import annotations

from math import comb

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernels.algorithms.kclique.cpu import run_parallel, run_serial
from kernels.algorithms.kclique.prepare import orient, simple_undirected
from kernels.algorithms.kclique.reference import count_networkx
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph
from kernels.run.runner import run_variant
from tests.conftest import data_path, reference_table

SMALL_REAL = ("karate.mtx", "dolphins.mtx", "football.mtx", "polbooks.mtx", "Stranke94.mtx")
CPU_VARIANTS = ("cpu-serial", "cpu-parallel")


def from_nx(g) -> CSRGraph:
    return CSRGraph.from_networkx(nx.convert_node_labels_to_integers(g), weight=None, name="nx")


def run(graph, variant, **params):
    return run_variant(graph, "kclique", variant, params, repeat=1, warmup=0)


@pytest.mark.parametrize("name", SMALL_REAL)
@pytest.mark.parametrize("variant", CPU_VARIANTS)
@pytest.mark.parametrize("orientation", ["degree", "degeneracy"])
def test_cpu_variants_equal_the_reference_for_k_3_to_6(name, variant, orientation):
    graph = read_graph(data_path(name))
    for k in (3, 4, 5, 6):
        result = run(graph, variant, k=k, orientation=orientation)
        assert result.record["verified"], result.record["verification"]
        if k == 3:
            assert result.output == int(reference_table()[name]["triangles"])


@pytest.mark.parametrize("variant", CPU_VARIANTS)
def test_per_vertex_counts_equal_the_reference_and_sum_to_k_times_total(variant):
    graph = read_graph(data_path("football.mtx"))
    for k in (3, 5):
        result = run(graph, variant, k=k, per_vertex=True)
        assert result.record["verified"], result.record["verification"]
        assert result.output["per_vertex"].sum() == k * result.output["cliques"]


@pytest.mark.parametrize("k", [3, 8, 12, 16])
def test_complete_graph_counts_and_large_k(k):
    dag = orient(simple_undirected(from_nx(nx.complete_graph(18))), "degree")
    assert run_serial(dag, k, False) == comb(18, k)
    out = run_parallel(dag, k, True)
    assert out["cliques"] == comb(18, k)
    assert (out["per_vertex"] == comb(17, k - 1)).all()


def test_triangle_free_graphs_count_zero():
    for g in (nx.grid_2d_graph(6, 6), nx.complete_bipartite_graph(8, 9), nx.cycle_graph(11)):
        for variant in CPU_VARIANTS:
            assert run(from_nx(g), variant, k=3).output == 0


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 16), st.floats(0.1, 0.95), st.integers(0, 10_000), st.integers(3, 8),
       st.sampled_from(["degree", "degeneracy"]))
def test_cpu_kclist_equals_networkx_on_random_graphs(n, p, seed, k, orientation):
    g = from_nx(nx.gnp_random_graph(n, p, seed=seed))
    total, per_vertex = count_networkx(g, k, per_vertex=True)
    dag = orient(simple_undirected(g), orientation)
    assert run_serial(dag, k, False) == total
    out = run_parallel(dag, k, True)
    assert out["cliques"] == total
    np.testing.assert_array_equal(out["per_vertex"], per_vertex)


def test_generated_power_law_graph():
    g = from_nx(nx.powerlaw_cluster_graph(400, 6, 0.6, seed=2))
    for variant in CPU_VARIANTS:
        for k in (4, 6):
            assert run(g, variant, k=k, orientation="degeneracy").record["verified"]


def test_the_record_reports_cliques_per_second_and_edges_per_second():
    rec = run(read_graph(data_path("karate.mtx")), "cpu-parallel", k=4).record
    metrics = {m["name"]: m["value"] for m in rec["metrics"]}
    assert rec["result"] == {"k": 4, "cliques": 11}
    assert metrics["cliques/s"] == pytest.approx(11 / rec["timing"]["kernel"]["median_s"])
    assert metrics["edges/s"] == pytest.approx(78 / rec["timing"]["kernel"]["median_s"])
    assert rec["input"]["max_out_degree"] >= 1


def test_the_command_line_runs_a_verified_count(capsys):
    from kernels.cli import main

    assert main(["run", "kclique", "cpu-serial", str(data_path("dolphins.mtx")), "--param", "k=4",
                 "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "'cliques': 27" in out and "verified  yes" in out
