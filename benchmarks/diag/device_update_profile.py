"""Where a small device batch's milliseconds go: cProfile around ``DeviceUpdater.apply`` of one
batch of N new edges on a generated graph (after a warm-up batch, so nothing compiles), the
functions by their own time and by cumulative time. A batch's device time is in
``report.seconds``; the profile says how much of the wall clock is Python, numpy, numba's
launch path, allocations and the two read-backs.

    python3 benchmarks/diag/device_update_profile.py [--scale 20] [--edges 100] [--path auto|compact|full]
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--edges", type=int, default=100)
    ap.add_argument("--path", choices=("auto", "compact", "full"), default="auto")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args(argv)
    from kernels.measure.targets import activate

    activate("cuda")
    from kernels.graph.device import DeviceMirror
    from kernels.graph.generators.registry import generate
    from kernels.graph.page_size import page_size_for
    from kernels.graph.slotted import SlottedGraph
    from kernels.graph.update_batches import edge_keys, new_edges
    from kernels.operators import device_updates
    from kernels.operators.device_updates import DeviceUpdater

    csr = generate("rmat", scale=args.scale, edge_factor=16, seed=1)
    g = SlottedGraph.from_csr(csr, page_size=page_size_for(csr))
    updater = DeviceUpdater(DeviceMirror(g))
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
    u, v = new_edges(csr, args.edges, rng, keys=keys)
    profile = cProfile.Profile()
    t0 = time.perf_counter()
    profile.enable()
    result = updater.apply(insert=(u, v))
    profile.disable()
    wall = time.perf_counter() - t0
    print(f"R-MAT {args.scale}, {args.edges} new edges, path {args.path}: report {result.report.seconds * 1e3:.3f} ms "
          f"(device work, timed), apply() {wall * 1e3:.3f} ms in all (host replay and check included)")
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(key).print_stats(args.top)
        print(f"--- by {key}")
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:6000])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
