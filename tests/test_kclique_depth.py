"""The depth of the k-clique search, as the ``work`` rule reads it: ``sampled_clique_counts`` (a
particle filter over the oriented search, a fixed seed, a cap on the work) against exact counts,
its determinism, its cap and its empty inputs, and the branches of ``kclique_work`` that read it
(k-cliques per edge: the two depth branches and the deep override), with the long-list guard, on
crafted searches. The replay on the measured cases is in
tests/test_auto_params.py."""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pytest

from kernels.algorithms import auto_rules
from kernels.algorithms.auto_rules import CliqueSearch, kclique_work, sampled_clique_counts
from kernels.algorithms.kclique.cpu import run_serial
from kernels.algorithms.kclique.prepare import orient, simple_undirected
from kernels.graph.csr import CSRGraph
from kernels.graph.generators import chung_lu, geometric, gnp, rmat


def dag(graph):
    return orient(simple_undirected(graph), "degree")


def complete(n: int):
    rows, cols = np.triu_indices(n, 1)
    return dag(CSRGraph.from_edges(n, rows, cols, directed=False, both_directions=True))


GRAPHS = {"geometric": lambda: geometric(3000, 0.04, seed=1), "rmat": lambda: rmat(10, 8, seed=2),
          "chung-lu": lambda: chung_lu(3000, 10, 2.5, seed=4), "geo-3d": lambda: geometric(2000, 0.12, dim=3, seed=5)}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_sampled_counts_follow_the_exact_counts_level_by_level(name):
    d = dag(GRAPHS[name]())
    est = sampled_clique_counts(d.indptr, d.indices, 6)
    assert est.counts[:2] == (d.n, d.num_edges) and not est.capped
    assert est.particles == (1024, 1024, 1024)
    for j in range(3, 7):
        exact = run_serial(d, j, False)
        assert exact >= 200
        assert abs(math.log10(est.counts[j - 1] / exact)) < 0.15, (j, exact, est.counts[j - 1])   # within 1.4x
    assert est.per_edge(6) == est.counts[5] / d.num_edges


def test_a_search_that_dies_reads_as_dead():
    d = dag(gnp(2000, 0.01, seed=3))                      # 1,320 triangles, one 4-clique, nothing deeper
    est = sampled_clique_counts(d.indptr, d.indices, 6)
    assert abs(est.counts[2] / run_serial(d, 3, False) - 1) < 0.1
    assert est.per_edge(4) < 1e-3 and est.counts[4:] == (0.0, 0.0)
    assert est.particles[-1] == 0                         # nothing left to follow at 5 vertices


def test_sampled_counts_are_deterministic_and_the_same_whatever_k():
    d = dag(chung_lu(3000, 10, 2.5, seed=4))
    a = sampled_clique_counts(d.indptr, d.indices, 7)
    assert a == sampled_clique_counts(d.indptr, d.indices, 7)                 # a fixed seed
    assert a != sampled_clique_counts(d.indptr, d.indices, 7, seed=1)
    for k in (4, 5, 6):                                   # the counts up to k do not depend on the k asked for
        assert sampled_clique_counts(d.indptr, d.indices, k).counts == a.counts[:k]


def test_the_work_is_capped_on_dense_graphs():
    d = complete(200)                                     # every subset a clique: C(200, 7) = 2.3e12 7-cliques
    start = time.perf_counter()
    est = sampled_clique_counts(d.indptr, d.indices, 7, max_tests=1 << 14)
    assert time.perf_counter() - start < 2.0
    assert est.capped and max(est.particles) <= 1024 and min(est.particles) >= 1
    assert est.particles[0] < 1024                        # the triangles' candidates hit the cap first
    assert est.counts[2] == math.comb(200, 3)             # every pair adjacent: exact
    for j in range(4, 8):
        assert abs(math.log10(est.counts[j - 1] / math.comb(200, j))) < 0.1
    assert not sampled_clique_counts(d.indptr, d.indices, 4, max_tests=1 << 20).capped


def test_empty_and_tiny_graphs():
    none = sampled_clique_counts(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32), 5)
    assert none.counts == (0.0,) * 5 and none.particles == (0, 0) and none.per_edge(5) == 0.0
    edgeless = sampled_clique_counts(np.zeros(6, dtype=np.int64), np.zeros(0, dtype=np.int32), 4)
    assert edgeless.counts == (5.0, 0.0, 0.0, 0.0)
    star = dag(CSRGraph.from_edges(30, np.zeros(29, dtype=np.int64), np.arange(1, 30), directed=False,
                                   both_directions=True))
    assert sampled_clique_counts(star.indptr, star.indices, 6).counts == (30.0, 29.0, 0.0, 0.0, 0.0, 0.0)
    triangle = complete(3)
    assert sampled_clique_counts(triangle.indptr, triangle.indices, 3).counts == (3.0, 3.0, 1.0)
    assert sampled_clique_counts(triangle.indptr, triangle.indices, 5).counts == (3.0, 3.0, 1.0, 0.0, 0.0)
    assert sampled_clique_counts(triangle.indptr, triangle.indices, 2).counts == (3.0, 3.0)


