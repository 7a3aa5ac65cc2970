#!/usr/bin/env python3
"""BFS and SSSP on the GPU machine.

**Default: the frontier suite** (issue 26, ``benchmarks/traversal_frontier.py``): BFS on R-MAT
22 with Graph500 roots (median over 8) and on a 2^20-point Delaunay graph, ``gpu-csr`` /
``gpu-slotted`` against the direction-optimizing ``gpu-do`` / ``gpu-do-slotted``; ``gpu-do``'s
7 x 7 alpha x beta sweep and heatmap (best vs auto); SSSP on a weighted 2^20 Delaunay graph and
a weighted R-MAT 20, frontier Bellman-Ford against near-far (``gpu-nearfar``), relaxations per
edge; a delta sweep on five graphs (auto vs the swept best). Outputs in
``benchmarks/results/traversal/``. About 4-5 minutes on an H100 (``--quick``: about 2).

    python3 benchmarks/bench_traversal.py              # the frontier suite
    python3 benchmarks/bench_traversal.py --quick      # small inputs, a smoke test
    python3 benchmarks/bench_traversal.py --simulate   # dry run on the CUDA simulator (tiny inputs)
    python3 benchmarks/bench_traversal.py --thesis     # the earlier suite below (about 4-5 minutes)

**``--thesis``: the earlier suite**: gpu-csr against gpu-slotted (page sizes 256..2048) on
graphs shaped like the thesis' (R-MAT, road-like grid and Delaunay, collaboration-like
Chung–Lu), CPU and SciPy baselines, the dynamic experiment (sync + rerun against rebuild +
upload + rerun) at edit batches of 0.01 %, 0.1 %, 1 % and 10 % of the edges, then SSSP. A time
budget (300 s; 100 s quick) skips what is left, with a note, if the machine is slower than expected.

First, the **device loop** (``loop=device``: the whole traversal in one cooperative launch)
beside the **host loop** (``loop=host``: launches and a counter read-back per level), gpu-csr
and gpu-slotted, BFS (top-down and direction-optimizing) and SSSP, on long-diameter graphs (a
1000 x 1000 grid, a 2^20-point Delaunay graph) and real ones from tests/data: kernel time,
levels, µs per level, levels per second, GTEPS, and per graph the claim line "BFS/SSSP under
10 µs per level" (best top-down device-loop row). The later sections run the default loop
(device).

    python3 benchmarks/bench_traversal.py --thesis             # full run, about 4-5 minutes on an H100/H200
    python3 benchmarks/bench_traversal.py --thesis --quick     # small inputs, a smoke test (under two minutes)
    python3 benchmarks/bench_traversal.py --loop-only          # only the device loop vs host loop section
    python3 benchmarks/bench_traversal.py --thesis --simulate  # dry run on the CUDA simulator (tiny inputs)

Every BFS/SSSP timing is the project's own (``kernels.run.runner.run_variant``: CUDA events over
repeated whole traversals after a warm-up, compilation timed apart) and every result is
verified against SciPy; a failing variant is reported and the benchmark goes on. The dynamic
experiment (``kernels.dynamic.run_dynamic``) times each stage with ``perf_counter`` +
``cuda.synchronize()`` and verifies every round against SciPy.

The source of each traversal is a random vertex of the largest component (seeded), as
Graph500 picks roots. GTEPS = edges of the reached part / time (undirected edges once).

Writes ``benchmarks/results/traversal-<device>[-quick|-simulate].json`` (all rows, the
dynamic summaries and the goals) and ``traversal-<device>-dynamic.jsonl`` (every round),
and prints a compact summary table last.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(ROOT))
import numpy as np  # noqa: E402
from _common import say, shown_path, slug  # noqa: E402

if "--simulate" in sys.argv[1:]:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"  # before anything imports numba.cuda
else:
    os.environ.pop("NUMBA_ENABLE_CUDASIM", None)

PAGE_SIZES = [256, 512, 1024, 2048]
FULL = {
    "graphs": [("rmat", 22), ("grid", 1000), ("delaunay", 1 << 19), ("chung_lu", 1 << 20)],
    "sssp_graphs": [("rmat_w", 20), ("chung_lu_w", 1 << 20), ("grid_w", 500)],
    "page_sizes": PAGE_SIZES, "other_page_sizes": [256, 1024], "block": 256, "repeat": 3,
    "cpu_max_entries": 40_000_000, "cpu_serial_max_entries": 10_000_000,
    "dynamic": [("rmat", 22, "bfs", [1e-4, 1e-3], 2), ("rmat", 20, "bfs", [1e-4, 1e-3, 1e-2, 1e-1], 1),
                ("rmat_w", 20, "sssp", [1e-4, 1e-3], 1), ("grid", 1000, "bfs", [1e-3], 1)],
    "loop_graphs": [("grid", 1000), ("delaunay", 1 << 20), ("file", "delaunay_n15.mtx"),
                    ("file", "as-caida20071105.mtx"), ("file", "power.mtx")],
    "budget_s": 300,
}
QUICK = {
    "graphs": [("rmat", 16), ("grid", 200), ("chung_lu", 1 << 16)],
    "sssp_graphs": [("rmat_w", 14), ("grid_w", 100)],
    "page_sizes": [256, 1024], "other_page_sizes": [1024], "block": 256, "repeat": 2,
    "cpu_max_entries": 40_000_000, "cpu_serial_max_entries": 10_000_000,
    "dynamic": [("rmat", 16, "bfs", [1e-4, 1e-3, 1e-2, 1e-1], 1), ("rmat_w", 14, "sssp", [1e-3], 1)],
    "loop_graphs": [("grid", 300), ("delaunay", 1 << 16), ("file", "delaunay_n15.mtx"), ("file", "power.mtx")],
    "budget_s": 100,
}
SIMULATE = {
    "graphs": [("rmat", 6), ("grid", 6)],
    "sssp_graphs": [("rmat_w", 5)],
    "page_sizes": [16, 32], "other_page_sizes": [16], "block": 32, "repeat": 1,
    "cpu_max_entries": 10_000, "cpu_serial_max_entries": 10_000,
    "dynamic": [("rmat", 6, "bfs", [1e-2, 1e-1], 1)],
    "loop_graphs": [("grid", 5), ("file", "karate.mtx")],
    "budget_s": 600,
}
LEVEL_GOAL_US = 10.0   # the device loop's claim: under 10 µs per level


# ---- inputs --------------------------------------------------------------------------------

def make_graph(kind: str, size):
    """The benchmark's graphs: R-MAT (Graph500 parameters, edge factor 16), a square grid and a
    Delaunay triangulation (road-like: low degree, large diameter), Chung–Lu with a power-law
    exponent of 2.3 and mean degree 10 (collaboration-like). ``_w``: uniform weights in [1, 10)."""
    from kernels.graph.generators import chung_lu, delaunay, grid2d, rmat

    if kind == "file":                           # a real graph of tests/data (``size`` is its name)
        from kernels.graph.io import read_graph

        data = ROOT / "tests" / "data"
        return read_graph(data / size if (data / size).exists() else data / f"{size}.gz")
    weights = "uniform" if kind.endswith("_w") else None
    wr = (1.0, 10.0)
    base = kind.removesuffix("_w")
    if base == "rmat":
        return rmat(size, 16, seed=1, weights=weights, weight_range=wr)
    if base == "grid":
        return grid2d(size, size, seed=1, weights=weights, weight_range=wr)
    if base == "delaunay":
        return delaunay(size, points="jittered-grid", seed=1, weights=weights, weight_range=wr)
    if base == "chung_lu":
        return chung_lu(size, 10.0, 2.3, seed=1, weights=weights, weight_range=wr)
    raise ValueError(kind)


def pick_source(graph, seed: int = 7) -> tuple[int, int]:
    """A random vertex (seeded) that reaches at least half of the non-isolated vertices."""
    from kernels.algorithms.traversal.common import reach_counts

    rng = np.random.default_rng(seed)
    candidates = np.flatnonzero(graph.degrees() > 0)
    if len(candidates) == 0:
        return 0, 1
    best = (0, 0)
    for _ in range(8):
        s = int(rng.choice(candidates))
        reached, _ = reach_counts(graph, s)
        if reached > best[1]:
            best = (s, reached)
        if reached * 2 >= len(candidates):
            break
    return best


class Inputs:
    """Generated graphs, built once and shared by the sections."""

    def __init__(self):
        self._graphs: dict = {}

    def get(self, kind: str, size: int):
        key = (kind, size)
        if key not in self._graphs:
            t = time.perf_counter()
            g = make_graph(kind, size)
            source, reached = pick_source(g)
            self._graphs[key] = (g, source)
            say(f"  built {g.name}{' (weighted)' if g.weighted else ''}: {g.n_rows:,} vertices, {g.nnz:,} entries, "
                f"source {source} reaches {reached:,} ({time.perf_counter() - t:.1f} s)")
        return self._graphs[key]

    def drop(self, kind: str, size: int) -> None:
        self._graphs.pop((kind, size), None)


# ---- runs -------------------------------------------------------------------------------------

class Bench:
    def __init__(self):
        self.rows: list[dict] = []

    def run(self, graph, family: str, variant: str, params: dict, *, target: str | None, repeat: int,
            warmup: int = 1, label: str | None = None) -> dict:
        from kernels.errors import GraphKernelsError
        from kernels.run.runner import run_variant

        row = {"graph": graph.name, "entries": graph.nnz, "vertices": graph.n_rows, "family": family,
               "variant": variant, "label": label or variant, "params": dict(params)}
        t0 = time.perf_counter()
        try:
            rec = run_variant(graph, family, variant, params, target=target, repeat=repeat, warmup=warmup).record
            metrics = {m["name"]: m["value"] for m in rec["metrics"]}
            kernel = rec["timing"]["kernel"]
            row.update(status=rec["status"], verified=rec["verified"], target=rec["target"], params=rec["params"],
                       median_s=kernel["median_s"], min_s=kernel["min_s"], cv=kernel["cv"],
                       launch=rec["timing"].get("launch", "direct"), gteps=metrics.get("GTEPS"),
                       compile_s=rec["timing"]["compile_s"],
                       h2d_s=rec["timing"]["h2d_s"], traversed_edges=rec["input"]["traversed_edges"],
                       reached=rec["input"]["reached"], source=rec["params"]["source"],
                       steps={k[5:]: v for k, v in rec["input"].items() if k.startswith("last_")},
                       verification=rec["verification"]["detail"], notices=rec["notices"])
        except Exception as exc:  # every failure is reported, and the benchmark goes on
            row.update(status="failed", verified=False, error=f"{type(exc).__name__}: {exc}")
            if not isinstance(exc, GraphKernelsError) or exc.__cause__ is not None:
                traceback.print_exc(limit=6)
        row["wall_s"] = time.perf_counter() - t0
        self.rows.append(row)
        shown = " ".join(f"{k}={v}" for k, v in row["params"].items() if k != "source")
        levels = row.get("steps", {}).get("levels")
        if row.get("median_s") and levels:
            row["levels"] = levels
            row["us_per_level"] = row["median_s"] / levels * 1e6
            row["levels_per_s"] = levels / row["median_s"]
        if row.get("median_s"):
            per_level = f" {row['us_per_level']:8.2f} us/level" if "us_per_level" in row else ""
            say(f"    {family:<4} {row['label']:<13} {shown:<52} {row['median_s'] * 1e3:9.3f} ms "
                f"{row['gteps']:7.3f} GTEPS{per_level}  verified={row['verified']}  ({row['wall_s']:.1f} s)")
        else:
            say(f"    {family:<4} {row['label']:<13} {shown:<52} FAILED: {row.get('error', row.get('status'))}")
        return row

    def best(self, graph: str, family: str, variant: str, **match) -> dict | None:
        ok = [r for r in self.rows if r["graph"] == graph and r["family"] == family and r["variant"] == variant
              and r.get("verified") and r.get("median_s")
              and all(r["params"].get(k) == v for k, v in match.items())]
        return min(ok, key=lambda r: r["median_s"]) if ok else None


def traversal_section(bench: Bench, graph, source: int, family: str, cfg: dict, gpu_target: str, *,
                      main: bool) -> None:
    """Every variant on one graph; the full page-size range on the main graph only."""
    rep, block = cfg["repeat"], cfg["block"]
    pages = cfg["page_sizes"] if main else cfg["other_page_sizes"]
    s = {"source": source}
    if family == "bfs":
        for balance in ("lb", "tpv"):
            for direction in ("optimizing", "push"):
                bench.run(graph, "bfs", "gpu-csr", {**s, "balance": balance, "direction": direction, "block": block},
                          target=gpu_target, repeat=rep)
        for page in pages:
            bench.run(graph, "bfs", "gpu-slotted", {**s, "page_size": page, "balance": "lb",
                                                    "direction": "optimizing", "block": block},
                      target=gpu_target, repeat=rep)
        mid = 1024 if 1024 in pages else pages[-1]
        bench.run(graph, "bfs", "gpu-slotted", {**s, "page_size": mid, "balance": "lb", "direction": "push",
                                                "block": block}, target=gpu_target, repeat=rep)
        bench.run(graph, "bfs", "gpu-slotted", {**s, "page_size": mid, "balance": "tpv", "direction": "optimizing",
                                                "block": block}, target=gpu_target, repeat=rep)
    else:
        for balance in ("lb", "tpv"):
            bench.run(graph, "sssp", "gpu-csr", {**s, "balance": balance, "block": block}, target=gpu_target,
                      repeat=rep)
        for page in cfg["other_page_sizes"]:
            bench.run(graph, "sssp", "gpu-slotted", {**s, "page_size": page, "balance": "lb", "block": block},
                      target=gpu_target, repeat=rep)
    bench.run(graph, family, "scipy", s, target="cpu", repeat=1, warmup=0)
    # the honest CPU baseline (SuiteSparse:GraphBLAS, all cores); optional, a failed row without it
    bench.run(graph, family, "graphblas", s, target="cpu", repeat=rep if graph.nnz <= cfg["cpu_max_entries"] else 1)
    if graph.nnz <= cfg["cpu_max_entries"]:
        bench.run(graph, family, "cpu-parallel", s, target="cpu", repeat=rep)
    if graph.nnz <= cfg["cpu_serial_max_entries"]:
        bench.run(graph, family, "cpu-serial", s, target="cpu", repeat=1)


def loop_section(bench: Bench, graph, source: int, family: str, cfg: dict, gpu_target: str) -> None:
    """The device loop (one cooperative launch) beside the host loop (launches and a read-back per
    level), both views, top-down BFS (and direction-optimizing) or SSSP: time, levels, µs per level."""
    rep, block = cfg["repeat"], cfg["block"]
    views = [("gpu-csr", {}), ("gpu-slotted", {"page_size": 1024 if gpu_target == "cuda" else 16})]
    directions = (("push", "optimizing") if not graph.directed else ("push",)) if family == "bfs" else (None,)
    for variant, extra in views:
        for direction in directions:
            for loop in ("device", "host"):
                params = {"source": source, **extra, "balance": "lb", "block": block, "loop": loop}
                if direction:
                    params["direction"] = direction
                label = f"{variant[4:]}:{loop}{'' if direction in (None, 'push') else ':opt'}"
                bench.run(graph, family, variant, params, target=gpu_target, repeat=rep, label=label)


def loop_table(rows: list[dict]) -> str:
    head = (f"{'graph':<26} {'fam':<4} {'variant':<19} {'ms':>10} {'levels':>7} {'us/level':>9} {'levels/s':>10} "
            f"{'GTEPS':>8} ok")
    lines = [head, "-" * len(head)]
    for r in rows:
        if r.get("section") != "loop":
            continue
        if r.get("median_s"):
            lines.append(f"{r['graph'][:26]:<26} {r['family']:<4} {r['label'][:19]:<19} {r['median_s'] * 1e3:10.3f} "
                         f"{r.get('levels', 0):7d} {r.get('us_per_level', float('nan')):9.2f} "
                         f"{r.get('levels_per_s', float('nan')):10.0f} {r['gteps']:8.3f} "
                         f"{'yes' if r['verified'] else 'NO'}")
        else:
            lines.append(f"{r['graph'][:26]:<26} {r['family']:<4} {r['label'][:19]:<19} "
                         f"FAILED {str(r.get('error', r.get('status', '')))[:60]}")
    return "\n".join(lines)


def level_claims(rows: list[dict]) -> dict:
    """Per graph and family: the best verified device-loop µs per level (top-down), the host
    loop's for comparison, and whether it is under LEVEL_GOAL_US."""
    out = {}
    for r in rows:
        if r.get("section") != "loop" or not r.get("verified") or "us_per_level" not in r:
            continue
        if r["params"].get("direction") == "optimizing":
            continue
        key = (r["graph"], r["family"])
        entry = out.setdefault(key, {"device": None, "host": None, "device_variant": None})
        loop = r["params"]["loop"]
        if entry[loop] is None or r["us_per_level"] < entry[loop]:
            entry[loop] = r["us_per_level"]
            if loop == "device":
                entry["device_variant"] = r["variant"]
    claims = {}
    for (graph, family), e in out.items():
        if e["device"] is None:
            continue
        host = f", host loop {e['host']:.1f} µs/level" if e["host"] else ""
        verdict = "yes" if e["device"] < LEVEL_GOAL_US else "NO"
        claims[f"{graph} {family.upper()}"] = {
            "device_us_per_level": e["device"], "host_us_per_level": e["host"], "variant": e["device_variant"],
            "under_goal": e["device"] < LEVEL_GOAL_US,
            "line": f"BFS/SSSP under {LEVEL_GOAL_US:g} µs per level: {graph} {family.upper()}: {verdict} "
                    f"({e['device_variant']} device loop {e['device']:.2f} µs/level{host})"}
    return claims


