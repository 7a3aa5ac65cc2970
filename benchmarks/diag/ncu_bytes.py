"""The roofline's byte models against Nsight Compute: one input per family, the model's bytes
(kernels/roofline) beside ncu's ``dram__bytes.sum`` summed over the kernels of one launch.

Run from the repository root on a GPU machine with Nsight Compute (``ncu`` on PATH, or in
/usr/local/cuda*/bin; no GUI needed), about 1-2 minutes on one H100::

    python3 benchmarks/diag/ncu_bytes.py            # every family
    python3 benchmarks/diag/ncu_bytes.py bfs apsp   # some

For each case the script starts itself under ``ncu --profile-from-start off`` in a child: the child
prepares the run as the runner does (compile, upload, preprocess, reset), then profiles exactly
one launch between ``cuda.profile_start()`` and ``cuda.profile_stop()``. ncu replays each kernel
with the caches flushed first (its default ``--cache-control all``), so its DRAM bytes are a
cold-cache count, what the models' "compulsory traffic" means (docs/roofline.md); a ratio far
from 1 says the model misses traffic (ratio > 1: re-reads, scratch, atomics) or counts bytes that
stay in L2 (ratio < 1: writes not yet evicted when the kernel ends, small inputs).

Without ncu the script says so and exits with status 2; where ncu lacks permission to read the
GPU's counters (ERR_NVGPUCTRPERM) it says that. Writes
benchmarks/results/roofline/ncu-bytes-<device>.json and prints a table.
"""

from __future__ import annotations

import argparse
import csv
import glob
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import say, shown_path, slug  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "roofline"
METRIC = "dram__bytes.sum"

# family, variant, input, parameters: one input per family, small enough for ncu's per-kernel replays
CASES = [
    ("spmv", "gpu-adaptive", ("rmat", 18, True), {}),
    ("triangles", "gpu-oriented", ("rmat", 16, False), {}),
    # top-down only: the model counts every entry of every reached vertex, what push scans
    ("bfs", "gpu-csr", ("rmat", 18, False), {"direction": "push"}),
    # the default, direction-optimizing: the model is the lower bound (bottom-up stops early)
    ("bfs", "gpu-csr", ("rmat", 18, False), {}),
    ("bfs", "gpu-do", ("rmat", 18, False), {}),
    ("sssp", "gpu-csr", ("rmat", 18, True), {}),
    ("apsp", "gpu-fw-blocked", ("rmat", 10, True), {}),
    ("apsp", "gpu-dijkstra", ("rmat", 10, True), {}),
    ("kclique", "gpu-vertex", ("rmat", 14, False), {"k": 4}),
]
UNITS = {"byte": 1, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12}


def find_ncu() -> str | None:
    found = shutil.which("ncu")
    if found:
        return found
    for candidate in sorted(glob.glob("/usr/local/cuda*/bin/ncu"), reverse=True) + \
            sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"), reverse=True):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


# ---- the child: one launch under the profiler ------------------------------------------------------

def child(family: str, variant: str, spec: list, params: dict, model_out: str) -> None:
    from kernels.measure.targets import activate

    activate("cuda")
    from numba import cuda

    from kernels.algorithms.execution import Execution
    from kernels.algorithms.registry import get_variant
    from kernels.graph.generators import rmat
    from kernels.roofline import work_of
    from kernels.run.runner import resolved_ahead

    _, scale, weighted = spec
    graph = rmat(scale, 16, seed=1, weights="uniform" if weighted else None)
    fam, var = get_variant(family, variant)
    resolved = fam.resolve_params(var, params)
    problem = fam.prepare(graph, resolved, 0)
    resolved = resolved_ahead(fam, var, problem, resolved, "cuda")   # no trial launches inside the profile
    execution = var.make(problem, resolved, "cuda")
    execution.compile()
    execution.upload()
    if type(execution).preprocess is not Execution.preprocess:
        execution.preprocess()
    execution.launch()                      # a warm-up launch: lazy kernels compiled, nothing profiled yet
    execution.synchronize()
    if execution.needs_reset:
        execution.reset()
    execution.synchronize()
    cuda.profile_start()
    execution.launch()
    execution.synchronize()
    cuda.profile_stop()
    output = execution.download()
    work = work_of(family, variant, problem, resolved, fam.summarize(output, problem))
    execution.release()
    Path(model_out).write_text(json.dumps({"input": graph.name, "params": resolved, **work.to_json()}))


# ---- the parent: ncu around each child --------------------------------------------------------------

