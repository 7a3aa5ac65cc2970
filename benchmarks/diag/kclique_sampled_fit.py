"""How deep does the k-clique search go, and which kernel does that call for? A replay of the
``work`` rule with a sampled search (no GPU).

The rule (``kclique_work`` in ``kernels/algorithms/auto_rules.py``) sized the search from the
out-degrees and the share of out-neighbour pairs that are adjacent; the third check
(``--check3``) missed where the cliques die out at k (power-law matrix, community R-MATs: ``list``
best, up to 2.63x). The feature added: the k-cliques per edge, from ``sampled_clique_counts``
(a particle filter over the oriented search: uniform triangles from sampled out-neighbour pairs,
then level by level a sample of the cliques of each size and their candidates; a fixed seed and
a cap on the work). Used in two branches (``KCLIQUE_K4_FEW_CLIQUES`` at k = 4 on short out-lists,
``KCLIQUE_DYING`` at k >= 5) and, since the fourth check, in the deep override (``KCLIQUE_DEEP`` at
k >= ``KCLIQUE_DEEP_K``: a search finding that many k-cliques per edge skips the sparse-pairs branch),
with the long-list guard at k >= 5 (``KCLIQUE_LONG_LISTS``, 48): rule (d') of docs/defaults.md.

What it prints, on every measured case of ``benchmarks/results/kclique-auto`` (the H100 sets, 250
cases, and the fourth and fifth checks, 172, measured on an H200, 132 SMs as the H100; inputs of at
least ``--min-nnz`` stored entries; each input generated or loaded again as ``bench_kclique_auto.py``
does, and oriented as the kernels are):

1. the estimator against the true counts (the triangles counted here, the k-cliques from the
   records) and its cost per graph;
2. per measured set and per device (H100: fit ... check3; H200: check4, check5): cases within 10 %
   of the best variant and the worst ratio, for the rule before the depth (``previous``, as shipped
   until 2026-11-28), rule (a), the depth branches alone (``MEASURED``: what the fourth check's ``gpu``
   run ran), with the true counts (the oracle: could a depth feature do it at all?) and with the
   estimate, and the variants after the fourth check: (b) the long-list guard, (c)/(c') the deep
   override at k >= 5 / 6, (d)/(d') both, (d') as shipped (what the fifth check's ``gpu`` run ran);
   each at its thresholds, refitted on all cases, leaving one graph out (thresholds refitted in each
   fold), and fitted on the sets before the third (fourth, fifth) check and scored on it; for the
   rule before, (a) and (d') also refitted on the H200 cases only (in sample there, and leaving one
   H200 graph out) and on the H100 cases only (scored on the H200 ones);
3. the thresholds' gaps (the cases nearest each one), the cases still missed, the replay under 10
   other seeds;
4. the picks replayed against those the measured ``gpu`` (auto) runs recorded (``resolved``): the
   fourth check ran rule (a), so rule (a) must agree with it there, and the fifth ran (d'), the
   shipped rule; the shipped rule's changes;
   then the fifth check, unseen for both (a) and (d'): per graph the cases only one of them gets
   within 10 %, and a bootstrap over its graphs of the differences;
5. the two devices side by side on like shapes (no graph was measured on both): each H200 case
   against the most alike H100 case of its family at the same k (``--near``), the time ratios between
   the variants and each variant's time per oriented edge, H200 over H100;
6. ``--write``: each input's estimated k-cliques per edge at k = 4..7 into
   ``kclique-sampled-depth.json``, which ``tests/test_auto_params.py`` replays the rule with.

Thresholds are fitted as ``kclique_density_fit.py`` does: a grid over every distinct feature value;
most cases within 10 %, then the lowest worst ratio, then the lowest sum of log ratios; the
geometric middle of the best span; each threshold in turn, twice.

    .venv/bin/python benchmarks/diag/kclique_sampled_fit.py [--cases] [--write] [--seeds 10] [--near 0.5]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_kclique_auto import RULE_A, load  # noqa: E402

from kernels.algorithms import auto_rules as ar  # noqa: E402
from kernels.algorithms.auto_rules import (  # noqa: E402
    CliqueSearch,
    kclique_work,
    out_pair_density,
    sampled_clique_counts,
)
from kernels.algorithms.kclique.prepare import orient, simple_undirected  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "kclique-auto"
#: each measured set's file (the fourth and fifth checks on an H200: the rule's features do not depend
#: on the device, its thresholds were fitted on H100 times)
FILES = {"fit": "kclique-auto-fit-nvidia-h100-80gb-hbm3.jsonl",
         "heldout": "kclique-auto-heldout-nvidia-h100-80gb-hbm3.jsonl",
         "check": "kclique-auto-check-nvidia-h100-80gb-hbm3.jsonl",
         "check2": "kclique-auto-check2-nvidia-h100-80gb-hbm3.jsonl",
         "check3": "kclique-auto-check3-nvidia-h100-80gb-hbm3.jsonl",
         "check4": "kclique-auto-check4-nvidia-h200.jsonl",
         "check5": "kclique-auto-check5-nvidia-h200.jsonl"}
SETS = tuple(FILES)
#: the device each set was measured on
DEVICE = {name: "H200" if "h200" in f else "H100" for name, f in FILES.items()}
DEVICES = ("H100", "H200")
#: which rule each check's ``gpu`` (auto) run ran (the earlier sets ran earlier rules)
RAN = {"check4": "a", "check5": "d'"}
VARIANTS = ("vertex", "edge", "list")
#: ``--write``: each input's estimated k-cliques per edge, which tests/test_auto_params.py replays with
DEPTH = RESULTS / "kclique-sampled-depth.json"
KS = (4, 5, 6, 7)


# ---- data ------------------------------------------------------------------------------------

#: (set, input, k) -> the work its measured ``gpu`` (auto) run resolved to (read_cases fills it)
measured_picks: dict = {}


def read_cases(min_nnz: int) -> list[dict]:
    """One case per (set, input, k) with all three variants verified: times, histogram, true count."""
    cases = []
    for name in SETS:
        times, rows = defaultdict(dict), {}
        for line in (RESULTS / FILES[name]).read_text().splitlines():
            row = json.loads(line)
            if row.get("variant") == "gpu" and (row.get("resolved") or {}).get("work"):
                measured_picks[(name, row["input"], row["k"])] = row["resolved"]["work"]
            if not row.get("verified") or "median_s" not in row:
                continue
            times[(row["input"], row["k"])][row["variant"]] = row["median_s"]
            rows[(row["input"], row["k"])] = row
        for key, t in sorted(times.items()):
            row = rows[key]
            if row["nnz"] < min_nnz or not all(f"gpu-{v}" in t for v in VARIANTS):
                continue
            cases.append({"set": name, "input": key[0], "k": key[1], "t": {v: t[f"gpu-{v}"] for v in VARIANTS},
                          "hist": row["dplus_hist"], "cliques": int(row.get("cliques", row["expected"]))})
    return cases


def exact_triangles(indptr: np.ndarray, indices: np.ndarray) -> int:
    """Oriented triangles (every triangle once), by SciPy."""
    import scipy.sparse as sp

    n = len(indptr) - 1
    a = sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(n, n))
    return int(round(float((a @ a).multiply(a).sum())))


def graph_features(specs, kmax: dict, seeds=(0,)) -> dict:
    """Per input: the DAG's edge count, pair density, exact triangles, the sampled counts (per seed)
    and the estimator's time (the median of 3 runs at seed 0, after one to warm up)."""
    out = {}
    for spec in specs:
        dag = orient(simple_undirected(load(spec)), "degree")
        k = kmax[spec]
        est = {}
        for seed in seeds:
            est[seed] = sampled_clique_counts(dag.indptr, dag.indices, k, seed=seed)
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            sampled_clique_counts(dag.indptr, dag.indices, k)
            times.append(time.perf_counter() - t0)
        out[spec] = {"m": int(dag.num_edges), "density": out_pair_density(dag.indptr, dag.indices),
                     "triangles": exact_triangles(dag.indptr, dag.indices), "est": est,
                     "ms": 1e3 * float(np.median(times))}
    return out