def dynamic_section(graph, source: int, algorithm: str, fractions, rounds: int, cfg: dict, gpu_target: str,
                    records_path: Path) -> list[dict]:
    from kernels.dynamic import ROUND_HEADER, DynamicSettings, format_round, run_dynamic
    from kernels.results import append_record

    out = []
    for fraction in fractions:
        say(f"  {algorithm} on {graph.name}, batch {fraction:.2%} of the edges, {rounds} round(s), page size "
            f"{1024 if gpu_target == 'cuda' else 16}")
        say("  " + ROUND_HEADER)
        settings = DynamicSettings(algorithm=algorithm, batch=fraction, rounds=rounds, source=source,
                                   page_size=1024 if gpu_target == "cuda" else 16, block=cfg["block"], seed=11)
        t0 = time.perf_counter()
        try:
            result = run_dynamic(graph, settings, target=gpu_target,
                                 progress=lambda rec: say("  " + format_round(rec)))
        except Exception as exc:
            say(f"  FAILED: {type(exc).__name__}: {exc}")
            traceback.print_exc(limit=6)
            out.append({"graph": graph.name, "algorithm": algorithm, "batch_fraction": fraction, "status": "failed",
                        "error": f"{type(exc).__name__}: {exc}"})
            continue
        for rec in result["records"]:
            append_record(records_path, {"graph": graph.name, **rec})
        summary = result["summary"]
        summary["wall_s"] = time.perf_counter() - t0
        summary["status"] = "ok" if summary["all_verified"] else "wrong"
        out.append(summary)
    return out


