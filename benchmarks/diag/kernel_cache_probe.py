"""Where a sweep cell's time goes, and what the kernel disk cache saves (one GPU).

    python3 benchmarks/diag/kernel_cache_probe.py [--cells 40] [--out DIR]

For ``spmv gpu-tunable`` on a generated power-law matrix of about 1 M entries (the issue-31
sweep's input), it runs the first ``--cells`` cells of the 132-cell ``wg x rows x reduce`` grid
through ``run_variant`` in this process, twice, each time in a fresh child process: once with an
empty cache (cold: every kernel compiled), once with the cache the first filled (warm). Each
cell's wall time is split into the runner's stages and the cache's compile/load figures; the
warm pass is profiled (cProfile, top functions by cumulative time) to show the per-cell cost
left once nothing compiles. A second probe does the same for ``triangles gpu-oriented`` and
``bfs gpu-csr`` (kernels compiled lazily, at their first launch). Every run is verified.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

GRID = {"wg": [32, 64, 128, 256, 512, 1024], "rows": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
        "reduce": ["shuffle", "shared"]}


def cells(n: int) -> list[dict]:
    out = []
    for wg in GRID["wg"]:
        for rows in GRID["rows"]:
            if rows > wg:
                continue
            for reduce in GRID["reduce"]:
                out.append({"wg": wg, "rows": rows, "reduce": reduce})
    return out[:n]


def child(args) -> None:
    """One pass in this (fresh) process: a JSON line per cell on stdout."""
    import cProfile
    import io
    import pstats

    from kernels.inputs import load_input
    from kernels.run.runner import run_variant

    work = [("spmv", "gpu-tunable", "gen:powerlaw_matrix:n_rows=65536,n_cols=65536,avg_nnz_per_row=16,seed=1",
             c) for c in cells(args.cells)]
    work += [("triangles", "gpu-oriented", "gen:rmat:scale=16,seed=1", {"group_size": g}) for g in (4, 8, 16, 32)]
    work += [("bfs", "gpu-csr", "gen:delaunay:n=65536,points=jittered-grid,seed=1", {"block": b})
             for b in (128, 256, 512)]
    graphs = {}
    profiler = cProfile.Profile() if args.profile else None
    started = time.perf_counter()
    for family, variant, source, params in work:
        if source not in graphs:
            graphs[source] = load_input(source)
        t0 = time.perf_counter()
        if profiler:
            profiler.enable()
        result = run_variant(graphs[source], family, variant, params, target="cuda", repeat=5, warmup=1)
        if profiler:
            profiler.disable()
        rec = result.record
        print(json.dumps({"family": family, "variant": variant, "params": params, "wall_s": time.perf_counter() - t0,
                          "verified": rec["verified"], "compile_s": rec["timing"]["compile_s"],
                          "h2d_s": rec["timing"]["h2d_s"], "d2h_s": rec["timing"]["d2h_s"],
                          "median_s": rec["timing"]["kernel"]["median_s"], "launch": rec["timing"]["launch"],
                          "cache": rec["timing"].get("cache")}), flush=True)
    print(json.dumps({"total_s": time.perf_counter() - started}), flush=True)
    if profiler:
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(45)
        print(text.getvalue(), file=sys.stderr)


def run_pass(args, cache: str, profile: bool) -> list[dict]:
    env = {**os.environ, "GRAPH_KERNELS_KERNEL_CACHE": cache, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, __file__, "--child", "--cells", str(args.cells)] + (["--profile"] if profile else [])
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200)
    if done.returncode != 0:
        print(done.stderr[-4000:])
        raise SystemExit(f"child failed ({done.returncode})")
    if profile:
        print(done.stderr[-12000:])
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def summarize(name: str, rows: list[dict]) -> dict:
    cell_rows = [r for r in rows if "family" in r]
    by_family = {}
    for r in cell_rows:
        k = f"{r['family']}/{r['variant']}"
        agg = by_family.setdefault(k, {"cells": 0, "wall_s": 0.0, "compile_stage_s": 0.0, "cache_compile_s": 0.0,
                                       "cache_load_s": 0.0, "hits": 0, "compiled": 0, "kernel_s": 0.0,
                                       "all_verified": True})
        agg["cells"] += 1
        agg["wall_s"] += r["wall_s"]
        agg["compile_stage_s"] += r["compile_s"]
        agg["kernel_s"] += r["median_s"]
        agg["all_verified"] &= bool(r["verified"])
        c = r.get("cache") or {}
        agg["cache_compile_s"] += c.get("compile_s", 0.0)
        agg["cache_load_s"] += c.get("load_s", 0.0)
        agg["hits"] += c.get("hits", 0)
        agg["compiled"] += c.get("compiled", 0)
    total = next((r["total_s"] for r in rows if "total_s" in r), None)
    print(f"== {name}: {total:.1f} s in all")
    for k, agg in by_family.items():
        per = agg["wall_s"] / agg["cells"]
        print(f"  {k}: {agg['cells']} cells, {agg['wall_s']:.2f} s ({per * 1e3:.0f} ms a cell); compile stage "
              f"{agg['compile_stage_s']:.2f} s, compiled {agg['compiled']} kernels in {agg['cache_compile_s']:.2f} s, "
              f"{agg['hits']} hits loaded in {agg['cache_load_s']:.3f} s; kernels {agg['kernel_s'] * 1e3:.2f} ms; "
              f"verified: {agg['all_verified']}")
    return {"total_s": total, "families": by_family}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--cells", type=int, default=40)
    p.add_argument("--child", action="store_true")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "diag")
    args = p.parse_args()
    if args.child:
        child(args)
        return
    with tempfile.TemporaryDirectory(prefix="kernel-cache-probe-") as cache:
        cold = run_pass(args, cache, profile=False)
        warm = run_pass(args, cache, profile=True)
        off = run_pass(args, "off", profile=False)
    report = {"cold": summarize("cold cache", cold), "warm": summarize("warm cache", warm),
              "off": summarize("cache off (today's path)", off), "rows": {"cold": cold, "warm": warm, "off": off}}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "kernel-cache-probe.json").write_text(json.dumps(report, indent=1))
    print(f"wrote {args.out / 'kernel-cache-probe.json'}")


if __name__ == "__main__":
    main()
