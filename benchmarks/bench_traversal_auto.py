"""The data behind ``bfs gpu-do``'s ``alpha``/``beta`` and ``sssp gpu-nearfar``'s ``delta`` auto rules.

``python3 benchmarks/bench_traversal_auto.py`` (GPU machine; ``--simulate`` for a dry run on the
CUDA simulator) sweeps, through ``run_sweep`` as ``graph-kernels sweep`` does, every cell
verified against SciPy:

* ``bfs gpu-do``: ``alpha`` x ``beta`` (7 x 9) on undirected graphs from a Graph500 root;
* ``sssp gpu-nearfar``: ``delta`` in multiples of the graph's mean positive weight (1/4 ... 256)
  and ``auto``, on weighted graphs.

Graphs are split into a *fit* set (the rule is chosen on it) and a *held-out* set (generated with
other sizes, degrees, exponents and weight ranges, and real graphs not used in the fit: the rule is
only checked there). Each graph's features (vertices, entries, degrees, weights, the source's hop
eccentricity) are recorded beside its sweep, so ``benchmarks/diag/traversal_auto_fit.py`` can
replay any candidate rule on the data. Writes ``benchmarks/results/traversal/auto-fit/<device>/``:
one sweep file (``.json``, ``.csv``, ``.svg``) per graph and ``summary.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from _common import ROOT, load_real, say, shown_path, slug
from traversal_frontier import Sweeper, graph500_roots, with_weights

ALPHAS = [2.0, 4.0, 8.0, 14.0, 32.0, 64.0, 128.0]
BETAS = [3.0, 6.0, 12.0, 24.0, 48.0, 96.0, 192.0, 384.0, 768.0]
DELTA_FACTORS = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0]
UNIFORM = (1.0, 10.0)

# (set, generator or "file", options); weights are added for the SSSP list
BFS_GRAPHS = {
    "full": [
        ("fit", "rmat", {"scale": 18, "edge_factor": 16}),
        ("fit", "rmat", {"scale": 20, "edge_factor": 16}),
        ("fit", "rmat", {"scale": 22, "edge_factor": 16}),
        ("fit", "chung_lu", {"n": 1 << 18, "avg_degree": 10.0, "exponent": 2.3}),
        ("fit", "gnm", {"n": 1 << 18, "m": 1 << 21}),
        ("fit", "file", {"name": "ca-HepTh.mtx"}),
        ("fit", "file", {"name": "as-caida20071105.mtx"}),
        ("fit", "delaunay", {"n": 1 << 18, "points": "jittered-grid"}),
        ("held", "rmat", {"scale": 19, "edge_factor": 8}),
        ("held", "rmat", {"scale": 21, "edge_factor": 32}),
    ],
    "simulate": [
        ("fit", "rmat", {"scale": 6, "edge_factor": 8}),
        ("held", "file", {"name": "karate.mtx"}),
    ],
}
#: ``--graphs check``: graphs neither set saw, mostly of the sizes users load (10^4 - 10^6 edges),
#: to check a rule after it was chosen
BFS_CHECK = [
    ("check", "chung_lu", {"n": 1 << 20, "avg_degree": 20.0, "exponent": 2.1}),
    ("check", "chung_lu", {"n": 1 << 16, "avg_degree": 6.0, "exponent": 2.7}),
    ("check", "gnm", {"n": 1 << 20, "m": 1 << 22}),
    ("check", "rmat", {"scale": 15, "edge_factor": 8}),
    ("check", "rmat", {"scale": 17, "edge_factor": 4}),
    ("check", "delaunay", {"n": 1 << 16, "points": "uniform"}),
    ("check", "grid2d", {"nx": 400, "ny": 400}),
    ("check", "file", {"name": "hep-th.mtx"}),
    ("check", "file", {"name": "netscience.mtx"}),
    ("check", "file", {"name": "power.mtx"}),
]
SSSP_CHECK = [
    ("check", "rmat", {"scale": 14, "edge_factor": 16}),
    ("check", "rmat", {"scale": 17, "edge_factor": 4, "weight_range": (1.0, 2.0)}),
    ("check", "grid2d", {"nx": 100, "ny": 100}),
    ("check", "delaunay", {"n": 1 << 17, "points": "jittered-grid", "weight_range": (1.0, 100.0)}),
    ("check", "chung_lu", {"n": 1 << 17, "avg_degree": 8.0, "exponent": 2.5}),
    ("check", "gnm", {"n": 1 << 16, "m": 1 << 19}),
    ("check", "file", {"name": "hep-th.mtx"}),
    ("check", "file", {"name": "netscience.mtx"}),
]
#: ``--graphs check2``: a second check, drawn after the rules were revised on the first
BFS_CHECK2 = [
    ("check2", "rmat", {"scale": 16, "edge_factor": 16}),
    ("check2", "chung_lu", {"n": 1 << 19, "avg_degree": 12.0, "exponent": 2.4}),
    ("check2", "gnm", {"n": 1 << 19, "m": 1 << 21}),
    ("check2", "grid2d", {"nx": 700, "ny": 700}),
    ("check2", "delaunay", {"n": 1 << 19, "points": "jittered-grid"}),
    ("check2", "file", {"name": "bcsstk13.mtx"}),
    ("check2", "file", {"name": "fe_4elt2.mtx"}),
]
SSSP_CHECK2 = [
    ("check2", "rmat", {"scale": 15, "edge_factor": 16}),
    ("check2", "chung_lu", {"n": 1 << 19, "avg_degree": 12.0, "exponent": 2.4}),
    ("check2", "gnm", {"n": 1 << 19, "m": 1 << 21}),
    ("check2", "grid2d", {"nx": 700, "ny": 700}),
    ("check2", "delaunay", {"n": 1 << 19, "points": "jittered-grid"}),
    ("check2", "file", {"name": "bcsstk13.mtx"}),
]
SSSP_GRAPHS = {
    "full": [
        ("fit", "grid2d", {"nx": 1000, "ny": 1000}),
        ("fit", "delaunay", {"n": 1 << 20, "points": "jittered-grid"}),
        ("fit", "rmat", {"scale": 20, "edge_factor": 16}),
        ("fit", "chung_lu", {"n": 1 << 20, "avg_degree": 10.0, "exponent": 2.3}),
        ("fit", "file", {"name": "as-caida20071105.mtx"}),
        ("fit", "delaunay", {"n": 1 << 16, "points": "jittered-grid"}),
        ("fit", "rmat", {"scale": 16, "edge_factor": 16}),
        ("fit", "gnm", {"n": 1 << 18, "m": 1 << 21}),
        ("held", "grid2d", {"nx": 300, "ny": 300}),
        ("held", "delaunay", {"n": 1 << 18, "points": "uniform", "weight_range": (1.0, 1000.0)}),
        ("held", "rmat", {"scale": 18, "edge_factor": 8, "weight_range": (1.0, 100.0)}),
        ("held", "chung_lu", {"n": 1 << 18, "avg_degree": 20.0, "exponent": 2.1}),
        ("held", "gnm", {"n": 1 << 20, "m": 1 << 22, "weight_range": (0.5, 1.5)}),
        ("held", "file", {"name": "ca-HepTh.mtx"}),
        ("held", "file", {"name": "power.mtx"}),
        ("held", "file", {"name": "fe_4elt2.mtx"}),
    ],
    "simulate": [
        ("fit", "grid2d", {"nx": 8, "ny": 8}),
        ("held", "file", {"name": "karate.mtx"}),
    ],
}


def build(kind: str, options: dict, weighted: bool):
    """A graph of the lists above; real graphs get weights uniform in [1, 10) when weighted."""
    from kernels.graph.generators import generate

    if kind == "file":
        g = load_real(options["name"])
        g = g.with_(weights=None) if not weighted else with_weights(g.with_(weights=None))
        return g
    opts = dict(options)
    if weighted:
        opts.setdefault("weight_range", UNIFORM)
        opts["weights"] = "uniform"
    else:
        opts.pop("weight_range", None)
    return generate(kind, seed=1, **opts)


def features(graph, source: int) -> dict:
    """What a rule may look at: sizes, degrees, weights, and how far the source's BFS reaches."""
    from kernels.algorithms.traversal.reference import bfs_levels

    deg = np.diff(graph.indptr)
    has = deg[deg > 0]
    levels = bfs_levels(graph, source)
    out = {"vertices": int(graph.n_rows), "entries": int(graph.nnz), "with_edges": int(len(has)),
           "mean_degree": float(has.mean()) if len(has) else 0.0, "max_degree": int(deg.max(initial=0)),
           "degree_cv": float(has.std() / has.mean()) if len(has) else 0.0,
           "reached": int(np.count_nonzero(levels >= 0)), "hop_eccentricity": int(levels.max(initial=0))}
    if graph.weights is not None:
        w = np.asarray(graph.weights, np.float64)
        pos = w[w > 0]
        out.update(mean_weight=float(pos.mean()), min_weight=float(pos.min()), max_weight=float(pos.max()))
    return out


