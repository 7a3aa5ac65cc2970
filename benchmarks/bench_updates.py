#!/usr/bin/env python3
"""Batch edge updates on slotted pages: update rate against batch size, device path and host
path, on R-MAT scale 20 and 22 and a road-like graph (Delaunay), with a BFS rerun after every
batch (issue 27; docs/updates.md).

    python3 benchmarks/bench_updates.py                   # full: about 4 minutes on one H100
    python3 benchmarks/bench_updates.py --quick           # small graphs and batches
    python3 benchmarks/bench_updates.py --target sim --quick   # the CUDA simulator, tiny inputs
    python3 benchmarks/bench_updates.py --graphs rmat20 --max-size 1000000   # a part of the full run

For every graph and batch size (10^2 ... 10^7 edges, at most the graph's edge count) four
batches run on each path, in this order: *insert* (new edges), *delete* (the same edges),
*mixed* (half deletions of stored edges, half new edges) and the mixed batch's inverse, so the
graph returns to its edge set. The device path is ``DeviceUpdater.apply``: kernels on the
mirror's pages, timed end to end (batch upload, launches, the one read-back, a final
synchronize; ``perf_counter``), then replayed on the host and checked page for page against
it. The host path (``SlottedGraph.apply_updates``) runs on a second copy, timed with
``perf_counter``, and its pages are compared word for word with the device path's host copy
after every batch. After each device batch BFS (``gpu-slotted``, source 0) reruns on the
device pages (wall time around the call and a synchronize); its levels are verified against
SciPy after the insert batch of the smallest and the largest size. Batches up to 10^6 edges
repeat the cycle (``reps``, 3-5) and report the median; each row also keeps its first batch's
time (``first_s``): a size's first batch grows the updater's device buffers, a cost a user pays
once, which with one batch a size used to be read as the rate (docs/updates.md, "What is timed").

Output: ``benchmarks/results/updates/updates-<device>[-quick].json`` and ``.svg`` (rate and BFS
time against batch size, one column per graph); the goal lines (device >= 1e8 updates/s for
batches >= 1e5, device batches of 1e3 <= 1 ms, host >= 1e7 updates/s on big batches) last.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import textwrap
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(ROOT))
from _common import print_claims, say, shown_path, slug  # noqa: E402

KINDS = ("insert", "delete", "mixed")
FULL = {"graphs": [("rmat20", "rmat", {"scale": 20, "edge_factor": 16, "seed": 1}),
                   ("rmat22", "rmat", {"scale": 22, "edge_factor": 16, "seed": 1}),
                   ("delaunay20", "delaunay", {"n": 1 << 20, "seed": 1})],
        "sizes": [10 ** k for k in range(2, 8)], "reps": {100: 5, 1000: 5, 10_000: 3, 100_000: 3, 1_000_000: 3}}
QUICK = {"graphs": [("rmat16", "rmat", {"scale": 16, "edge_factor": 16, "seed": 1}),
                    ("delaunay16", "delaunay", {"n": 1 << 16, "seed": 1})],
         "sizes": [10 ** k for k in range(2, 6)], "reps": {100: 3, 1000: 3, 10_000: 3, 100_000: 3}}
SIM = {"graphs": [("rmat7", "rmat", {"scale": 7, "edge_factor": 4, "seed": 1}),
                  ("delaunay7", "delaunay", {"n": 128, "seed": 1})],
       "sizes": [10, 30], "reps": {}}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--target", choices=("cuda", "sim"), default=None,
                   help="real GPU or the CUDA simulator (default: cuda with a GPU, else sim)")
    p.add_argument("--quick", action="store_true", help="small graphs and batches (a minute or two)")
    p.add_argument("--page-size", type=int, default=None, help="words per page (default: by the graph's size)")
    p.add_argument("--graphs", default=None,
                   help="comma-separated graph names of the chosen set (full: rmat20,rmat22,delaunay20; "
                        "quick: rmat16,delaunay16); the results file names them")
    p.add_argument("--max-size", type=int, default=None, help="largest batch size (default: the set's, 10^7 full)")
    p.add_argument("--device-path", choices=("auto", "compact", "full"), default="auto",
                   help="the device path for every batch: auto (compact up to COMPACT_MAX_ENTRIES entries, "
                        "then full-graph), or one of them forced, to measure where they cross (compact: "
                        "batches of at most COMPACT_LIMIT_ENTRIES / 2 edges)")
    p.add_argument("--compact-launch", choices=("fused", "split"), default="fused",
                   help="the compact path as one cooperative launch (fused, the default) or its split "
                        "launches with a read-back of the totals before writing (split), for a side-by-side run")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "updates",
                   help="results folder (default benchmarks/results/updates)")
    return p.parse_args(argv)


def device_description(target: str) -> dict:
    from kernels.measure.targets import probe_gpu

    gpu = probe_gpu() if target == "cuda" else None
    return {"target": target, "gpu": gpu.name if gpu else None,
            "gpu_driver": gpu.driver_version if gpu else None, "host": platform.node(),
            "cpu_count": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__,
            "numba": __import__("numba").__version__}


class Bfs:
    """BFS (gpu-slotted, source 0) on a mirror's pages, compiled once, timed per call."""

    def __init__(self, page_size: int, target: str):
        from kernels.algorithms.traversal.gpu_exec import compile_like, output_array, traversal
        from kernels.operators.launch import Workspace

        self.params = {"balance": "lb", "block": 256 if target == "cuda" else 32, "page_size": page_size,
                       "loop": "device" if target == "cuda" else "host", "direction": "push"}
        if target == "cuda":
            compile_like("bfs", "slotted", self.params, directed=False, weighted=False)
        self.runner = traversal("bfs", "slotted", self.params, weighted=False, workspace=Workspace())
        self.output_array = output_array

    def run(self, mirror) -> tuple[float, np.ndarray]:
        from numba import cuda

        from kernels.operators.views import slotted_view

        view = slotted_view(mirror)
        out = self.output_array("bfs", view.n_vertices)
        cuda.synchronize()
        t0 = time.perf_counter()
        self.runner.run(view, 0, out)
        cuda.synchronize()
        return time.perf_counter() - t0, out.copy_to_host()[:view.n_vertices]


