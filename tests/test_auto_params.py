"""``auto`` parameter values: the rules (pure functions of crafted features), the registry's
parsing and refusals, a run that records what was asked and what ran, ``--param x=auto`` and
``--grid x=auto,8`` on the command line, and the k-clique ``gpu`` variant on the simulator."""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict

import numpy as np
import pytest

from kernels.algorithms import auto_rules
from kernels.algorithms.registry import AUTO, get_variant
from kernels.cli import main as cli_main
from kernels.errors import ParameterError
from kernels.graph.io import read_graph
from kernels.results import plain
from kernels.results.schema import check_record
from kernels.run.runner import run_variant
from kernels.run.sim_estimate import estimate
from tests.bench_modules import load_benchmark
from tests.conftest import data_path

KARATE = str(data_path("karate.mtx"))
KCLIQUE_SIM = {"block_size": 32, "max_blocks": 2}   # few simulated threads


# ---- the rules -------------------------------------------------------------------------------

def test_spmv_rule_gives_every_lane_four_entries_of_a_typical_row():
    assert auto_rules.spmv_threads_per_row(np.full(100, 7)).value == 1      # 7-point stencil
    assert auto_rules.spmv_threads_per_row(np.full(100, 27)).value == 4     # 27-point stencil
    assert auto_rules.spmv_threads_per_row(np.full(100, 500)).value == 32   # clamped to a warp
    assert auto_rules.spmv_threads_per_row(np.zeros(10, dtype=int)).value == 1


def test_long_row_rule_cuts_rows_longer_than_a_thousandth_of_the_matrix():
    assert auto_rules.spmv_long_row(106_762, 64).value == 256          # as-caida: its 2,628-entry hub is split
    assert auto_rules.spmv_long_row(917_504, 64).value == 512
    assert auto_rules.spmv_long_row(109_051_904, 64).value == 16384    # 10^8 entries: the measured best
    assert auto_rules.spmv_long_row(10, 64).value == 256               # the floor...
    assert auto_rules.spmv_long_row(10_000, 1000).value == 1024        # ...and never below short_row


def test_spmv_rule_widens_the_groups_when_a_few_hub_rows_hold_most_entries():
    lengths = np.concatenate([np.full(1000, 3), [3000]])   # mean 6, but half the entries in one row
    assert auto_rules.spmv_threads_per_row(lengths).value == 32
    assert auto_rules.spmv_threads_per_row(lengths, limit=8).value == 8


def test_triangle_rule_takes_a_partner_list_in_one_step_until_the_owners_fill_the_gpu():
    assert auto_rules.triangles_group_size(2.2, owners=30_000).value == 4
    assert auto_rules.triangles_group_size(16.3, owners=800).value == 32
    full = auto_rules.triangles_group_size(2.2, owners=200_000)
    assert full.value == 1 and "threads in flight" in full.reason
    assert auto_rules.triangles_group_size(85.0, owners=70_000).value == 16


def _search(out_degrees, k, sms=132):
    return auto_rules.CliqueSearch.of(np.asarray(out_degrees), k, sms)


def test_clique_search_sums_the_subsets_of_k_minus_1_out_neighbours_exactly():
    s = _search([0, 1, 3, 5, 5], k=3)
    assert s.total_search == 0 + 0 + 3 + 10 + 10
    assert (s.n, s.max_out_degree, s.mean_out_degree) == (5, 5, 14 / 5)
    # the largest vertex's longest subtree, C(d⁺max - 1, k - 3), over an SM's share of all of them
    five = _search([0, 1, 3, 5, 5], k=5)
    assert five.longest_subtree_share == pytest.approx(6 / ((0 + 1 + 6 + 6) / 132))
    assert _search([], k=5).total_search == 0 and _search([0, 0], k=5).longest_subtree_share == 0


