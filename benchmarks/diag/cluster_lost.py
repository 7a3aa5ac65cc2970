"""A cluster lost mid-sweep on real GPUs (issue 24): ``cluster local`` on every GPU of the host runs
the 90-cell ``triangles gpu-oriented`` sweep of ``bench_sweep.py`` through ``--scheduler``; after
``--after`` cells the cluster's whole process group is SIGKILLed. The sweep must end with exit
status 75 and one sentence (no traceback), the unfinished cells ``lost``; then ``--resume`` on
this machine must run exactly those and leave every cell verified.

    python3 benchmarks/diag/cluster_lost.py [--after 20] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_sweep import TRIANGLES, environment  # noqa: E402


def cells_in(path: Path) -> int:
    try:
        return sum(1 for line in path.read_text().splitlines() if line.endswith("}") and '"kind": "cell"' in line)
    except OSError:
        return 0


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--after", type=int, default=20)
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "diag")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "cluster-lost-sweep.json"
    out.unlink(missing_ok=True)
    env = environment(str(args.out / "cache"), None)
    cluster = subprocess.Popen([sys.executable, "-m", "kernels", "cluster", "local", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                               start_new_session=True)
    address = cluster.stdout.readline().split()[1].rstrip(":")
    family, variant, source, grid = TRIANGLES
    command = [sys.executable, "-m", "kernels", "sweep", family, variant, source, "--target", "cuda", "--out", str(out),
               "-q"] + [a for g in grid for a in ("--grid", g)]
    sweep = subprocess.Popen([*command, "--scheduler", address], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env)
    while cells_in(out) < args.after and sweep.poll() is None:
        time.sleep(0.05)
    killed_at = cells_in(out)
    os.killpg(cluster.pid, signal.SIGKILL)
    started = time.monotonic()
    stdout, stderr = sweep.communicate(timeout=300)
    report = {"killed_after_cells": killed_at, "exit_status": sweep.returncode,
              "seconds_after_the_kill": round(time.monotonic() - started, 1), "stderr": stderr.strip().splitlines()}
    from kernels.results import load_sweep

    first = load_sweep(out)
    report["statuses_after_the_kill"] = {s: sum(c["status"] == s for c in first["cells"])
                                         for s in {c["status"] for c in first["cells"]}}
    started = time.monotonic()
    resumed = subprocess.run([*command, "--resume"], capture_output=True, text=True, env=env, timeout=600)
    report["resume"] = {"exit_status": resumed.returncode, "seconds": round(time.monotonic() - started, 1)}
    second = load_sweep(out)
    report["statuses_after_resume"] = {s: sum(c["status"] == s for c in second["cells"])
                                       for s in {c["status"] for c in second["cells"]}}
    report["lost_cells_run_again"] = report["statuses_after_the_kill"].get("lost", 0)
    print(json.dumps(report, indent=1))
    (args.out / "cluster-lost.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
