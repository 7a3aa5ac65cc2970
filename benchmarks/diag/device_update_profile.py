"""Where a small device batch's milliseconds go: cProfile around ``DeviceUpdater.apply`` of
``--batches`` batches of N new edges on a generated graph (inserted, then deleted; after warm-up
batches, so nothing compiles), the functions by their own time and by cumulative time, after the
median ``report.seconds`` of the same batches unprofiled. A batch's device time is in
``report.seconds``; the profile says how much of the wall clock is Python, numpy, numba's
launch path, allocations and the two read-backs.

    python3 benchmarks/diag/device_update_profile.py [--graph rmat|delaunay] [--scale 20] [--edges 100]
        [--batches 20] [--path auto|compact|full]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def updater_on(target: str, graph: str, scale: int):
    """(csr, DeviceUpdater) for a generated graph on slotted pages: R-MAT of ``scale`` (edge
    factor 16) or a Delaunay graph of 2^scale points, seed 1; ``target`` activated first."""
    from kernels.measure.targets import activate

    activate(target)
    from kernels.graph.device import DeviceMirror
    from kernels.graph.generators.registry import generate
    from kernels.graph.page_size import page_size_for
    from kernels.graph.slotted import SlottedGraph
    from kernels.operators.device_updates import DeviceUpdater

    if graph == "rmat":
        csr = generate("rmat", scale=scale, edge_factor=16, seed=1)
    else:
        csr = generate("delaunay", n=1 << scale, seed=1)
    g = SlottedGraph.from_csr(csr, page_size=page_size_for(csr))
    return csr, DeviceUpdater(DeviceMirror(g))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", choices=("rmat", "delaunay"), default="rmat")
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--batches", type=int, default=1, help="batches profiled (each inserted, then deleted)")
    ap.add_argument("--edges", type=int, default=100)
    ap.add_argument("--path", choices=("auto", "compact", "full"), default="auto")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args(argv)
    csr, updater = updater_on("cuda", args.graph, args.scale)
    from kernels.graph.update_batches import edge_keys, new_edges
    from kernels.operators import device_updates
    if args.path == "full":
        device_updates.COMPACT_MAX_ENTRIES = -1
    elif args.path == "compact":
        device_updates.COMPACT_MAX_ENTRIES = device_updates.COMPACT_LIMIT_ENTRIES
    rng = np.random.default_rng(3)
    keys = edge_keys(csr)
    for _ in range(3):                                  # compile, then warm the allocator
        u, v = new_edges(csr, args.edges, rng, keys=keys)
        updater.apply(insert=(u, v))
        updater.apply(delete=(u, v))
    batches = [new_edges(csr, args.edges, rng, keys=keys) for _ in range(max(args.batches, 1))]
    plain = []
    for u, v in batches:                                # unprofiled: the figure a benchmark reports
        plain.append(updater.apply(insert=(u, v)).report.seconds)
        plain.append(updater.apply(delete=(u, v)).report.seconds)
    profile = cProfile.Profile()
    seconds = []
    t0 = time.perf_counter()
    for u, v in batches:
        profile.enable()
        seconds.append(updater.apply(insert=(u, v)).report.seconds)
        seconds.append(updater.apply(delete=(u, v)).report.seconds)
        profile.disable()
    wall = (time.perf_counter() - t0) / len(seconds)
    print(f"{args.graph} {args.scale}, {args.edges} new edges, path {args.path}, {len(seconds)} batches: "
          f"unprofiled median report {np.median(plain) * 1e3:.3f} ms (device work, timed); profiled "
          f"{np.median(seconds) * 1e3:.3f} ms, apply() {wall * 1e3:.3f} ms a batch (host replay and check included)")
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(key).print_stats(args.top)
        print(f"--- by {key}")
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:6000])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
