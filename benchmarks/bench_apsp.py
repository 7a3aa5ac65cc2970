#!/usr/bin/env python3
"""All-pairs shortest paths on the GPU machine: the Czech report's experiment, then a scale-up.

    python3 benchmarks/bench_apsp.py            # full run, about 4 minutes on an H100/H200
    python3 benchmarks/bench_apsp.py --quick    # n = 1000 and 2000 and one 8192 scale-up (~1.5 min)
    python3 benchmarks/bench_apsp.py --simulate # dry run of the plumbing on the CUDA simulator

1. Random directed G(n, p) graphs, weights uniform in [0, 1), p = 0.5 and p = 0.01, n = 1000 and
   2000 (full: also 3000, 4000, 5000, and a second graph of each size while time allows): every
   variant where feasible, fp32 distances. CPU serial variants only where the predicted run time
   stays under the per-run cap (the report ran them at 1000/2000); beyond that the speedup is
   against a serial time extrapolated from the largest measured one (n³ for Floyd–Warshall,
   n·m for Dijkstra) and marked "est".
2. The report's tables 21/22 shape at n = 2000: for every GPU variant and warps per block
   1..32, the blocks of the main kernel, threads per block, mean kernel time and the speedup
   against the serial CPU variant of the same algorithm.
3. Scale-up to n = 8192 and 16384: gpu-fw-blocked (tiles 32 and 64, the best kept) against
   gpu-fw-naive and gpu-fw-staged, in relaxations per second and as a fraction of the GPU's
   fp32 peak (SMs x fp32 lanes x clock; a relaxation is one add and one min, so the relaxation
   peak is half the fp32 instruction rate).
4. Launch modes: the Floyd–Warshall variants at small n (p = 0.01), each with direct numba
   launches and with replays of a CUDA graph captured from its schedule (``launch=graph``:
   n launches for the naive kernel, three per tile round for the tiled ones), side by side.

Every timing comes from ``kernels.run.runner.run_variant`` (CUDA events after a warm-up) and every
result is verified against SciPy (on a seeded sample of source rows when the full reference
would take longer than a second); a failing variant is reported and the run goes on. A time
budget (``--budget``) keeps the whole run bounded: work is done in order of importance and
whatever is left is listed as skipped.

Writes ``benchmarks/results/apsp-<device>[-quick].json`` (every run and the tables) and a
``.csv`` of the runs; prints a compact summary last.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(ROOT))
from _common import say, slug  # noqa: E402

if "--simulate" in sys.argv[1:]:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"  # before anything imports numba.cuda
else:
    os.environ.pop("NUMBA_ENABLE_CUDASIM", None)

DTYPE = "fp32"
FW_GPU = ("gpu-fw-naive", "gpu-fw-blocked", "gpu-fw-staged")
SERIAL_OF = {"fw": "cpu-fw", "dijkstra": "cpu-dijkstra"}

FULL = {"sizes": [1000, 2000, 3000, 4000, 5000], "replicates": 2, "probabilities": [0.5, 0.01],
        "sweep_n": 2000, "warps": [1, 2, 4, 8, 16, 32], "tiles": [32, 64], "staged": [(64, 16), (32, 8)],
        "scale_sizes": [8192, 16384], "scale_p": 0.01,
        "scale_blocked": [(32, 4), (32, 8), (64, 4), (64, 8), (64, 16)],
        "scale_staged": [(64, 8, 8), (64, 16, 8), (64, 32, 8), (32, 8, 4)],
        "repeat": 3, "run_cap_s": 8.0, "budget_s": 230.0, "reference_budget_s": 1.0,
        "launch_sizes": [512, 1000]}
QUICK = {**FULL, "sizes": [1000, 2000], "replicates": 1, "warps": [1, 4, 8, 32], "staged": [(64, 16)],
         "scale_sizes": [8192], "scale_blocked": [(32, 8), (64, 8)], "scale_staged": [(64, 16, 8)],
         "repeat": 2, "run_cap_s": 5.0, "budget_s": 110.0}
# --simulate: the plumbing on the CUDA simulator (no GPU; the timings mean nothing)
SIMULATE = {"sizes": [20], "replicates": 1, "probabilities": [0.3, 0.05], "sweep_n": 20, "warps": [1, 2],
            "tiles": [8], "staged": [(8, 4)], "scale_sizes": [24], "scale_p": 0.2,
            "scale_blocked": [(8, 1), (8, 2)], "scale_staged": [(8, 4, 1)], "repeat": 1, "run_cap_s": 60.0,
            "budget_s": 600.0, "reference_budget_s": 1.0, "launch_sizes": [20]}

# fp32 lanes per SM by compute capability (CUDA C programming guide, arithmetic throughput)
FP32_LANES = {(7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128, (9, 0): 128,
              (10, 0): 128, (12, 0): 128}


def algorithm_of(variant: str) -> str:
    return "dijkstra" if "dijkstra" in variant else "fw" if ("fw" in variant) else "scipy"


def work_of(variant: str, n: int, m: int) -> float:
    """The relaxations the family's metric counts: n·m for Dijkstra, n³ otherwise."""
    return float(n) * m if algorithm_of(variant) == "dijkstra" else float(n) ** 3


