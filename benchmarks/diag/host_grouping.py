"""The compact device path's host grouping alone, on this machine's CPU (no GPU needed).

    python3 benchmarks/diag/host_grouping.py [--sizes 1000,10000,100000] [--ids 1048576] [--out F.json]

Times, side by side in one process, on random undirected batches (half deletions, half
insertions, ids uniform below ``--ids``): ``before``, the grouping as it was before 2026-11-29
(``compact_upload_before.py``: arrays of its own, then the copy ``Workspace.upload`` made into the
upload buffer, timed with it); ``serial``, today's ``DeviceUpdater._group_on_host`` into a kept
buffer with kept scratch on one thread; ``now``, the same with the threads the updater chooses
(``GROUP_CHUNK_ENTRIES``, numba's thread count). Medians of ``--reps`` calls after one warm call.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from compact_upload_before import group_on_host_before  # noqa: E402

from kernels.operators import device_updates  # noqa: E402
from kernels.operators.device_updates import DeviceUpdater  # noqa: E402


def batch(rng, edges: int, ids: int):
    u = rng.integers(0, ids, edges).astype(np.int32)
    v = rng.integers(0, ids, edges).astype(np.int32)
    half, none = edges // 2, np.zeros(0, dtype=np.int32)
    return SimpleNamespace(delete_u=u[:half], delete_v=v[:half], insert_u=u[half:], insert_v=v[half:],
                           reweight_u=none, reweight_v=none, insert_w=None, reweight_w=None, directed=False)


def grouping_calls(b, edges: int) -> dict:
    """The three ways, each a call of no arguments."""
    out = np.empty(device_updates.HEADER_WORDS + 14 * edges + 64, dtype=np.int64)
    scratch = np.empty(8 * edges, dtype=np.int64)
    upload = np.empty_like(out)

    def before():
        T, S, src, dst, tag, _ = group_on_host_before(b, False, np.float64)
        at = device_updates.HEADER_WORDS
        for part in (T, src, dst, S, tag):             # Workspace.upload's copy into its pinned buffer
            upload[at:at + len(part)] = part
            at += len(part)

    return {"before": before,
            "serial": lambda: DeviceUpdater._group_on_host(b, False, np.float64, out, None, scratch, chunks=1),
            "now": lambda: DeviceUpdater._group_on_host(b, False, np.float64, out, None, scratch)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,20000,40000,100000")
    ap.add_argument("--ids", type=int, default=1 << 20)
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    rows = {}
    for edges in (int(s) for s in args.sizes.split(",")):
        calls = grouping_calls(batch(rng, edges, args.ids), edges)
        times = {name: [] for name in calls}
        for call in calls.values():
            call()
        for _ in range(args.reps):                     # interleaved
            for name, call in calls.items():
                t0 = time.perf_counter()
                call()
                times[name].append(time.perf_counter() - t0)
        rows[edges] = {name: statistics.median(ts) * 1e3 for name, ts in times.items()}
        print(f"{edges:>9,} edges: " + ", ".join(f"{name} {ms:.3f} ms" for name, ms in rows[edges].items()))
    if args.out:
        from numba import get_num_threads

        from kernels.measure.environment import environment

        # the host it ran on and the code (versions, gpu-graph-explorer's source digest)
        Path(args.out).write_text(json.dumps({"ids": args.ids, "threads": get_num_threads(), "ms": rows,
                                              "environment": environment("cpu")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
