"""The device loop's cost per level against its occupancy: resident threads per SM of the
persistent grid and a register cap (more threads carry a wide level in fewer rounds; more
blocks make each grid sync dearer), on a latency-bound case (BFS on a 1000 x 1000 grid) and
throughput-bound ones (weighted SSSP: ~50 k relaxations a level on the grid, ~550 k on the
road-like Delaunay graph of 2^20 vertices).

    python3 benchmarks/diag/device_loop_occupancy.py [OUT.json]
"""
import functools
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

import kernels.algorithms.traversal.device_loop as device_loop  # noqa: E402
from kernels.graph.generators import delaunay, grid2d  # noqa: E402
from kernels.measure.timing import time_kernel_cuda  # noqa: E402
from kernels.operators.views import upload_csr  # noqa: E402


def timed(fn, repeat=5):
    """Median seconds of ``fn``'s launch: the runner's CUDA-event timer (launches batched when
    a launch is shorter than its host cost)."""
    return time_kernel_cuda(fn, repeat, 1)[0].median_s


w = {"weights": "uniform", "weight_range": (1.0, 10.0), "seed": 1}
cases = [(grid2d(1000, 1000), "bfs", 944904), (grid2d(1000, 1000, **w), "sssp", 944904),
         (delaunay(1 << 20, points="jittered-grid", **w), "sssp", 990804)]
views = [(g, upload_csr(g), algorithm, source) for g, algorithm, source in cases]
out = []
for per_sm, regs in ((512, 0), (1024, 64), (1024, 0), (2048, 32), (768, 80)):
    device_loop.THREADS_PER_SM, device_loop.MAX_REGISTERS = per_sm, regs
    device_loop.device_loop_kernel.cache_clear()
    line = [f"{per_sm} thr/SM regs<={regs or 'any':3}:"]
    for g, view, algorithm, source in views:
        weighted = g.weights is not None
        arr = cuda.device_array(g.n_rows, np.int32 if algorithm == "bfs" else np.float64)
        loop = device_loop.DeviceLoopTraversal(algorithm, "csr", weighted=weighted)
        t = timed(functools.partial(loop.run, view, source, arr))
        levels = loop.last_run["levels"]
        out.append({"threads_per_sm": per_sm, "max_registers": regs, "graph": g.name, "algorithm": algorithm,
                    "weighted": weighted, "grid": loop.grid, "levels": levels, "us_per_level": t / levels * 1e6})
        line.append(f"{g.name[:12]}{'/w' if weighted else ''} {algorithm} grid {loop.grid} "
                    f"{t / levels * 1e6:6.2f} us/lv")
    print(" | ".join(line), flush=True)
if len(sys.argv) > 1:
    Path(sys.argv[1]).write_text(json.dumps(out, indent=1))
