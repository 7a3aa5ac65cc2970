"""Sweeps at the GPU's pace (issue 31): a sweep's wall clock with and without the kernel disk cache
and compiling ahead, on one GPU and on 1, 2 and 4 GPUs of one host.

    python3 benchmarks/bench_sweep.py single  [--out DIR] [--skip-triangles]
    python3 benchmarks/bench_sweep.py cluster --gpus 1,2,4 [--out DIR]

Every sweep is the command users run, ``graph-kernels sweep`` (``--scheduler`` for the cluster
runs, against ``graph-kernels cluster local --gpus N``), in a fresh process, every cell verified:

* **spmv**: ``gpu-tunable`` over every valid ``wg x rows x reduce`` cell (wg, rows = 1..1024:
  132 cells) on a generated power-law matrix of 1,048,576 entries (65,536 rows);
* **triangles**: ``gpu-oriented`` over ``block_size x group_size (8, 16, 32) x max_registers``
  (90 cells) on R-MAT scale 16, edge factor 24 (1.32 M edges).

``single`` runs, on one GPU, each sweep (1) as before this change: no kernel cache, no compiling
ahead (``GRAPH_KERNELS_KERNEL_CACHE=off``, ``GRAPH_KERNELS_COMPILE_AHEAD=0``); (2) cold: an empty
cache, compiling ahead on; (3) warm: the same again, the cache now full. It compares each
cell's median kernel time between (1) and (2) (the same cells, the same GPU, one run): the
measuring process must time kernels as before. ``cluster`` runs the cold spmv sweep on 1, 2
and 4 GPUs of the host, each with an empty cache, after ``cluster local`` said its workers are
warm (``--starts warm,unwarmed`` adds ``cluster local --no-warm``, whose processes start with the
sweep); the sweep's clock does not count the warming, which is reported beside it (``cluster``:
its seconds, and the GPU memory of the processes' contexts). Raw sweeps and a summary JSON go to
``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, say  # noqa: E402

SPMV = ("spmv", "gpu-tunable", "gen:powerlaw_matrix:n_rows=65536,n_cols=65536,avg_nnz_per_row=16,seed=1",
        ["wg=1,2,4,8,16,32,64,128,256,512,1024", "rows=1,2,4,8,16,32,64,128,256,512,1024", "reduce=shuffle,shared"])
WARM_WAIT_S = 600.0
TRIANGLES = ("triangles", "gpu-oriented", "gen:rmat:scale=16,edge_factor=24,seed=1",
             ["block_size=32,64,128,256,512,1024", "group_size=8,16,32", "max_registers=0,32,40,48,64"])


def environment(cache: str | None, ahead: int | None) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "PYTHONUNBUFFERED": "1"}
    env["GRAPH_KERNELS_KERNEL_CACHE"] = cache or "off"
    if ahead is not None:
        env["GRAPH_KERNELS_COMPILE_AHEAD"] = str(ahead)
    else:
        env.pop("GRAPH_KERNELS_COMPILE_AHEAD", None)
    return env


def sweep(spec, out: Path, env: dict, scheduler: str | None = None) -> dict:
    family, variant, source, grid = spec
    command = [sys.executable, "-m", "kernels", "sweep", family, variant, source, "--target", "cuda",
               "--out", str(out), "-q"]
    for g in grid:
        command += ["--grid", g]
    if scheduler:
        command += ["--scheduler", scheduler]
    started = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - started
    if done.returncode != 0:
        say(done.stdout[-2000:] + done.stderr[-3000:])
        raise SystemExit(f"the sweep failed ({done.returncode})")
    data = json.loads(json.dumps(load(out)))
    statuses = {}
    for c in data["cells"]:
        statuses[c["status"]] = statuses.get(c["status"], 0) + 1
    t = data.get("time") or {}
    result = {"process_s": round(wall, 2), "sweep_s": t.get("wall_s"), "statuses": statuses,
              "cells_per_s": t.get("cells_per_s"), "compiled_here": t.get("compiled_here"),
              "compile_here_s": t.get("compile_here_s"), "cache_hits": t.get("cache_hits"),
              "timed_gpu_s": t.get("timed_gpu_s"), "compile_ahead": t.get("compile_ahead"),
              "first_cell_s": t.get("first_cell_s"),
              "device": (data.get("environment") or {}).get("device", {}).get("name") or data.get("device"),
              "best": data.get("best")}
    ok = statuses.get("ok", 0)
    say(f"  {family}/{variant}: {result['sweep_s']} s in the sweep ({wall:.1f} s the process), {statuses}, "
        f"compiled here {result['compiled_here']} in {result['compile_here_s']} s, {result['cache_hits']} cache hits, "
        f"ahead {result['compile_ahead']}, first cell after {result['first_cell_s']} s")
    if statuses.get("wrong") or statuses.get("failed") or statuses.get("lost") or not ok:
        raise SystemExit(f"not every cell ran and verified: {statuses}")
    return result


def load(path: Path) -> dict:
    from kernels.results import load_sweep

    return load_sweep(path)


def per_cell_ratio(before: Path, after: Path) -> dict:
    """Each cell's median kernel time after / before (the same cells, the same GPU)."""
    a = {json.dumps(c["params"], sort_keys=True): c["median_s"] for c in load(before)["cells"] if c["status"] == "ok"}
    b = {json.dumps(c["params"], sort_keys=True): c["median_s"] for c in load(after)["cells"] if c["status"] == "ok"}
    ratios = sorted(b[k] / a[k] for k in a if k in b and a[k] > 0)
    return {"cells": len(ratios), "median": statistics.median(ratios), "min": ratios[0], "max": ratios[-1],
            "within_5pct": sum(0.95 <= r <= 1.05 for r in ratios)}


