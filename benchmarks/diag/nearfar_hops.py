"""Near-far SSSP with block-local hops (``gpu-nearfar --param hops=H``): time, levels and
relaxations per edge against ``hops`` and ``delta``, beside frontier Bellman-Ford (``gpu-csr``),
on the frontier suite's SSSP graphs (weighted: uniform in [1, 10)), one Graph500 root each,
every run verified against SciPy by the runner.

    python3 benchmarks/diag/nearfar_hops.py [--quick] [--graphs delaunay_w:1048576,file_w:power.mtx,...]
        [--hops 0,4,16,64,256] [--delta-factors 0.125,0.25,0.5,1,2] [--slotted] [--out OUT.json]

``--delta-factors`` multiplies the ``auto`` delta (the rule for ``hops=0``) for each ``hops``;
without it only ``auto`` is run. Times are the runner's median kernel time (CUDA events).
"""
import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_traversal import make_graph  # noqa: E402
from traversal_frontier import auto_delta, graph500_roots, live_pages, run_one, with_weights  # noqa: E402

from kernels.measure.environment import environment  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--graphs", default=None)
    ap.add_argument("--hops", default="0,4,16,64,256,1024")
    ap.add_argument("--delta-factors", default="")
    ap.add_argument("--slotted", action="store_true", help="also gpu-nearfar-slotted at each hops")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--target", default="cuda")
    ap.add_argument("--out", default=None)
    ap.add_argument("--block", type=int, default=256)
    ap.add_argument("--keep-stale", action="store_true",
                    help="relax every item, also those whose source improved since (frontier_loop.LOCAL_SKIP_STALE "
                         "off; the disk kernel cache is switched off for this process)")
    args = ap.parse_args()
    if args.keep_stale:
        import os

        os.environ["GRAPH_KERNELS_KERNEL_CACHE"] = "off"   # a module constant is not in the cache's key
        from kernels.algorithms.traversal import frontier_loop

        frontier_loop.LOCAL_SKIP_STALE = False
    graphs = args.graphs or ("delaunay_w:4096,grid_w:40" if args.quick else
                             "delaunay_w:1048576,grid_w:1000,rmat_w:20")
    hops_values = [h if h == "auto" else int(h) for h in args.hops.split(",")]
    factors = [float(f) for f in args.delta_factors.split(",") if f]
    rows: list = []
    for spec in graphs.split(","):
        kind, size = spec.split(":")
        t = time.perf_counter()
        # file_w:NAME: a real graph of tests/data with weights uniform in [1, 10)
        g = (with_weights(make_graph("file", size).with_(weights=None)) if kind == "file_w"
             else make_graph(kind, int(size)))
        root = graph500_roots(g, 1)[0]
        delta = auto_delta(g, root, args.target)
        print(f"== {g.name}: {g.n_rows:,} vertices, {g.nnz:,} entries, root {root}, auto delta {delta:.4g} "
              f"({time.perf_counter() - t:.1f} s)", flush=True)
        section = f"hops-{kind}"
        run_one(rows, g, "sssp", "gpu-csr", {"source": root, "block": args.block}, target=args.target,
                repeat=args.repeat, section=section)
        live = live_pages(g, weighted=True) if args.slotted else None
        deltas = ["auto"] + [float(f"{delta * f:.4g}") for f in factors if f != 1.0]
        for hops in hops_values:
            for d in deltas:
                params = {"source": root, "hops": hops, "delta": d, "block": args.block}
                row = run_one(rows, g, "sssp", "gpu-nearfar", params, target=args.target, repeat=args.repeat,
                              section=section)
                last = row.get("last", {})
                chosen = row.get("resolved", {}).get("hops", hops)
                print(f"      hops {chosen!s:>5} delta {d!s:>8}: levels {last.get('iterations')} local rounds "
                      f"{last.get('local_rounds')} local relaxations {last.get('local_relaxations')} "
                      f"relax/edge {last.get('relaxations_per_edge', 0):.2f}", flush=True)
            if live is not None:
                run_one(rows, g, "sssp", "gpu-nearfar-slotted", {"source": root, "hops": hops}, target=args.target,
                        repeat=args.repeat, live=live, section=section)
        del live
    if args.out:
        Path(args.out).write_text(json.dumps({"environment": environment(args.target), "rows": rows}, indent=1,
                                             default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