# ---- report ------------------------------------------------------------------------------------

def relative_to_graphblas(rows: list[dict]) -> None:
    """``vs_graphblas``: speed relative to SuiteSparse:GraphBLAS (the honest CPU baseline) on the
    same graph, algorithm and source (> 1: faster)."""
    best: dict[tuple, float] = {}
    for r in rows:
        if r["variant"] == "graphblas" and r.get("verified") and r.get("median_s"):
            key = (r["graph"], r["family"], r["params"].get("source"))
            best[key] = min(r["median_s"], best.get(key, float("inf")))
    for r in rows:
        key = (r["graph"], r["family"], r["params"].get("source"))
        if r.get("median_s") and key in best:
            r["vs_graphblas"] = best[key] / r["median_s"]


def summary_table(rows: list[dict]) -> str:
    head = f"{'graph':<26} {'fam':<4} {'variant':<12} {'params':<40} {'ms':>10} {'GTEPS':>8} {'xGrB':>7} ok"
    lines = [head, "-" * len(head)]
    for r in rows:
        params = " ".join(f"{k}={v}" for k, v in r["params"].items() if k not in ("source", "block"))
        if r.get("median_s"):
            lines.append(f"{r['graph'][:26]:<26} {r['family']:<4} {r['label'][:12]:<12} {params[:40]:<40} "
                         f"{r['median_s'] * 1e3:10.3f} {r['gteps']:8.3f} {r.get('vs_graphblas', float('nan')):7.2f} "
                         f"{'yes' if r['verified'] else 'NO'}")
        else:
            lines.append(f"{r['graph'][:26]:<26} {r['family']:<4} {r['label'][:12]:<12} {params[:40]:<40} "
                         f"FAILED {str(r.get('error', r.get('status', '')))[:60]}")
    return "\n".join(lines)