def launch_shape(variant: str, params: dict, graph) -> tuple[int | None, int | None]:
    """(blocks of the main kernel per launch, threads per block) on a GPU, as the variant's
    registered launch shape declares them; (None, None) for a CPU variant."""
    from kernels.algorithms.registry import get_variant

    fam, var = get_variant("apsp", variant)
    if var.launch is None:
        return None, None
    resolved = fam.resolve_params(var, params)
    return var.launch.grid(graph, resolved, False), var.launch.block(resolved, False)


# ---- peak -------------------------------------------------------------------------------------

def _clock_rate_khz() -> int | None:
    """CU_DEVICE_ATTRIBUTE_CLOCK_RATE (13) of device 0 straight from the driver."""
    import ctypes

    try:
        lib = ctypes.CDLL("libcuda.so.1")
        value, dev = ctypes.c_int(0), ctypes.c_int(0)
        if lib.cuInit(0) or lib.cuDeviceGet(ctypes.byref(dev), 0):
            return None
        if lib.cuDeviceGetAttribute(ctypes.byref(value), 13, dev):
            return None
        return value.value
    except OSError:
        return None


def device_peak(simulate: bool) -> dict:
    if simulate:
        return {"device": "CUDA simulator", "note": "no peak: the simulator is not a GPU"}
    from kernels.measure.targets import probe_gpu

    gpu = probe_gpu()
    if gpu is None:
        return {"device": "no GPU found", "note": "no peak"}
    clock_khz = _clock_rate_khz()
    info = {"device": gpu.name, "compute_capability": "{}.{}".format(*gpu.compute_capability),
            "multiprocessors": gpu.multiprocessors}
    if not clock_khz:
        return {**info, "note": "no peak: the driver did not report the clock rate"}
    lanes = FP32_LANES.get(tuple(gpu.compute_capability), 128)
    fp32 = gpu.multiprocessors * lanes * clock_khz * 1e3
    return {**info, "clock_mhz": clock_khz / 1e3, "fp32_lanes_per_sm": lanes,
            "fp32_instructions_per_s": fp32, "relaxations_per_s": fp32 / 2,
            "note": "fp32 peak = SMs x fp32 lanes x boost clock (adds, no FMA doubling); a relaxation "
                    "d[i][j] = min(d[i][j], d[i][k] + d[k][j]) is one FADD and one FMNMX, so at most "
                    "half the fp32 instruction rate"}


# ---- running with a budget -----------------------------------------------------------------------