# ---- the rules -------------------------------------------------------------------------------

def search_of(c: dict, cpe: float | None) -> CliqueSearch:
    if "_search" not in c:
        dplus = np.repeat(np.arange(len(c["hist"])), c["hist"])
        c["_search"] = dataclasses.replace(CliqueSearch.of(dplus, c["k"], 132), pair_density=c["density"])
    return dataclasses.replace(c["_search"], cliques_per_edge=cpe)


def previous(c: dict, p: dict | None = None) -> str:
    """The rule shipped until 2026-11-28 (its two thresholds in ``p``): no depth, no long-list guard,
    and at k = 4 the 5·10⁵-subset test before the mesh test."""
    p = p or PREVIOUS
    s = search_of(c, None)
    if s.k <= 4 and s.max_out_degree <= ar.KCLIQUE_SHALLOW and s.total_search >= ar.KCLIQUE_K4_SEARCH:
        return "vertex"
    return kclique_work(s, long_lists=math.inf, **p).value


PREVIOUS = {"sparse_pairs": ar.KCLIQUE_SPARSE_PAIRS, "k4_long_lists": ar.KCLIQUE_K4_LONG_LISTS}
#: rule (a), a historical rule: the depth branches without the long-list guard or the deep override,
#: as shipped 2026-11-28 until (d') and as the fourth check's ``gpu`` (auto) run ran it (its recorded
#: picks must equal this rule's replay; tests/test_auto_params.py checks that too). Defined with the
#: checks, in bench_kclique_auto.py (``--plan`` shows its picks where the shipped rule's differ)
MEASURED = RULE_A
#: rule (d'), the shipped thresholds (kernels/algorithms/auto_rules.py)
SHIPPED = {"k4_few_cliques": ar.KCLIQUE_K4_FEW_CLIQUES, "dying": ar.KCLIQUE_DYING,
           "long_lists": ar.KCLIQUE_LONG_LISTS, "deep": ar.KCLIQUE_DEEP, "deep_k": ar.KCLIQUE_DEEP_K}
