"""One gpu-oriented run on R-MAT (scale from argv, default 20) for Nsight Compute:

    ncu --kernel-name regex:oriented --launch-skip 1 --launch-count 1 --section SpeedOfLight \\
        --section Occupancy --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis \\
        python3 benchmarks/diag/triangles_profile.py 20
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kernels.graph.generators import rmat  # noqa: E402
from kernels.measure.runner import run_variant  # noqa: E402

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 20
graph = rmat(scale, 16, seed=1)
for group in (8, 32):
    rec = run_variant(graph, "triangles", "gpu-oriented", {"group_size": group}, target="cuda", repeat=1,
                      warmup=0, launch="direct").record
    print(f"group {group}: {rec['timing']['kernel']['median_s'] * 1e3:.2f} ms, verified {rec['verified']}, "
          f"edges {graph.num_edges:,}", flush=True)