class Bench:
    def __init__(self, cfg: dict, simulate: bool):
        self.cfg = cfg
        self.simulate = simulate
        self.start = time.perf_counter()
        self.runs: list[dict] = []
        self.seconds_per_work: dict[str, float] = {}  # last measured kernel seconds per relaxation

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def left(self) -> float:
        return self.cfg["budget_s"] - self.elapsed()

    def predict(self, variant: str, params: dict, n: int, m: int) -> float | None:
        key = self._key(variant, params)
        rate = self.seconds_per_work.get(key, self.seconds_per_work.get(variant))
        return None if rate is None else rate * work_of(variant, n, m)

    @staticmethod
    def _key(variant, params):
        return variant + " " + " ".join(f"{k}={v}" for k, v in sorted(params.items()) if k != "dtype")

    def run(self, graph, meta: dict, variant: str, params: dict | None = None, *, repeat: int | None = None,
            warmup: int = 1, cap: float | None = None, launch: str = "auto") -> dict:
        """One verified run (or a 'skipped' row when the prediction exceeds the cap or the budget)."""
        from kernels.run.runner import run_variant

        params = dict(params or {})
        n, m = meta["n"], meta["m"]
        row = {**meta, "variant": variant, "params": dict(params), "algorithm": algorithm_of(variant)}
        row["blocks"], row["threads_per_block"] = launch_shape(variant, params, graph)
        predicted = self.predict(variant, params, n, m)
        repeat = self.cfg["repeat"] if repeat is None else repeat
        if predicted is None:
            repeat = min(repeat, 1)  # first sight of this variant: one timed run, then we know
        elif predicted * (repeat + 1) > 2.0:
            repeat = 1
        overhead = 3e-8 * n * n + 0.2
        wall = None if predicted is None else predicted * (repeat + max(warmup, 1)) + overhead
        cap = self.cfg["run_cap_s"] if cap is None else cap
        if wall is not None and wall > cap:
            return self._skip(row, f"predicted {wall:.1f} s > per-run cap {cap:.0f} s")
        if wall is not None and wall > self.left():
            return self._skip(row, f"predicted {wall:.1f} s > {max(self.left(), 0):.0f} s left in the budget")
        target = None
        if variant.startswith("gpu-"):
            target = "sim" if self.simulate else "cuda"
        t0 = time.perf_counter()
        try:
            result = run_variant(graph, "apsp", variant, {"dtype": DTYPE, **params}, target=target,
                                 repeat=repeat, warmup=warmup, launch=launch)
        except Exception as exc:  # a kernel fault, a refusal, a wrong launch: report and go on
            from kernels.errors import GraphKernelsError

            row.update(status="failed", error=f"{type(exc).__name__}: {exc}", wall_s=time.perf_counter() - t0)
            if not isinstance(exc, GraphKernelsError):  # not a project error: keep where it came from
                row["traceback"] = traceback.format_exc(limit=6)
            self.runs.append(row)
            say(f"  FAILED {variant} {params}: {row['error'][:300]}")
            return row
        rec = result.record
        k = rec["timing"]["kernel"]
        row.update(status="ok" if rec["verified"] else "wrong", time_s=k["median_s"], mean_s=k["mean_s"],
                   min_s=k["min_s"], cv=k["cv"], repeat=repeat,
                   relax_per_s=rec["metric"]["value"] * 1e9 if rec["metric"]["value"] else None,
                   compile_s=rec["timing"]["compile_s"], h2d_s=rec["timing"]["h2d_s"], d2h_s=rec["timing"]["d2h_s"],
                   launch_bound=rec["timing"]["launch_bound"], verified=rec["verified"],
                   verification=rec["verification"]["detail"], reference=rec["verification"]["reference"],
                   wall_s=time.perf_counter() - t0, timing_method=rec["timing"]["method"],
                   launch=rec["timing"].get("launch", "direct"), launch_requested=launch,
                   launch_notices=[n for n in rec["notices"] if "fell back" in n])
        if k["median_s"] > 0:
            rate = k["median_s"] / work_of(variant, n, m)
            self.seconds_per_work[self._key(variant, params)] = rate
            self.seconds_per_work[variant] = rate
        self.runs.append(row)
        mark = "" if rec["verified"] else "  WRONG: " + rec["verification"]["detail"][:200]
        say(f"  {variant:22s} {fmt_params(params):28s} {k['median_s'] * 1e3:10.3f} ms "
            f"{(row['relax_per_s'] or 0) / 1e9:9.2f} G relax/s  (wall {row['wall_s']:.1f} s){mark}")
        return row

    def _skip(self, row: dict, why: str) -> dict:
        row.update(status="skipped", error=why)
        self.runs.append(row)
        say(f"  skip   {row['variant']} {fmt_params(row['params'])}: {why}")
        return row


def fmt_params(params: dict) -> str:
    short = {"warps_per_block": "wpb", "tile": "tile", "stage": "stage", "queue": "queue"}
    return " ".join(f"{short.get(k, k)}={v}" for k, v in params.items()) or "-"