def _search(out_degrees, k, density, cpe):
    s = CliqueSearch.of(np.asarray(out_degrees), k, 132)
    return dataclasses.replace(s, pair_density=density, cliques_per_edge=cpe)


def test_k4_takes_sorted_lists_on_short_out_lists_with_few_4_cliques_per_edge():
    short = [30] * 200 + [8] * 20_000                     # Chung-Lu n = 200,000-like: mean d⁺ < 16, real search
    assert kclique_work(_search(short, 4, 0.15, None)).value == "vertex"       # depth unknown: as before
    choice = kclique_work(_search(short, 4, 0.15, 0.8))
    assert choice.value == "list" and "0.8 sampled 4-cliques per edge" in choice.reason and "(< 2)" in choice.reason
    assert kclique_work(_search(short, 4, 0.15, 4.2)).value == "vertex"        # a 2-D geometric graph's depth
    long = [38] * 100 + [22] * 2_000                      # community R-MAT: mean d⁺ 22, bitmaps win at k = 4
    assert kclique_work(_search(long, 4, 0.16, 0.96)).value == "vertex"
    mesh = [6] * 60_000 + [3] * 240_000                   # Delaunay 3·10⁵: S > 5·10⁵, the mesh test comes first
    assert CliqueSearch.of(np.asarray(mesh), 4, 132).total_search > auto_rules.KCLIQUE_K4_SEARCH
    assert kclique_work(_search(mesh, 4, 0.48, None)).value == "list"


def test_k5_and_up_take_sorted_lists_where_the_search_dies_out():
    skewed = [17] * 500 + [8] * 40_000                    # power-law matrix-like: skewed, pairs dense (0.5)
    for k in (6, 7):
        assert kclique_work(_search(skewed, k, 0.5, None)).value == "edge"
        assert kclique_work(_search(skewed, k, 0.5, 0.3)).value == "edge"     # cliques to spare
        choice = kclique_work(_search(skewed, k, 0.5, 0.004))
        assert choice.value == "list" and "dies out" in choice.reason and "(< 0.02)" in choice.reason
    uniform = [38] * 100 + [22] * 2_000                   # community R-MAT: uniform out-degrees
    assert kclique_work(_search(uniform, 6, 0.16, 0.09)).value == "vertex"
    assert kclique_work(_search(uniform, 6, 0.16, 0.0)).value == "list"
    tiny = [12] + [3] * 200                               # launch-bound whatever the depth
    assert kclique_work(_search(tiny, 5, 0.5, 0.0)).value == "vertex"
    # the long-list guard (shipped after the fourth check): from mean d⁺ 48 bitmaps even where pairs are
    # sparse or the search dies (G(n, p) n = 3,000 at mean d⁺ 60: vertex 1.35-1.73x faster than list)
    gnp3000 = [103] + [60] * 3_000
    assert auto_rules.KCLIQUE_LONG_LISTS == 48
    for k in (5, 6, 7):
        guarded = kclique_work(_search(gnp3000, k, 0.044, 0.0))
        assert guarded.value == "vertex" and "out-lists of 60.0" in guarded.reason and "(>= 48)" in guarded.reason
        # rule (a), the fourth check's: no guard
        assert kclique_work(_search(gnp3000, k, 0.044, 0.0), long_lists=math.inf).value == "list"
    gnp6000 = [60] + [36] * 6_000                         # G(n, p) at mean d⁺ 36: under the guard, list
    assert kclique_work(_search(gnp6000, 5, 0.012, 0.0)).value == "list"
    assert kclique_work(_search(gnp3000, 4, 0.044, 0.0)).value == "vertex"   # k = 4: its own guard at 16


def test_a_deep_search_overrides_sparse_pairs_from_k_6():
    # Chung-Lu n = 100,000, exponent 2.5 (the fourth check): pairs 0.081, yet 0.23-0.24 sampled k-cliques
    # per edge at k = 5, 6 and 0.17 at 7, on skewed out-degrees; list best at k = 5, edge at 6 and 7
    skewed = [30] * 300 + [4] * 30_000
    assert (auto_rules.KCLIQUE_DEEP, auto_rules.KCLIQUE_DEEP_K) == (auto_rules.KCLIQUE_DYING, 6)
    assert kclique_work(_search(skewed, 5, 0.081, 0.23)).value == "list"       # k = 5: pairs decide
    for k, cpe in ((6, 0.24), (7, 0.17)):
        choice = kclique_work(_search(skewed, k, 0.081, cpe))
        assert choice.value == "edge" and "the cliques persist" in choice.reason
        assert "(>= 0.02 at k >= 6)" in choice.reason
        assert kclique_work(_search(skewed, k, 0.081, cpe), deep=math.inf).value == "list"      # rule (a)
        assert kclique_work(_search(skewed, k, 0.081, None)).value == "list"    # depth unknown: pairs decide
    # under the deep cut (check2's Chung-Lu 2.6 at k = 7: 0.008 per edge) the sparse pairs still send it to list
    assert kclique_work(_search(skewed, 7, 0.055, 0.008)).value == "list"
    assert kclique_work(_search(skewed, 6, 0.055, 0.022)).value == "edge"      # the same graph at k = 6
    # dense pairs: the override changes nothing
    assert kclique_work(_search(skewed, 6, 0.5, 0.3)).value == "edge"
