#!/usr/bin/env python3
"""Loading speed of ``read_graph`` on 10-million-edge files (CPU only; any machine).

    python3 benchmarks/bench_load.py                 # 10 M edges, about 2 minutes on 2 cores
    python3 benchmarks/bench_load.py --edges 1000000 # quicker
    python3 benchmarks/bench_load.py --workdir /tmp/bl  # keep the inputs, reuse them next time

Generates, in a temporary directory, a uniformly random directed graph with 2^20 vertices and
``--edges`` edges and writes it with ``write_graph`` as:

* ``pattern.mtx``   Matrix Market, pattern general (one line per edge),
* ``weighted.mtx``  Matrix Market, real general (a random weight per edge),
* ``symmetric.mtx`` Matrix Market, pattern symmetric (each line becomes two entries),
* ``pattern.mtx.gz`` the first one gzip-compressed,
* ``edges.txt``     a SNAP-style edge list (read undirected: reverses added, so 2x entries),
* ``graph.npz``     the project's binary CSR format.

Each is read ``--repeat`` times with ``read_graph`` (best time reported), once more with a
progress callback to count callbacks, and once under ``tracemalloc`` for the peak memory (which
checks the per-entry factors of ``kernels.graph.io.estimate``). ``scipy.io.mmread`` on the
Matrix Market files is timed as a reference point: it is SciPy's multithreaded C++ parser
(fast_matrix_market) and returns a COO matrix, with no validation of our kind, no progress
and no cancellation. Results go to ``benchmarks/results/load.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the package
    sys.path.insert(0, str(ROOT))
import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.io  # noqa: E402
from _common import say  # noqa: E402

from kernels.graph.csr import CSRGraph  # noqa: E402
from kernels.graph.io import estimate_load, read_graph, write_graph  # noqa: E402

VERTICES = 1 << 20


def best_of(repeat: int, fn):
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), times, result


def peak_memory(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def make_inputs(directory: Path, edges: int, seed: int) -> dict[str, float]:
    """Write the benchmark files; returns the seconds each write took."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, VERTICES, edges)
    dst = rng.integers(0, VERTICES, edges)
    weights = rng.random(edges)
    directed = CSRGraph.from_edges(VERTICES, src, dst, directed=True, name="random")
    weighted = CSRGraph.from_edges(VERTICES, src, dst, weights, directed=True, name="random")
    lower = np.maximum(src, dst), np.minimum(src, dst)
    # an undirected graph with `edges` lines in its symmetric .mtx (lower triangle)
    undirected = CSRGraph.from_edges(VERTICES, *lower, directed=False, both_directions=True, name="random")
    plan = [("pattern.mtx", directed), ("weighted.mtx", weighted), ("symmetric.mtx", undirected),
            ("pattern.mtx.gz", directed), ("edges.txt", directed),
            ("graph.npz", directed)]
    written = {}
    for name, graph in plan:
        t0 = time.perf_counter()
        write_graph(graph, directory / name)
        written[name] = time.perf_counter() - t0
        say(f"  wrote {name:16s} {os.path.getsize(directory / name) / 2**20:8.1f} MiB in {written[name]:6.2f} s")
    # the edge list is read back undirected (the default), exercising the reverse-adding path
    text = (directory / "edges.txt").read_bytes().replace(b"# Directed graph", b"# Graph", 1)
    (directory / "edges.txt").write_bytes(text)
    return written


def run(edges: int, repeat: int, seed: int, out: Path, workdir: Path | None = None) -> dict:
    results = {
        "benchmark": "graph file loading (read_graph)",
        "date": datetime.date.today().isoformat(),
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
        },
        # other work on the machine skews timings: recorded so that a reader can judge
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "vertices": VERTICES,
        "edges": edges,
        "repeat": repeat,
        "cases": [],
    }
    with tempfile.TemporaryDirectory(prefix="bench_load_") as tmp:
        directory = Path(workdir or tmp)
        stamp = directory / f"inputs-{edges}-{seed}.json"
        if stamp.exists():  # --workdir: reuse the files of an earlier run with the same inputs
            write_seconds = json.loads(stamp.read_text())
            say(f"reusing the {edges:,}-edge files in {directory}")
        else:
            directory.mkdir(parents=True, exist_ok=True)
            say(f"generating {edges:,} random edges on {VERTICES:,} vertices in {directory}")
            write_seconds = make_inputs(directory, edges, seed)
            stamp.write_text(json.dumps(write_seconds))
        for name in ("pattern.mtx", "weighted.mtx", "symmetric.mtx", "pattern.mtx.gz", "edges.txt", "graph.npz"):
            path = directory / name
            seconds, all_times, graph = best_of(repeat, lambda p=path: read_graph(p))
            calls = []
            read_graph(path, progress=calls.append)
            peak = peak_memory(lambda p=path: read_graph(p))
            estimate = estimate_load(path)
            case = {
                "file": name,
                "format": estimate["format"],
                "file_mib": round(os.path.getsize(path) / 2**20, 1),
                "write_seconds": round(write_seconds[name], 2),
                "read_seconds": round(seconds, 3),
                "read_seconds_all": [round(t, 3) for t in all_times],
                "stored_entries": graph.nnz,
                "million_entries_per_second": round(graph.nnz / seconds / 1e6, 2),
                "progress_callbacks": len(calls),
                "peak_bytes": peak,
                "peak_bytes_per_entry": round(peak / max(graph.nnz, 1), 1),
                "estimated_peak_bytes": estimate["peak_bytes"],
                "csr_bytes": graph.memory_bytes(),
            }
            if name.endswith((".mtx", ".mtx.gz")):
                ref, _, _ = best_of(repeat, lambda p=path: scipy.io.mmread(str(p)))
                case["scipy_mmread_seconds"] = round(ref, 3)
            results["cases"].append(case)
            say(f"  read  {name:16s} {seconds:6.2f} s  ({case['million_entries_per_second']:5.1f} M entries/s, "
                f"peak {peak / 2**20:7.1f} MiB = {case['peak_bytes_per_entry']} B/entry"
                + (f"; scipy.io.mmread {case['scipy_mmread_seconds']:.2f} s" if "scipy_mmread_seconds" in case
                   else "") + ")")
            del graph
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    say(f"wrote {out}")
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "load.json")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="keep the generated files here and reuse them in later runs")
    args = parser.parse_args(argv)
    run(args.edges, args.repeat, args.seed, args.out, args.workdir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
