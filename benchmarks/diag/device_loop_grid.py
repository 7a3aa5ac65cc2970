"""The device-loop traversal's cost per level against its persistent grid: threads per SM and
block size, on long-diameter graphs (where the per-level fixed cost is everything).

    python3 benchmarks/diag/device_loop_grid.py [OUT.json]
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import load_real  # noqa: E402

import kernels.algorithms.traversal.device_loop as device_loop  # noqa: E402
from kernels.graph.generators import grid2d  # noqa: E402
from kernels.run.runner import run_variant  # noqa: E402

graphs = [load_real("power.mtx"), grid2d(300, 300), load_real("delaunay_n15.mtx")]
out = []
for g in graphs:
    for algorithm in ("bfs", "sssp"):
        line = [f"{g.name[:20]:20s} {algorithm:4s}"]
        for per_sm in (64, 128, 256, 512):
            for block in (64, 128, 256):
                if block > per_sm:
                    continue
                device_loop.THREADS_PER_SM = per_sm
                params = {"loop": "device", "block": block}
                rec = run_variant(g, algorithm, "gpu-csr", params, target="cuda", repeat=5).record
                levels = rec["input"].get("last_levels")
                t = rec["timing"]["kernel"]["median_s"]
                out.append({"graph": g.name, "algorithm": algorithm, "threads_per_sm": per_sm, "block": block,
                            "median_s": t, "levels": levels, "verified": rec["verified"]})
                per = f"{t / levels * 1e6:.1f}us/lvl" if levels else f"{t * 1e3:.3f}ms"
                line.append(f"{per_sm}/{block}: {per}")
        print(" ".join(line), flush=True)
if len(sys.argv) > 1:
    Path(sys.argv[1]).write_text(json.dumps(out, indent=1, default=str))