#: the long-list guard's value (a candidate fixed before the fourth check; shipped after it)
GUARD = 48.0
#: the deep override's cut to start from: the dying threshold
DEEP = 0.02


def new(feature: str):
    """``kclique_work`` given k-cliques per edge from ``feature`` ("true" or "est"), at thresholds p
    (those not in p as shipped: pass ``MEASURED`` for rule (a)). The deep override (``deep``, from
    ``deep_k``; chosen after the fourth check's Chung-Lu exponent 2.5 misses at k = 6, 7, whose pairs
    are sparse, 0.081, but whose cliques persist): where the pairs are sparse but the search finds at
    least ``deep`` k-cliques per edge, the sparse-pairs branch does not fire and the rest decides."""
    def rule(c: dict, p: dict) -> str:
        return kclique_work(search_of(c, c[feature]), **p).value
    return rule


def ratio(c: dict, pick: str) -> float:
    return c["t"][pick] / min(c["t"].values())


def score(cases, picks) -> tuple[int, int, float, float]:
    rs = [ratio(c, p) for c, p in zip(cases, picks, strict=True)]
    return sum(r <= 1.10 for r in rs), len(rs), max(rs, default=0.0), float(np.log(rs).sum()) if rs else 0.0


#: each threshold's feature, and whether its branch fires below (True) or from it (False)
FEATURE_OF = {"k4_few_cliques": (lambda c: c["_f"], True), "dying": (lambda c: c["_f"], True),
              "deep": (lambda c: c["_f"], False),
              "long_lists": (lambda c: c["mean"], False), "sparse_pairs": (lambda c: c["density"], True),
              "k4_long_lists": (lambda c: c["mean"], False)}


def fit_one(cases, rule, p: dict, name: str) -> float:
    """One threshold (the others fixed): a grid over the values the cases give that feature. A
    branch fires or not, so each case's two picks are found once and every cut scored as a lookup."""
    feature, below = FEATURE_OF[name]
    f = np.array([feature(c) for c in cases])
    on, off = (math.inf, 0.0) if below else (0.0, math.inf)
    fires = np.array([ratio(c, rule(c, dict(p, **{name: on}))) for c in cases])
    stays = np.array([ratio(c, rule(c, dict(p, **{name: off}))) for c in cases])
    vals = sorted(set(f.tolist()) | {0.0})
    bounds = vals + [vals[-1] * 2 + 1]
    best, tied, prev = None, [], 0.0
    for hi in bounds:
        rs = np.where(f < hi if below else f >= hi, fires, stays)
        key = (int((rs <= 1.10).sum()), -round(float(rs.max()), 6), -round(float(np.log(rs).sum()), 6))
        if best is None or key > best:
            best, tied = key, [(prev, hi)]
        elif key == best:
            tied.append((prev, hi))
        prev = hi
    lo, hi = min(t[0] for t in tied), max(t[1] for t in tied)
    if hi == bounds[-1]:                                   # above every case: the branch always (below) or never
        return 2 * lo if below else math.inf
    return math.sqrt(lo * hi) if lo > 0 else hi / 2


def fit(cases, rule, names, base: dict) -> dict:
    p = dict(base)
    for _ in range(2):
        for name in names:
            p[name] = fit_one(cases, rule, p, name)
    return p


def logo(cases, rule, names, base: dict) -> tuple[list[str], list[dict]]:
    """Each graph's cases picked with the thresholds fitted on all the other graphs."""
    picks, folds = [None] * len(cases), []
    for spec in sorted({c["input"] for c in cases}):
        p = fit([c for c in cases if c["input"] != spec], rule, names, base)
        folds.append(p)
        for i, c in enumerate(cases):
            if c["input"] == spec:
                picks[i] = rule(c, p)
    return picks, folds


# ---- reports ---------------------------------------------------------------------------------

def line(label: str, cases, picks) -> str:
    """Per set, per device and in all: within 10 % / cases, worst ratio (cases without a pick left out)."""
    out = f"{label:46s}"
    for s in (*SETS, *DEVICES, "all"):
        idx = [i for i, c in enumerate(cases) if s in ("all", c["set"], DEVICE[c["set"]]) and picks[i] is not None]
        w, n, x, _ = score([cases[i] for i in idx], [picks[i] for i in idx])
        out += f" {w:3d}/{n:<3d} x{x:.2f}" if n else f" {'-':>13s}"
    return out