def single(args) -> dict:
    out = args.out
    report = {}
    specs = [SPMV] + ([] if args.skip_triangles else [TRIANGLES])
    for spec in specs:
        name = spec[0]
        cache = tempfile.mkdtemp(prefix="bench-sweep-cache-")
        before = None
        if not args.skip_before:
            say(f"{name}: before (no cache, no compiling ahead)")
            before = sweep(spec, out / f"sweep-{name}-before.json", environment(None, 0))
        say(f"{name}: cold (empty cache, compiling ahead)")
        cold = sweep(spec, out / f"sweep-{name}-cold.json", environment(cache, None))
        say(f"{name}: warm (the cache the cold run filled)")
        warm = sweep(spec, out / f"sweep-{name}-warm.json", environment(cache, None))
        shutil.rmtree(cache, ignore_errors=True)
        if before is None:
            say(f"{name}: cold {cold['sweep_s']} s, warm {warm['sweep_s']} s")
            report[name] = {"cold": cold, "warm": warm}
            continue
        ratio = per_cell_ratio(out / f"sweep-{name}-before.json", out / f"sweep-{name}-cold.json")
        say(f"{name}: before {before['sweep_s']} s, cold {cold['sweep_s']} s "
            f"({before['sweep_s'] / cold['sweep_s']:.2f}x), warm {warm['sweep_s']} s; per-cell kernel time "
            f"cold/before: median {ratio['median']:.3f} ({ratio['min']:.2f}..{ratio['max']:.2f}, "
            f"{ratio['within_5pct']}/{ratio['cells']} within 5 %)")
        report[name] = {"before": before, "cold": cold, "warm": warm, "kernel_time_ratio": ratio}
    return report


def start_cluster(gpus: int, env: dict, warm: bool = True):
    """``cluster local --gpus N`` in its own session; with ``warm``, returns once it said its
    workers are warm (their processes started, imports done, CUDA contexts open)."""
    command = [sys.executable, "-m", "kernels", "cluster", "local", "--gpus", str(gpus), "--port", "0"]
    if not warm:
        command.append("--no-warm")
    started = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                            start_new_session=True)
    line = proc.stdout.readline()
    if not line.startswith("scheduler "):
        proc.kill()
        raise SystemExit(f"cluster local did not start: {line!r}")
    address = line.split()[1].rstrip(":")
    warm_line = None
    deadline = time.monotonic() + WARM_WAIT_S
    while warm:
        # a failed warm is said on stderr only (the cluster serves on): do not wait for ever
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            os.killpg(proc.pid, signal.SIGKILL)
            raise SystemExit(f"cluster local did not say its workers were warm within {WARM_WAIT_S:g} s")
        text = proc.stdout.readline()
        if not text:
            raise SystemExit("cluster local ended before its workers were warm")
        if text.startswith(("workers warm", "no worker can run GPU variants")):
            warm_line = text.strip()
            break
    return proc, address, {"start_s": round(time.monotonic() - started, 2), "warm_line": warm_line,
                           "gpu_memory": gpu_memory()}


def stop_cluster(proc, cache: str | None = None) -> None:
    """Ctrl-C to the ``cluster local`` started by :func:`start_cluster` (killed after 120 s), and
    its kernel cache removed."""
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    if cache:
        shutil.rmtree(cache, ignore_errors=True)


def gpu_memory() -> dict:
    """Processes holding a CUDA context and their GPU memory, by nvidia-smi (what warming costs)."""
    try:
        done = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=30)
        used = [int(line.split(",")[1]) for line in done.stdout.splitlines() if line.count(",") == 1]
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}
    return {"processes": len(used), "total_mib": sum(used), "per_process_mib": sorted(set(used))}


def cluster(args) -> dict:
    report = {}
    for start in args.starts.split(","):
        warm = start == "warm"
        runs = report[start] = {}
        for n in [int(g) for g in args.gpus.split(",")]:
            cache = tempfile.mkdtemp(prefix=f"bench-sweep-cache-{n}-")
            env = environment(cache, None)
            proc, address, started = start_cluster(n, env, warm)
            try:
                say(f"spmv on {n} GPU(s) of the host, cold cache, {start} workers ({address}): {started}")
                suffix = "" if warm else f"-{start}"
                runs[str(n)] = {**sweep(SPMV, args.out / f"sweep-spmv-cluster-{n}gpu{suffix}.json", env,
                                        scheduler=address), "cluster": started}
            finally:
                stop_cluster(proc, cache)
        one = runs.get("1", {}).get("sweep_s")
        for n, r in runs.items():
            if one and r.get("sweep_s"):
                r["speedup_vs_1"] = round(one / r["sweep_s"], 3)
                say(f"{start}: {n} GPU(s): {r['sweep_s']} s, {r['speedup_vs_1']}x one GPU")
    return report


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=("single", "cluster"))
    p.add_argument("--gpus", default="1,2,4")
    p.add_argument("--starts", default="warm", help="cluster: warm (processes started and warmed before "
                   "the sweep, as `cluster local` does), unwarmed (`cluster local --no-warm`), or both: warm,unwarmed")
    p.add_argument("--skip-triangles", action="store_true")
    p.add_argument("--skip-before", action="store_true", help="single: only the cold and warm runs")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "sweep")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    report = single(args) if args.mode == "single" else cluster(args)
    from kernels.measure.environment import environment as env_of

    report["environment"] = env_of("cuda")
    report["date"] = time.strftime("%Y-%m-%d")
    path = args.out / f"bench-sweep-{args.mode}.json"
    path.write_text(json.dumps(report, indent=1))
    say(f"wrote {path}")


if __name__ == "__main__":
    main()
