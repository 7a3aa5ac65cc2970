#!/usr/bin/env python3
"""Where a small device batch's time goes: the compact path as one cooperative launch (its
phases from the ``globaltimer`` stamps the kernel writes, ``DeviceUpdater.last_phases``) at
several grid sizes, against the split launches, side by side on the same graph in one process.

    python3 benchmarks/diag/fused_batch.py --graphs delaunay20,rmat20 --sizes 100,1000,2000 \\
        --grids 0,132,264 --out fused-batch.json

``--launch-clock``: also the host time of the fused kernel's planned launch (``_Plan.relaunch``
or ``_Plan.repack``, the arguments' comparison and repacking included) and of its driver call alone
(``cuLaunchCooperativeKernel``), with how many arguments a relaunch repacked; medians a batch.

``--grids``: the fused launch's most blocks (0: every block the device keeps resident). Every
batch is checked page for page against its host replay (``DeviceUpdater.apply``); the cycle of
insert, delete, mixed and its inverse returns the graph to its edge set, so each flow sees the
same graph. Times: ``report.seconds`` (perf_counter around the device work and its wait, upload
included), medians over ``--reps`` cycles.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_updates import FULL, QUICK, SIM, batches_for, device_description  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default="delaunay20,rmat20")
    ap.add_argument("--sizes", default="100,1000,2000")
    ap.add_argument("--grids", default="0", help="comma-separated fused grid caps (0: the resident limit)")
    ap.add_argument("--registers", default="0",
                    help="comma-separated register caps of the fused kernel (0: the compiler's choice)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--launch-clock", action="store_true", help="clock the fused launch's host parts")
    ap.add_argument("--target", choices=("cuda", "sim"), default="cuda")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    from kernels.measure.targets import activate

    activate(args.target)
    from kernels.graph.device import DeviceMirror
    from kernels.graph.generators.registry import generate
    from kernels.graph.page_size import page_size_for
    from kernels.graph.slotted import SlottedGraph
    from kernels.graph.update_batches import edge_keys, stored_edges
    from kernels.measure.environment import environment
    from kernels.operators import device_updates
    from kernels.operators.device_updates import DeviceUpdater

    clock = launch_clock() if args.launch_clock else None
    known = {name: (kind, opts) for cfg in (FULL, QUICK, SIM) for name, kind, opts in cfg["graphs"]}
    flows = [("split", None, None)] + [(f"fused grid {int(g) or 'resident'} regs {int(r) or 'any'}", int(g), int(r))
                                       for g in args.grids.split(",") for r in args.registers.split(",")]
    out = {"device": device_description(args.target), "environment": environment(args.target),
           "protocol": __doc__.split("\n\n")[0], "graphs": {}}
    for name in args.graphs.split(","):
        kind, opts = known[name]
        csr = generate(kind, **opts)
        g = SlottedGraph.from_csr(csr, page_size=page_size_for(csr))
        updater = DeviceUpdater(DeviceMirror(g))
        keys, edges = edge_keys(csr), stored_edges(csr)
        rng = np.random.default_rng(7)
        rows = []
        for size in (int(x) for x in args.sizes.split(",")):
            cycles = [batches_for(csr, size, rng, keys, edges) for _ in range(args.reps)]
            for label, cap, regs in flows + flows[:1]:     # split first and last: drift shows
                device_updates.COMPACT_FUSED = cap is not None
                device_updates.FUSED_MAX_BLOCKS = cap or None
                device_updates.FUSED_MAX_REGISTERS = regs or None
                updater.apply(**cycles[0][0][1])           # one untimed batch (first use of a shape)
                updater.apply(**cycles[0][1][1])
                secs, phases, used = [], [], set()
                for kept in (clock or {}).values():
                    kept.clear()
                for cycle in cycles:
                    for _, batch in cycle:
                        result = updater.apply(**batch)
                        secs.append(result.report.seconds)
                        used.add(updater.last_flow)
                        if updater.last_flow == "fused":
                            phases.append(dict(updater.last_phases))
                row = {"size": size, "flow": label, "median_ms": statistics.median(secs) * 1e3,
                       "min_ms": min(secs) * 1e3, "batches": len(secs), "flows": sorted(used)}
                if cap is not None and args.target == "cuda":
                    row["resident_blocks"] = sorted(set(updater.fused_grid_limits.values()))
                    kernel = device_updates._kernels().fused_c(device_updates.WARP_BLOCK["cuda"], regs or None)
                    row["registers"] = sorted({int(v.regs_per_thread) for v in kernel.overloads.values()})
                if clock is not None and clock["relaunch"]:
                    row["launch_host_us"] = {k: statistics.median(v) * 1e6 for k, v in clock.items()
                                             if k != "repacked" and v}
                    row["repacked_args"] = statistics.median(clock["repacked"])
                if phases:
                    row["phases_us"] = {k: statistics.median(p[k] for p in phases if k in p) for k in phases[0]}
                rows.append(row)
                print(f"{name} {size:>6} {label:<30} {row['median_ms']:7.3f} ms (min {row['min_ms']:.3f})"
                      + (f" regs {row['registers']} resident {row['resident_blocks']}" if "registers" in row else "")
                      + ("  " + " ".join(f"{k} {v:.0f}" for k, v in row["phases_us"].items()) if phases else "")
                      + (f"  launch host {row['launch_host_us']} repacked {row['repacked_args']}"
                         if "launch_host_us" in row else ""),
                      flush=True)
        out["graphs"][name] = {"pages": g.num_pages, "page_size": g.page_size, "rows": rows,
                               "final_pool_identical": not updater.mirror.differences()}
    out["date"] = time.strftime("%Y-%m-%d")
    args.out.write_text(json.dumps(out, indent=1))
    return 0


def launch_clock() -> dict:
    """Wrap the planned launches' relaunch (``_Plan.relaunch``, ``_Plan.repack``: the arguments'
    comparison and repacking, the driver call included) and the driver call alone with host
    clocks, cooperative launches only (the fused kernel's); returns the lists they fill."""
    from kernels.cuda import fast_launch

    clock = {"relaunch": [], "driver": [], "repacked": []}
    call, mark = fast_launch._Plan._call, fast_launch._mark

    def timed(method):
        def run(self, *a):
            if not self.cooperative:
                return method(self, *a)
            packed = [0]

            def counting(value):
                packed[0] += 1
                return mark(value)

            fast_launch._mark = counting
            start = time.perf_counter()
            try:
                done = method(self, *a)
            finally:
                fast_launch._mark = mark
            if done:
                clock["relaunch"].append(time.perf_counter() - start)
                clock["repacked"].append(packed[0])
            return done
        return run

    def timed_call(self, *a):
        if not self.cooperative:
            return call(self, *a)
        start = time.perf_counter()
        call(self, *a)
        clock["driver"].append(time.perf_counter() - start)

    fast_launch._Plan.relaunch = timed(fast_launch._Plan.relaunch)
    fast_launch._Plan.repack = timed(fast_launch._Plan.repack)
    fast_launch._Plan._call = timed_call
    return clock


if __name__ == "__main__":
    sys.exit(main())