def misses(cases, picks) -> list[str]:
    return [f"    {c['set']:7s} {c['input'][:58]:58s} k={c['k']} picked {p:6s} x{ratio(c, p):.2f} "
            f"(best {min(c['t'], key=c['t'].get)}; {c['k']}-cliques/edge true {c['true']:.3g} est {c['est']:.3g}, "
            f"mean d⁺ {c['mean']:.1f})" for c, p in zip(cases, picks, strict=True) if ratio(c, p) > 1.10]


def family(spec: str) -> str:
    """The generator family a graph belongs to, for comparing the devices on like shapes (G(n, m) and
    G(n, p) together, geometric graphs by dimension, stencils by kind; real graphs each their own)."""
    if not spec.startswith("gen:"):
        return spec
    kind, params = spec.split(":")[1], dict(kv.split("=") for kv in spec.split(":", 2)[2].split(",") if "=" in kv)
    if kind in ("gnm", "gnp"):
        return "random"
    if kind == "geometric":
        return f"geometric-{params.get('dim', '2')}d"
    if kind == "stencil":
        return f"stencil-{params['kind']}"
    return kind


def shape_distance(a: dict, b: dict) -> float:
    """How unlike two cases at the same k are, from what the rule reads: mean d⁺ (log), pair density
    (per 0.05), the sampled k-cliques per edge (log10, offset 0.01) and the size (log10 edges, half weight)."""
    return (abs(math.log(a["mean"] / b["mean"])) + abs(a["density"] - b["density"]) / 0.05
            + abs(math.log10((a["est"] + 0.01) / (b["est"] + 0.01)))
            + 0.5 * abs(math.log10(a["m"] / b["m"])))


def devices_side_by_side(cases, near: float) -> None:
    """Each H200 case against the most alike H100 case of its family at the same k (distance <= near):
    the ratios between the variants' times and each variant's time per oriented edge, H200 over H100."""
    h100 = [c for c in cases if DEVICE[c["set"]] == "H100"]
    pairs = []
    for c in cases:
        if DEVICE[c["set"]] != "H200":
            continue
        like = [(shape_distance(c, o), o) for o in h100
                if o["k"] == c["k"] and family(o["input"]) == family(c["input"])]
        if like:
            d, o = min(like, key=lambda x: x[0])
            if d <= near:
                pairs.append((c, o, d))
    print(f"   {len(pairs)} H200 cases with an H100 case of the same family and k within distance {near:g} "
          f"(of {sum(DEVICE[c['set']] == 'H200' for c in cases)}; the distance: shape_distance)")
    print(f"     {'H200 case':44s} {'H100 case':44s}  k  dist   list/vertex   list/edge   edge/vertex  "
          "ns/edge H200 (H100) v, e, l")
    for c, o, d in sorted(pairs, key=lambda x: (family(x[0]["input"]), x[0]["k"], x[0]["mean"])):
        r = [(c["t"][x] / c["t"][y], o["t"][x] / o["t"][y]) for x, y in (("list", "vertex"), ("list", "edge"),
                                                                         ("edge", "vertex"))]
        ns = " ".join(f"{c['t'][v] / c['m'] * 1e9:5.2f}({o['t'][v] / o['m'] * 1e9:5.2f})" for v in VARIANTS)
        print(f"     {c['input'][4:48]:44s} {o['input'][4:48]:44s} {c['k']:2d} {d:5.2f}  "
              + "  ".join(f"{a:4.2f}({b:4.2f})" for a, b in r) + f"  {ns}")
    if not pairs:
        return
    print("   H200 over H100 on these pairs, median [quartiles] (1 = the same; < 1 for list/x: list ranks "
          "higher on the H200):")
    measures = [("list/vertex", "list", "vertex"), ("list/edge", "list", "edge"), ("edge/vertex", "edge", "vertex"),
                *((f"{v} time per edge", v, None) for v in VARIANTS)]
    for label, x, y in measures:
        def of(c, x=x, y=y):
            return c["t"][x] / (c["t"][y] if y else c["m"])
        q = np.exp(np.percentile([math.log(of(c) / of(o)) for c, o, _ in pairs], (50, 25, 75)))
        print(f"     {label:20s} {q[0]:.3f} [{q[1]:.3f}..{q[2]:.3f}]")
    same = sum(min(c["t"], key=c["t"].get) == min(o["t"], key=o["t"].get) for c, o, _ in pairs)
    print(f"   the same best variant in {same} of {len(pairs)} pairs; list best: H200 "
          f"{sum(min(c['t'], key=c['t'].get) == 'list' for c, _, _ in pairs)}, H100 "
          f"{sum(min(o['t'], key=o['t'].get) == 'list' for _, o, _ in pairs)}")


