"""How deep does the k-clique search really go? A replay study of one cheap feature (no GPU, no graph
loads): the expected number of k-cliques from what ``kclique_work`` already reads,

    expected ≈ total_search × pair_density ^ C(k-1, 2)

(each of the C(d⁺, k-1) subsets a clique if all its C(k-1, 2) pairs are adjacent, the pairs taken as
independent), its per-vertex form, and the survival fraction pair_density ^ C(k-1, 2); plus moving the
k = 4 mesh test before the 5·10⁵ search test. Inputs: the recorded out-degree histograms
(``dplus_hist``) and the sampled densities (``kclique-pair-density.json``) of
``benchmarks/results/kclique-auto``; the recorded clique counts only judge the estimate.

Each candidate adds one branch with one threshold, refitted on all cases and leave-one-graph-out
(a grid over every distinct feature value; most cases within 10 %, then the lowest worst ratio,
then the lowest sum of log ratios; the geometric middle of the best span).

    .venv/bin/python benchmarks/diag/kclique_depth_fit.py [--cases]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kernels.algorithms import auto_rules as ar  # noqa: E402
from kernels.algorithms.auto_rules import CliqueSearch, kclique_work  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "kclique-auto"
SETS = ("fit", "heldout", "check", "check2", "check3")
VARIANTS = ("vertex", "edge", "list")


def read_cases(min_nnz: int = 2000, sms: int = 132) -> list[dict]:
    density = json.loads((RESULTS / "kclique-pair-density.json").read_text())
    cases = []
    for name in SETS:
        times, hist, nnz, cliques = defaultdict(dict), {}, {}, {}
        for line in (RESULTS / f"kclique-auto-{name}-nvidia-h100-80gb-hbm3.jsonl").read_text().splitlines():
            row = json.loads(line)
            if not row.get("verified") or "median_s" not in row:
                continue
            key = (row["input"], row["k"])
            times[key][row["variant"]] = row["median_s"]
            hist[key], nnz[key], cliques[key] = row["dplus_hist"], row["nnz"], row.get("cliques", row.get("expected"))
        for key, t in sorted(times.items()):
            if nnz[key] < min_nnz or not all(f"gpu-{v}" in t for v in VARIANTS):
                continue
            spec, k = key
            dplus = np.repeat(np.arange(len(hist[key])), hist[key])
            s = dataclasses.replace(CliqueSearch.of(dplus, k, sms), pair_density=density[spec])
            est = s.total_search * s.pair_density ** math.comb(k - 1, 2)
            cases.append({"set": name, "input": spec, "k": k, "s": s, "t": {v: t[f"gpu-{v}"] for v in VARIANTS},
                          "cliques": cliques[key], "est": est, "per_vertex": est / max(s.n, 1),
                          "survival": s.pair_density ** math.comb(k - 1, 2)})
    return cases


def ratio(c: dict, pick: str) -> float:
    return c["t"][pick] / min(c["t"].values())


def shipped(c: dict) -> str:
    return kclique_work(c["s"]).value


def mesh_first(c: dict) -> str:
    s = c["s"]
    if s.k <= 4 and s.max_out_degree <= ar.KCLIQUE_SHALLOW and s.total_search >= ar.KCLIQUE_MESH_SEARCH:
        return "list"
    return shipped(c)


def few_cliques(feature: str, kmin: int, base=shipped, pick: str = "list"):
    """``pick`` where ``feature`` < threshold at k >= kmin (not on meshes: they have their own branches)."""
    def rule(c: dict, thr: float) -> str:
        s = c["s"]
        if s.k >= kmin and s.max_out_degree > ar.KCLIQUE_SHALLOW and c[feature] < thr:
            return pick
        return base(c)
    return rule


def score(rs) -> tuple[int, int, float]:
    rs = list(rs)
    return sum(r <= 1.10 for r in rs), len(rs), max(rs) if rs else 0.0


def fit(cases, idx, rule, feature) -> float:
    """A candidate branch fires or not: each case's two ratios, then every cut scored as a lookup."""
    idx = np.asarray(list(idx))
    f = np.array([c[feature] for c in cases])
    vals = sorted(set(f.tolist()))
    hi_all = vals[-1] * 2 + 1
    fires = np.array([ratio(c, rule(c, hi_all)) for c in cases])     # every threshold above the feature
    stays = np.array([ratio(c, rule(c, 0.0)) for c in cases])
    bounds = [0.0] + vals + [hi_all]
    best, tied = None, []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        rs = np.where(f[idx] < hi, fires[idx], stays[idx])
        key = (int((rs <= 1.10).sum()), -round(float(rs.max()), 6), -round(float(np.log(rs).sum()), 6))
        if best is None or key > best:
            best, tied = key, [(lo, hi)]
        elif key == best:
            tied.append((lo, hi))
    lo, hi = min(t[0] for t in tied), max(t[1] for t in tied)
    return math.sqrt(max(lo, 1e-12) * hi) if lo > 0 else hi / 2


