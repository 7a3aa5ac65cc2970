"""Where a direction-optimizing BFS spends its levels, on CSR and on slotted pages: per-level
``globaltimer`` stamps of the frontier loop (``FrontierLoopTraversal(trace_levels=...)``,
:func:`~kernels.algorithms.traversal.frontier_loop.level_trace`), side by side for ``gpu-do``
and ``gpu-do-slotted`` on the frontier suite's graphs, with the untraced kernel time beside.

    python3 benchmarks/diag/frontier_trace.py [--quick] [OUT.json]

``--quick``: small graphs (the simulator or a smoke run).
"""
import argparse
import functools
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402
from traversal_frontier import graph500_roots, live_pages, with_weights  # noqa: E402

from kernels.algorithms.auto_rules import DO_ALPHA, DO_BETA  # noqa: E402
from kernels.algorithms.traversal.frontier_loop import (  # noqa: E402
    FrontierLoopTraversal,
    level_trace,
)
from kernels.graph.generators import delaunay, rmat  # noqa: E402
from kernels.measure.timing import time_kernel_cuda  # noqa: E402
from kernels.operators.launch import on_simulator  # noqa: E402
from kernels.operators.views import upload_csr  # noqa: E402

LEVELS = 2100


def timed(fn, repeat=7):
    """Median device seconds of ``fn``'s launch, queued behind a busy kernel (the host's launch
    cost hidden, as the suite's CUDA-graph replays hide it)."""
    if on_simulator():                   # no CUDA events there: the wall time of one run
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t
    return time_kernel_cuda(fn, repeat, 1, queued=True)[0].median_s


def registers(runner) -> int | None:
    """Registers per thread of the kernel ``runner`` last launched (None on the simulator)."""
    if on_simulator():
        return None
    per_signature = runner.last_kernel.get_regs_per_thread()
    return max(per_signature.values()) if per_signature else None


def show(key: str, run: dict, rows: list[dict]) -> None:
    steps = run.get("steps", "")
    shown = rows if len(rows) <= 16 else rows[:8] + rows[-4:]
    for r in shown:
        step = steps[r["level"]] if r["level"] < len(steps) else "?"
        print(f"   level {r['level']:4d} {step}: period {r['period']:8.1f} us  work {r['work']:8.1f}  "
              f"convert {r['convert']:7.1f}  median block {r['median_block']:8.1f}", flush=True)
    if len(rows) > 16:
        periods = np.array([r["period"] for r in rows])
        print(f"   ... {len(rows)} levels, median period {np.median(periods):.1f} us, sum {periods.sum():.0f} us",
              flush=True)


def trace_pair(graph, source: int, algorithm: str, tune: dict, caps: list[int], out: dict) -> None:
    """``gpu-do`` / ``gpu-nearfar`` on CSR and on slotted pages, at each register cap: the
    untraced time, the grid, the registers, and one traced run's levels."""
    weighted = algorithm == "sssp"
    live = live_pages(graph, weighted)
    live.sync()
    views = {"csr": upload_csr(graph if weighted else graph.with_(weights=None)), "slotted": live.view()}
    rebuild = timed(live.mirror.refresh_directory)
    out[f"{graph.name}/directory_rebuild_ms"] = rebuild * 1e3
    print(f"{graph.name}: vertex directory rebuilt in {rebuild * 1e6:.1f} us ({graph.n_rows:,} ids, "
          f"{live.mirror.num_pages:,} pages)", flush=True)
    answers = {}
    for kind, view in views.items():
        for cap in caps:
            result = cuda.device_array(graph.n_rows, np.float64 if weighted else np.int32)
            plain = FrontierLoopTraversal(algorithm, kind, weighted=weighted, max_registers=cap, **tune)
            t = timed(functools.partial(plain.run, view, source, result))
            answers[(kind, cap)] = result.copy_to_host()
            run = plain.last_run
            traced = FrontierLoopTraversal(algorithm, kind, weighted=weighted, max_registers=cap,
                                           trace_levels=LEVELS, **tune)
            traced.run(view, source, result)
            cuda.synchronize()
            rows = level_trace(traced.trace, run["levels"])
            key = f"{graph.name}/{algorithm}/{kind}/cap{cap}"
            out[key] = {"source": source, "ms": t * 1e3, "grid": plain.grid, "registers": registers(plain),
                        "run": run, "levels": rows}
            extra = (f"steps {run['steps']}" if algorithm == "bfs" else
                     f"{run['relaxations_per_edge']:.2f} relax/edge, {run['iterations']} levels")
            print(f"{key}: {t * 1e3:.3f} ms, grid {plain.grid}, registers {registers(plain)}, {extra}", flush=True)
            show(key, run, rows)
    first = next(iter(answers.values()))
    same = all(np.array_equal(first, a) if not weighted else np.allclose(first, a, rtol=1e-12, atol=0)
               for a in answers.values())
    print(f"   the same answer on every view and cap: {same}", flush=True)
    out[f"{graph.name}/{algorithm}/same"] = bool(same)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--caps", default="0,128", help="register caps to compare (0: the compiler's choice)")
    ap.add_argument("out", nargs="?")
    args = ap.parse_args()
    caps = [int(c) for c in args.caps.split(",")]
    out: dict = {}
    if args.quick:
        rm, dl = rmat(12, 16, seed=1), delaunay(1 << 12, points="jittered-grid", seed=1)
    else:
        rm, dl = rmat(22, 16, seed=1), delaunay(1 << 20, points="jittered-grid", seed=1)
    for g in (rm, dl):
        root = graph500_roots(g, 8)[0]      # the frontier suite's first root
        alpha = DO_ALPHA if g.name.startswith("rmat") else 2.0
        trace_pair(g, root, "bfs", {"alpha": alpha, "beta": DO_BETA}, caps, out)
    wdl = with_weights(dl)
    mean = float(np.mean(wdl.weights))
    trace_pair(wdl, graph500_roots(wdl, 8)[0], "sssp", {"delta": 64 * mean}, caps, out)
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