def make_graph(n: int, p: float, seed: int):
    from kernels.graph.generators import gnp

    g = gnp(n, p, directed=True, seed=seed, weights="uniform")
    return g, {"n": n, "p": p, "m": int(g.nnz), "replicate": seed, "graph": g.name}


def valid(variant: str, params: dict) -> bool:
    from kernels.algorithms.registry import get_variant

    fam, var = get_variant("apsp", variant)
    try:
        fam.resolve_params(var, {"dtype": DTYPE, **params})
        return True
    except Exception:
        return False


# ---- phases ------------------------------------------------------------------------------------

def gpu_configs(cfg: dict, best: dict, sweep: bool) -> list[tuple[str, dict]]:
    """The GPU runs on one graph: every valid warps-per-block value on the sweep graph, else the
    best parameters found by the sweep (8 warps, or the smallest valid count, before it)."""
    bases = [("gpu-fw-naive", {}, "gpu-fw-naive")]
    bases += [("gpu-fw-blocked", {"tile": t}, f"gpu-fw-blocked tile={t}") for t in cfg["tiles"]]
    bases += [("gpu-fw-staged", {"tile": t, "stage": s}, f"gpu-fw-staged tile={t} stage={s}")
              for t, s in cfg["staged"]]
    bases += [("gpu-dijkstra", {"queue": "heap"}, "gpu-dijkstra heap")]
    configs = []
    for variant, params, key in bases:
        if sweep:
            configs += [(variant, {**params, "warps_per_block": w}) for w in cfg["warps"]
                        if valid(variant, {**params, "warps_per_block": w})]
        elif key in best:
            configs.append((variant, dict(best[key])))
        else:
            warps = [w for w in [8] + cfg["warps"] if valid(variant, {**params, "warps_per_block": w})]
            if warps:
                configs.append((variant, {**params, "warps_per_block": warps[0]}))
    # the array queue once, with the heap's best block size
    w = best.get("gpu-dijkstra heap", {}).get("warps_per_block", 4)
    configs.append(("gpu-dijkstra", {"queue": "array", "warps_per_block": w}))
    return configs


def remember_best(bench: Bench, rows: list[dict], best: dict) -> None:
    """The fastest verified parameters of each GPU variant family member on this graph."""
    groups: dict[str, list[dict]] = {}
    for r in rows:
        if r["status"] != "ok" or not r["variant"].startswith("gpu-"):
            continue
        p = r["params"]
        key = {"gpu-fw-naive": "gpu-fw-naive",
               "gpu-fw-blocked": f"gpu-fw-blocked tile={p.get('tile')}",
               "gpu-fw-staged": f"gpu-fw-staged tile={p.get('tile')} stage={p.get('stage')}",
               "gpu-dijkstra": f"gpu-dijkstra {p.get('queue')}"}[r["variant"]]
        groups.setdefault(key, []).append(r)
    for key, rs in groups.items():
        best[key] = dict(min(rs, key=lambda r: r["time_s"])["params"])


def graph_phase(bench: Bench, n: int, p: float, replicate: int, best: dict, sweep: bool) -> None:
    cfg = bench.cfg
    t0 = time.perf_counter()
    graph, meta = make_graph(n, p, replicate)
    meta["phase"] = "sweep" if sweep else "sizes"
    say(f"\n[{bench.elapsed():6.1f} s] n={n} p={p} graph {replicate}: {meta['m']:,} edges "
        f"(generated in {time.perf_counter() - t0:.1f} s)")
    rows = []
    for variant in ("cpu-fw", "cpu-dijkstra", "scipy", "cpu-fw-parallel", "cpu-dijkstra-parallel"):
        rows.append(bench.run(graph, meta, variant, repeat=1, warmup=0))
    for variant, params in gpu_configs(cfg, best, sweep):
        rows.append(bench.run(graph, meta, variant, params))
    if sweep:
        remember_best(bench, rows, best)