def test_kclique_rule_goes_edge_centric_on_deep_skewed_searches():
    star_heavy = [31] + [2] * 9_000                   # co-authorship-like: one deep, skewed neighbourhood
    assert auto_rules.kclique_work(_search(star_heavy, 6)).value == "edge"
    spread = [30] * 50 + [12] * 16_000                # R-MAT 14-like at k=5: the search is spread out
    assert auto_rules.kclique_work(_search(spread, 5)).value == "vertex"
    # the same graph on a GPU of 1,000 SMs: an SM's share shrinks below the deepest vertex's subtree
    assert auto_rules.kclique_work(_search(spread, 5, sms=1000)).value == "edge"
    assert auto_rules.kclique_work(_search([142] + [12] * 200, 5)).value == "edge"
    assert auto_rules.kclique_work(_search(spread, 6)).value == "edge"            # k >= 6 on skewed degrees


def test_kclique_rule_on_meshes_and_uniform_graphs_at_k_5_or_more():
    mesh = [3] * 30_000 + [6] * 2_000                 # Delaunay: d⁺max 6, about 1 subset per vertex
    assert auto_rules.kclique_work(_search(mesh, 6)).value == "list"
    # uniform out-degrees (d⁺max < 2x the mean): sorted lists where few pairs are adjacent (G1, a
    # G(n, p) graph: 0.058), bitmaps where many are (the 27-point stencil: 0.57, vertex 1.2-1.6x faster)
    g1 = [24] * 800 + [41]
    stencil = [13] * 30_000 + [9] * 2_000
    for k in (5, 6, 7):
        assert auto_rules.kclique_work(dataclasses.replace(_search(g1, k), pair_density=0.058)).value == "list"
        choice = auto_rules.kclique_work(dataclasses.replace(_search(stencil, k), pair_density=0.57))
        assert choice.value == "vertex" and "uniform out-degrees" in choice.reason and "0.570" in choice.reason
    no_search = [6] + [1] * 5_000                     # nothing to search: never a block per edge
    assert auto_rules.kclique_work(_search(no_search, 7)).value == "list"
    tiny = [12] + [3] * 200                           # a few thousand subsets: launch-bound
    assert auto_rules.kclique_work(_search(tiny, 5)).value == "vertex"
    assert auto_rules.kclique_group_size(6, "list").value == 8
    assert auto_rules.kclique_group_size(6, "edge").value == 4
    assert auto_rules.kclique_group_size(5, "edge").value == 1


def test_kclique_rule_at_k_4_by_the_whole_search():
    assert auto_rules.kclique_work(_search([31] + [2] * 9_000, 4)).value == "edge"      # ca-HepTh-like
    assert auto_rules.kclique_work(_search([6] * 1_000 + [3] * 100, 4)).value == "edge"  # a small mesh
    assert auto_rules.kclique_work(_search([6] * 2_000 + [3] * 30_000, 4)).value == "list"  # a large mesh
    assert auto_rules.kclique_work(_search([24] * 800 + [41], 4)).value == "vertex"      # G1, dense
    assert auto_rules.kclique_work(_search([78] + [20] * 2000, 4)).value == "vertex"     # bcsstk13
    # R-MAT at edge factor 8 (the old rule's 2.2x miss: edge by mean out-degree): a real search → vertex
    assert auto_rules.kclique_work(_search([60] * 40 + [6] * 4_000, 4)).value == "vertex"
    # sparse pairs but long out-lists (G(n, p) with mean d⁺ 24 or 40): at k = 4 bitmaps, said so
    for dplus, density in (([24] * 800 + [41], 0.058), ([40] * 4_000 + [70], 0.021)):
        choice = auto_rules.kclique_work(dataclasses.replace(_search(dplus, 4), pair_density=density))
        assert choice.value == "vertex" and "out-lists of" in choice.reason and ">= 16" in choice.reason
        assert auto_rules.kclique_work(dataclasses.replace(_search(dplus, 5), pair_density=density)).value == "list"


