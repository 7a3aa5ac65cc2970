"""gpu-oriented's probe loop variants side by side on R-MAT: one or two table slots per probe
step (``PROBE_PAIR``), one or two list entries per lane and step (``ITEMS_PER_STEP``), per
register cap; group 32. Kernel time and edges/s, verified.

    python3 benchmarks/diag/triangles_probe_variants.py [scales...]
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import kernels.algorithms.triangles.gpu_oriented as gpu_oriented  # noqa: E402
from kernels.graph.generators import rmat  # noqa: E402
from kernels.run.runner import run_variant  # noqa: E402

defaults = (gpu_oriented.PROBE_PAIR, gpu_oriented.ITEMS_PER_STEP)
scales = [int(s) for s in sys.argv[1:]] or [20, 22]
for scale in scales:
    graph = rmat(scale, 16, seed=1)
    for pair in (False, True):
        for items in (1, 2):
            gpu_oriented.PROBE_PAIR, gpu_oriented.ITEMS_PER_STEP = pair, items
            gpu_oriented.oriented_kernel.cache_clear()
            line = [f"rmat{scale} pair={pair!s:5} items={items}:"]
            for cap in (32, 40):
                rec = run_variant(graph, "triangles", "gpu-oriented", {"group_size": 32, "max_registers": cap},
                                  target="cuda", repeat=5).record
                t = rec["timing"]["kernel"]["median_s"]
                line.append(f"regs<={cap} {t * 1e3:7.2f} ms {graph.num_edges / t / 1e9:5.2f}e9/s"
                            f"{'' if rec['verified'] else ' WRONG'}")
            print(" ".join(line), flush=True)
gpu_oriented.PROBE_PAIR, gpu_oriented.ITEMS_PER_STEP = defaults
gpu_oriented.oriented_kernel.cache_clear()