def scale_phase(bench: Bench, best: dict) -> dict:
    cfg = bench.cfg
    chosen = {}
    for n in cfg["scale_sizes"]:
        graph, meta = make_graph(n, cfg["scale_p"], 0)
        meta["phase"] = "scale"
        say(f"\n[{bench.elapsed():6.1f} s] scale-up n={n}: {meta['m']:,} edges")
        first = n == cfg["scale_sizes"][0]
        if first:
            for tile, w in cfg["scale_blocked"]:
                if valid("gpu-fw-blocked", {"tile": tile, "warps_per_block": w}):
                    bench.run(graph, meta, "gpu-fw-blocked", {"tile": tile, "warps_per_block": w}, repeat=2)
            for tile, stage, w in cfg["scale_staged"]:
                if valid("gpu-fw-staged", {"tile": tile, "stage": stage, "warps_per_block": w}):
                    bench.run(graph, meta, "gpu-fw-staged", {"tile": tile, "stage": stage, "warps_per_block": w},
                              repeat=2)
            for variant in ("gpu-fw-blocked", "gpu-fw-staged"):
                done = [r for r in bench.runs if r.get("phase") == "scale" and r["n"] == n
                        and r["variant"] == variant and r["status"] == "ok"]
                if done:
                    chosen[variant] = dict(min(done, key=lambda r: r["time_s"])["params"])
        else:
            for variant in ("gpu-fw-blocked", "gpu-fw-staged"):
                if variant in chosen:  # the per-run cap is for the report's sizes, not the scale-up
                    bench.run(graph, meta, variant, chosen[variant], repeat=2, cap=cfg["budget_s"])
        naive = best.get("gpu-fw-naive", {"warps_per_block": 8})
        # naive FW on 16384 is ~20 s a run: one timed run after the runner's one warm-up launch
        bench.run(graph, meta, "gpu-fw-naive", naive, repeat=1, warmup=0, cap=cfg["budget_s"])
    return chosen


# ---- tables ------------------------------------------------------------------------------------

def launch_phase(bench: Bench, best: dict) -> None:
    """The FW variants at small n with direct launches and CUDA-graph replays (phase "launch")."""
    for n in bench.cfg["launch_sizes"]:
        graph, meta = make_graph(n, 0.01, 0)
        meta["phase"] = "launch"
        say(f"\n[{bench.elapsed():6.1f} s] launch modes: n={n} p=0.01, {meta['m']:,} edges")
        tile = bench.cfg["tiles"][0]
        configs = [("gpu-fw-naive", best.get("gpu-fw-naive", {"warps_per_block": 8})),
                   ("gpu-fw-blocked", best.get(f"gpu-fw-blocked tile={tile}", {"tile": tile, "warps_per_block": 8}))]
        staged = bench.cfg["staged"][0]
        configs.append(("gpu-fw-staged", best.get(f"gpu-fw-staged tile={staged[0]} stage={staged[1]}",
                                                  {"tile": staged[0], "stage": staged[1], "warps_per_block": 8})))
        for variant, params in configs:
            if not valid(variant, params):
                continue
            for launch in ("direct", "graph"):
                bench.run(graph, meta, variant, params, launch=launch)


def launch_table(bench: Bench) -> list[dict]:
    rows = [r for r in bench.runs if r.get("phase") == "launch" and r["status"] == "ok"]
    out = []
    for r in rows:
        if r["launch_requested"] != "direct":
            continue
        graph = next((g for g in rows if g["n"] == r["n"] and g["variant"] == r["variant"]
                      and g["params"] == r["params"] and g["launch_requested"] == "graph"), None)
        entry = {"n": r["n"], "variant": r["variant"], "params": r["params"], "direct_s": r["time_s"],
                 "graph_s": graph["time_s"] if graph and graph["launch"] == "graph" else None,
                 "graph_note": (graph or {}).get("launch_notices") or ([] if graph else ["graph run failed"])}
        if entry["graph_s"]:
            entry["direct_over_graph"] = entry["direct_s"] / entry["graph_s"]
        out.append(entry)
    return out


def serial_baseline(bench: Bench, n: int, p: float, algorithm: str, replicate: int) -> tuple[float | None, str]:
    """Measured serial time for this graph, else extrapolated from the largest measured one."""
    serial = SERIAL_OF.get(algorithm)
    if serial is None:
        return None, ""
    mine = [r for r in bench.runs if r["variant"] == serial and r["n"] == n and r["p"] == p
            and r["replicate"] == replicate and r["status"] == "ok"]
    if mine:
        return mine[0]["time_s"], "measured"
    measured = [r for r in bench.runs if r["variant"] == serial and r["p"] == p and r["status"] == "ok"]
    if not measured:
        return None, ""
    ref = max(measured, key=lambda r: r["n"])
    m = next(r["m"] for r in bench.runs if r["n"] == n and r["p"] == p and r["replicate"] == replicate)
    return ref["time_s"] / work_of(serial, ref["n"], ref["m"]) * work_of(serial, n, m), "est"


