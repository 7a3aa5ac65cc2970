"""Unweighted SSSP beside BFS on the long-diameter graphs (the device loop, launch auto): the
per-level cost without the weighted Bellman-Ford's extra relaxations.

    python3 benchmarks/diag/traversal_unweighted.py
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kernels.graph.generators import delaunay, grid2d  # noqa: E402
from kernels.run.runner import run_variant  # noqa: E402

cases = ((delaunay(1 << 20, points="jittered-grid", seed=1), 990804), (grid2d(1000, 1000, seed=1), 944904))
for graph, source in cases:
    for family in ("sssp", "bfs"):
        rec = run_variant(graph, family, "gpu-csr", {"source": source}, target="cuda", repeat=5).record
        levels = rec["input"]["last_levels"]
        t = rec["timing"]["kernel"]["median_s"]
        print(f"{graph.name} {family} unweighted: {levels} levels, {t * 1e3:.3f} ms, {t / levels * 1e6:.2f} us/level, "
              f"launch {rec['timing']['launch']}, verified {rec['verified']}", flush=True)
