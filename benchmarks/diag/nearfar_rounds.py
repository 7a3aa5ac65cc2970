"""Where near-far SSSP's levels go with block-local hops: per level and block, ``globaltimer``
stamps at the level's start, before the block-local rounds and before the closing grid sync, and
each block's rounds (``FrontierLoopTraversal(trace_levels=...)``), summed into the grid-wide relax
phase, the rounds phase (to the last block's arrival), the grid sync, and the rounds on the
critical path (the most any block ran in each level) against the rounds the blocks ran on average.

    python3 benchmarks/diag/nearfar_rounds.py [--quick] [--graphs delaunay_w:1048576,grid_w:1000]
        [--hops 16,8] [--profile] [--out OUT.json]

``--profile``: after the traced runs, one untraced run of the first graph's first ``hops``
between ``cuda.profile_start()`` and ``profile_stop()`` (for ``ncu --profile-from-start off``).
Every run's distances are checked against SciPy's Dijkstra.
"""
import argparse
import functools
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from frontier_trace import registers, timed  # noqa: E402  (this folder: the untraced time, the registers)
from numba import cuda  # noqa: E402
from traversal_frontier import auto_delta, graph500_roots  # noqa: E402

from kernels.algorithms.traversal import frontier_loop  # noqa: E402
from kernels.algorithms.traversal.frontier_loop import TRACE_STAMPS, FrontierLoopTraversal  # noqa: E402
from kernels.algorithms.traversal.reference import sssp_distances  # noqa: E402
from kernels.measure.environment import environment  # noqa: E402
from kernels.operators.launch import on_simulator  # noqa: E402
from kernels.operators.views import upload_csr  # noqa: E402

LEVELS = 4000
ROUNDS = TRACE_STAMPS - 1


def make_graph(kind: str, size: int):
    """The frontier suite's weighted graphs (bench_traversal.make_graph's; that module clears the
    simulator's switch on import): weights uniform in [1, 10)."""
    from kernels.graph.generators import delaunay, grid2d

    if kind == "delaunay_w":
        return delaunay(size, points="jittered-grid", seed=1, weights="uniform", weight_range=(1.0, 10.0))
    if kind == "grid_w":
        return grid2d(size, size, seed=1, weights="uniform", weight_range=(1.0, 10.0))
    raise ValueError(f"graph kind {kind!r}: delaunay_w or grid_w")


