"""Does the k-clique ``work`` rule read the out-neighbourhoods' density right? A replay on every
case measured (no GPU): the H100 sets and the fourth and fifth checks, measured on an H200.

The rule (``kclique_work`` in ``kernels/algorithms/auto_rules.py``) sizes the search by
``total_search`` = sum of C(d⁺, k-1), as if every subset of out-neighbours were a clique. On sparse
random-like graphs (Chung-Lu with a thin tail, G(n, m), G(n, p)) few pairs of out-neighbours are
adjacent, ``gpu-list`` prunes at its first intersection, and vertex/edge picks lost 1.6-3.2x. The
feature:

    pair density = oriented triangles / sum over vertices of C(d⁺, 2)

on the degree-oriented DAG the kernels run on (``kclique.prepare.orient(..., "degree")``): the
share of out-neighbour pairs that are themselves an (oriented) edge, estimated by
``out_pair_density`` from ``--samples`` pairs (default 4096) with a fixed seed (O(n) for the pair
weights plus O(samples x log d⁺max), no pass over the edges).

Two rules are replayed on the fit, held-out and check files (check, check2 ... check5):

* ``previous``: as shipped until 2026-11-28: ``list`` under 0.03 (not on meshes), and at k >= 5
  ``list`` on uniform out-degrees (d⁺max < 2x the mean);
* ``shipped``: ``kclique_work`` itself: ``list`` under ``KCLIQUE_SPARSE_PAIRS`` (0.1) except at
  k = 4 with long out-lists (mean d⁺ >= ``KCLIQUE_K4_LONG_LISTS``, 16) and, since the fourth check,
  at k >= 5 from a mean d⁺ of ``KCLIQUE_LONG_LISTS`` (48), and uniform out-degrees ``vertex`` (the
  uniform graphs under 0.1 took ``list`` already); without the depth of the search
  (``cliques_per_edge`` unknown: its two branches and the deep override skipped; the rule as shipped,
  depth and all, is replayed by ``kclique_sampled_fit.py``).

``--write`` records every measured input's density, the fourth and fifth checks' included.

Per set: cases within 10 % of the best variant, the worst ratio (inputs of at least ``--min-nnz``
stored entries, as ``kclique_auto_fit.py``). Then the two thresholds refitted (a grid over every
distinct density and mean out-degree; most cases within 10 %, then the lowest worst ratio, then
the lowest sum of log ratios; the middle of the best span): on all cases, leaving one graph out,
and on the sets before check2 scored on check2; the graphs nearest each threshold; the replay
with the exact densities and with 20 other seeds; the feature's cost; ``--features`` the
candidate features for the lattice misses (pair and triple density, out-degree spread); ``--new``
the picks of both rules on the third check set (``bench_kclique_auto.CHECK3``).

    python3 benchmarks/diag/kclique_density_fit.py [--exact] [--features] [--new] [--write]
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

from bench_kclique_auto import CHECK3, load  # noqa: E402

from kernels.algorithms.auto_rules import (  # noqa: E402
    KCLIQUE_K4_LONG_LISTS,
    KCLIQUE_PAIR_SAMPLES,
    KCLIQUE_SHALLOW,
    KCLIQUE_SKEW,
    KCLIQUE_SPARSE_PAIRS,
    KCLIQUE_TINY_SEARCH,
    CliqueSearch,
    kclique_work,
    out_list_contains,
    out_pair_density,
    sampled_out_positions,
)
from kernels.algorithms.kclique.prepare import orient, simple_undirected  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "kclique-auto"
SETS = {"fit": RESULTS / "kclique-auto-fit-nvidia-h100-80gb-hbm3.jsonl",
        "held-out": RESULTS / "kclique-auto-heldout-nvidia-h100-80gb-hbm3.jsonl",
        "check": RESULTS / "kclique-auto-check-nvidia-h100-80gb-hbm3.jsonl",
        "check2": RESULTS / "kclique-auto-check2-nvidia-h100-80gb-hbm3.jsonl",
        "check3": RESULTS / "kclique-auto-check3-nvidia-h100-80gb-hbm3.jsonl",
        # measured on an H200 (132 SMs, as the H100: the rule's features read the same)
        "check4": RESULTS / "kclique-auto-check4-nvidia-h200.jsonl",
        "check5": RESULTS / "kclique-auto-check5-nvidia-h200.jsonl"}
VARIANTS = ("gpu-vertex", "gpu-edge", "gpu-list")
SAMPLES = KCLIQUE_PAIR_SAMPLES
#: ``--write``: each input's pair density, which tests/test_auto_params.py replays the rule with
DENSITIES = RESULTS / "kclique-pair-density.json"
#: the threshold of the rule shipped until 2026-11-28
PREVIOUS_SPARSE = 0.03


# ---- the features ----------------------------------------------------------------------------

def exact_pair_density(indptr: np.ndarray, indices: np.ndarray) -> float:
    """Oriented triangles / sum C(d⁺, 2), exactly (SciPy; for checking the estimate)."""
    import scipy.sparse as sp

    n = len(indptr) - 1
    a = sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(n, n))
    dplus = np.diff(np.asarray(indptr, dtype=np.int64))
    p = float((dplus * (dplus - 1) // 2).sum())
    return float((a @ a).multiply(a).sum()) / p if p else 0.0


def triple_density(indptr: np.ndarray, indices: np.ndarray, samples: int = SAMPLES, seed: int = 0) -> float:
    """The share of out-neighbour triples {u < w < x} of a vertex that are a triangle (a candidate
    feature, not used by the rule): triples drawn in proportion to C(d⁺, 3), three pair look-ups each."""
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    dplus = np.diff(indptr)
    weights = np.cumsum(dplus * (dplus - 1) * (dplus - 2))
    if len(weights) == 0 or weights[-1] <= 0:
        return 0.0
    rng = np.random.default_rng(seed)
    v, d, a, b = sampled_out_positions(dplus, weights, samples, rng)
    c = (rng.random(samples) * (d - 2)).astype(np.int64)
    c += c >= a
    c += c >= b                                            # three distinct positions of v's out-list
    pos = np.sort(np.stack([a, b, c]), axis=0)
    u, w, x = (indices[indptr[v] + p] for p in pos)
    return float((out_list_contains(indptr, indices, u, w) & out_list_contains(indptr, indices, u, x)
                  & out_list_contains(indptr, indices, w, x)).mean())


def dag_of(graph):
    return orient(simple_undirected(graph), "degree")


# ---- the rules -------------------------------------------------------------------------------

def previous(search: CliqueSearch, density: float) -> str:
    """The rule shipped until 2026-11-28: ``list`` under 0.03 (not on meshes); at k >= 5 ``list`` on
    uniform out-degrees; else the branches ``kclique_work`` still has."""
    shallow = search.max_out_degree <= KCLIQUE_SHALLOW
    if not shallow and density < PREVIOUS_SPARSE:
        return "list"
    if (search.k >= 5 and not shallow and search.total_search >= KCLIQUE_TINY_SEARCH
            and search.skew < KCLIQUE_SKEW):
        return "list"
    return kclique_work(dataclasses.replace(search, pair_density=1.0)).value


def shipped(search: CliqueSearch, density: float, sparse: float = KCLIQUE_SPARSE_PAIRS,
            long_lists: float = KCLIQUE_K4_LONG_LISTS) -> str:
    """``kclique_work`` given the density, at the thresholds ``sparse`` and ``long_lists``."""
    # plain floats: the rule's reasons multiply lists by its tests, which a NumPy bool cannot do
    return kclique_work(dataclasses.replace(search, pair_density=float(density)), sparse_pairs=float(sparse),
                        k4_long_lists=float(long_lists)).value


# ---- data ------------------------------------------------------------------------------------

def read_cases(min_nnz: int) -> tuple[list[dict], dict]:
    """One case per (set, input, k) with all three variants verified; and each input's recorded histogram."""
    cases, hists = [], {}
    for name, path in SETS.items():
        times: dict = defaultdict(dict)
        nnz = {}
        for line in path.read_text().splitlines():
            row = json.loads(line)
            hists[row["input"]] = row["dplus_hist"]
            if "median_s" not in row or not row.get("verified"):
                continue
            times[(row["input"], row["k"])][row["variant"]] = row["median_s"]
            nnz[row["input"]] = row["nnz"]
        for (spec, k), t in sorted(times.items()):
            if nnz[spec] >= min_nnz and all(v in t for v in VARIANTS):
                cases.append({"set": name, "input": spec, "k": k, "t": {v[4:]: t[v] for v in VARIANTS},
                              "nnz": nnz[spec]})
    return cases, hists


