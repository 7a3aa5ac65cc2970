"""gpu-oriented with a register cap (occupancy is register-limited: 54 registers → 4 blocks of
256 per SM, 50 %, Nsight Compute on an H100): kernel time per cap and group size on R-MAT.

    python3 benchmarks/diag/triangles_registers.py [scales...]
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from numba import cuda  # noqa: E402

import kernels.algorithms.triangles.gpu_oriented as gpu_oriented  # noqa: E402
from kernels.graph.generators import rmat  # noqa: E402
from kernels.run.runner import run_variant  # noqa: E402

scales = [int(s) for s in sys.argv[1:]] or [20, 22]
for scale in scales:
    graph = rmat(scale, 16, seed=1)
    for cap in (None, 48, 40, 32):
        gpu_oriented.kernel_jit = (lambda block, cap=cap: cuda.jit if cap is None else cuda.jit(max_registers=cap))
        gpu_oriented.oriented_kernel.cache_clear()
        line = [f"rmat{scale} regs<={cap or 'any'}:"]
        for group in (8, 16, 32):
            rec = run_variant(graph, "triangles", "gpu-oriented", {"group_size": group}, target="cuda",
                              repeat=3).record
            t = rec["timing"]["kernel"]["median_s"]
            line.append(f"G{group} {t * 1e3:.2f} ms ({graph.num_edges / t / 1e9:.2f}e9 e/s, "
                        f"{rec['result'].get('grid', '?')} blocks){'' if rec['verified'] else ' WRONG'}")
        print(" ".join(line), flush=True)