def add_speedups(bench: Bench) -> None:
    for r in bench.runs:
        if r["status"] != "ok":
            continue
        base, how = serial_baseline(bench, r["n"], r["p"], r["algorithm"], r["replicate"])
        if base and r["time_s"]:
            r["speedup_vs_serial"] = base / r["time_s"]
            r["serial_baseline"] = f"{SERIAL_OF[r['algorithm']]} ({how})"


def sweep_table(bench: Bench) -> list[dict]:
    n = bench.cfg["sweep_n"]
    out = []
    for r in bench.runs:
        if r.get("phase") == "sweep" and r["n"] == n and r["variant"].startswith("gpu-"):
            out.append({k: r.get(k) for k in ("p", "variant", "params", "blocks", "threads_per_block", "mean_s",
                                              "time_s", "speedup_vs_serial", "serial_baseline", "status")})
    return out


def size_table(bench: Bench) -> list[dict]:
    """Best verified time of each variant per (n, p), averaged over the graphs of that size."""
    cells: dict[tuple, dict[str, list]] = {}
    for r in bench.runs:
        if r.get("phase") not in ("sweep", "sizes") or r["status"] != "ok":
            continue
        key = (r["n"], r["p"], r["variant"] + (" " + r["params"].get("queue", "") if "queue" in r["params"] else ""))
        cells.setdefault(key, {}).setdefault(r["replicate"], []).append(r)
    out = []
    for (n, p, name), per_graph in sorted(cells.items()):
        bests = [min(rs, key=lambda r: r["time_s"]) for rs in per_graph.values()]
        mean = sum(b["time_s"] for b in bests) / len(bests)
        speed = [b.get("speedup_vs_serial") for b in bests if b.get("speedup_vs_serial")]
        out.append({"n": n, "p": p, "variant": name, "graphs": len(bests), "mean_time_s": mean,
                    "best_params": bests[0]["params"],
                    "speedup_vs_serial": sum(speed) / len(speed) if speed else None,
                    "serial_baseline": bests[0].get("serial_baseline")})
    return out


def scale_table(bench: Bench, peak: dict) -> list[dict]:
    out = []
    for n in bench.cfg["scale_sizes"]:
        rows = [r for r in bench.runs if r.get("phase") == "scale" and r["n"] == n and r["status"] == "ok"]
        naive = next((r for r in rows if r["variant"] == "gpu-fw-naive"), None)
        for variant in FW_GPU:
            mine = [r for r in rows if r["variant"] == variant]
            if not mine:
                continue
            b = min(mine, key=lambda r: r["time_s"])
            entry = {"n": n, "variant": variant, "params": b["params"], "time_s": b["time_s"],
                     "relax_per_s": b["relax_per_s"],
                     "speedup_vs_naive": naive["time_s"] / b["time_s"] if naive else None}
            if peak.get("relaxations_per_s"):
                entry["fraction_of_peak"] = b["relax_per_s"] / peak["relaxations_per_s"]
            out.append(entry)
    return out