def bfs_verified(levels: np.ndarray, g) -> bool:
    from kernels.algorithms.registry import get_family
    from kernels.algorithms.traversal.reference import bfs_levels

    return bool(get_family("bfs").verify(levels, bfs_levels(g.to_csr(), 0), None, {}).ok)


def batches_for(csr, size: int, rng, keys, edges) -> list[tuple[str, dict]]:
    """The four batches of one size (see the module): insert, delete, mixed, mixed inverse."""
    from kernels.graph.update_batches import existing_edges, new_edges

    iu, iv = new_edges(csr, size, rng, keys=keys)
    half = size // 2
    du, dv = existing_edges(csr, half, rng, edges=edges)
    excl = np.sort(iu * max(csr.n_rows, 1) + iv)
    mu, mv = new_edges(csr, size - half, rng, keys=keys, exclude=excl)
    return [("insert", {"insert": (iu, iv)}), ("delete", {"delete": (iu, iv)}),
            ("mixed", {"delete": (du, dv), "insert": (mu, mv)}),
            ("mixed-inverse", {"delete": (mu, mv), "insert": (du, dv)})]


def same_pages(a, b, pages) -> bool:
    """The two structures agree on the index and on the listed physical pages (those either
    path wrote in this batch; the rest were equal before it)."""
    pa, _, ia = a.host_arrays()
    pb, _, ib = b.host_arrays()
    if not np.array_equal(ia, ib) or len(pa) != len(pb):
        return False
    P = a.page_size
    pages = np.asarray(pages, dtype=np.int64)
    return bool(np.array_equal(pa.reshape(-1, P)[pages], pb.reshape(-1, P)[pages]))