def report(name: str, cases, picks_all, picks_logo=None) -> None:
    """A line of per-set scores for the picks on all cases, and one for the leave-one-graph-out picks."""
    for label, picks in ((name, picks_all), ("  LOGO", picks_logo)):
        if picks is None:
            continue
        line = f"{label:34s}"
        for s in (*SETS, "all"):
            rs = [ratio(c, p) for c, p in zip(cases, picks, strict=True) if s in ("all", c["set"])]
            w, n, x = score(rs)
            line += f" {w:3d}/{n:<3d} x{x:.2f}"
        print(line)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", action="store_true", help="print every case's features and the estimate's quality")
    args = ap.parse_args()
    cases = read_cases()
    specs = sorted({c["input"] for c in cases})
    print(f"{len(cases)} cases, {len(specs)} graphs\n")

    if args.cases:
        for c in cases:
            s = c["s"]
            best = min(c["t"], key=c["t"].get)
            pick = shipped(c)
            print(f"{c['set']:7s} {c['input'][:48]:48s} k={c['k']} d+max {s.max_out_degree:4d} "
                  f"mean {s.mean_out_degree:5.1f} "
                  f"dens {s.pair_density:.3f} search {s.total_search:9.3g} est {c['est']:9.3g} "
                  f"true {c['cliques']:9.3g} "
                  f"best {best:6s} pick {pick:6s} x{ratio(c, pick):.2f} "
                  + " ".join(f"{v[0]}{ratio(c, v):.2f}" for v in VARIANTS))
        est = np.array([c["est"] for c in cases])
        true = np.array([c["cliques"] for c in cases], dtype=float)
        ok = (est > 0) & (true > 0)
        lr = np.log10(est[ok] / true[ok])
        print(f"\nlog10(estimate / true) over {ok.sum()} cases with both > 0: median {np.median(lr):+.2f}, "
              f"quartiles {np.percentile(lr, 25):+.2f}..{np.percentile(lr, 75):+.2f}, "
              f"range {lr.min():+.2f}..{lr.max():+.2f}; "
              f"Spearman {np.corrcoef(np.argsort(np.argsort(est)), np.argsort(np.argsort(true)))[0, 1]:.3f}\n")

    print(f"{'rule':34s}" + "".join(f" {s:>13s}" for s in (*SETS, "all")))
    report("shipped", cases, [shipped(c) for c in cases])
    report("k=4 mesh test first", cases, [mesh_first(c) for c in cases])
    candidates = []
    for feature in ("est", "per_vertex", "survival"):
        for kmin in (4, 5, 6):
            for base, bname in ((shipped, ""), (mesh_first, " +mesh"), ):
                for pick in ("list", "vertex"):
                    candidates.append((f"{pick}: {feature}<T k>={kmin}{bname}",
                                       few_cliques(feature, kmin, base, pick), feature))
    for name, rule, feature in candidates:
        everything = range(len(cases))
        thr = fit(cases, everything, rule, feature)
        picks = [rule(c, thr) for c in cases]
        logo = [None] * len(cases)
        fold_thr = []
        for spec in specs:
            train = [i for i, c in enumerate(cases) if c["input"] != spec]
            t = fit(cases, train, rule, feature)
            fold_thr.append(t)
            for i, c in enumerate(cases):
                if c["input"] == spec:
                    logo[i] = rule(c, t)
        report(f"{name} (T={thr:.3g})", cases, picks, logo)
        print(f"{'':34s} fold thresholds {min(fold_thr):.3g}..{max(fold_thr):.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
