"""One device-loop BFS on a grid for Nsight Compute (the cooperative kernel's stall reasons):

    ncu --kernel-name regex:device_loop_kernel --launch-skip 2 --launch-count 1 \\
        --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \\
        python3 benchmarks/diag/device_loop_profile.py 300
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kernels.graph.generators import grid2d  # noqa: E402
from kernels.run.runner import run_variant  # noqa: E402

side = int(sys.argv[1]) if len(sys.argv) > 1 else 300
rec = run_variant(grid2d(side, side), "bfs", "gpu-csr", {"loop": "device"}, target="cuda", repeat=1, warmup=0,
                  launch="direct").record
levels = rec["input"].get("last_levels")
print(f"{side}x{side} grid BFS: {rec['timing']['kernel']['median_s'] * 1e3:.3f} ms, {levels} levels, "
      f"verified {rec['verified']}", flush=True)