def print_summary(tables: dict, peak: dict, skipped: list, elapsed: float, out_json: Path) -> None:
    say("\n" + "=" * 100)
    say(f"APSP summary on {peak.get('device')} (fp32 distances, directed G(n, p), weights U[0, 1))  "
        f"[{elapsed:.0f} s]")
    say("\nWarps-per-block sweep (report tables 21/22): blocks of the main kernel, threads per block,")
    say("mean kernel time, speedup against the serial CPU variant of the same algorithm (est = extrapolated)")
    say(f"{'p':>5} {'variant':16} {'params':26} {'blocks':>9} {'thr/blk':>7} {'mean ms':>10} {'speedup':>9}")
    for r in tables["sweep"]:
        if r["status"] != "ok":
            continue
        est = " est" if r.get("serial_baseline") and "est" in r["serial_baseline"] else ""
        sp = f"{r['speedup_vs_serial']:.1f}x{est}" if r.get("speedup_vs_serial") else "-"
        say(f"{r['p']:>5} {r['variant']:16} {fmt_params(r['params']):26} {r['blocks'] or '-':>9} "
            f"{r['threads_per_block'] or '-':>7} {r['mean_s'] * 1e3:10.3f} {sp:>9}")
    say("\nBest time per variant and size (mean over graphs):")
    say(f"{'n':>6} {'p':>5} {'variant':28} {'mean ms':>11} {'speedup':>10}  best params")
    for r in tables["sizes"]:
        est = " est" if r.get("serial_baseline") and "est" in r["serial_baseline"] else ""
        sp = f"{r['speedup_vs_serial']:.1f}x{est}" if r.get("speedup_vs_serial") else "-"
        say(f"{r['n']:>6} {r['p']:>5} {r['variant']:28} {r['mean_time_s'] * 1e3:11.3f} {sp:>10}  "
            f"{fmt_params(r['best_params'])}")
    say("\nScale-up (Floyd-Warshall on the GPU):")
    peak_text = peak.get("note", "")
    if peak.get("relaxations_per_s"):
        peak_text = (f"peak {peak['relaxations_per_s'] / 1e12:.1f} T relax/s = half of "
                     f"{peak['fp32_instructions_per_s'] / 1e12:.1f} T fp32 instr/s ({peak['multiprocessors']} SMs "
                     f"x {peak['fp32_lanes_per_sm']} lanes x {peak['clock_mhz']:.0f} MHz)")
    say(f"  {peak_text}")
    say(f"{'n':>6} {'variant':16} {'params':26} {'time s':>9} {'T relax/s':>10} {'% peak':>7} {'x naive':>8}")
    for r in tables["scale"]:
        frac = f"{r['fraction_of_peak'] * 100:.1f}" if r.get("fraction_of_peak") is not None else "-"
        vs = f"{r['speedup_vs_naive']:.1f}" if r.get("speedup_vs_naive") else "-"
        say(f"{r['n']:>6} {r['variant']:16} {fmt_params(r['params']):26} {r['time_s']:9.3f} "
            f"{r['relax_per_s'] / 1e12:10.3f} {frac:>7} {vs:>8}")
    failed = [r for r in tables["all"] if r["status"] in ("failed", "wrong")]
    say("\nLaunch modes (Floyd-Warshall, p = 0.01): direct numba launches vs CUDA-graph replays of the schedule")
    say(f"{'n':>6} {'variant':16} {'params':26} {'direct ms':>10} {'graph ms':>10} {'d/g':>6}")
    for r in tables.get("launch", []):
        graph = f"{r['graph_s'] * 1e3:10.3f}" if r.get("graph_s") else f"{'-':>10}"
        ratio = f"{r['direct_over_graph']:6.2f}" if r.get("direct_over_graph") else "     -"
        note = f"  ({r['graph_note'][0][:80]})" if r.get("graph_note") else ""
        say(f"{r['n']:>6} {r['variant']:16} {fmt_params(r['params']):26} {r['direct_s'] * 1e3:10.3f} {graph} "
            f"{ratio}{note}")
    say(f"\nruns: {sum(r['status'] == 'ok' for r in tables['all'])} verified, {len(failed)} failed or wrong, "
        f"{len(skipped)} skipped; results in {out_json}")
    for r in failed:
        say(f"  {r['status'].upper()} n={r['n']} p={r['p']} {r['variant']} {fmt_params(r['params'])}: "
            f"{(r.get('error') or r.get('verification') or '')[:200]}")