def unseen_duel(cases, picks_a, picks_b, name: str, draws: int = 10000) -> None:
    """Two rules on one check set: per graph the cases only one of them gets within 10 % and the sum of
    log ratios; then a bootstrap over the set's graphs of the differences (within-10 % count, worst
    ratio, sum of log ratios)."""
    rows = [(c, ratio(c, a), ratio(c, b)) for c, a, b in zip(cases, picks_a, picks_b, strict=True)
            if c["set"] == name]
    graphs = sorted({c["input"] for c, _, _ in rows})
    per = {g: [(ra, rb) for c, ra, rb in rows if c["input"] == g] for g in graphs}
    print(f"   {name} ({len(rows)} cases, {len(graphs)} graphs): (a) {sum(ra <= 1.10 for _, ra, _ in rows)}, "
          f"worst x{max(ra for _, ra, _ in rows):.2f}, sum log {sum(math.log(ra) for _, ra, _ in rows):.3f}; "
          f"(d') {sum(rb <= 1.10 for _, _, rb in rows)}, worst x{max(rb for _, _, rb in rows):.2f}, "
          f"sum log {sum(math.log(rb) for _, _, rb in rows):.3f}; cases over 1.5x: (a) "
          f"{sum(ra > 1.5 for _, ra, _ in rows)}, (d') {sum(rb > 1.5 for _, _, rb in rows)}")
    for g in graphs:
        wa = sum(ra <= 1.10 < rb for ra, rb in per[g])
        wb = sum(rb <= 1.10 < ra for ra, rb in per[g])
        if any(abs(ra - rb) > 1e-12 for ra, rb in per[g]):
            print(f"     {g[4:60]:56s} within 10 % only with (a): {wa}, only with (d'): {wb}; ratios (a) "
                  + " ".join(f"{ra:.2f}" for ra, _ in per[g]) + "  (d') " + " ".join(f"{rb:.2f}" for _, rb in per[g]))
    rng = np.random.default_rng(0)
    diff = []
    for _ in range(draws):
        pick = rng.integers(0, len(graphs), len(graphs))
        sample = [x for i in pick for x in per[graphs[i]]]
        diff.append((sum(ra <= 1.10 for ra, _ in sample) - sum(rb <= 1.10 for _, rb in sample),
                     max(ra for ra, _ in sample) - max(rb for _, rb in sample),
                     sum(math.log(ra) - math.log(rb) for ra, rb in sample)))
    diff = np.array(diff)
    for i, label in enumerate(("within-10 % count, (a) - (d')", "worst ratio, (a) - (d')",
                               "sum of log ratios, (a) - (d')")):
        lo, mid, hi = np.percentile(diff[:, i], (2.5, 50, 97.5))
        print(f"     bootstrap over the graphs ({draws}): {label:32s} median {mid:+.3f}, 95 % {lo:+.3f}..{hi:+.3f}, "
              f"share > 0: {(diff[:, i] > 0).mean():.2f}, < 0: {(diff[:, i] < 0).mean():.2f}")