def test_the_kclique_rule_replays_the_measured_cases_within_the_goal():
    """The rule against the measurements (benchmarks/results/kclique-auto: the fit, held-out and
    three check sets on an H100, the fourth and fifth checks on an H200): a regression guard, not a
    measurement. The shipped rule, (d'), was chosen after the fourth check: its scores there and before
    are in sample; the fifth check is its unseen test, and its ``gpu`` run ran (d'), whose replay must
    pick as it did. The fourth check's ``gpu`` run ran rule (a) (``RULE_A`` in bench_kclique_auto.py),
    whose replay must pick as it did there."""
    import json
    import math
    from pathlib import Path

    times, hist = defaultdict(dict), {}
    files = sorted((Path(__file__).parents[1] / "benchmarks" / "results" / "kclique-auto").glob("*.jsonl"))
    if not files:
        pytest.skip("the measured k-clique cases (benchmarks/results/kclique-auto) are not in this tree")
    third, fourth, fifth = set(), set(), set()     # the cases of the third, fourth and fifth checks
    measured4, measured5 = {}, {}                  # their gpu (auto) runs: the work each resolved to
    for path in files:
        for line in path.read_text().splitlines():
            row = json.loads(line)
            if row.get("verified") and "median_s" in row and row["nnz"] >= 2000:
                times[(row["input"], row["k"])][row["variant"]] = row["median_s"]
                hist[(row["input"], row["k"])] = row["dplus_hist"]
                for name, cases, measured in (("check3", third, None), ("check4", fourth, measured4),
                                              ("check5", fifth, measured5)):
                    if name in path.name:
                        cases.add((row["input"], row["k"]))
                        if measured is not None and row["variant"] == "gpu":
                            measured[(row["input"], row["k"])] = row["resolved"]["work"]
    # each input's out-neighbour pair density, as the rule estimates it from the graph
    # (benchmarks/diag/kclique_density_fit.py --write); the histograms alone cannot give it
    density_file = files[0].parent / "kclique-pair-density.json"
    density = json.loads(density_file.read_text()) if density_file.exists() else {}
    # and the sampled depth of the search, k-cliques per edge (benchmarks/diag/kclique_sampled_fit.py --write)
    depth_file = files[0].parent / "kclique-sampled-depth.json"
    depth = json.loads(depth_file.read_text()) if depth_file.exists() else {}
    variants = ("gpu-vertex", "gpu-edge", "gpu-list")
    rule_a = load_benchmark("bench_kclique_auto").RULE_A
    assert math.isinf(rule_a["long_lists"]) and math.isinf(rule_a["deep"])

    def pick(spec, k, rule=None):
        search = _search(np.repeat(np.arange(len(hist[(spec, k)])), hist[(spec, k)]), k)
        search = dataclasses.replace(search, pair_density=density.get(spec, 1.0),
                                     cliques_per_edge=depth.get(spec, {}).get(str(k)))
        return auto_rules.kclique_work(search, **(rule or {})).value

    def ratio(spec, k, rule=None):
        t = times[(spec, k)]
        return t[f"gpu-{pick(spec, k, rule)}"] / min(t[v] for v in variants)

    replayed = [key for key, t in times.items() if all(v in t for v in variants)]
    assert len(replayed) == 422 and len(density) >= 106 and len(depth) >= 106
    ratios = dict(zip(replayed, (ratio(*key) for key in replayed), strict=True))
    # The shipped rule (d') on all 422 cases (docs/defaults.md, kclique_sampled_fit.py): 396 within 10 %,
    # worst 1.53x (the fifth check's Chung-Lu exponent 2.35 at k = 4: vertex picked, list best). In sample,
    # the 326 cases before the fifth check: 319, worst 1.38x (the 194 before the third check: 192, 1.30x;
    # the third check's 56: 54, 1.38x; the fourth check's 76: 73, 1.35x)
    assert sum(r <= 1.10 for r in ratios.values()) == 396 and 1.52 < max(ratios.values()) < 1.53
    before_check3 = [r for key, r in ratios.items() if key not in third | fourth | fifth]
    assert len(before_check3) == 194
    assert sum(r <= 1.10 for r in before_check3) >= 192 and max(before_check3) < 1.31
    check3 = [ratios[key] for key in third]
    assert len(check3) == 56 and sum(r <= 1.10 for r in check3) >= 54 and max(check3) < 1.385
    check4 = [ratios[key] for key in fourth]
    assert len(check4) == 76 and sum(r <= 1.10 for r in check4) >= 73 and max(check4) < 1.355
    # the fifth check, unseen by (d'), ran it: the replay picks what the gpu run picked on the device
    # (the recorded pair density and sampled depth are those the run computed) and scores what was
    # measured: 77 of 96, worst 1.53x by the variants' times (1.52x by the gpu run's own), the goal not met
    assert len(fifth) == 96 and len(measured5) == 96
    assert all(pick(spec, k) == work for (spec, k), work in measured5.items())
    check5 = [ratios[key] for key in fifth]
    assert sum(r <= 1.10 for r in check5) == 77 and 1.52 < max(check5) < 1.53
    # rule (a), as the fourth check's gpu (auto) run ran it: the replay picks what the run picked, and so
    # scores what was measured: 68 of 76, worst 1.88x. On the fifth check, unseen by (a) too: 79 of 96,
    # worst 1.65x (all 422: 391, worst 1.88x)
    assert len(measured4) == 76
    assert all(pick(spec, k, rule_a) == work for (spec, k), work in measured4.items())
    check4_a = [ratio(*key, rule_a) for key in fourth]
    assert sum(r <= 1.10 for r in check4_a) == 68 and 1.87 < max(check4_a) < 1.89
    check5_a = [ratio(*key, rule_a) for key in fifth]
    assert sum(r <= 1.10 for r in check5_a) == 79 and 1.64 < max(check5_a) < 1.66
    all_a = [ratio(*key, rule_a) for key in replayed]
    assert sum(r <= 1.10 for r in all_a) == 391
    # the shipped rule departs from rule (a) on the fourth check only where the guard or the deep override
    # fire: G(n, p) at mean d⁺ 62.6, k = 5..7 (vertex), Chung-Lu exponent 2.5 at k = 6, 7 (edge); on the
    # fifth the same two: G(n, p)/G(n, m) at mean d⁺ 49.5-54.3, k = 5..7 (vertex), and sparse pairs with
    # >= 0.02 sampled k-cliques per edge at k = 6 (Chung-Lu 2.5-2.6, R-MAT 16) and 7 (Chung-Lu 2.5, R-MAT 16)
    moved = {key for key in measured4 if pick(*key) != measured4[key]}
    assert moved == {("gen:gnp:n=2500,p=0.05", k) for k in (5, 6, 7)} | {
        ("gen:chung_lu:n=100000,avg_degree=8,exponent=2.5", k) for k in (6, 7)}
    moved5 = {key for key in fifth if pick(*key) != pick(*key, rule_a)}
    guard5 = ("gen:gnp:n=9000,p=0.011", "gen:gnp:n=2000,p=0.052", "gen:gnm:n=7000,m=380000")
    assert moved5 == {(spec, k) for spec in guard5 for k in (5, 6, 7)} | {
        ("gen:chung_lu:n=110000,avg_degree=10,exponent=2.6", 6),
        ("gen:chung_lu:n=250000,avg_degree=7,exponent=2.55", 6),
        *(("gen:chung_lu:n=140000,avg_degree=7,exponent=2.5", k) for k in (6, 7)),
        *(("gen:rmat:scale=16,edge_factor=6,a=0.5,b=0.2,c=0.2,d=0.1", k) for k in (6, 7))}
    # and each revised case by name: the lattice, the Chung-Lu graph near the threshold, G(n, p) at k=4;
    # the graphs whose cliques die out (power-law matrices, community R-MATs at k = 6, 7; the fourth
    # check's too), the k = 4 few-cliques branch (Chung-Lu n = 20,000, 200,000 and the fourth check's
    # n = 40,000 just under the cut), the large Delaunay graphs (the mesh test first); the long-list guard
    # (G(n, p) at mean d⁺ 60 and 63, k = 5, 6) and the deep override (Chung-Lu 2.5 at k = 6, 7; 2.6 at k = 6).
    # All from the sets before the fifth check (whose Chung-Lu 2.6 graph at k = 6 the deep override misses)
    for (spec, k), t in times.items():
        if ("stencil:kind=27pt" in spec and k in (5, 6)) \
                or (spec == "gen:chung_lu:n=50000,avg_degree=10,exponent=2.6" and k in (4, 5, 6)) \
                or (spec == "gen:gnp:n=4000,p=0.02" and k == 4) or ("powerlaw_matrix" in spec and k in (6, 7)) \
                or (spec.startswith(("gen:rmat:scale=11,edge_factor=64", "gen:rmat:scale=12,edge_factor=40",
                                     "gen:rmat:scale=13,edge_factor=48")) and k in (6, 7)) \
                or (spec in ("gen:chung_lu:n=20000", "gen:chung_lu:n=200000,avg_degree=8,exponent=2.4",
                             "gen:chung_lu:n=40000,avg_degree=14,exponent=2.4", "gen:delaunay:n=300000",
                             "gen:delaunay:n=400000") and k == 4) \
                or (spec in ("gen:gnp:n=3000,p=0.04", "gen:gnp:n=2500,p=0.05") and k in (5, 6)) \
                or (spec == "gen:chung_lu:n=100000,avg_degree=8,exponent=2.5" and k in (6, 7)):
            assert t[f"gpu-{pick(spec, k)}"] <= 1.10 * min(t[v] for v in variants), (spec, k)


