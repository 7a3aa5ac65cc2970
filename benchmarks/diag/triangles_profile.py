"""One gpu-oriented run on R-MAT (scale from argv, default 20) for Nsight Compute:

    ncu --kernel-name regex:oriented --launch-skip 1 --launch-count 1 --section SpeedOfLight \\
        --section Occupancy --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis \\
        python3 benchmarks/diag/triangles_profile.py 20 [GROUP...]

With ``--sass OUT.sass`` it also writes the kernel's SASS (group 32, the default register cap).
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kernels.graph.generators import rmat  # noqa: E402
from kernels.run.runner import run_variant  # noqa: E402

args = sys.argv[1:]
sass_out = None
if "--sass" in args:
    sass_out = args[args.index("--sass") + 1]
    del args[args.index("--sass"):args.index("--sass") + 2]
scale = int(args[0]) if args else 20
groups = [int(g) for g in args[1:]] or [8, 32]
graph = rmat(scale, 16, seed=1)
for group in groups:
    rec = run_variant(graph, "triangles", "gpu-oriented", {"group_size": group}, target="cuda", repeat=1,
                      warmup=0, launch="direct").record
    print(f"group {group}: {rec['timing']['kernel']['median_s'] * 1e3:.2f} ms, verified {rec['verified']}, "
          f"edges {graph.num_edges:,}", flush=True)
if sass_out:
    from kernels.algorithms.triangles.gpu_oriented import oriented_kernel, table_slots

    kernel = oriented_kernel(256, 32, False, table_slots(256), 32)
    Path(sass_out).write_text(next(iter(kernel.inspect_sass().values())))