def dynamic_table(summaries: list[dict]) -> str:
    head = (f"{'graph':<22} {'alg':<4} {'batch':>7} {'edits':>9} {'sync MiB':>9} {'sync ms':>8} {'slot ms':>8} "
            f"{'dyn ms':>8} {'rebuild':>8} {'upload':>8} {'csr ms':>8} {'stat ms':>8} {'speedup':>8} ok")
    lines = [head, "-" * len(head)]
    for s in summaries:
        if s.get("status") == "failed":
            lines.append(f"{s['graph'][:22]:<22} {s['algorithm']:<4} {s['batch_fraction']:>7.2%} "
                         f"FAILED {s['error'][:60]}")
            continue
        ms = [s["sync_s"], s["slotted_run_s"], s["dynamic_total_s"], s["rebuild_s"], s["upload_s"], s["csr_run_s"],
              s["static_total_s"]]
        lines.append(f"{s['graph']['name'][:22]:<22} {s['algorithm']:<4} {s['batch_fraction']:>7.2%} "
                     f"{int(s['edits_per_round']):>9,} {s['sync_bytes'] / 2**20:9.1f} "
                     + " ".join(f"{x * 1e3:8.2f}" for x in ms)
                     + f" {s['speedup_median']:7.2f}x {'yes' if s['all_verified'] else 'NO'}")
    return "\n".join(lines)