# ---- main --------------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="n = 1000 and 2000 and one 8192 scale-up")
    ap.add_argument("--simulate", action="store_true", help="tiny inputs on the CUDA simulator (plumbing only)")
    ap.add_argument("--budget", type=float, help="seconds for the whole run (default: 230 full, 110 quick)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    ap.add_argument("--scale-only", action="store_true", help="only the scale-up (n = 8192, 16384); "
                    "results go to apsp-<device>-scale.json")
    args = ap.parse_args(argv)
    cfg = dict(SIMULATE if args.simulate else QUICK if args.quick else FULL)
    if args.budget:
        cfg["budget_s"] = args.budget

    from kernels.algorithms.apsp import verification

    # the benchmark checks big outputs against SciPy on sampled rows within about a second each
    verification.REFERENCE_BUDGET_S = cfg["reference_budget_s"]
    peak = device_peak(args.simulate)
    mode = "simulate" if args.simulate else "quick" if args.quick else "full"
    say(f"APSP benchmark on {peak['device']}: mode {mode}, "
        f"budget {cfg['budget_s']:.0f} s, dtype {DTYPE}")
    bench = Bench(cfg, args.simulate)
    best: dict = {}

    sweep_n = cfg["sweep_n"]
    first_sizes = [n for n in cfg["sizes"] if n <= sweep_n]
    later_sizes = [n for n in cfg["sizes"] if n > sweep_n]
    if args.scale_only:
        first_sizes, later_sizes, cfg["replicates"] = [], [], 1
    for n in first_sizes:  # 1. the report's sizes we always want, with the warps sweep at sweep_n
        for p in cfg["probabilities"]:
            graph_phase(bench, n, p, 0, best, sweep=(n == sweep_n))
    if not args.scale_only and bench.left() > 20:  # launch modes: small n, where launches cost the most
        launch_phase(bench, best)
    chosen = {}
    try:  # 2. the scale-up
        chosen = scale_phase(bench, best)
    except Exception as exc:  # e.g. out of memory on a smaller GPU: report and go on
        say(f"scale-up failed: {type(exc).__name__}: {exc}")
    for n in later_sizes:  # 3. the larger report sizes, 4. second graphs, while time allows
        for p in cfg["probabilities"]:
            if bench.left() < 10:
                bench.runs.append({"n": n, "p": p, "replicate": 0, "variant": "(all)", "params": {},
                                   "status": "skipped", "error": "time budget", "algorithm": ""})
                continue
            graph_phase(bench, n, p, 0, best, sweep=False)
    for replicate in range(1, cfg["replicates"]):
        for n in cfg["sizes"]:
            for p in cfg["probabilities"]:
                if bench.left() < 15:
                    bench.runs.append({"n": n, "p": p, "replicate": replicate, "variant": "(all)", "params": {},
                                       "status": "skipped", "error": "time budget", "algorithm": ""})
                    continue
                graph_phase(bench, n, p, replicate, best, sweep=False)

    add_speedups(bench)
    tables = {"sweep": sweep_table(bench), "sizes": size_table(bench), "scale": scale_table(bench, peak),
              "launch": launch_table(bench), "all": bench.runs}
    skipped = [r for r in bench.runs if r["status"] == "skipped"]
    device = "simulator" if args.simulate else slug(peak["device"])
    suffix = "-quick" if args.quick else "-simulate" if args.simulate else "-scale" if args.scale_only else ""
    args.out.mkdir(parents=True, exist_ok=True)
    out_json = args.out / f"apsp-{device}{suffix}.json"
    from kernels.measure.environment import environment

    doc = {"family": "apsp", "mode": mode,
           "dtype": DTYPE, "graphs": "directed G(n, p) (kernels.graph.generators.gnp), weights uniform in [0, 1)",
           "peak": peak, "config": {k: v for k, v in cfg.items()}, "best_params_n2000": best,
           "scale_chosen": chosen, "elapsed_s": bench.elapsed(),
           "environment": environment("sim" if args.simulate else "cuda"),
           "tables": {k: v for k, v in tables.items() if k != "all"}, "runs": bench.runs}
    out_json.write_text(json.dumps(doc, indent=1, default=str))
    with open(out_json.with_suffix(".csv"), "w", newline="") as fh:
        fields = ["phase", "n", "p", "replicate", "m", "variant", "params", "status", "blocks", "threads_per_block",
                  "time_s", "mean_s", "min_s", "cv", "relax_per_s", "speedup_vs_serial", "serial_baseline",
                  "compile_s", "h2d_s", "d2h_s", "verified", "verification", "error"]
        w = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in bench.runs:
            w.writerow({**r, "params": fmt_params(r.get("params", {}))})
    shown = out_json.relative_to(ROOT) if out_json.is_relative_to(ROOT) else out_json
    print_summary(tables, peak, skipped, bench.elapsed(), shown)
    bad = [r for r in bench.runs if r["status"] == "wrong"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