def features(specs, hists: dict, samples: int, exact: bool, more: bool) -> dict:
    out = {}
    for spec in specs:
        dag = dag_of(load(spec))
        dplus = np.diff(np.asarray(dag.indptr, dtype=np.int64))
        hist = np.bincount(dplus).tolist() if len(dplus) else [0]
        if spec in hists and hist != hists[spec]:
            print(f"WARNING {spec}: out-degree histogram differs from the recorded one")
        out[spec] = {"dplus": dplus, "density": out_pair_density(dag.indptr, dag.indices, samples),
                     "exact": exact_pair_density(dag.indptr, dag.indices) if exact else None,
                     "triples": triple_density(dag.indptr, dag.indices, samples) if more else None,
                     "edges": int(dag.num_edges), "dag": dag}
    return out


def ratio(case: dict, pick: str) -> float:
    return case["t"][pick] / min(case["t"].values())


def score(rs) -> tuple[int, int, float]:
    rs = list(rs)
    return sum(r <= 1.10 for r in rs), len(rs), max(rs) if rs else 0.0


# ---- the thresholds refitted -------------------------------------------------------------------

class Table:
    """Each case's ratio under the shipped rule for the four outcomes of its two tests (density under
    the sparse threshold? mean out-degree at least the long-list one?): a refit is then a lookup."""

    def __init__(self, cases: list[dict], density: dict):
        self.cases = cases
        self.dens = np.array([density[c["input"]] for c in cases])
        self.mean = np.array([c["search"].mean_out_degree for c in cases])
        self.r = np.empty((len(cases), 2, 2))
        for i, c in enumerate(cases):
            d, m = self.dens[i], self.mean[i]
            for sb in (0, 1):
                for lb in (0, 1):
                    self.r[i, sb, lb] = ratio(c, shipped(c["search"], d, d * 1.5 + 1e-9 if sb else d,
                                                         m if lb else m + 1.0))

    def ratios(self, idx: np.ndarray, sparse: float, long_lists: float) -> np.ndarray:
        return self.r[idx, (self.dens[idx] < sparse).astype(int), (self.mean[idx] >= long_lists).astype(int)]

    def fit(self, idx: np.ndarray) -> tuple[float, float]:
        """Both thresholds on the cases ``idx``: every cut between distinct values of each, scored (cases
        within 10 %, then the lowest worst ratio, then the lowest sum of log ratios); of the best, the
        geometric middle of the span each threshold may take."""
        def spans(values):
            v = sorted(set(values.tolist()))
            bounds = [0.0] + v + [2 * v[-1] + 1]
            return list(zip(bounds[:-1], bounds[1:], strict=True))
        sparse_spans, long_spans = spans(self.dens), spans(self.mean)
        best, tied = None, []
        for a, b in sparse_spans:
            for c, d in long_spans:
                rs = self.ratios(idx, b, d)
                key = (int((rs <= 1.10).sum()), -round(float(rs.max()), 6), -round(float(np.log(rs).sum()), 6))
                if best is None or key > best:
                    best, tied = key, [(a, b, c, d)]
                elif key == best:
                    tied.append((a, b, c, d))
        lo_s, hi_s = min(t[0] for t in tied), max(t[1] for t in tied)
        lo_l, hi_l = min(t[2] for t in tied), max(t[3] for t in tied)
        return math.sqrt(max(lo_s, 1e-3) * hi_s), math.sqrt(max(lo_l, 1.0) * hi_l)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-nnz", type=int, default=2000)
    ap.add_argument("--sms", type=int, default=132, help="the measuring GPU's SM count (H100, H200: 132)")
    ap.add_argument("--samples", type=int, default=SAMPLES)
    ap.add_argument("--write", action="store_true",
                    help=f"write each input's density (the rule's estimate) to {DENSITIES.name} for the replay test")
    ap.add_argument("--exact", action="store_true", help="also the exact density (SciPy), to check the estimate")
    ap.add_argument("--features", action="store_true",
                    help="the candidate features for the lattice misses: pair and triple density, out-degree spread")
    ap.add_argument("--new", action="store_true", help="both rules' picks on the third check set (CHECK3)")
    ap.add_argument("--cost-spec", default="gen:chung_lu:n=100000,avg_degree=20,exponent=2.5",
                    help="a graph of about 10^6 edges to time the feature on")
    ap.add_argument("--all-cases", action="store_true", help="print every case, not only the changed and the missed")
    args = ap.parse_args()

    cases, hists = read_cases(args.min_nnz)
    specs = sorted({c["input"] for c in cases})
    t0 = time.perf_counter()
    feats = features(specs, hists, args.samples, args.exact, args.features)
    print(f"{len(specs)} inputs of >= {args.min_nnz} entries loaded and oriented in {time.perf_counter() - t0:.0f} s\n")
    for c in cases:
        c["search"] = CliqueSearch.of(feats[c["input"]]["dplus"], c["k"], args.sms)
    if args.write:
        DENSITIES.write_text(json.dumps({spec: feats[spec]["density"] for spec in specs}, indent=1) + "\n")
        print(f"wrote {DENSITIES.relative_to(ROOT)}")

    print(f"{'input':52s} {'edges':>8s} {'d+max':>5s} {'mean':>5s} {'density':>8s}"
          + ("    exact" if args.exact else "") + ("  triples  d+ cv" if args.features else ""))
    for spec in specs:
        f = feats[spec]
        print(f"{spec[:52]:52s} {f['edges']:8d} {int(f['dplus'].max()):5d} {f['dplus'].mean():5.1f} {f['density']:8.4f}"
              + (f" {f['exact']:8.4f}" if args.exact else "")
              + (f"  {f['triples']:7.4f} {f['dplus'].std() / f['dplus'].mean():5.2f}" if args.features else ""))

    print(f"\nper case (changed, or over 10 % either way); shipped thresholds: pairs {KCLIQUE_SPARSE_PAIRS:g}, "
          f"k = 4 long lists at mean d+ {KCLIQUE_K4_LONG_LISTS:g}")
    by_set: dict = defaultdict(lambda: ([], []))
    worse = []
    for c in cases:
        dens = feats[c["input"]]["density"]
        a, b = previous(c["search"], dens), shipped(c["search"], dens)
        ra, rb = ratio(c, a), ratio(c, b)
        for s in (c["set"], "all"):
            by_set[s][0].append(ra)
            by_set[s][1].append(rb)
        if rb > ra * 1.0001:
            worse.append((c, ra, rb))
        if args.all_cases or a != b or ra > 1.10 or rb > 1.10:
            print(f"  {c['set']:8s} {c['input'][:44]:44s} k={c['k']} dens {dens:.4f}  previous {a:6s} x{ra:.2f}  "
                  f"shipped {b:6s} x{rb:.2f}  | " + "  ".join(f"{v} {t * 1e3:.3f}" for v, t in c["t"].items()) + " ms")
    print("\nset        previous              shipped")
    for s in (*SETS, "all"):
        (wa, n, xa), (wb, _, xb) = score(by_set[s][0]), score(by_set[s][1])
        print(f"{s:9s}  {wa:3d}/{n:<3d} worst x{xa:.2f}     {wb:3d}/{n:<3d} worst x{xb:.2f}")
    print(f"cases worse under the shipped rule: {len(worse)}"
          + "".join(f"\n  {c['set']} {c['input']} k={c['k']} x{ra:.2f} -> x{rb:.2f}" for c, ra, rb in worse))

    # the two thresholds refitted: on all cases; leaving one graph out; before check2, scored on check2
    density = {spec: feats[spec]["density"] for spec in specs}
    table = Table(cases, density)
    everything = np.arange(len(cases))
    fs, fl = table.fit(everything)
    w, n, x = score(table.ratios(everything, fs, fl))
    print(f"\nrefitted on all cases: pairs {fs:.4f}, long lists {fl:.1f} (shipped {KCLIQUE_SPARSE_PAIRS:g}, "
          f"{KCLIQUE_K4_LONG_LISTS:g}): {w}/{n} worst x{x:.2f}")
    logo: dict = defaultdict(list)
    moved = []
    for spec in specs:
        out = np.array([i for i, c in enumerate(cases) if c["input"] == spec])
        ts, tl = table.fit(np.array([i for i, c in enumerate(cases) if c["input"] != spec]))
        moved.append((ts, tl))
        for i, r in zip(out, table.ratios(out, ts, tl), strict=True):
            logo[cases[i]["set"]].append(r)
            logo["all"].append(r)
    print(f"leave one graph out: pairs {min(m[0] for m in moved):.4f}..{max(m[0] for m in moved):.4f}, "
          f"long lists {min(m[1] for m in moved):.1f}..{max(m[1] for m in moved):.1f}")
    for s in (*SETS, "all"):
        w, n, x = score(logo[s])
        print(f"  LOGO {s:9s} {w:3d}/{n:<3d} worst x{x:.2f}")
    before = np.array([i for i, c in enumerate(cases) if c["set"] in ("fit", "held-out", "check")])
    later = np.array([i for i, c in enumerate(cases) if c["set"] == "check2"])
    ts, tl = table.fit(before)
    w, n, x = score(table.ratios(later, ts, tl))
    print(f"refitted on fit + held-out + check: pairs {ts:.4f}, long lists {tl:.1f}; on check2 {w}/{n} worst x{x:.2f}"
          " (the structure was chosen after seeing check2)")

    # the margins: the graphs nearest each threshold
    print("\nnearest the pair threshold (density, sampled; the nearest mean out-degrees among the sparse):")
    for spec in sorted(specs, key=lambda s: abs(math.log(max(density[s], 1e-4) / KCLIQUE_SPARSE_PAIRS)))[:5]:
        print(f"  {spec[:56]:56s} {density[spec]:.4f}")
    sparse = [s for s in specs if density[s] < KCLIQUE_SPARSE_PAIRS and feats[s]["dplus"].max() > KCLIQUE_SHALLOW]
    for spec in sorted(sparse, key=lambda s: abs(math.log(feats[s]["dplus"].mean() / KCLIQUE_K4_LONG_LISTS)))[:4]:
        print(f"  {spec[:56]:56s} mean d+ {feats[spec]['dplus'].mean():.1f}")

    # robustness: the replay with the exact densities and with 20 other seeds
    exact = {s: (feats[s]["exact"] if feats[s]["exact"] is not None
                 else exact_pair_density(feats[s]["dag"].indptr, feats[s]["dag"].indices)) for s in specs}
    rows = [("exact", exact)] + [(f"seed {seed}", {s: out_pair_density(feats[s]["dag"].indptr, feats[s]["dag"].indices,
                                                                       args.samples, seed) for s in specs})
                                 for seed in range(1, 21)]
    got = {"previous": [], "shipped": []}
    for name, dens in rows:
        for rule, fn in (("previous", previous), ("shipped", shipped)):
            got[rule].append((name, score(ratio(c, fn(c["search"], dens[c["input"]])) for c in cases)))
    for rule, results in got.items():
        print(f"{rule} with the exact densities: {results[0][1][0]}/{results[0][1][1]} worst x{results[0][1][2]:.2f}; "
              f"seeds 1..20: {min(r[0] for _, r in results[1:])}..{max(r[0] for _, r in results[1:])} within, "
              f"worst x{min(r[2] for _, r in results[1:]):.2f}..{max(r[2] for _, r in results[1:]):.2f}")

    # cost: the largest measured input, and a graph of about 10^6 edges
    largest = max(specs, key=lambda s: feats[s]["edges"])
    for spec in (largest, args.cost_spec):
        dag = dag_of(load(spec))
        out_pair_density(dag.indptr, dag.indices, args.samples)       # warm
        runs = []
        for _ in range(20):
            t0 = time.perf_counter()
            out_pair_density(dag.indptr, dag.indices, args.samples)
            runs.append(time.perf_counter() - t0)
        print(f"cost on {spec} ({dag.num_edges:,} oriented edges, n={dag.n:,}): min {min(runs) * 1e3:.2f} ms, "
              f"median {np.median(runs) * 1e3:.2f} ms over 20 runs, {args.samples} pairs")

    if args.new:
        print("\nthe third check set (bench_kclique_auto.py --check3; no timings: to be measured on a GPU)")
        for spec in CHECK3:
            g = load(spec)
            dag = dag_of(g)
            dplus = np.diff(np.asarray(dag.indptr, dtype=np.int64))
            dens = out_pair_density(dag.indptr, dag.indices, args.samples)
            picks = []
            for k in (4, 5, 6, 7):
                s = CliqueSearch.of(dplus, k, args.sms)
                a, b = previous(s, dens), shipped(s, dens)
                picks.append(f"k{k} {b}" + ("" if a == b else f" (was {a})"))
            print(f"  {spec[:58]:58s} edges {dag.num_edges:>9,d} d+max {int(dplus.max()):4d} mean {dplus.mean():5.1f} "
                  f"dens {dens:.4f}  " + ", ".join(picks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
