"""Where a device-loop level's time goes: per-block ``globaltimer`` stamps of each phase, and the
floor of a level (a kernel running only the level's skeleton: read the counters, reset a
slot, grid sync).

    python3 benchmarks/diag/device_loop_trace.py [OUT.json]
"""
import functools
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from _common import load_real  # noqa: E402
from numba import cuda, int64  # noqa: E402

from kernels.algorithms.traversal.device_loop import DeviceLoopTraversal, trace_phases  # noqa: E402
from kernels.graph.generators import delaunay, grid2d  # noqa: E402
from kernels.measure.timing import time_kernel_cuda  # noqa: E402
from kernels.operators.views import upload_csr  # noqa: E402

LEVELS = 2100


def timed(fn, repeat=5):
    """Median seconds of ``fn``'s launch: the runner's CUDA-event timer (launches batched when
    a launch is shorter than its host cost)."""
    return time_kernel_cuda(fn, repeat, 1)[0].median_s


@cuda.jit
def skeleton(counters, levels, work):
    """A level without work: every thread reads the slot's four counters, thread 0 resets the
    slot two levels ahead and bumps the next slot's count, grid sync."""
    grid = cuda.cg.this_grid()
    tid = cuda.grid(1)
    level = int64(0)
    acc = int64(0)
    while level < levels:
        slot = level % 3
        for k in range(4):
            acc += counters[slot * 4 + k]
        if tid == 0:
            for k in range(4):
                counters[((level + 2) % 3) * 4 + k] = 0
            cuda.atomic.add(counters, ((level + 1) % 3) * 4, 1)
        grid.sync()
        level += 1
    if acc == -1:
        work[0] = acc


out = {}
counters = cuda.to_device(np.zeros(12, np.int64))
work = cuda.to_device(np.zeros(1, np.int64))
sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
for blocks_per_sm, block in ((1, 256), (2, 256), (1, 512)):
    grid = sms * blocks_per_sm
    t1 = timed(functools.partial(skeleton[grid, block], counters, 1, work))
    t2 = timed(functools.partial(skeleton[grid, block], counters, 2001, work))
    out[f"skeleton_{grid}x{block}_us"] = (t2 - t1) / 2000 * 1e6
    print(f"skeleton {grid} x {block}: {out[f'skeleton_{grid}x{block}_us']:.2f} us/level", flush=True)

graphs = [grid2d(1000, 1000), grid2d(300, 300), load_real("delaunay_n15.mtx"), load_real("power.mtx"),
          grid2d(1000, 1000, seed=1, weights="uniform", weight_range=(1.0, 10.0)),
          delaunay(1 << 20, points="jittered-grid", seed=1, weights="uniform", weight_range=(1.0, 10.0))]
for g in graphs:
    view = upload_csr(g)
    weighted = g.weights is not None
    for algorithm in ("sssp",) if weighted else ("bfs", "sssp"):
        out_arr = cuda.device_array(g.n_rows, np.int32 if algorithm == "bfs" else np.float64)
        plain = DeviceLoopTraversal(algorithm, "csr", weighted=weighted)
        t = timed(functools.partial(plain.run, view, 0, out_arr))
        levels = plain.last_run["levels"]
        traced = DeviceLoopTraversal(algorithm, "csr", weighted=weighted, trace_levels=LEVELS)
        tt = timed(functools.partial(traced.run, view, 0, out_arr), repeat=1)
        phases = trace_phases(traced.trace, levels)
        key = f"{g.name}{'/weighted' if weighted else ''}/{algorithm}"
        out[key] = {"levels": levels, "grid": plain.grid, "us_per_level": t / levels * 1e6,
                    "traced_us_per_level": tt / levels * 1e6, "phases_us": phases}
        print(f"{key:32s} {levels:5d} lv grid {plain.grid}: {t / levels * 1e6:.1f} us/lv "
              f"(traced {tt / levels * 1e6:.1f}) " + " ".join(f"{k}={v:.2f}" for k, v in phases.items()), flush=True)
if len(sys.argv) > 1:
    Path(sys.argv[1]).write_text(json.dumps(out, indent=1))

# the size of the kernel's code: a level's path longer than the instruction caches would miss
# them again every level
from kernels.algorithms.traversal.device_loop import device_loop_kernel  # noqa: E402

k = device_loop_kernel("csr", "bfs", False, 256, 32, False, False)
ptx = next(iter(k.inspect_asm().values()))
print(f"device loop BFS kernel: {len(ptx.splitlines())} PTX lines", flush=True)
try:
    sass = next(iter(k.inspect_sass().values()))
    print(f"SASS: {sum(1 for line in sass.splitlines() if line.strip().startswith('/*') and '*/' in line)} "
          f"instruction lines", flush=True)
    Path("/tmp/device_loop.sass").write_text(sass)
except Exception as exc:  # noqa: BLE001 - nvdisasm may be missing
    print(f"no SASS: {exc}")
Path("/tmp/device_loop.ptx").write_text(ptx)
