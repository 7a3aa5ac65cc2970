"""gpu-oriented against the kernel of a saved copy of its module (``_oriented_before.py`` beside
this script, e.g. ``git show REV:kernels/algorithms/triangles/gpu_oriented.py``), side by side
on R-MAT, per register cap and group size: kernel time and edges/s, verified.

    python3 benchmarks/diag/triangles_before_after.py [scales...]
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "diag"))

import kernels.algorithms.triangles.gpu_oriented as gpu_oriented  # noqa: E402
from kernels.graph.generators import rmat  # noqa: E402
from kernels.run.runner import run_variant  # noqa: E402

try:
    import _oriented_before as before  # noqa: E402
except ImportError:
    before = None

after_kernel = gpu_oriented.oriented_kernel
scales = [int(s) for s in sys.argv[1:]] or [20, 22]
for scale in scales:
    graph = rmat(scale, 16, seed=1)
    for label, factory in (("after", after_kernel), ("before", before and before.oriented_kernel)):
        if factory is None:
            continue
        gpu_oriented.oriented_kernel = factory
        for cap in (32, 40, 0):
            line = [f"rmat{scale} {label:6s} regs<={cap or 'any':3}:"]
            for group in (16, 32):
                rec = run_variant(graph, "triangles", "gpu-oriented",
                                  {"group_size": group, "max_registers": cap}, target="cuda", repeat=3).record
                t = rec["timing"]["kernel"]["median_s"]
                line.append(f"G{group} {t * 1e3:7.2f} ms {graph.num_edges / t / 1e9:5.2f}e9/s"
                            f"{' regs ' + str(rec['result'].get('registers_per_thread')) if group == 32 else ''}"
                            f"{'' if rec['verified'] else ' WRONG'}")
            print(" ".join(line), flush=True)
gpu_oriented.oriented_kernel = after_kernel