def bench_graph(name: str, csr, cfg: dict, args, target: str, log=None) -> dict:
    from kernels.graph.device import DeviceMirror
    from kernels.graph.page_size import page_size_for
    from kernels.graph.slotted import SlottedGraph
    from kernels.graph.update_batches import edge_keys, stored_edges
    from kernels.operators.device_updates import DeviceUpdater

    page_size = args.page_size or page_size_for(csr)
    t0 = time.perf_counter()
    g_dev = SlottedGraph.from_csr(csr, page_size=page_size)
    g_host = g_dev.copy()
    mirror = DeviceMirror(g_dev)
    updater = DeviceUpdater(mirror)
    bfs = Bfs(page_size, target)
    say(f"  built and uploaded {g_dev.num_pages:,} pages of {page_size} words in {time.perf_counter() - t0:.1f} s")
    rng = np.random.default_rng(7)
    keys = edge_keys(csr)
    edges = stored_edges(csr)
    rows = []
    sizes = [s for s in cfg["sizes"] if s <= g_dev.num_edges]
    for size in sizes:
        reps = cfg["reps"].get(size, 1)
        samples: dict[tuple[str, str], list] = {}
        flows: dict[str, list] = {}                                  # how each device batch ran
        bfs_ok = None
        for rep in range(reps):
            for kind, batch in batches_for(csr, size, rng, keys, edges):
                result = updater.apply(**batch)                      # device, replayed, checked
                flows.setdefault(kind.replace("-inverse", ""), []).append(updater.last_flow)
                bfs_s, levels = bfs.run(mirror)
                host = g_host.apply_updates(**batch)
                written = np.union1d(result.report.pages_touched, host.pages_touched)
                if not same_pages(g_dev, g_host, written):
                    raise RuntimeError(f"{name}: host path and device path differ after a {kind} batch of {size}")
                if kind == "insert" and rep == 0 and size in (sizes[0], sizes[-1]):
                    bfs_ok = bfs_verified(levels, g_dev)
                base = kind.replace("-inverse", "")
                samples.setdefault((base, "gpu"), []).append((result.report, bfs_s, result))
                samples.setdefault((base, "host"), []).append((host, None, None))
        for (kind, path), got in samples.items():
            secs = [r.seconds for r, _, _ in got]
            rate = [r.rate for r, _, _ in got]
            row = {"graph": name, "size": size, "kind": kind, "path": path,
                   "seconds": statistics.median(secs), "rate": statistics.median(rate),
                   "samples": len(got), "first_s": secs[0],
                   "pages_touched": int(np.median([len(r.pages_touched) for r, _, _ in got])),
                   "pages_opened": int(sum(r.pages_opened for r, _, _ in got)),
                   "pages_freed": int(sum(r.pages_freed for r, _, _ in got)),
                   "verified": True, "clock": got[0][0].clock}
            if path == "gpu":
                row["bfs_s"] = statistics.median([b for _, b, _ in got])
                row["host_replay_s"] = statistics.median([x.host.seconds for _, _, x in got])
                row["bfs_verified"] = bfs_ok
                row["flows"] = {f: flows[kind].count(f) for f in sorted(set(flows[kind]))}
            rows.append(row)
            if log is not None:               # each line as it comes: a run cut short keeps what it measured
                log.write(json.dumps(row) + "\n")
                log.flush()
            say(f"  {size:>10,} {kind:<7} {path:<5} {row['rate']:12.3g} updates/s  "
                f"{row['seconds'] * 1e3:9.3f} ms  pages {row['pages_touched']:>8,}"
                + (f"  bfs {row['bfs_s'] * 1e3:8.2f} ms" if path == "gpu" else ""))
    final = not mirror.differences()
    g_dev.check_invariants()
    return {"vertices": g_dev.num_vertices, "edges": g_dev.num_edges, "entries": g_dev.num_entries,
            "page_size": page_size, "pages": g_dev.num_pages, "rows": rows, "final_pool_identical": final}