def dram_bytes(log_text: str) -> tuple[float, int]:
    """(sum of dram__bytes.sum over the profiled kernels, kernels) from ncu's --csv log."""
    start = log_text.find('"ID"')
    if start < 0:
        return 0.0, 0
    total, kernels = 0.0, 0
    for row in csv.DictReader(io.StringIO(log_text[start:])):
        if row.get("Metric Name") != METRIC:
            continue
        value = float((row.get("Metric Value") or "0").replace(",", ""))
        total += value * UNITS.get((row.get("Metric Unit") or "byte").lower(), 1)
        kernels += 1
    return total, kernels


def run_case(ncu: str, case, tmp: Path, index: int = 0) -> dict:
    family, variant, spec, params = case
    stem = f"{index}-{family}-{variant}"            # one variant may be profiled with several parameters
    model_out, log = tmp / f"{stem}.json", tmp / f"{stem}.ncu.csv"
    cmd = [ncu, "--profile-from-start", "off", "--metrics", METRIC, "--csv", "--print-units", "base",
           "--log-file", str(log), sys.executable, str(Path(__file__).resolve()), "--child", family, variant,
           json.dumps(list(spec)), json.dumps(params), str(model_out)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    text = log.read_text(errors="replace") if log.exists() else ""
    said = proc.stdout + proc.stderr + text
    row = {"family": family, "variant": variant, "wall_s": round(time.perf_counter() - t0, 1)}
    if "ERR_NVGPUCTRPERM" in said:
        row["error"] = ("ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM): run as root or set "
                        "NVreg_RestrictProfilingToAdminUsers=0")
        return row
    if proc.returncode != 0 or not model_out.exists():
        tail = " | ".join(line for line in said.strip().splitlines()[-4:])
        row["error"] = f"the profiled run failed (status {proc.returncode}): {tail}"
        return row
    model = json.loads(model_out.read_text())
    measured, kernels = dram_bytes(text)
    row.update({"input": model["input"], "params": model["params"], "model_bytes": model["bytes"],
                "ncu_dram_bytes": measured, "kernels": kernels, "model": model["model"],
                "ratio": measured / model["bytes"] if model["bytes"] else None})
    if kernels == 0:
        row["error"] = "ncu profiled no kernel between profile_start and profile_stop"
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("families", nargs="*", help="only these families (default: all)")
    ap.add_argument("--child", nargs=5, metavar=("FAMILY", "VARIANT", "INPUT", "PARAMS", "OUT"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if args.child:
        family, variant, spec, params, out = args.child
        child(family, variant, json.loads(spec), json.loads(params), out)
        return 0
    ncu = find_ncu()
    if ncu is None:
        say("ncu (Nsight Compute) was not found on PATH nor in /usr/local/cuda*/bin or /opt/nvidia/nsight-compute: "
            "install Nsight Compute (or put ncu on PATH) to compare the byte models with dram__bytes; nothing measured")
        return 2
    from kernels.measure.environment import device_description

    device = device_description("cuda")
    if device.get("name") == "no CUDA device":
        say("no CUDA device on this machine: nothing measured")
        return 2
    chosen = [c for c in CASES if not args.families or c[0] in args.families]
    rows = []
    with tempfile.TemporaryDirectory(prefix="ncu-bytes-") as tmp:
        for index, case in enumerate(chosen):
            row = run_case(ncu, case, Path(tmp), index)
            rows.append(row)
            if "error" in row:
                say(f"{row['family']}/{row['variant']}: {row['error']}")
            else:
                say(f"{row['family']}/{row['variant']} on {row['input']}: model {row['model_bytes'] / 1e6:,.2f} MB, "
                    f"ncu {row['ncu_dram_bytes'] / 1e6:,.2f} MB over {row['kernels']} kernel(s), ratio "
                    f"{row['ratio']:.2f} ({row['wall_s']} s)")
            if any("ERR_NVGPUCTRPERM" in (r.get("error") or "") for r in rows):
                break
    args.out.mkdir(parents=True, exist_ok=True)
    only = "-" + "-".join(sorted(set(args.families))) if args.families else ""      # a subset keeps the full file
    path = args.out / f"ncu-bytes-{slug(device['name'])}{only}.json"
    path.write_text(json.dumps({"device": device, "ncu": ncu, "metric": METRIC, "cache_control": "all (ncu default)",
                                "rows": rows}, indent=1), encoding="utf-8")
    say(f"{'run':<36} {'model MB':>10} {'ncu MB':>10} {'ratio':>6}")
    for r in rows:
        if "error" not in r:
            direction = r["params"].get("direction")
            label = f"{r['family']}/{r['variant']}" + (f" {direction}" if direction else "")
            say(f"{label:<36} {r['model_bytes'] / 1e6:>10,.2f} "
                f"{r['ncu_dram_bytes'] / 1e6:>10,.2f} {r['ratio']:>6.2f}")
    say(f"wrote {shown_path(path)}")
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