def phases(trace: np.ndarray, levels: int) -> dict:
    """Sums over levels (µs) of the grid relax phase (first start to the last block before its
    rounds), the rounds phase (from there to the last block's arrival), the levels without
    rounds (a bucket advance: start to arrival), the rest (the grid syncs, the next level's
    head); the rounds on the critical path (the most any block ran in each level) and on
    average, a round's time per block (its rounds phase over its rounds)."""
    count = min(levels, trace.shape[0])
    relax = rounds_phase = advance = rest = 0.0
    critical = mean_rounds = 0.0
    per_round = []
    busy_share = []
    for lv in range(count):
        st = trace[lv]
        seen = st[:, 0] > 0
        if not seen.any():
            continue
        start = st[seen, 0].min()
        arrival = st[seen, 2].max()
        nxt = trace[lv + 1][:, 0] if lv + 1 < count else np.zeros(1, np.int64)
        end = nxt[nxt > 0].min() if (nxt > 0).any() else arrival
        rest += (end - arrival) / 1e3
        if not (st[seen, 1] > 0).all():          # no local rounds in this level (a bucket advance)
            advance += (arrival - start) / 1e3
            continue
        before = st[seen, 1].max()
        relax += (before - start) / 1e3
        rounds_phase += (arrival - before) / 1e3
        r = st[seen, ROUNDS]
        critical += r.max()
        mean_rounds += r.mean()
        busy_share.append(float((r >= max(1, r.max() // 2)).mean()))
        ran = seen & (st[:, ROUNDS] > 0)
        per_round.extend(((st[ran, 2] - st[ran, 1]) / st[ran, ROUNDS] / 1e3).tolist())
    return {"levels": count, "relax_us": relax, "rounds_us": rounds_phase, "advance_us": advance, "rest_us": rest,
            "critical_rounds": int(critical), "mean_rounds": float(mean_rounds),
            "us_per_critical_round": rounds_phase / critical if critical else 0.0,
            "us_per_round_median": float(np.median(per_round)) if per_round else 0.0,
            "us_per_round_p90": float(np.percentile(per_round, 90)) if per_round else 0.0,
            "blocks_with_half_the_max_rounds_median": float(np.median(busy_share)) if busy_share else 0.0}


def check(graph, source: int, dist: np.ndarray) -> bool:
    """The distances against SciPy's Dijkstra (the variants' own oracle)."""
    return bool(np.allclose(sssp_distances(graph, graph.weights, source), dist, rtol=1e-9, atol=1e-9))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--graphs", default=None)
    ap.add_argument("--hops", default="16,8")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--local-caps", default="",
                    help="items a block's round buffer holds (frontier_loop.LOCAL_CAP), each value in turn")
    ap.add_argument("--configs", default="256:d",
                    help="block:max_registers pairs (d: the kernel's default cap, 0: the compiler's choice)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    graphs = args.graphs or ("delaunay_w:4096,grid_w:40" if args.quick else "delaunay_w:1048576,grid_w:1000")
    hops_list = [int(h) for h in args.hops.split(",")]
    local_caps = [int(c) for c in args.local_caps.split(",")] if args.local_caps else [None]
    if args.local_caps:
        os.environ["GRAPH_KERNELS_KERNEL_CACHE"] = "off"   # compile each cap here, whatever the cache keys on
    configs = []
    for pair in args.configs.split(","):
        block, cap = pair.split(":")
        configs.append((int(block), {} if cap == "d" else {"max_registers": int(cap)}))
    out = {"environment": environment("cuda" if not on_simulator() else "sim"), "runs": []}
    profiled = None
    traces = {}
    for spec in graphs.split(","):
        kind, size = spec.split(":")
        graph = make_graph(kind, int(size))
        root = graph500_roots(graph, 8)[0]
        target = "sim" if on_simulator() else "cuda"
        delta = auto_delta(graph, root, target)
        view = upload_csr(graph)
        for local_cap, hops, (block, cap) in ((lc, h, c) for lc in local_caps for h in hops_list for c in configs):
            result = cuda.device_array(graph.n_rows, np.float64)
            if local_cap is not None and local_cap != frontier_loop.LOCAL_CAP:
                frontier_loop.LOCAL_CAP = local_cap              # in the kernel's closure: a new kernel
                frontier_loop.frontier_loop_kernel.cache_clear()
            plain = FrontierLoopTraversal("sssp", "csr", weighted=True, delta=delta, hops=hops, block=block,
                                          **cap)
            t = timed(functools.partial(plain.run, view, root, result))
            run = plain.last_run
            ok = check(graph, root, result.copy_to_host())
            traced = FrontierLoopTraversal("sssp", "csr", weighted=True, delta=delta, hops=hops, block=block,
                                           trace_levels=LEVELS, **cap)
            traced.run(view, root, result)
            cuda.synchronize()
            stamps = traced.trace[:traced.last_run["levels"]]
            ph = phases(stamps, len(stamps))
            label = f"block{block}-regs{cap.get('max_registers', 'd')}-cap{frontier_loop.LOCAL_CAP}"
            traces[f"{graph.name}/hops{hops}/{label}"] = stamps
            row = {"graph": graph.name, "root": root, "delta": delta, "hops": hops, "block": block,
                   "local_cap": frontier_loop.LOCAL_CAP,
                   "max_registers": cap.get("max_registers"), "grid": plain.grid, "registers": registers(plain),
                   "ms": t * 1e3, "verified": ok, "run": run, "phases": ph}
            out["runs"].append(row)
            print(f"{graph.name} hops {hops} delta {delta:g} {label} grid {plain.grid} regs {registers(plain)}: "
                  f"{t * 1e3:.3f} ms verified={ok} levels {run['levels']} "
                  f"relax/edge {run['relaxations_per_edge']:.2f} | traced: relax {ph['relax_us']:.0f} us, rounds "
                  f"{ph['rounds_us']:.0f} us, advances {ph['advance_us']:.0f} us, syncs {ph['rest_us']:.0f} us; "
                  f"rounds on the critical path "
                  f"{ph['critical_rounds']}, a block's mean {ph['mean_rounds']:.0f}; "
                  f"{ph['us_per_critical_round']:.2f} us a critical round; a block's round "
                  f"{ph['us_per_round_median']:.2f} us "
                  f"(p90 {ph['us_per_round_p90']:.2f}); blocks with half the level's max rounds "
                  f"{ph['blocks_with_half_the_max_rounds_median']:.2f}", flush=True)
            if args.profile and profiled is None:
                profiled = (plain, view, root, result)
    if profiled is not None and not on_simulator():
        plain, view, root, result = profiled
        cuda.synchronize()
        cuda.profile_start()
        plain.run(view, root, result)
        cuda.synchronize()
        cuda.profile_stop()
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1, default=str))
        np.savez_compressed(Path(args.out).with_suffix(".npz"), **traces)   # the raw stamps, levels run
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
