"""Where a Dask sweep's start goes, seen from the client: each backend call the sweep makes
before its first cell comes back, with its start and length from the sweep's start, and the
first outcomes' arrival.

    python3 benchmarks/diag/sweep_start.py --scheduler tcp://HOST:PORT [--seed N]

It runs the issue-31 spmv sweep (``gpu-tunable`` on the generated 1,048,576-entry power-law
matrix, all 132 valid cells; ``--seed`` makes another matrix) through :class:`DaskBackend`, with the backend's
methods wrapped by a stopwatch. A diagnostic: it writes no record and no figure quotes it.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kernels.compute.dask.backend import DaskBackend  # noqa: E402
from kernels.compute.sweep import run_sweep  # noqa: E402
from kernels.inputs import load_input  # noqa: E402

SOURCE = "gen:powerlaw_matrix:n_rows=65536,n_cols=65536,avg_nnz_per_row=16,seed=1"
GRID = {"wg": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024], "rows": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
        "reduce": ["shuffle", "shared"]}
WATCHED = ("describe", "choose_workers", "parallelism", "default_target", "add_graph", "prestart", "_graph_future",
           "_compile_ahead", "compile_ahead_stats")


class Stopwatch:
    def __init__(self):
        self.origin = time.monotonic()
        self.events: list[tuple[float, float, str]] = []

    def wrap(self, name: str, method):
        @functools.wraps(method)
        def timed(*args, **kwargs):
            started = time.monotonic()
            try:
                return method(*args, **kwargs)
            finally:
                self.events.append((started - self.origin, time.monotonic() - started, name))
        return timed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scheduler", required=True)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    graph = load_input(SOURCE.replace("seed=1", f"seed={args.seed}"))
    with DaskBackend(args.scheduler) as backend:
        watch = Stopwatch()
        for name in WATCHED:
            setattr(backend, name, watch.wrap(name, getattr(backend, name)))
        submitted = []
        client_submit = backend.client.submit

        def submit(*a, **k):
            submitted.append(time.monotonic() - watch.origin)
            return client_submit(*a, **k)

        backend.client.submit = submit
        arrived = []
        watch.origin = time.monotonic()
        import kernels.compute.sweep as sweep_module

        for name in ("input_description", "_device_name", "search"):
            if hasattr(sweep_module, name):
                setattr(sweep_module, name, watch.wrap(name, getattr(sweep_module, name)))
        sweep = run_sweep(graph, "spmv", "gpu-tunable", GRID, target="cuda", backend=backend,
                          progress=lambda done, total, cell: cell.get("status") == "ok" and arrived.append(
                              time.monotonic() - watch.origin))
        shown: dict = {}
        for start, length, name in sorted(watch.events):
            if name in shown and length < 1e-3:      # repeated cheap calls (the graph's future per job): counted
                shown[name] += 1
                continue
            shown.setdefault(name, 0)
            print(f"{start:8.3f} s  {length * 1e3:8.1f} ms  {name}")
        print("repeated cheap calls not shown: " + ", ".join(f"{n} x{c}" for n, c in shown.items() if c))
        if submitted:
            print(f"submits: {len(submitted)}, the first at {submitted[0]:.3f} s, the last at {submitted[-1]:.3f} s")
        ok = sum(c["status"] == "ok" for c in sweep["cells"])
        if not arrived:
            print(f"cells ok: {ok}; no cell came back ok")
            return
        print(f"cells ok: {ok}; the first outcomes at " + ", ".join(f"{t:.3f}" for t in arrived[:5])
              + f" s; the last at {arrived[-1]:.3f} s")


if __name__ == "__main__":
    main()
