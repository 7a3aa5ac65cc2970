"""Near-far SSSP of two code trees side by side: ``gpu-nearfar`` (``hops`` 0 where the tree has it,
so the level-synchronous kernel) and ``gpu-csr`` on the same graphs and roots, every run verified
against SciPy by the runner. Run it once per tree, alternating, in one device call:

    python3 benchmarks/diag/nearfar_old_new.py --tree .whl/old --out old.json
    python3 benchmarks/diag/nearfar_old_new.py --tree . --out new.json

``--tree`` goes first on ``sys.path``, so its ``kernels`` and ``benchmarks`` are the ones imported
(a tree from ``git archive`` of an older commit works: this script only needs ``run_variant``,
``make_graph`` and the frontier suite's helpers, which every tree since the near-far variant has).
Times are the runner's median kernel time (CUDA events).
"""
import argparse
import json
import sys
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default=str(Path(__file__).resolve().parents[2]))
    ap.add_argument("--graphs", default="delaunay_w:1048576,grid_w:1000,rmat_w:20")
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--target", default="cuda")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    tree = Path(args.tree).resolve()
    sys.path[:0] = [str(tree), str(tree / "benchmarks")]

    from bench_traversal import make_graph
    from traversal_frontier import graph500_roots, run_one

    from kernels.algorithms.registry import get_variant
    from kernels.measure.environment import environment

    _, nearfar = get_variant("sssp", "gpu-nearfar")
    has_hops = any(p.name == "hops" for p in nearfar.params)
    rows: list = []
    for spec in args.graphs.split(","):
        kind, size = spec.split(":")
        g = make_graph(kind, int(size))
        root = graph500_roots(g, 1)[0]
        print(f"== {tree.name or tree} {g.name}: {g.nnz:,} entries, root {root}, hops param: {has_hops}", flush=True)
        for variant in ("gpu-csr", "gpu-nearfar"):
            params = {"source": root, "block": 256}
            if variant == "gpu-nearfar" and has_hops:
                params["hops"] = 0
            run_one(rows, g, "sssp", variant, params, target=args.target, repeat=args.repeat, section=f"old-new-{kind}")
    if args.out:
        Path(args.out).write_text(json.dumps({"tree": str(tree), "environment": environment(args.target),
                                              "rows": rows}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
