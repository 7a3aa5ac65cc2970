#!/usr/bin/env python3
"""Slotted pages: build time and memory against page size, host edit throughput, and the
device sync after edit batches against a full rebuild + upload (the thesis' argument).

    python3 benchmarks/bench_slotted.py                    # host figures + sync on the simulator
    python3 benchmarks/bench_slotted.py --target cuda      # the same with a real GPU
    python3 benchmarks/bench_slotted.py --target cpu       # host figures only
    python3 benchmarks/bench_slotted.py --quick            # small inputs (about a minute)

Sections:

1. *build*: ``SlottedGraph.from_csr`` on real graphs (tests/data) and generated ones (G(n, m)
   with 10 million edges, R-MAT scale 18) for page sizes 256..4096: median build time, pages,
   memory (pages + weights + index) against CSR, mean fill, large lists; also ``to_csr`` time.
2. *edits*: single ``add_edge`` / ``remove_edge`` calls and batch ``add_edges`` /
   ``remove_edges`` on the host, in edits per second (an undirected edit writes two entries).
3. *sync*: after a batch of random edits touching 0.01 %, 0.1 % and 1 % of the edges (half
   removals of existing edges, half new edges), ``DeviceMirror.sync()`` with each strategy
   (runs, span, staged, auto; the same dirty set each time) against ``upload_full()`` and
   ``rebuild_csr_and_upload()``: pages, bytes, copies, milliseconds. Under the CUDA
   simulator the bytes are exact but the times are host memory copies (labelled), and the
   staged strategy (a kernel) is left out.

Timings: ``time.perf_counter``; every numba function is compiled (or loaded from numba's
cache) by a warm-up before anything is timed. Results go to
``benchmarks/results/slotted-<device>[-quick].json``; a summary is printed last.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(ROOT))
from _common import say, slug  # noqa: E402


def _parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--target", choices=("sim", "cuda", "cpu"), default="sim",
                   help="where the device mirror lives (cpu: skip the sync section)")
    p.add_argument("--quick", action="store_true", help="small inputs, fewer repeats")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results", help="results folder")
    return p.parse_args(argv)


ARGS = _parse_args()
if ARGS.target == "sim":
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"       # before anything imports numba.cuda
elif ARGS.target == "cuda":
    os.environ.pop("NUMBA_ENABLE_CUDASIM", None)

import numpy as np  # noqa: E402

from kernels.graph.cleanup import drop_duplicates, duplicate_mask  # noqa: E402
from kernels.graph.csr import CSRGraph  # noqa: E402
from kernels.graph.generators import gnm, rmat  # noqa: E402
from kernels.graph.io import read_graph  # noqa: E402
from kernels.graph.slotted import SlottedGraph, square_graph_form, summary  # noqa: E402

PAGE_SIZES = [256, 512, 1024, 2048, 4096]
REAL = ["delaunay_n15.mtx", "as-caida20071105.mtx", "ca-HepTh.mtx", "fe_4elt2.mtx", "bcsstk13.mtx"]
FULL = {"gnm": (1_000_000, 10_000_000), "rmat_scale": 18, "repeat": 3, "single_edits": 20_000,
        "batch_edits": 200_000, "edit_page_sizes": [256, 1024], "sync_page_sizes": [256, 1024],
        "fractions": [0.0001, 0.001, 0.01]}
QUICK = {"gnm": (100_000, 1_000_000), "rmat_scale": 14, "repeat": 2, "single_edits": 5_000,
         "batch_edits": 20_000, "edit_page_sizes": [1024], "sync_page_sizes": [1024],
         "fractions": [0.0001, 0.001, 0.01]}


def data_file(name: str) -> Path:
    base = ROOT / "tests" / "data" / name
    return base if base.exists() else base.with_name(name + ".gz")


def graph_form(g: CSRGraph) -> CSRGraph:
    g = square_graph_form(g)
    return drop_duplicates(g) if duplicate_mask(g).any() else g


def timed(fn, repeat: int):
    """(median seconds, last result) over ``repeat`` calls."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def warm_up() -> None:
    """Compile (or load from cache) every numba function on a tiny graph, all code paths."""
    g = SlottedGraph.from_csr(CSRGraph.from_edges(40, np.arange(39), np.arange(1, 40), directed=False,
                                                  both_directions=True), page_size=16)
    for directed in (False, True):
        h = SlottedGraph(16, directed=directed)
        for _ in range(30):
            h.add_vertex()
        h.add_edges(np.zeros(20, dtype=np.int64), np.arange(1, 21))
        h.add_edge(1, 2)
        h.has_edge(1, 2)
        h.remove_edge(1, 2)
        h.remove_edges(np.zeros(5, dtype=np.int64), np.arange(1, 6))
        h.remove_vertex(3)
        h.add_vertex(vertex=3)
        h.to_csr()
    g.to_csr()


