"""Triangle counting: input clean-up, references, CPU and library variants, verification.

GPU variants (simulator) are in test_triangles_gpu.py."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from kernels.algorithms.registry import get_family
from kernels.algorithms.triangles import cpu, reference
from kernels.algorithms.triangles.orientation import orient
from kernels.algorithms.triangles.prepare import prepare, simple_undirected
from kernels.errors import ConstraintError, InputRequirementError, ParameterError
from kernels.graph.csr import CSRGraph
from kernels.graph.generators import gnp, rmat
from kernels.graph.io import read_graph
from kernels.run.runner import run_variant
from tests.conftest import data_path, reference_table

CPU_VARIANTS = ("cpu-serial", "cpu-parallel", "scipy")
COUNTED = [name for name, row in reference_table().items() if row["triangles"]]


def run(graph, variant, **params):
    return run_variant(graph, "triangles", variant, params, repeat=1, warmup=0)


def from_nx(g, name="nx") -> CSRGraph:
    return CSRGraph.from_networkx(g, weight=None, name=name)


def nx_total(g) -> int:
    return sum(nx.triangles(g).values()) // 3


def nx_per_vertex(g) -> np.ndarray:
    t = nx.triangles(g)
    return np.array([t[v] for v in g.nodes()], dtype=np.int64)


def star_with_triangles(leaves: int = 150) -> nx.Graph:
    """A hub joined to every leaf, plus a few leaf-leaf edges: triangles through the hub and one without it."""
    g = nx.star_graph(leaves)
    g.add_edges_from([(1, 2), (3, 4), (5, 6), (7, 8), (8, 9), (7, 9)])
    return g


# ---- the family's metadata ---------------------------------------------------------------

def test_family_lists_the_report_variants_and_the_fast_one():
    fam = get_family("triangles")
    assert set(fam.variants) == {"cpu-serial", "cpu-parallel", "scipy", "graphblas", "gpu-row-block",
                                 "gpu-row-shared", "gpu-spgemm", "gpu-oriented"}
    assert fam.reference_name == "scipy"
    assert fam.metrics[0].name == "edges/s"
    assert fam.variant("gpu-spgemm").kind == "vendor"


def test_oriented_launch_parameters_are_validated():
    fam = get_family("triangles")
    var = fam.variant("gpu-oriented")
    assert fam.resolve_params(var, {"group_size": "32", "block_size": "64"})["group_size"] == 32
    for bad in ({"group_size": 3}, {"group_size": 64}, {"block_size": 16}):
        with pytest.raises(ParameterError, match=next(iter(bad))):
            fam.resolve_params(var, bad)


def test_spgemm_refuses_per_vertex_counts():
    fam = get_family("triangles")
    with pytest.raises(ConstraintError, match="total only"):
        fam.resolve_params(fam.variant("gpu-spgemm"), {"per_vertex": True})


# ---- input clean-up -----------------------------------------------------------------------

def test_directed_input_is_symmetrized_with_a_notice():
    # a directed 3-cycle plus a one-way path 0 -> 3 -> 2: undirected, two triangles
    g = CSRGraph.from_edges(4, [0, 1, 2, 0, 3], [1, 2, 0, 3, 2], directed=True)
    clean, notices = simple_undirected(g)
    assert not clean.directed
    assert any("symmetrized" in n for n in notices)
    result = run(g, "cpu-serial")
    assert result.record["verified"] and int(result.output) == 2
    assert any("symmetrized" in n for n in result.record["notices"])


def test_self_loops_and_repeated_edges_are_ignored_with_notices():
    base = nx.complete_graph(4)
    src = [u for u, v in base.edges()] + [0, 1, 0]
    dst = [v for u, v in base.edges()] + [0, 1, 1]  # two self-loops, one repeated edge
    g = CSRGraph.from_edges(4, src, dst, directed=False, both_directions=True)
    problem = prepare(g, {"per_vertex": False}, 0)
    assert problem.graph.nnz == 12
    assert any("self-loop" in n for n in problem.notices)
    assert any("duplicate" in n for n in problem.notices)
    for variant in CPU_VARIANTS:
        assert int(run(g, variant).output) == 4


def test_a_clean_input_gets_no_notices():
    problem = prepare(from_nx(nx.karate_club_graph()), {"per_vertex": False}, 0)
    assert problem.notices == []


def test_rectangular_matrix_is_refused():
    m = CSRGraph.from_edges(3, [0, 1], [3, 4], n_cols=5, directed=True)
    with pytest.raises(InputRequirementError, match="square"):
        run(m, "cpu-serial")


# ---- the reference counts of the real graphs -----------------------------------------------

@pytest.mark.parametrize("name", COUNTED)
def test_cpu_variants_match_the_published_counts(name):
    expected = int(reference_table()[name]["triangles"])
    graph = read_graph(data_path(name))
    variants = ("cpu-parallel", "scipy") if graph.nnz > 60_000 else CPU_VARIANTS
    for variant in variants:
        result = run(graph, variant)
        assert int(result.output) == expected, variant
        assert result.record["verified"], result.record["verification"]


def test_oracles_agree_with_the_published_counts():
    for name, expected in (("ca-HepTh.mtx", 28339), ("as-caida20071105.mtx", 36365), ("karate.mtx", 45)):
        graph, _ = simple_undirected(read_graph(data_path(name)))
        assert reference.scipy_total(graph) == expected
        assert reference.oriented_count(graph, False) == expected
        assert reference.oriented_count(graph, True).sum() == 3 * expected


# ---- per-vertex counts ------------------------------------------------------------------------

@pytest.mark.parametrize("variant", CPU_VARIANTS)
def test_per_vertex_counts_equal_networkx(variant):
    for g in (nx.karate_club_graph(), nx.les_miserables_graph(), star_with_triangles(40)):
        g = nx.convert_node_labels_to_integers(g)
        result = run(from_nx(g), variant, per_vertex=True)
        np.testing.assert_array_equal(result.output, nx_per_vertex(g))
        assert result.record["result"]["triangles"] == nx_total(g)


def test_oracle_per_vertex_paths_agree():
    g = nx.convert_node_labels_to_integers(nx.les_miserables_graph())
    graph = from_nx(g)
    np.testing.assert_array_equal(reference.scipy_per_vertex(graph), nx_per_vertex(g))
    np.testing.assert_array_equal(reference.oriented_count(graph, True), nx_per_vertex(g))


# ---- generated graphs against SciPy ------------------------------------------------------------

@pytest.mark.parametrize("graph", [rmat(11, 16, seed=3), rmat(9, 8, seed=5), gnp(400, 0.05, seed=2)],
                         ids=lambda g: g.name)
def test_cpu_variants_match_scipy_on_generated_graphs(graph):
    expected = int(run(graph, "scipy").output)
    assert expected > 0
    for variant in ("cpu-serial", "cpu-parallel"):
        result = run(graph, variant)
        assert int(result.output) == expected
        assert result.record["verified"]
    assert reference.oriented_count(graph, False) == expected


def test_numba_oracle_is_used_when_scipy_would_be_too_slow(monkeypatch):
    graph = rmat(10, 16, seed=4)
    exact, method = reference.reference_counts(graph, False)
    assert method.startswith("scipy")
    monkeypatch.setattr(reference, "SCIPY_WORK_LIMIT", 0)
    value, method = reference.reference_counts(graph, False)
    assert method.startswith("numba") and value == exact
    per_vertex, method = reference.reference_counts(graph, True)
    assert method.startswith("numba") and per_vertex.sum() == 3 * exact


def test_scipy_blocks_of_rows_give_the_same_count(monkeypatch):
    graph = rmat(10, 16, seed=6)
    whole = reference.scipy_total(graph)
    monkeypatch.setattr(reference, "CHUNK_WORK", 1000)  # many small blocks of rows
    assert reference.scipy_total(graph) == whole
    np.testing.assert_array_equal(reference.scipy_per_vertex(graph), reference.oriented_count(graph, True))


# ---- graphs with no triangles, isolated vertices, a hub -------------------------------------------

@pytest.mark.parametrize("g", [nx.path_graph(30), nx.complete_bipartite_graph(6, 7), nx.empty_graph(5),
                               nx.empty_graph(0), nx.balanced_tree(3, 3)],
                         ids=["path", "bipartite", "no-edges", "no-vertices", "tree"])
def test_graphs_without_triangles_count_zero(g):
    graph = from_nx(nx.convert_node_labels_to_integers(g))
    for variant in CPU_VARIANTS:
        assert int(run(graph, variant).output) == 0
        counts = run(graph, variant, per_vertex=True).output
        assert counts.shape == (graph.n_rows,) and not counts.any()


def test_isolated_vertices_count_zero_and_do_not_disturb_the_rest():
    g = nx.disjoint_union(nx.complete_graph(5), nx.empty_graph(7))
    g.add_node(20)  # a gap of ids, too
    g = nx.convert_node_labels_to_integers(g)
    for variant in CPU_VARIANTS:
        np.testing.assert_array_equal(run(from_nx(g), variant, per_vertex=True).output, nx_per_vertex(g))


def test_a_hub_with_a_few_triangles():
    g = star_with_triangles(150)
    for variant in CPU_VARIANTS:
        assert int(run(from_nx(g), variant).output) == nx_total(g) == 7


# ---- verification catches wrong answers -----------------------------------------------------------

def test_verification_reports_a_wrong_total_and_wrong_vertices():
    fam = get_family("triangles")
    graph = from_nx(nx.karate_club_graph())
    problem = prepare(graph, {"per_vertex": False}, 0)
    ref = fam.reference(problem, {"per_vertex": False})
    bad = fam.verify(np.int64(44), ref, problem, {"per_vertex": False})
    assert not bad.ok and "44" in bad.detail and "45" in bad.detail
    ref_pv = fam.reference(problem, {"per_vertex": True})
    wrong = ref_pv["value"].copy()
    wrong[3] += 1
    bad = fam.verify(wrong, ref_pv, problem, {"per_vertex": True})
    assert not bad.ok and bad.worst[0]["vertex"] == 3


# ---- helpers of the fast kernel (host side) -------------------------------------------------------

def test_orientation_keeps_each_edge_once_towards_the_higher_degree():
    graph = rmat(9, 8, seed=1)
    og = orient(graph.indptr, graph.indices)
    deg = np.diff(graph.indptr)
    src = np.repeat(np.arange(graph.n_rows), np.diff(og.out_ptr))
    dst = og.out_idx
    assert len(dst) == graph.nnz // 2
    assert np.all((deg[src] < deg[dst]) | ((deg[src] == deg[dst]) & (src < dst)))
    for u in range(graph.n_rows):  # rows stay sorted
        row = dst[og.out_ptr[u]:og.out_ptr[u + 1]]
        assert np.all(np.diff(row) > 0)
    assert og.max_out_degree <= np.sqrt(graph.nnz)  # sqrt(2m)


def test_each_useful_edge_has_one_owner_with_the_longer_out_list():
    graph = rmat(9, 8, seed=1)
    og = orient(graph.indptr, graph.indices)
    out_deg = np.diff(og.out_ptr)
    src = np.repeat(np.arange(graph.n_rows), out_deg)
    useful = out_deg[og.out_idx] > 0  # an edge to a vertex without out-neighbours closes no triangle
    expected = {frozenset(e) for e in zip(src[useful].tolist(), og.out_idx[useful].tolist(), strict=True)}
    owner = np.repeat(np.arange(graph.n_rows), np.diff(og.part_ptr))
    partner = og.part_idx
    got = [frozenset(e) for e in zip(owner.tolist(), partner.tolist(), strict=True)]
    assert len(got) == len(set(got)) and set(got) == expected
    assert np.all(out_deg[owner] >= out_deg[partner])
    np.testing.assert_array_equal(og.work, np.bincount(owner, weights=out_deg[partner], minlength=graph.n_rows))
    bins = np.floor(np.log2(og.work[og.owners]))
    assert np.all(np.diff(bins) <= 0)  # heaviest first
    assert set(og.owners) == set(np.flatnonzero(og.work > 0))


def test_schedule_covers_every_partner_once(monkeypatch):
    from kernels.algorithms.triangles import orientation

    graph = rmat(10, 8, seed=2)
    og = orient(graph.indptr, graph.indices)
    monkeypatch.setattr(orientation, "HEAVY_PROBES_PER_LANE", 2)  # chunks of few partners
    sched = orientation.schedule(og, 32, 4, 16)
    covered = np.zeros(len(og.part_idx), dtype=np.int64)
    for v, lo, hi in zip(sched.heavy_vertex, sched.heavy_lo, sched.heavy_hi, strict=True):
        assert og.part_ptr[v] <= lo < hi <= og.part_ptr[v + 1]
        covered[lo:hi] += 1
    for v in sched.light:
        covered[og.part_ptr[v]:og.part_ptr[v + 1]] += 1
    assert np.all(covered == 1)
    assert len(sched.heavy_vertex) > len(np.unique(sched.heavy_vertex))  # some owners were split
    assert sched.rounds == len(sched.heavy_vertex) + -(-len(sched.light) // 8)


def test_merge_step_estimate_counts_the_upper_entries_merges():
    # path 0-1-2 plus edge 0-2: row 0 = [1, 2]: (0,1): 1 later entry + deg 1 = 2 -> 3 steps,
    # (0,2): 0 + 2 = 2; row 1 = [0, 2]: (1,2): 0 + 2 = 2; row 2: nothing above
    graph = from_nx(nx.cycle_graph(3))
    np.testing.assert_array_equal(cpu.merge_steps_per_row(graph.indptr, graph.indices), [5, 2, 0])