def claims(results: dict) -> list[dict]:
    out = []
    for name, graph in results["graphs"].items():
        rows = graph["rows"]
        big = [r for r in rows if r["path"] == "gpu" and r["size"] >= 100_000]
        if big:
            worst = min(r["rate"] for r in big)
            out.append({"graph": name, "claim": "device path >= 1e8 updates/s for batches >= 1e5",
                        "met": worst >= 1e8, "ratio": worst / 1e8, "note": f"(slowest {worst:.3g}/s)"})
        small = [r for r in rows if r["path"] == "gpu" and r["size"] == 1000]
        if small:
            worst = max(r["seconds"] for r in small)
            out.append({"graph": name, "claim": "device batches of 1e3 <= 1 ms end to end",
                        "met": worst <= 1e-3, "ratio": 1e-3 / worst, "note": f"(slowest {worst * 1e3:.3f} ms)"})
        host = [r for r in rows if r["path"] == "host"]
        if host:
            largest = max(r["size"] for r in host)
            best = min(r["rate"] for r in host if r["size"] == largest)
            out.append({"graph": name, "claim": f"host path >= 1e7 updates/s (batches of {largest:,})",
                        "met": best >= 1e7, "ratio": best / 1e7, "note": f"(slowest kind {best:.3g}/s)"})
    return out


def write_figure(results: dict, path: Path) -> None:
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    graphs = list(results["graphs"].items())
    fig = Figure(figsize=(4.2 * max(len(graphs), 1), 7.0))
    FigureCanvasSVG(fig)
    styles = {"insert": "o-", "delete": "s--", "mixed": "^:"}
    colours = {"gpu": "tab:green", "host": "tab:blue"}
    for col, (name, graph) in enumerate(graphs):
        ax = fig.add_subplot(2, len(graphs), col + 1)
        bx = fig.add_subplot(2, len(graphs), len(graphs) + col + 1)
        for way in ("gpu", "host"):
            for kind in KINDS:
                rows = sorted((r for r in graph["rows"] if r["path"] == way and r["kind"] == kind),
                              key=lambda r: r["size"])
                if rows:
                    ax.plot([r["size"] for r in rows], [r["rate"] for r in rows], styles[kind],
                            color=colours[way], label=f"{'device' if way == 'gpu' else 'host'} {kind}")
                if way == "gpu" and rows:
                    bx.plot([r["size"] for r in rows], [r["bfs_s"] * 1e3 for r in rows], styles[kind],
                            color="tab:red", label=f"BFS after {kind}")
        for a in (ax, bx):
            a.set_xscale("log")
            a.set_yscale("log")
            a.grid(True, which="major", alpha=0.3)
            a.set_xlabel("batch size (edges)")
        ax.axhline(1e8, color="grey", lw=0.8, ls="--")
        ax.set_title(f"{name}: {graph['edges']:,} edges, P={graph['page_size']}", fontsize=9)
        ax.set_ylabel("edge updates / s")
        bx.set_ylabel("BFS rerun after the batch (ms)")
        if col == 0:
            ax.legend(fontsize=7)
            bx.legend(fontsize=7)
    device = results["device"]["gpu"] or results["device"]["target"]
    # wrapped to the figure's width (one column of graphs holds about 48 characters at this size)
    title = textwrap.wrap(f"Batch updates on slotted pages ({device}; rates end to end, batch upload included)",
                          width=48 * max(len(graphs), 1))
    fig.suptitle("\n".join(title), fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.03 * len(title)))
    fig.savefig(path, format="svg")


def warm_up(target: str) -> None:
    """Compile both paths on a tiny graph so that no timed batch compiles."""
    from kernels.graph.csr import CSRGraph
    from kernels.graph.device import DeviceMirror
    from kernels.graph.slotted import SlottedGraph
    from kernels.operators import device_updates
    from kernels.operators.device_updates import DeviceUpdater

    tiny = CSRGraph.from_edges(6, [0, 1, 2, 3], [1, 2, 3, 4], directed=False, both_directions=True)
    g = SlottedGraph.from_csr(tiny, page_size=16)
    updater = DeviceUpdater(DeviceMirror(g))
    updater.apply(insert=([0], [5]), delete=([0], [1]))           # the compact path (small batches)
    threshold = device_updates.COMPACT_MAX_ENTRIES
    device_updates.COMPACT_MAX_ENTRIES = -1                        # the full-graph path (large ones)
    try:
        updater.apply(insert=([0], [1]), delete=([0], [5]))
    finally:
        device_updates.COMPACT_MAX_ENTRIES = threshold
    g.copy().apply_updates(insert=([0], [5]), delete=([0], [1]))