def edit_pairs(g: SlottedGraph, csr: CSRGraph, k: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """k distinct vertex pairs that are not edges yet (and not loops)."""
    n = csr.n_rows
    us, vs, seen = [], [], set()
    while len(us) < k:
        a = rng.integers(0, n, 2 * k)
        b = rng.integers(0, n, 2 * k)
        for u, v in zip(a.tolist(), b.tolist(), strict=True):
            key = (min(u, v), max(u, v)) if not csr.directed else (u, v)
            if u == v or key in seen or g.has_edge(u, v) or g.has_edge(v, u):
                continue
            seen.add(key)
            us.append(u)
            vs.append(v)
            if len(us) == k:
                break
    return np.array(us, dtype=np.int64), np.array(vs, dtype=np.int64)


def existing_pairs(csr: CSRGraph, k: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """k distinct existing edges (one direction each for an undirected graph)."""
    rows = csr.row_of_entry()
    mask = rows <= csr.indices if not csr.directed else np.ones(csr.nnz, dtype=bool)
    pick = rng.choice(np.flatnonzero(mask), size=min(k, int(mask.sum())), replace=False)
    return rows[pick].astype(np.int64), csr.indices[pick].astype(np.int64)


# ---- sections ---------------------------------------------------------------------------
def bench_build(graphs: dict, cfg: dict) -> list[dict]:
    rows = []
    for name, csr in graphs.items():
        for size in PAGE_SIZES:
            seconds, g = timed(lambda csr=csr, size=size: SlottedGraph.from_csr(csr, page_size=size),
                               cfg["repeat"])
            to_csr_seconds, back = timed(g.to_csr, 1)
            assert back.same_structure(csr), f"{name}: to_csr differs"
            info = summary(g)
            rows.append({"graph": name, "vertices": csr.n_rows, "entries": csr.nnz, "page_size": size,
                         "build_seconds": seconds, "to_csr_seconds": to_csr_seconds, "pages": g.num_pages,
                         "memory_bytes": g.memory_bytes, "csr_bytes": csr.memory_bytes(),
                         "mean_fill": info["fill"]["mean"], "large_lists": info["large_lists"]["count"],
                         "large_list_pages": info["large_lists"]["pages"]})
            say(f"  build {name:<22} P={size:<5} {seconds * 1e3:9.1f} ms  {g.num_pages:>8,} pages  "
                f"{g.memory_bytes / 2**20:8.1f} MiB ({g.memory_bytes / csr.memory_bytes():.2f} x CSR)  "
                f"fill {info['fill']['mean']:.0%}  large lists {info['large_lists']['count']}")
            del g, back
    return rows


def bench_edits(graphs: dict, cfg: dict) -> list[dict]:
    rows = []
    rng = np.random.default_rng(7)
    for name, csr in graphs.items():
        for size in cfg["edit_page_sizes"]:
            g = SlottedGraph.from_csr(csr, page_size=size)
            n_single = cfg["single_edits"]
            us, vs = edit_pairs(g, csr, n_single + cfg["batch_edits"], rng)
            su, sv = us[:n_single].tolist(), vs[:n_single].tolist()
            t0 = time.perf_counter()
            for u, v in zip(su, sv, strict=True):
                g.add_edge(u, v)
            single_add = n_single / (time.perf_counter() - t0)
            t0 = time.perf_counter()
            for u, v in zip(su, sv, strict=True):
                g.remove_edge(u, v)
            single_remove = n_single / (time.perf_counter() - t0)
            bu, bv = us[n_single:], vs[n_single:]
            before = g.case_counts
            t0 = time.perf_counter()
            g.add_edges(bu, bv)
            batch_add = len(bu) / (time.perf_counter() - t0)
            cases = {k: v - before[k] for k, v in g.case_counts.items() if v != before[k]}
            t0 = time.perf_counter()
            g.remove_edges(bu, bv)
            batch_remove = len(bu) / (time.perf_counter() - t0)
            assert g.num_entries == csr.nnz
            row = {"graph": name, "page_size": size, "single_add_per_s": single_add,
                   "single_remove_per_s": single_remove, "batch_add_per_s": batch_add,
                   "batch_remove_per_s": batch_remove, "batch_size": len(bu), "single_count": n_single,
                   "batch_add_cases": cases}
            rows.append(row)
            say(f"  edits {name:<22} P={size:<5} single add {single_add:>10,.0f}/s  remove "
                f"{single_remove:>10,.0f}/s   batch add {batch_add:>11,.0f}/s  remove {batch_remove:>11,.0f}/s")
    return rows


def bench_sync(graphs: dict, cfg: dict) -> list[dict]:
    from kernels.graph.device import DeviceMirror, _runs
    from kernels.graph.slotted.layout import M_INDEX_DIRTY

    # the simulator runs one Python thread per CUDA thread: the scatter kernel is for GPUs
    strategies = ["runs", "span", "auto"] if ARGS.target == "sim" else ["runs", "span", "staged", "auto"]
    if ARGS.target == "cuda":                           # compile the scatter kernel before timing
        tiny = SlottedGraph.from_csr(CSRGraph.from_edges(40, np.arange(39), np.arange(1, 40)), page_size=16)
        warm = DeviceMirror(tiny)
        tiny.add_edges(np.arange(0, 38, 2), np.arange(2, 40, 2))
        warm.sync(strategy="staged")
    rows = []
    rng = np.random.default_rng(11)
    for name, csr in graphs.items():
        for size in cfg["sync_page_sizes"]:
            for fraction in cfg["fractions"]:
                g = SlottedGraph.from_csr(csr, page_size=size)
                mirror = DeviceMirror(g)
                full = mirror.upload_full()                  # second upload: allocation warm
                k = max(2, int(round(fraction * csr.num_edges)))
                ru, rv = existing_pairs(csr, k // 2, rng)
                au, av = edit_pairs(g, csr, k - len(ru), rng)
                t0 = time.perf_counter()
                g.remove_edges(ru, rv)
                g.add_edges(au, av)
                edit_seconds = time.perf_counter() - t0
                # the same dirty set synced with each strategy (flags restored in between)
                dirty, index_dirty = g._dirty.copy(), g.index_dirty
                by_strategy = {}
                for strategy in strategies:
                    g._dirty[:] = dirty
                    g._meta[M_INDEX_DIRTY] = int(index_dirty)
                    by_strategy[strategy] = mirror.sync(strategy=strategy)
                    problems = mirror.differences()
                    assert not problems, problems[:5]
                sync = by_strategy["auto"]
                csr_up = mirror.rebuild_csr_and_upload()
                row = {"graph": name, "page_size": size, "fraction": fraction, "edits": k,
                       "edit_seconds": edit_seconds, "sync": {s: r.as_dict() for s, r in by_strategy.items()},
                       "full_upload": full.as_dict(), "rebuild_csr_upload": csr_up.as_dict(),
                       "bytes_ratio_csr_over_sync": csr_up.bytes / max(sync.bytes, 1),
                       "auto_chose": sync.strategy,
                       "time_ratio_csr_over_auto_sync": csr_up.seconds / max(sync.seconds, 1e-9)}
                rows.append(row)
                times = "  ".join(f"{s} {r.milliseconds:.2f} ms/{r.copies}" for s, r in by_strategy.items()
                                  if s != "auto")
                n_runs = len(_runs(np.flatnonzero(dirty)))
                row["dirty_pages"], row["dirty_runs"] = int(dirty.sum()), n_runs
                say(f"  sync  {name:<22} P={size:<5} {fraction:>7.2%} ({k:>7,} edits): {n_runs:,}"
                    f" runs of {int(dirty.sum()):,} pages, {times} (ms/copies) | auto: {sync.strategy} "
                    f"{sync.bytes / 2**20:.2f} MiB {sync.milliseconds:.2f} ms | rebuild+upload CSR "
                    f"{csr_up.bytes / 2**20:8.2f} MiB {csr_up.milliseconds:8.2f} ms (rebuild "
                    f"{csr_up.rebuild_seconds * 1e3:.1f}) | full pool {full.bytes / 2**20:8.2f} MiB "
                    f"{full.milliseconds:8.2f} ms")
                del mirror, g
    return rows


def device_description(target: str) -> dict:
    from kernels.measure.targets import probe_gpu

    gpu = probe_gpu() if target == "cuda" else None
    return {"target": target, "gpu": gpu.name if gpu else None,
            "gpu_driver": gpu.driver_version if gpu else None,
            "host": platform.node(), "cpu": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "numba": __import__("numba").__version__}


def main() -> int:
    cfg = QUICK if ARGS.quick else FULL
    say(f"slotted-page benchmark: target {ARGS.target}{' (quick)' if ARGS.quick else ''}")
    t0 = time.perf_counter()
    warm_up()
    say(f"warm-up (compile or load numba cache): {time.perf_counter() - t0:.1f} s")
    real = {} if ARGS.quick else {name.split(".")[0]: graph_form(read_graph(data_file(name))) for name in REAL}
    if ARGS.quick:
        real = {"delaunay_n15": graph_form(read_graph(data_file("delaunay_n15.mtx")))}
    n, m = cfg["gnm"]
    t0 = time.perf_counter()
    generated = {f"gnm_n{n}_m{m}": gnm(n, m, seed=1), f"rmat_s{cfg['rmat_scale']}": rmat(cfg["rmat_scale"], 16, seed=1)}
    say(f"generated inputs in {time.perf_counter() - t0:.1f} s: "
        + ", ".join(f"{k} ({g.nnz:,} entries)" for k, g in generated.items()))

    results = {"benchmark": "slotted", "quick": ARGS.quick, "device": device_description(ARGS.target),
               "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "clock": "time.perf_counter; numba compiled before timing",
               "sync_clock": ("CUDA simulator: host copies, not device transfers" if ARGS.target == "sim"
                              else "perf_counter around copies + cuda.synchronize()")}
    say("\n[1] build time and memory against page size")
    results["build"] = bench_build({**real, **generated}, cfg)
    say("\n[2] host edit throughput")
    results["edits"] = bench_edits(generated, cfg)
    if ARGS.target != "cpu":
        say(f"\n[3] device sync after edit batches ({results['sync_clock']})")
        results["sync"] = bench_sync(generated, cfg)

    ARGS.out.mkdir(parents=True, exist_ok=True)
    device = results["device"]["gpu"] or f"{ARGS.target}-{platform.node()}"
    path = ARGS.out / f"slotted-{slug(device)}{'-quick' if ARGS.quick else ''}.json"
    path.write_text(json.dumps(results, indent=2))
    say(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