def test_out_pair_density_estimates_the_share_of_adjacent_out_neighbour_pairs():
    from kernels.algorithms.kclique.prepare import orient, simple_undirected
    from kernels.graph.csr import CSRGraph
    from kernels.graph.generators import gnp

    def dag(g):
        return orient(simple_undirected(g), "degree")

    rows, cols = np.triu_indices(12, 1)
    complete = dag(CSRGraph.from_edges(12, rows, cols, directed=False, both_directions=True))
    assert auto_rules.out_pair_density(complete.indptr, complete.indices) == 1.0      # every pair an edge
    star = dag(CSRGraph.from_edges(30, np.zeros(29, dtype=np.int64), np.arange(1, 30), directed=False,
                                   both_directions=True))
    assert auto_rules.out_pair_density(star.indptr, star.indices) == 0.0              # no vertex has two out-neighbours
    sparse = dag(gnp(3000, 0.01, seed=3))
    # exactly: oriented triangles over sum C(d+, 2), by SciPy
    import scipy.sparse as sp
    a = sp.csr_matrix((np.ones(len(sparse.indices)), sparse.indices, sparse.indptr), shape=(3000, 3000))
    dplus = np.diff(sparse.indptr)
    exact = float((a @ a).multiply(a).sum()) / float((dplus * (dplus - 1) // 2).sum())
    estimate = auto_rules.out_pair_density(sparse.indptr, sparse.indices)
    assert estimate == auto_rules.out_pair_density(sparse.indptr, sparse.indices)   # a fixed seed
    assert abs(estimate - exact) < 0.01 and estimate < auto_rules.KCLIQUE_SPARSE_PAIRS


def test_kclique_rule_takes_sorted_lists_where_out_neighbourhoods_are_nearly_empty():
    skewed = [40] + [12] * 3000
    for k in (4, 5, 6, 7):
        dense = auto_rules.kclique_work(_search(skewed, k)).value
        assert dense in ("vertex", "edge")
        sparse = dataclasses.replace(_search(skewed, k), pair_density=0.01)
        choice = auto_rules.kclique_work(sparse)
        assert choice.value == "list" and "0.010 of out-neighbour pairs adjacent" in choice.reason
        # the threshold, 0.1: the measured graphs leave a gap from 0.067 (G1) to 0.15 (Chung-Lu n=20,000)
        near = auto_rules.kclique_work(dataclasses.replace(_search(skewed, k), pair_density=0.09))
        assert near.value == "list" and "(< 0.1)" in near.reason
        assert auto_rules.kclique_work(dataclasses.replace(_search(skewed, k), pair_density=0.15)).value == dense
    mesh = dataclasses.replace(_search([6] * 2_000 + [3] * 30_000, 5), pair_density=0.0)
    assert auto_rules.kclique_work(mesh).value == "list"                              # the mesh branch's own words
    assert "shallow" in auto_rules.kclique_work(mesh).reason


def test_spmv_and_triangle_rules_widen_the_groups_of_inputs_too_small_to_fill_the_gpu():
    rows = np.full(1589, 5)                                     # netscience-sized: 1,589 rows of 5
    assert auto_rules.spmv_threads_per_row(rows).value == 1     # by row length alone
    assert auto_rules.spmv_threads_per_row(rows, n_rows=len(rows)).value == 8    # no wider than a row
    big = np.full(4_000_000, 5)
    assert auto_rules.spmv_threads_per_row(big, n_rows=len(big)).value == 1      # fills the GPU already
    assert auto_rules.triangles_group_size(3.0, 1500, n_vertices=1589).value == 32
    assert auto_rules.triangles_group_size(3.0, 30000, n_vertices=32768).value == 4
    assert auto_rules.triangles_group_size(3.0, 300000, n_vertices=400000).value == 1     # fills it: by length
    assert auto_rules.kclique_group_size(6, "vertex").value == 1


def test_power_of_two_helpers():
    assert [auto_rules.pow2_floor(x) for x in (0.3, 1, 3, 4, 31.9)] == [1, 1, 2, 4, 16]
    assert [auto_rules.pow2_ceil(x) for x in (0.3, 1, 1.2, 4, 17)] == [1, 1, 2, 4, 32]


# ---- the registry ----------------------------------------------------------------------------

def test_auto_is_the_default_and_parses_in_any_case():
    fam, var = get_variant("triangles", "gpu-oriented")
    assert fam.resolve_params(var, {})["group_size"] == AUTO
    assert fam.resolve_params(var, {"group_size": "AUTO"})["group_size"] == AUTO
    assert fam.resolve_params(var, {"group_size": "16"})["group_size"] == 16


def test_a_bad_value_is_refused_naming_the_parameter_and_auto_among_the_allowed():
    fam, var = get_variant("spmv", "gpu-tunable")
    with pytest.raises(ParameterError) as info:
        fam.resolve_params(var, {"rows": "many"})
    text = str(info.value)
    assert "rows" in text and "power of two" in text and "auto" in text


def test_a_parameter_without_a_rule_refuses_auto():
    fam, var = get_variant("spmv", "gpu-tunable")
    with pytest.raises(ParameterError, match="wg"):
        fam.resolve_params(var, {"wg": "auto"})


def test_constraints_wait_for_auto_and_are_checked_on_the_choice():
    fam, var = get_variant("spmv", "gpu-tunable")
    assert fam.resolve_params(var, {"wg": 4})["rows"] == AUTO   # rows <= wg not decided yet
    assert fam.constraint_violation(var, {"wg": 4, "rows": AUTO, "dtype": "fp64", "reduce": "shuffle"}) is None


def test_the_kclique_gpu_variant_is_the_first_gpu_variant_listed():
    fam, _ = get_variant("kclique", "gpu")
    gpu = [v.name for v in fam.variants.values() if v.kind == "gpu"]
    assert gpu[0] == "gpu"
    assert [p.name for p in fam.variants["gpu"].params][0] == "work"
    assert fam.variants["gpu-list"].params[2].default == 8    # gpu-list keeps its fixed default


def test_the_simulator_estimate_counts_auto_rows_as_the_widest_choice():
    graph = read_graph(KARATE)
    fam, var = get_variant("spmv", "gpu-tunable")
    auto = estimate("spmv", "gpu-tunable", graph, fam.resolve_params(var, {"wg": 32}))
    widest = estimate("spmv", "gpu-tunable", graph, fam.resolve_params(var, {"wg": 32, "rows": 1}))
    assert auto.threads == widest.threads


# ---- runs ------------------------------------------------------------------------------------

def test_a_run_with_auto_records_what_was_asked_what_ran_and_why():
    graph = read_graph(KARATE)
    rec = run_variant(graph, "spmv", "gpu-tunable", {"wg": 32}, target="sim", repeat=1, warmup=0).record
    assert rec["verified"]
    assert rec["params"]["rows"] == AUTO
    lengths = np.diff(graph.indptr)
    lanes = auto_rules.spmv_threads_per_row(lengths, limit=32, n_rows=len(lengths)).value
    assert rec["resolved_params"] == {**rec["params"], "rows": 32 // lanes}
    notes = [n for n in rec["notices"] if n.startswith("auto: rows = ")]
    assert len(notes) == 1 and "entries" in notes[0]
    check_record(plain(rec), "run.jsonl")


def test_a_run_without_auto_has_no_resolved_params():
    rec = run_variant(read_graph(KARATE), "spmv", "gpu-tunable", {"wg": 32, "rows": 8}, target="sim",
                      repeat=1, warmup=0).record
    assert "resolved_params" not in rec and not any(n.startswith("auto:") for n in rec["notices"])


@pytest.mark.parametrize("work", ["vertex", "edge", "list", "auto"])
def test_kclique_gpu_variant_counts_karate_verified_for_each_work(work):
    graph = read_graph(KARATE)
    rec = run_variant(graph, "kclique", "gpu", {"k": 5, "work": work, **KCLIQUE_SIM}, target="sim",
                      repeat=1, warmup=0).record
    assert rec["verified"], rec["verification"]
    assert rec["result"]["cliques"] == 2          # karate has two 5-cliques
    ran = rec["resolved_params"]
    assert ran["work"] in ("vertex", "edge", "list") and isinstance(ran["group_size"], int)
    if work != "auto":
        assert ran["work"] == work
    else:  # karate: d⁺max 5, a shallow graph with a little search → sorted lists
        assert ran["work"] == "list" and any(n.startswith("auto: work = list") for n in rec["notices"])
        assert ran["group_size"] == 8


# ---- the command line ------------------------------------------------------------------------

def test_param_auto_on_the_command_line(capsys):
    code = cli_main(["run", "triangles", "gpu-oriented", KARATE, "--target", "sim", "--param", "group_size=auto",
                     "--param", "block_size=32", "--repeat", "1", "--warmup", "0", "--json"])
    assert code == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["params"]["group_size"] == "auto" and rec["result"]["triangles"] == 45
    assert isinstance(rec["resolved_params"]["group_size"], int)


def test_a_bad_param_on_the_command_line_lists_auto(capsys):
    code = cli_main(["run", "triangles", "gpu-oriented", KARATE, "--target", "sim", "--param", "group_size=3"])
    assert code == 1
    err = capsys.readouterr().err
    assert "group_size" in err and "auto" in err and err.count("\n") == 1


def test_a_sweep_grid_may_hold_auto_beside_numbers(tmp_path, capsys):
    out = tmp_path / "sweep.json"
    code = cli_main(["sweep", "spmv", "gpu-tunable", KARATE, "--grid", "rows=auto,8", "--param", "wg=32",
                     "--target", "sim", "--repeat", "1", "--warmup", "0", "--out", str(out), "--quiet"])
    assert code == 0, capsys.readouterr().err
    from kernels.results import read_sweep

    sweep = read_sweep(out)
    assert sweep["grid"]["rows"] == ["auto", 8]
    cells = {str(c["params"]["rows"]): c for c in sweep["cells"]}
    assert cells["auto"]["status"] == "ok" and cells["8"]["status"] == "ok"
    assert isinstance(cells["auto"]["record"]["resolved_params"]["rows"], int)


def test_kernel_tuner_export_keeps_auto_and_says_what_it_chose(tmp_path, capsys):
    out = tmp_path / "sweep.json"
    assert cli_main(["sweep", "spmv", "gpu-tunable", KARATE, "--grid", "rows=auto,8", "--param", "wg=32",
                     "--target", "sim", "--repeat", "1", "--warmup", "0", "--out", str(out), "--quiet"]) == 0
    from kernels.results import read_sweep
    from kernels.results.kerneltuner import to_kernel_tuner

    doc = to_kernel_tuner(read_sweep(out))
    assert doc["tune_params"]["rows"] == ["auto", 8]
    entry = doc["cache"]["auto"]
    assert entry["rows"] == "auto" and isinstance(entry["gge_resolved"]["rows"], int)


@pytest.mark.parametrize("name", ["karate.mtx", "USAir97.mtx", "as-caida20071105.mtx", "delaunay_n10.mtx", "rmat12"])
def test_the_ownership_summary_equals_the_full_orientations_counts(name):
    """The group-size rule reads (probes, partner entries, owners) from two passes over the
    adjacency instead of building the orientation: the same numbers, ties and hubs included."""
    from kernels.algorithms.triangles.orientation import orient, ownership_summary
    from kernels.algorithms.triangles.prepare import prepare
    from kernels.graph.generators import rmat

    graph = rmat(12, 8, seed=3) if name == "rmat12" else read_graph(data_path(name))
    clean = prepare(graph, {"per_vertex": False}, 0).graph
    og = orient(clean.indptr, clean.indices)
    assert ownership_summary(clean.indptr, clean.indices) == (og.total_work, len(og.part_idx), len(og.owners))