def cells_of(result: dict) -> list[dict]:
    """A sweep's cells as the fit reads them: parameters, status, time and the run's counters."""
    out = []
    for c in result["cells"]:
        rec = c.get("record") or {}
        last = {k[5:]: v for k, v in rec.get("input", {}).items() if k.startswith("last_")}
        out.append({"params": c["params"], "status": c["status"], "median_s": c.get("median_s"),
                    "verified": rec.get("verified"), "resolved": rec.get("resolved_params", {}), "last": last})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulate", action="store_true", help="tiny graphs on the CUDA simulator (timings meaningless)")
    ap.add_argument("--part", choices=("bfs", "sssp", "both"), default="both")
    ap.add_argument("--graphs", choices=("fit", "check", "check2"), default="fit",
                    help="fit: the fit and held-out sets; check, check2: graphs neither saw")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget-s", type=float, default=520.0, help="stop starting sweeps after this many seconds")
    ap.add_argument("--out-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    mode = "simulate" if args.simulate else "full"
    target = "sim" if args.simulate else "cuda"
    started = time.perf_counter()

    from kernels.measure.environment import environment
    from kernels.measure.targets import activate
    from kernels.results import write_json_atomic

    activate(target)
    env = environment(target)
    device = env["device"].get("name") or target
    out_dir = args.out_dir or ROOT / "benchmarks" / "results" / "traversal" / "auto-fit" / (
        slug(device) + ("-simulate" if args.simulate else ""))
    out_dir.mkdir(parents=True, exist_ok=True)
    block = 32 if args.simulate else 256
    summary = {"kind": "benchmark", "suite": "traversal auto-rule data (issue 26)", "device": device,
               "environment": env, "alphas": ALPHAS, "betas": BETAS, "delta_factors": DELTA_FACTORS,
               "bfs": [], "sssp": [], "skipped": []}
    sweeper = Sweeper(target)
    jobs = []
    if args.part in ("bfs", "both"):
        jobs += [("bfs", *g) for g in {"check": BFS_CHECK, "check2": BFS_CHECK2}.get(args.graphs, BFS_GRAPHS[mode])]
    if args.part in ("sssp", "both"):
        jobs += [("sssp", *g) for g in {"check": SSSP_CHECK, "check2": SSSP_CHECK2}.get(args.graphs,
                                                                                  SSSP_GRAPHS[mode])]
    try:
        for family, role, kind, options in jobs:
            label = f"{family} {kind} {options}"
            if time.perf_counter() - started > args.budget_s:
                say(f"  skipped {label}: over the {args.budget_s:.0f} s budget")
                summary["skipped"].append(label)
                continue
            t = time.perf_counter()
            g = build(kind, options, weighted=family == "sssp")
            source = graph500_roots(g, 1)[0]
            feats = features(g, source)
            say(f"[{family}/{role}] {g.name}: {g.n_rows:,} vertices, {g.nnz:,} entries, source {source}, "
                f"hop eccentricity {feats['hop_eccentricity']} (built in {time.perf_counter() - t:.1f} s)")
            alphas, betas, factors = (ALPHAS[::3], BETAS[::4], DELTA_FACTORS[::5]) if args.simulate else (
                ALPHAS, BETAS, DELTA_FACTORS)        # the simulator is slow: a few cells show the path works
            if family == "bfs":
                grid = {"alpha": alphas, "beta": betas}
                variant = "gpu-do"
            else:
                mean_w = feats["mean_weight"]
                grid = {"delta": ["auto"] + [float(f"{mean_w * f:.4g}") for f in factors]}
                variant = "gpu-nearfar"
            base = out_dir / f"{'ab' if family == 'bfs' else 'delta'}-{slug(g.name)}"
            try:
                res = sweeper(g, family, variant, grid, {"source": source, "block": block}, repeat=args.repeat,
                              out_base=base, title=f"{variant} on {g.name}")
            except Exception as exc:  # noqa: BLE001 - reported, the benchmark goes on
                say(f"    sweep FAILED: {type(exc).__name__}: {exc}")
                summary["skipped"].append(f"{label}: {type(exc).__name__}: {exc}")
                continue
            summary[family].append({"set": role, "graph": g.name, "generator": kind, "options": options,
                                    "source": source, "features": feats, "file": shown_path(base.with_suffix(".json")),
                                    "wall_s": res["wall_s"], "cells": cells_of(res)})
            write_json_atomic(out_dir / "summary.json", summary)
    finally:
        sweeper.close()
    summary["wall_s"] = time.perf_counter() - started
    write_json_atomic(out_dir / "summary.json", summary)
    say(f"wrote {shown_path(out_dir / 'summary.json')} ({summary['wall_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
