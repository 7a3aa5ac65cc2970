"""A sweep over a Dask cluster of GPU workers on this machine: 1, 2, ... workers, side by side.

    python3 benchmarks/bench_cluster.py [--workers 1,2] [--input gen:...] [--out-dir DIR]

For each worker count N it starts ``graph-kernels cluster local --gpus N`` (a scheduler and one
Nanny per GPU, ``CUDA_VISIBLE_DEVICES`` pinned, resource ``GPU=1``), connects the Dask backend,
and runs the same sweep of ``spmv/gpu-tunable`` (every wg × rows × reduce: 132 valid
configurations) through :func:`kernels.compute.sweep.run_sweep`, every cell verified against
SciPy. The wall clock runs from the sweep's start to its last cell: the graph's transfer to
each worker, the per-worker first-cell costs (CUDA context, reference) and every cell's
compile, upload, timed launches and verification are in it; the cluster's start and the
graph's generation are not (they are printed apart).

It writes ``cluster-<device>-<n>gpu.json`` (the sweep file) for each N and
``cluster-<device>.json``: the wall clocks, the speed-up of each N over one worker, and the
per-cell kernel-time ratio (median on N workers / median on one) with the share of cells
within 5 %. ``--baseline-twice`` runs the one-worker sweep twice, so the same ratio between
two one-worker runs shows the measurement's own noise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from _common import ROOT, say, shown_path, slug

os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")   # the scheduler's and nannies' INFO lines

DEFAULT_INPUT = "gen:powerlaw_matrix:n_rows=2000000,n_cols=2000000,avg_nnz_per_row=16,exponent=2.5,max_row=2000,seed=7"
GRID = ["wg=1,2,4,8,16,32,64,128,256,512,1024", "rows=1,2,4,8,16,32,64,128,256,512,1024", "reduce=shuffle,shared"]


def run_one(n_workers: int, graph, args) -> dict:
    """Start a cluster of ``n_workers`` GPU workers (CPU workers with --simulate), sweep, stop it."""
    from kernels.compute.dask.backend import DaskBackend
    from kernels.compute.dask.cluster import start_local_cluster
    from kernels.compute.sweep import parse_grid, run_sweep

    t0 = time.perf_counter()
    if args.simulate:
        cluster, devices = start_local_cluster(gpus=0, workers=n_workers)
    else:
        cluster, devices = start_local_cluster(gpus=n_workers)
    try:
        backend = DaskBackend(cluster.scheduler_address)
        try:
            workers = backend.describe()
            start_s = time.perf_counter() - t0
            say(f"  {n_workers} worker(s) up in {start_s:.1f} s: "
                + ", ".join(f"{w.name or w.address} [{(w.gpu or {}).get('name', 'no GPU')}]" for w in workers))
            grid = parse_grid("spmv", "gpu-tunable", args.grid)
            done = [0]

            def progress(finished, total, cell):
                done[0] = finished
                if finished % 20 == 0 or finished == total:
                    say(f"    {finished}/{total} cells ({time.perf_counter() - t1:.1f} s)")

            t1 = time.perf_counter()
            target = "sim" if args.simulate else "cuda"
            sweep = run_sweep(graph, "spmv", "gpu-tunable", grid, target=target, repeat=args.repeat, warmup=args.warmup,
                               time_limit=args.time_limit, progress=progress, backend=backend)
            wall = time.perf_counter() - t1
        finally:
            backend.close()
    finally:
        cluster.close()
    return {"workers": n_workers, "devices": devices, "cluster_start_s": start_s, "wall_s": wall, "sweep": sweep}


def cell_medians(sweep: dict) -> dict:
    return {json.dumps(c["params"], sort_keys=True): c["median_s"] for c in sweep["cells"]
            if c["status"] == "ok" and c.get("median_s")}


def compare(one: dict, other: dict) -> dict:
    a, b = cell_medians(one["sweep"]), cell_medians(other["sweep"])
    common = sorted(set(a) & set(b))
    ratios = [b[k] / a[k] for k in common]
    off = [abs(r - 1.0) for r in ratios]
    return {"cells_compared": len(common),
            "kernel_ratio_median": statistics.median(ratios) if ratios else None,
            "kernel_ratio_min": min(ratios) if ratios else None,
            "kernel_ratio_max": max(ratios) if ratios else None,
            "within_5pct": sum(d <= 0.05 for d in off), "within_5pct_share": (sum(d <= 0.05 for d in off)
                                                                             / len(off)) if off else None,
            "worst_cells": sorted(({"params": json.loads(k), "one_worker_ms": a[k] * 1e3, "ms": b[k] * 1e3}
                                   for k in common), key=lambda c: -abs(c["ms"] / c["one_worker_ms"] - 1))[:5]}


def summary(run: dict) -> dict:
    cells = run["sweep"]["cells"]
    by_status: dict[str, int] = {}
    for c in cells:
        by_status[c["status"]] = by_status.get(c["status"], 0) + 1
    per_worker: dict[str, int] = {}
    for c in cells:
        if c.get("worker"):
            per_worker[c["worker"]] = per_worker.get(c["worker"], 0) + 1
    run_cells = [c for c in cells if c.get("record")]
    per_cell_s = [cell_seconds(c["record"]["timing"]) for c in run_cells]
    return {"workers": run["workers"], "devices": run["devices"], "wall_s": run["wall_s"],
            "cluster_start_s": run["cluster_start_s"], "cells": by_status, "cells_per_worker": per_worker,
            "verified": sum(1 for c in run_cells if c["record"]["verified"]),
            "cell_stage_seconds_min": min(per_cell_s) if per_cell_s else None,
            "best": run["sweep"].get("best")}


def cell_seconds(timing: dict) -> float:
    """A cell's measured stages: compile, transfers and every timed launch (the warm-up and the
    verification come on top)."""
    k = timing["kernel"]
    launches = len(k["samples"]) * k.get("launches_per_sample", 1)
    return timing["compile_s"] + timing["h2d_s"] + timing["d2h_s"] + k["median_s"] * launches


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workers", default="1,2", help="worker (GPU) counts to measure, e.g. 1,2 or 1,2,4")
    p.add_argument("--input", default=DEFAULT_INPUT)
    p.add_argument("--grid", action="append", default=None)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--time-limit", type=float, default=120.0)
    p.add_argument("--baseline-twice", action="store_true")
    p.add_argument("--simulate", action="store_true",
                   help="smoke test without a GPU: CPU workers, the CUDA simulator, a tiny input and grid")
    p.add_argument("--out-dir", default=str(ROOT / "benchmarks" / "results"))
    args = p.parse_args()
    if args.simulate:
        args.input = "gen:powerlaw_matrix:n_rows=64,n_cols=64,avg_nnz_per_row=4,seed=7"
        args.grid = args.grid or ["wg=32,64", "rows=1,8,64"]
        args.repeat, args.warmup = 1, 0
    args.grid = args.grid or GRID
    counts = [int(x) for x in args.workers.split(",")]

    from kernels.inputs import load_input
    from kernels.measure.environment import environment
    from kernels.results import save_sweep

    t = time.perf_counter()
    graph = load_input(args.input)
    say(f"input {graph.name}: {graph.n_rows:,} rows, {graph.nnz:,} entries ({time.perf_counter() - t:.1f} s to make)")
    env = environment("sim" if args.simulate else "cuda")
    device = "sim" if args.simulate else env["device"].get("name", "gpu")
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    runs = []
    plan = ([1] if args.baseline_twice else []) + counts
    for n in plan:
        say(f"sweep on {n} worker(s)")
        run = run_one(n, graph, args)
        say(f"  wall {run['wall_s']:.1f} s")
        runs.append(run)

    baseline = runs[0]
    measured = runs[1:] if args.baseline_twice else runs
    report = {"benchmark": "cluster sweep", "date": env.get("date") or time.strftime("%Y-%m-%d"),
              "device": device, "environment": env, "input": {"spec": args.input, "name": graph.name,
                                                             "rows": graph.n_rows, "nnz": graph.nnz},
              "variant": "spmv/gpu-tunable", "grid": args.grid, "repeat": args.repeat, "warmup": args.warmup,
              "runs": [summary(r) for r in runs]}
    one = measured[0] if measured[0]["workers"] == 1 else baseline
    report["speedups"] = {str(r["workers"]): one["wall_s"] / r["wall_s"] for r in measured}
    report["kernel_time_vs_one_worker"] = {str(r["workers"]): compare(one, r) for r in measured if r is not one}
    if args.baseline_twice:
        report["noise_one_worker_vs_one_worker"] = compare(baseline, measured[0])
    for r in runs:
        save_sweep(r["sweep"], out_dir / f"cluster-{slug(device)}-{r['workers']}gpu.json")
    path = out_dir / f"cluster-{slug(device)}.json"
    path.write_text(json.dumps(report, indent=2, default=str) + "\n")
    for n, s in report["speedups"].items():
        say(f"{n} worker(s): {s:.2f}x the one-worker wall clock")
    for n, c in report["kernel_time_vs_one_worker"].items():
        say(f"{n} workers vs 1: per-cell kernel ratio median {c['kernel_ratio_median']:.3f} "
            f"[{c['kernel_ratio_min']:.3f}, {c['kernel_ratio_max']:.3f}], {c['within_5pct']}/{c['cells_compared']} "
            "within 5 %")
    if args.baseline_twice:
        c = report["noise_one_worker_vs_one_worker"]
        say(f"noise (1 vs 1): median {c['kernel_ratio_median']:.3f} [{c['kernel_ratio_min']:.3f}, "
            f"{c['kernel_ratio_max']:.3f}], {c['within_5pct']}/{c['cells_compared']} within 5 %")
    say(f"wrote {shown_path(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