def fmt(p: dict, names) -> str:
    return ", ".join(f"{n} {p[n]:.3g}" for n in names)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-nnz", type=int, default=2000)
    ap.add_argument("--cases", action="store_true", help="every case: features, estimate, truth, pick")
    ap.add_argument("--seeds", type=int, default=10, help="replay the estimate under this many other seeds")
    ap.add_argument("--write", action="store_true", help=f"write {DEPTH.name} (the replay test's input)")
    ap.add_argument("--near", type=float, default=0.5,
                    help="section 5: the largest shape distance at which an H100 case stands for an H200 one")
    args = ap.parse_args()

    cases = read_cases(args.min_nnz)
    specs = sorted({c["input"] for c in cases})
    kmax = {s: max(c["k"] for c in cases if c["input"] == s) for s in specs}
    true_counts = defaultdict(dict)
    for c in cases:
        true_counts[c["input"]][c["k"]] = c["cliques"]
    t0 = time.perf_counter()
    feats = graph_features(specs, {s: max(kmax[s], 7) for s in specs}, seeds=range(args.seeds + 1))
    print(f"{len(cases)} cases, {len(specs)} graphs (generated, oriented, sampled in {time.perf_counter() - t0:.0f} s)")

    # 1. the estimator against the truth
    print("\n1. sampled_clique_counts against the true counts (j = 3: counted here; j >= 4: the records)")
    errs, zero_miss, false_pos = [], [], []
    for spec in specs:
        f, est = feats[spec], feats[spec]["est"][0]
        truth = {3: f["triangles"], **true_counts[spec]}
        for j, t in truth.items():
            e = est.counts[j - 1]
            if t > 0 and e > 0:
                errs.append((math.log10(e / t), spec, j, t, e))
            elif t > 0:
                zero_miss.append(f"{spec[:50]} j={j}: {t:,} true ({t / f['m']:.2g} per edge), 0 estimated")
            elif e > 0:
                false_pos.append(f"{spec[:50]} j={j}: 0 true, {e:.3g} estimated")
    lr = np.array([e[0] for e in errs])
    print(f"   {len(errs)} (graph, j) pairs with both > 0: log10(estimate / true) median {np.median(lr):+.3f}, "
          f"quartiles {np.percentile(lr, 25):+.3f}..{np.percentile(lr, 75):+.3f}, 90 % within "
          f"{np.percentile(np.abs(lr), 90):.3f}, range {lr.min():+.2f}..{lr.max():+.2f}")
    for e in sorted(errs, key=lambda e: -abs(e[0]))[:6]:
        print(f"     largest: {e[1][:50]:50s} j={e[2]} true {e[3]:.3g} est {e[4]:.3g} (x{10 ** e[0]:.2f})")
    print(f"   true > 0 but estimated 0 ({len(zero_miss)}; all rare: the search follows 1,024 cliques a level):")
    for z in zero_miss:
        print("     " + z)
    print(f"   true 0 but estimated > 0: {len(false_pos)}" + "".join("\n     " + z for z in false_pos))
    ms = sorted((f["ms"], f["m"], s) for s, f in feats.items())
    big = [x for x in ms if x[1] >= 500_000]
    print(f"   cost (median of 3, this machine, k up to 7): max {ms[-1][0]:.1f} ms ({ms[-1][2][:50]}, "
          f"{ms[-1][1]:,} edges); on the {len(big)} graphs of >= 5·10⁵ edges {min(x[0] for x in big):.1f}.."
          f"{max(x[0] for x in big):.1f} ms; capped anywhere: {sum(f['est'][0].capped for f in feats.values())} graphs")

    for c in cases:
        f = feats[c["input"]]
        c["density"] = f["density"]
        c["true"] = c["cliques"] / f["m"] if f["m"] else 0.0
        c["est"] = f["est"][0].per_edge(c["k"])
        c["mean"] = float(np.dot(np.arange(len(c["hist"])), c["hist"]) / max(sum(c["hist"]), 1))

    # 2. the replays
    print(f"\n2. the replays (within 10 % of the best / cases, worst ratio; H100: fit..check3, H200: check4, "
          f"check5)\n{'rule':46s}" + "".join(f" {s:>13s}" for s in (*SETS, *DEVICES, "all")))
    before = {last: [c for c in cases if SETS.index(c["set"]) < SETS.index(last)]
              for last in ("check3", "check4", "check5")}
    on = {d: [c for c in cases if DEVICE[c["set"]] == d] for d in DEVICES}

    def protocols(label, rule, names, base, devices=False):
        picks = [rule(c, base) for c in cases]
        print(line(label, cases, picks))
        fitted = fit(cases, rule, names, base)
        print(line(f"  refit on all: {fmt(fitted, names)}", cases, [rule(c, fitted) for c in cases]))
        lp, folds = logo(cases, rule, names, base)
        print(line("  leave one graph out", cases, lp))
        print(f"{'':46s} fold thresholds: " + "; ".join(
            f"{n} {min(p[n] for p in folds):.3g}..{max(p[n] for p in folds):.3g}" for n in names))
        for last, earlier in before.items():
            pb = fit(earlier, rule, names, base)
            print(line(f"  fitted before {last}: {fmt(pb, names)}", cases, [rule(c, pb) for c in cases]))
        if devices:
            # the thresholds of one device's cases, scored on both; and leaving one H200 graph out, H200 only
            for d in DEVICES:
                pd = fit(on[d], rule, names, base)
                print(line(f"  fitted on {d} only: {fmt(pd, names)}", cases, [rule(c, pd) for c in cases]))
            lp, folds = logo(on["H200"], rule, names, base)
            at = {id(c): p for c, p in zip(on["H200"], lp, strict=True)}
            print(line("  leave one H200 graph out (H200 only)", cases, [at.get(id(c)) for c in cases]))
            print(f"{'':46s} fold thresholds: " + "; ".join(
                f"{n} {min(p[n] for p in folds):.3g}..{max(p[n] for p in folds):.3g}" for n in names))
        return picks

    prev = protocols("previous (shipped until 2026-11-28)", previous, tuple(PREVIOUS), PREVIOUS, devices=True)
    picked = {}
    depth_names = ("k4_few_cliques", "dying")
    shipped_names = (*depth_names, "deep", "long_lists")
    for feature, src in (("true", "oracle (true counts)"), ("est", "sampled")):
        for c in cases:
            c["_f"] = c[feature]
        picked[f"a/{feature}"] = protocols(f"(a) {src}, as measured on check4", new(feature), depth_names, MEASURED,
                                           devices=feature == "est")
        picked[f"d'/{feature}"] = protocols(f"(d') {src}, as shipped, measured on check5", new(feature),
                                            shipped_names, SHIPPED, devices=feature == "est")
    # the other variants after seeing the fourth check, from rule (a): the guard alone, the deep override
    # alone at k >= 5 or at k >= 6 only (the Chung-Lu 2.5 graph wants list at k = 5, edge at 6 and 7),
    # the guard with the deep override at k >= 5 ((d') is the same at k >= 6)
    for c in cases:
        c["_f"] = c["est"]
    picked["b"] = protocols(f"(b) sampled + long-list guard at {GUARD:g}", new("est"),
                            (*depth_names, "long_lists"), dict(MEASURED, long_lists=GUARD))
    picked["c"] = protocols(f"(c) sampled + deep overrides pairs (>= {DEEP:g})", new("est"),
                            (*depth_names, "deep"), dict(MEASURED, deep=DEEP, deep_k=5))
    picked["c'"] = protocols(f"(c') sampled + deep at k >= 6 (>= {DEEP:g})", new("est"),
                             (*depth_names, "deep"), dict(MEASURED, deep=DEEP, deep_k=6))
    picked["d"] = protocols(f"(d) sampled + deep (>= {DEEP:g}) + guard {GUARD:g}", new("est"),
                            shipped_names, dict(MEASURED, deep=DEEP, deep_k=5, long_lists=GUARD))
    shipped, measured = picked["d'/est"], picked["a/est"]
    print(f"\n   misses, sampled, as shipped ({fmt(SHIPPED, SHIPPED)}):")
    for s in misses(cases, shipped):
        print(s)
    print("   misses of rule (a), as measured on check4:")
    for s in misses(cases, measured):
        print(s)
    print("   misses of the rule before:")
    for s in misses(cases, prev):
        print(s)
    changed = [(c, p, q) for c, p, q in zip(cases, prev, measured, strict=True) if p != q]
    print(f"   the rule before -> (a): {len(changed)} cases change pick: "
          f"{sum(ratio(c, q) < ratio(c, p) for c, p, q in changed)} better, "
          f"{sum(ratio(c, q) > ratio(c, p) for c, p, q in changed)} worse")
    for c, p, q in changed:
        print(f"     {c['set']:7s} {c['input'][:50]:50s} k={c['k']} {p}->{q} x{ratio(c, p):.2f}->x{ratio(c, q):.2f}")
    for variant in ("b", "c", "c'", "d", "d'/est"):
        moved = [(c, p, q) for c, p, q in zip(cases, measured, picked[variant], strict=True) if p != q]
        print(f"   ({variant.split('/')[0]}): {len(moved)} cases change pick against rule (a) "
              f"({sum(ratio(c, q) < ratio(c, p) for c, p, q in moved)} better, "
              f"{sum(ratio(c, q) > ratio(c, p) for c, p, q in moved)} worse)")
        for c, p, q in moved:
            print(f"     {c['set']:7s} {c['input'][:50]:50s} k={c['k']} {p}->{q} "
                  f"x{ratio(c, p):.2f}->x{ratio(c, q):.2f} (pairs {c['density']:.3f}, {c['k']}-cliques/edge "
                  f"est {c['est']:.3g}, mean d⁺ {c['mean']:.1f})")

    # 3. the gaps and the seeds
    print("\n3. the cases nearest each threshold (sampled feature; * = the branch's side is within 10 %)")
    for name, sel in (("k4_few_cliques", lambda c: c["k"] == 4 and c["mean"] < ar.KCLIQUE_K4_LONG_LISTS
                       and c["density"] >= ar.KCLIQUE_SPARSE_PAIRS and len(c["hist"]) - 1 > ar.KCLIQUE_SHALLOW
                       and search_of(c, None).total_search >= ar.KCLIQUE_K4_SEARCH),
                      ("dying", lambda c: c["k"] >= 5 and c["density"] >= ar.KCLIQUE_SPARSE_PAIRS
                       and len(c["hist"]) - 1 > ar.KCLIQUE_SHALLOW
                       and search_of(c, None).total_search >= ar.KCLIQUE_TINY_SEARCH)):
        pool = sorted((c for c in cases if sel(c)), key=lambda c: c["est"])
        thr = SHIPPED[name]
        print(f"   {name} = {thr:g} (the pool: cases that reach the branch)")
        below = [c for c in pool if c["est"] < thr][-4:]
        above = [c for c in pool if c["est"] >= thr][:4]
        for c in below + above:
            mark = "*" if ratio(c, "list") <= 1.10 else " "
            print(f"     {mark} {c['est']:9.3g} (true {c['true']:9.3g}) {c['input'][:50]:50s} k={c['k']} "
                  f"list x{ratio(c, 'list'):.2f}, best {min(c['t'], key=c['t'].get)}")
    print(f"   long_lists (shipped {SHIPPED['long_lists']:g}): the graphs with mean d⁺ >= 20 where pairs are "
          "sparse or the search dies:")
    for c in sorted(cases, key=lambda c: c["mean"]):
        if c["k"] >= 5 and c["mean"] >= 20 and (c["density"] < ar.KCLIQUE_SPARSE_PAIRS or c["est"] < ar.KCLIQUE_DYING):
            print(f"       mean {c['mean']:5.1f} {c['input'][:50]:50s} k={c['k']} list x{ratio(c, 'list'):.2f} "
                  f"vertex x{ratio(c, 'vertex'):.2f}")
    if args.seeds:
        scores = []
        for seed in range(1, args.seeds + 1):
            for c in cases:
                c["_seed"] = feats[c["input"]]["est"][seed].per_edge(c["k"])
            picks = [kclique_work(search_of(c, c["_seed"]), **SHIPPED).value for c in cases]
            w, _, x, _ = score(cases, picks)
            row = [w, x]
            for name in ("check3", "check4", "check5"):
                w, _, x, _ = score([c for c in cases if c["set"] == name],
                                   [p for c, p in zip(cases, picks, strict=True) if c["set"] == name])
                row += [w, x]
            row.append(sum(p != q for p, q in zip(picks, shipped, strict=True)))
            scores.append(row)
        lo, hi = np.min(scores, axis=0), np.max(scores, axis=0)
        n3, n4, n5 = (sum(c["set"] == name for c in cases) for name in ("check3", "check4", "check5"))
        print(f"\n   seeds 1..{args.seeds} (shipped thresholds): all {lo[0]:.0f}..{hi[0]:.0f}/{len(cases)}, worst "
              f"x{lo[1]:.2f}..x{hi[1]:.2f}; check3 {lo[2]:.0f}..{hi[2]:.0f}/{n3}, worst x{lo[3]:.2f}..x{hi[3]:.2f}; "
              f"check4 {lo[4]:.0f}..{hi[4]:.0f}/{n4}, worst x{lo[5]:.2f}..x{hi[5]:.2f}; "
              f"check5 {lo[6]:.0f}..{hi[6]:.0f}/{n5}, worst x{lo[7]:.2f}..x{hi[7]:.2f}; "
              f"picks differing from seed 0: {lo[8]:.0f}..{hi[8]:.0f}")

    # 4. the replay against the measured auto runs (the fourth check ran rule (a), the fifth (d'))
    print("\n4. replayed picks (sampled) against the picks the measured gpu (auto) runs recorded")
    for rule_name, label, picks in (("a", "rule (a)", measured), ("d'", "(d'), shipped", shipped)):
        for name in SETS:
            pairs = [(c, p, measured_picks.get((name, c["input"], c["k"])))
                     for c, p in zip(cases, picks, strict=True) if c["set"] == name]
            pairs = [x for x in pairs if x[2] is not None]
            if not pairs:
                continue
            differ = [x for x in pairs if x[1] != x[2]]
            ran = RAN.get(name)
            note = (f" (ran rule ({ran}))" if ran else " (measured with an earlier rule)")
            print(f"   {label:14s} {name:7s} {len(pairs) - len(differ)}/{len(pairs)} agree{note}")
            if ran:
                for c, p, m in differ:
                    print(f"     {c['input'][:58]:58s} k={c['k']} replayed {p}, measured {m}"
                          + (" <- the rule that ran: a mismatch" if ran == rule_name else ""))
            if ran == rule_name:
                # the measured pick's own ratio (the gpu run's time is its own; the replay scores the variant)
                w, n, x, _ = score([c for c, _, _ in pairs], [m for _, _, m in pairs])
                print(f"     the measured picks, scored by the variants' times: {w}/{n}, worst x{x:.2f}")

    # the fifth check is unseen for both rule (a) (fixed before the fourth) and (d') (fixed before the fifth)
    print("\n   the fifth check, unseen for both rule (a) and the shipped (d') (replayed picks, variants' times):")
    unseen_duel(cases, measured, shipped, "check5")

    # 5. the devices side by side: no graph was measured on both, so like shapes of one family
    print("\n5. the H200 sets against the H100 sets on like shapes (same family and k; no graph was measured on both)")
    for c in cases:
        c["m"] = feats[c["input"]]["m"]
    devices_side_by_side(cases, args.near)

    if args.cases:
        print("\n   every case:")
        for c, p, a, q in zip(cases, prev, measured, shipped, strict=True):
            print(f"     {c['set']:7s} {c['input'][:48]:48s} k={c['k']} mean {c['mean']:5.1f} pairs {c['density']:.3f} "
                  f"cliques/edge true {c['true']:9.3g} est {c['est']:9.3g}  before {p:6s} x{ratio(c, p):.2f}  "
                  f"(a) {a:6s} x{ratio(c, a):.2f}  (d') {q:6s} x{ratio(c, q):.2f}  "
                  + " ".join(f"{v[0]}{ratio(c, v):.2f}" for v in VARIANTS))
    if args.write:
        depth = {s: {str(k): feats[s]["est"][0].per_edge(k) for k in KS} for s in specs}
        DEPTH.write_text(json.dumps(depth, indent=1, sort_keys=True) + "\n")
        print(f"\nwrote {DEPTH.relative_to(ROOT)} ({len(depth)} inputs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