def goals(bench: Bench, dynamic: list[dict], graphs: list, rmat_name: str | None) -> dict:
    out = {}
    for g, _ in graphs:
        csr = bench.best(g.name, "bfs", "gpu-csr")
        slotted = bench.best(g.name, "bfs", "gpu-slotted")
        if csr and slotted:
            out[f"{g.name}: best gpu-slotted BFS time / best gpu-csr BFS time (goal <= 2)"] = (
                slotted["median_s"] / csr["median_s"])
    if rmat_name:
        csr = bench.best(rmat_name, "bfs", "gpu-csr")
        if csr:
            out[f"{rmat_name}: best gpu-csr BFS GTEPS (goal >= 5)"] = csr["gteps"]
    for s in dynamic:
        if s.get("status") == "failed" or not s.get("speedup_median"):
            continue
        goal = " (goal >= 5)" if s["batch_fraction"] <= 1e-3 else ""
        out[f"{s['graph']['name']} {s['algorithm']} batch {s['batch_fraction']:.2%}: (rebuild + upload + rerun) / "
            f"(sync + rerun){goal}"] = s["speedup_median"]
    return out


def crossover(dynamic: list[dict]) -> dict:
    """Per graph and algorithm: the batch fractions measured, their speedups, and the first
    fraction at which the dynamic path stops paying off (speedup < 1), if any."""
    out = {}
    for s in dynamic:
        if s.get("status") == "failed" or not s.get("speedup_median"):
            continue
        key = f"{s['graph']['name']} {s['algorithm']}"
        out.setdefault(key, {"fractions": [], "speedups": []})
        out[key]["fractions"].append(s["batch_fraction"])
        out[key]["speedups"].append(s["speedup_median"])
    for entry in out.values():
        below = [f for f, x in zip(entry["fractions"], entry["speedups"], strict=True) if x < 1.0]
        entry["dynamic_stops_paying_at"] = min(below) if below else None
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small inputs: a smoke test")
    ap.add_argument("--simulate", action="store_true", help="dry run on the CUDA simulator with tiny inputs "
                    "(no GPU needed; timings meaningless)")
    ap.add_argument("--no-dynamic", action="store_true",
                    help="the earlier suite (--thesis) without its dynamic experiment")
    ap.add_argument("--loop-only", action="store_true", help="only the device loop vs host loop section")
    ap.add_argument("--sssp-only", action="store_true", help="the frontier suite's SSSP sections only (SSSP old vs "
                    "new, the delta sweeps): its BFS sections skipped")
    ap.add_argument("--thesis", action="store_true", help="the earlier suite (gpu-csr vs gpu-slotted page sizes, "
                    "device vs host loop, the dynamic experiment) instead of the frontier suite")
    ap.add_argument("--out-dir", default=None, help="where results go (default: benchmarks/results/traversal for "
                    "the frontier suite, benchmarks/results for --thesis)")
    args = ap.parse_args(argv)
    mode = "simulate" if args.simulate else "quick" if args.quick else "full"
    if not (args.thesis or args.loop_only or args.no_dynamic):
        from traversal_frontier import run_suite

        return run_suite(mode, make_graph, Path(args.out_dir or ROOT / "benchmarks" / "results" / "traversal"),
                         sssp_only=args.sssp_only)
    args.out_dir = args.out_dir or str(ROOT / "benchmarks" / "results")
    cfg = SIMULATE if args.simulate else QUICK if args.quick else FULL
    gpu_target = "sim" if args.simulate else "cuda"
    started = time.perf_counter()

    from kernels.measure.environment import environment
    from kernels.measure.targets import activate
    from kernels.results import write_json_atomic

    activate(gpu_target)
    env = environment(gpu_target)
    device = env["device"].get("name") or ("simulator" if args.simulate else "gpu")
    suffix = "" if mode == "full" else f"-{mode}"
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    records_path = out_dir / f"traversal-{slug(device)}{suffix}-dynamic.jsonl"
    records_path.write_text("")
    say(f"BFS / SSSP benchmark on {device} ({mode}); budget {cfg['budget_s']} s")

    def over_budget(what: str) -> bool:
        spent = time.perf_counter() - started
        if spent > cfg["budget_s"]:
            say(f"  skipped {what}: {spent:.0f} s spent of the {cfg['budget_s']} s budget")
            skipped.append(what)
            return True
        return False

    inputs, bench, skipped = Inputs(), Bench(), []
    say("[1/4] device loop (one cooperative launch) vs host loop: kernel time, levels, µs per level")
    for kind, size in cfg["loop_graphs"]:
        for family in ("bfs", "sssp"):
            gkind = f"{kind}_w" if family == "sssp" and kind in ("grid", "delaunay") else kind
            if over_budget(f"device loop {family} on {gkind} {size}"):
                continue
            g, source = inputs.get(gkind, size)
            first = len(bench.rows)
            loop_section(bench, g, source, family, cfg, gpu_target)
            for row in bench.rows[first:]:
                row["section"] = "loop"
        later = set(cfg["graphs"]) | set(cfg["sssp_graphs"]) | {(k, sz) for k, sz, *_ in cfg["dynamic"]}
        for gkind in (kind, f"{kind}_w"):
            if (gkind, size) not in later:
                inputs.drop(gkind, size)             # not needed by the later sections
    claims = level_claims(bench.rows)
    for c in claims.values():
        say("  " + c["line"])

    bfs_graphs = []
    if args.loop_only:
        cfg = {**cfg, "graphs": [], "sssp_graphs": [], "dynamic": []}
    say("[2/4] BFS: gpu-csr (balance x direction), gpu-slotted (page sizes), SciPy and CPU (device loop)")
    for i, (kind, size) in enumerate(cfg["graphs"]):
        if over_budget(f"BFS on {kind} {size}"):
            continue
        g, source = inputs.get(kind, size)
        bfs_graphs.append((g, source))
        traversal_section(bench, g, source, "bfs", cfg, gpu_target, main=i == 0)
    rmat_name = next((g.name for g, _ in bfs_graphs if g.name.startswith("rmat")), None)

    dynamic = []
    if not args.no_dynamic:
        say("[3/4] dynamic experiment: edit rounds, sync + gpu-slotted rerun vs rebuild + upload + gpu-csr rerun")
        for kind, size, algorithm, fractions, rounds in cfg["dynamic"]:
            if over_budget(f"dynamic {algorithm} on {kind} {size}"):
                continue
            g, source = inputs.get(kind, size)
            dynamic += dynamic_section(g, source, algorithm, fractions, rounds, cfg, gpu_target, records_path)
            if kind == "rmat" and size >= 22:
                inputs.drop(kind, size)               # the largest graph is not needed any more

    say("[4/4] SSSP (weights uniform in [1, 10)): gpu-csr, gpu-slotted, SciPy (Dijkstra) and CPU")
    for kind, size in cfg["sssp_graphs"]:
        if over_budget(f"SSSP on {kind} {size}"):
            continue
        g, source = inputs.get(kind, size)
        traversal_section(bench, g, source, "sssp", cfg, gpu_target, main=False)

    goal_values = goals(bench, dynamic, bfs_graphs, rmat_name)
    relative_to_graphblas(bench.rows)
    result = {"kind": "benchmark", "family": "bfs+sssp", "mode": mode, "device": device, "environment": env,
              "config": {k: v for k, v in cfg.items()}, "results": bench.rows, "dynamic": dynamic,
              "crossover": crossover(dynamic), "goals": goal_values, "level_claims": list(claims.values()),
              "skipped": skipped,
              "dynamic_records": shown_path(records_path), "wall_s": time.perf_counter() - started}
    out = out_dir / f"traversal-{slug(device)}{suffix}.json"
    write_json_atomic(out, result)

    say("\n== BFS / SSSP summary (median time of a whole traversal; GTEPS = reached edges / time; xGrB = speed / "
        "SuiteSparse:GraphBLAS on the CPU) ==")
    say(f"device {device}")
    say(summary_table([r for r in bench.rows if r.get("section") != "loop"]))
    say("\n== device loop vs host loop (µs per level = kernel time / levels; levels/s = levels / kernel time) ==")
    say(loop_table(bench.rows))
    for c in claims.values():
        say("  " + c["line"])
    if dynamic:
        say("\n== dynamic experiment (medians over the edit rounds; speedup = static total / dynamic total) ==")
        say(dynamic_table(dynamic))
        for key, entry in result["crossover"].items():
            stop = entry["dynamic_stops_paying_at"]
            say(f"  {key}: " + ", ".join(f"{f:.2%} -> {x:.2f}x" for f, x in zip(entry["fractions"], entry["speedups"],
                                                                                    strict=True))
                + (f"; the dynamic path stops paying off at {stop:.2%}" if stop else "; pays off at every batch size"))
    say("\n== goals ==")
    for k, v in goal_values.items():
        say(f"  {k}: {v:.2f}")
    if skipped:
        say(f"skipped (budget): {', '.join(skipped)}")
    say(f"\nwrote {shown_path(out)} and {shown_path(records_path)} ({time.perf_counter() - started:.0f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