def main(argv=None) -> int:
    args = parse_args(argv)
    from kernels.graph.generators.registry import generate
    from kernels.measure.targets import activate, default_gpu_target

    target = args.target or default_gpu_target()
    if target not in ("cuda", "sim"):
        say("bench_updates: no GPU and no simulator target; use --target sim")
        return 2
    activate(target)
    cfg = dict(SIM if target == "sim" else (QUICK if args.quick else FULL))
    if args.graphs:
        wanted = args.graphs.split(",")
        unknown = sorted(set(wanted) - {name for name, _, _ in cfg["graphs"]})
        if unknown:
            say(f"bench_updates: unknown graph(s) {', '.join(unknown)}; this set has "
                f"{', '.join(name for name, _, _ in cfg['graphs'])}")
            return 2
        cfg["graphs"] = [g for g in cfg["graphs"] if g[0] in wanted]
    if args.max_size:
        cfg["sizes"] = [s for s in cfg["sizes"] if s <= args.max_size]
    from kernels.operators import device_updates

    device_updates.COMPACT_FUSED = args.compact_launch == "fused"
    if args.device_path == "compact":
        # an undirected edge is two entries; the compact path takes no more than its limit
        cfg["sizes"] = [s for s in cfg["sizes"] if 2 * s <= device_updates.COMPACT_LIMIT_ENTRIES]
    started = time.perf_counter()
    say(f"batch-update benchmark: target {target}{' (quick)' if args.quick else ''}")
    t0 = time.perf_counter()
    warm_up(target)
    say(f"warm-up (compile or load caches): {time.perf_counter() - t0:.1f} s")
    if args.device_path == "full":
        device_updates.COMPACT_MAX_ENTRIES = -1
    elif args.device_path == "compact":
        device_updates.COMPACT_MAX_ENTRIES = device_updates.COMPACT_LIMIT_ENTRIES   # sizes capped above
    from kernels.measure.environment import environment

    # "environment" is every record's: the device and the exact code (gpu-graph-explorer's version)
    results = {"benchmark": "updates", "quick": bool(args.quick), "max_size": args.max_size,
               "device": device_description(target),
               "environment": environment(target),
               "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "graphs": {},
               "device_path": args.device_path, "compact_launch": args.compact_launch,
               "protocol": __doc__.split("\n\n")[2]}
    args.out.mkdir(parents=True, exist_ok=True)
    device = slug(results["device"]["gpu"] or f"{target}-{platform.node()}")
    part = "-" + "-".join(name for name, _, _ in cfg["graphs"]) if args.graphs else ""
    part += "" if args.device_path == "auto" else f"-{args.device_path}"
    base = args.out / f"updates-{device}{'-quick' if args.quick else ''}{part}"
    base.with_suffix(".jsonl").write_text("")
    for name, kind, options in cfg["graphs"]:
        t0 = time.perf_counter()
        csr = generate(kind, **options)
        say(f"\n{name}: {csr.n_rows:,} vertices, {csr.nnz:,} entries (generated in {time.perf_counter() - t0:.1f} s)")
        with base.with_suffix(".jsonl").open("a") as log:
            results["graphs"][name] = bench_graph(name, csr, cfg, args, target, log=log)
    results["claims"] = claims(results)
    results["seconds"] = time.perf_counter() - started
    base.with_suffix(".json").write_text(json.dumps(results, indent=2))
    write_figure(results, base.with_suffix(".svg"))
    say(f"\nwrote {shown_path(base.with_suffix('.json'))} and {shown_path(base.with_suffix('.svg'))} "
        f"({results['seconds']:.0f} s in all)")
    print_claims(results["claims"])
    ok = all(g["final_pool_identical"] for g in results["graphs"].values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
