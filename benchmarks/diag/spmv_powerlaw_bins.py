#!/usr/bin/env python3
"""Where does ``gpu-adaptive`` lose to cuSPARSE on the power-law matrix? Per-bin timings.

    python3 benchmarks/diag/spmv_powerlaw_bins.py [--quick] [--json OUT.json]
    ncu ... python3 benchmarks/diag/spmv_powerlaw_bins.py --ncu   # one launch of each kernel

Times, with CUDA events over repeated launches (the same way for every kernel):

* floors: ``stream`` reads the values and column indices once (no x), ``gather`` also
  gathers ``x[col]`` and multiplies, with no rows at all (the least any CSR kernel that reads
  each entry once can do), once per load style of ``gpu_loads`` (cache hints);
* cuSPARSE on the whole matrix and on three sub-matrices holding only the short, vector or
  long rows (the other rows empty);
* ``gpu-adaptive`` on the whole matrix and on each bin alone (the same launch with the other
  bins' piece counts set to 0), per short-row mode, ``loads`` and register cap;
* with ``--stencil``, cuSPARSE and ``gpu-adaptive`` (group mode, each ``loads``) on the
  27-point stencil, 160^3: a regular matrix, where the cache hints must cost nothing.

Each kernel's registers per thread are printed beside it. The matrix is the one of
``benchmarks/bench_spmv.py`` (power-law rows, 2^22 rows, ~26 entries a row, seed 1), cached
under /tmp for the ``--ncu`` run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))  # the shared helpers, _common
from _common import say  # noqa: E402

SIMULATE = "--simulate" in sys.argv[1:]  # a dry run of the plumbing on the CUDA simulator (no cuSPARSE)
if not SIMULATE:
    os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
else:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402

CACHE = Path("/tmp/plaw-diag.npz")


def build_matrix(rows, avg, max_row):
    if CACHE.exists() and rows == 1 << 22:
        d = np.load(CACHE)
        return d["indptr"], d["indices"], d["values"], rows
    from kernels.graph.generators import powerlaw_matrix

    g = powerlaw_matrix(rows, rows, avg, 2.0, max_row, seed=1)
    if rows == 1 << 22:
        np.savez(CACHE, indptr=g.indptr, indices=g.indices, values=g.weights)
    return g.indptr, g.indices, g.weights, rows


def sub_matrix(indptr, indices, values, keep_rows):
    """The same shape with only ``keep_rows`` (a boolean mask) keeping their entries."""
    lengths = np.diff(indptr)
    entry_mask = np.repeat(keep_rows, lengths)
    new_ptr = np.zeros_like(indptr)
    np.cumsum(np.where(keep_rows, lengths, 0), out=new_ptr[1:])
    return new_ptr, indices[entry_mask], values[entry_mask]


def event_time(launch, repeat: int = 5) -> float:
    """Median kernel time in ms, timed as every run of the project is
    (:func:`kernels.measure.timing.time_kernel_cuda`: CUDA events after a warm-up)."""
    from kernels.measure.timing import time_kernel_cuda

    stats, _launch_bound = time_kernel_cuda(launch, repeat=repeat, warmup=1)
    return stats.median_s * 1e3


def launch_once(launch) -> float:
    """One launch, no timing (``--ncu``: the profiler times it; ``--simulate``: meaningless)."""
    from numba import cuda

    launch()
    cuda.synchronize()
    return 0.0


def floors_kernels():
    global cuda  # a module global: the simulator swaps the kernels' global `cuda`, not a closure's
    from numba import cuda

    @cuda.jit("void(int32[::1], float64[::1], float64[::1], float64[::1], int64)")
    def stream_floor(indices, values, x, out, nnz):
        t = cuda.grid(1)
        s = cuda.gridsize(1)
        a0 = 0.0
        a1 = 0.0
        j = t
        while j + s < nnz:
            a0 += values[j] + indices[j]
            a1 += values[j + s] + indices[j + s]
            j += 2 * s
        if j < nnz:
            a0 += values[j] + indices[j]
        out[t] = a0 + a1

    def gather_floor(streaming, hardware):
        from kernels.algorithms.spmv.gpu_loads import make_entry_load

        load = make_entry_load(streaming, hardware)

        @cuda.jit("void(int32[::1], float64[::1], float64[::1], float64[::1], int64)")
        def gather_floor(indices, values, x, out, nnz):
            t = cuda.grid(1)
            s = cuda.gridsize(1)
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            j = t
            while j + 3 * s < nnz:
                a0 += load(values, j) * x[load(indices, j)]
                a1 += load(values, j + s) * x[load(indices, j + s)]
                a2 += load(values, j + 2 * s) * x[load(indices, j + 2 * s)]
                a3 += load(values, j + 3 * s) * x[load(indices, j + 3 * s)]
                j += 4 * s
            while j < nnz:
                a0 += load(values, j) * x[load(indices, j)]
                j += s
            out[t] = (a0 + a1) + (a2 + a3)

        return gather_floor

    return stream_floor, gather_floor


def regs(kernel):
    try:
        return int(kernel.get_regs_per_thread())
    except Exception as exc:  # noqa: BLE001 - a diagnostic: say why and go on
        return f"? ({exc})"


def upload(indptr, indices, values, x):
    from numba import cuda

    return {"indptr": cuda.to_device(indptr.astype(np.int32)), "indices": cuda.to_device(indices),
            "values": cuda.to_device(values), "x": cuda.to_device(x),
            "y": cuda.device_array(len(indptr) - 1, dtype=np.float64)}


def relative_error(y, reference):
    return float(np.max(np.abs(y - reference)) / max(np.max(np.abs(reference)), 1e-300))


def time_cusparse(name, indptr, indices, values, x, mask, reference, timer, record):
    import cupy as cp
    import cupyx.cusparse
    import cupyx.scipy.sparse as cps

    n = len(indptr) - 1
    whole = bool(mask.all())
    p, i, v = (indptr, indices, values) if whole else sub_matrix(indptr, indices, values, mask)
    A = cps.csr_matrix((cp.asarray(v), cp.asarray(i), cp.asarray(p.astype(np.int32))), shape=(n, len(x)))
    A.has_canonical_format = True
    cx, cy = cp.asarray(x), cp.zeros(n)
    ms = timer(lambda: cupyx.cusparse.spmv(A, cx, y=cy))
    extra = {"max_rel_err": f"{relative_error(cp.asnumpy(cy), reference):.1e}"} if whole else {}
    record(name, ms, entries=int(len(i)), **extra)


def time_adaptive(config, matrix, indptr, n, short_row, long_row, reference, parts, timer, record, *, hardware,
                  prefix=""):
    """Time one gpu-adaptive configuration on the whole matrix and on each bin alone."""
    from numba import cuda

    from kernels.algorithms.spmv.gpu_adaptive import adaptive_kernel, row_bins

    mode, tpr, block, cap, loads = config
    label = f"{prefix}adaptive {mode} T={tpr} b={block} loads={loads}" + (f" cap={cap}" if cap else "")
    try:
        kernel = adaptive_kernel(block, short_row, "float64", "int32", hardware, mode, tpr, loads, cap)
        bins = row_bins(indptr, short_row, long_row)
        dev = {name: cuda.to_device(a if len(a) else np.zeros(1, a.dtype)) for name, a in
               (("vec", bins.vec_rows), ("long", bins.long_rows), ("first", bins.long_first),
                ("slot", bins.chunk_slot), ("span", bins.chunk_span))}
        tickets = cuda.to_device(np.zeros(max(len(bins.long_rows), 1), np.int32))
        partials = cuda.device_array(max(bins.n_chunks, 1), dtype=np.float64)
        n_vec_blocks = -(-len(bins.vec_rows) // (block // 32))
        n_short_blocks = -(-n // (block // tpr if mode == "group" else block))
        pieces = {"all": (bins.n_chunks, n_vec_blocks, n_short_blocks), "short": (0, 0, n_short_blocks),
                  "vector": (0, n_vec_blocks, 0), "long": (bins.n_chunks, 0, 0)}
        m = matrix
        for part in parts:
            nc, nv, ns = pieces[part]
            grid = max(1, min(nc + nv + ns, 1 << 20 if hardware else 2))

            def launch(nc=nc, nv=nv, ns=ns, grid=grid):
                kernel[grid, block](m["indptr"], m["indices"], m["values"], m["x"], m["y"], n, dev["slot"],
                                    dev["span"], dev["long"], dev["first"], tickets, partials, nc, dev["vec"],
                                    len(bins.vec_rows), nv, ns)

            ms = timer(launch)
            extra = {}
            if part == "all":
                extra = {"regs": regs(kernel), "max_rel_err": f"{relative_error(m['y'].copy_to_host(), reference):.1e}"}
            record(f"{label} {part}", ms, **extra)
    except Exception as exc:  # noqa: BLE001 - a diagnostic: say why and go on
        record(f"{label} FAILED", float("nan"), error=f"{type(exc).__name__}: {str(exc)[:2000]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--ncu", action="store_true", help="one launch of each kernel, for Nsight Compute")
    ap.add_argument("--json", default=None)
    ap.add_argument("--simulate", action="store_true")
    ap.add_argument("--stencil", action="store_true", help="also the 27-point stencil 160^3 (group mode, each style)")
    args = ap.parse_args()
    rows = 200 if args.simulate else 1 << 16 if args.quick else 1 << 22
    t0 = time.perf_counter()
    indptr, indices, values, n = build_matrix(rows, 26.0, rows // 4)
    nnz = len(indices)
    say(f"matrix: {n:,} rows, {nnz:,} entries, built in {time.perf_counter() - t0:.1f} s")
    rng = np.random.default_rng(5)
    x = rng.random(n)
    import scipy.sparse

    reference = scipy.sparse.csr_matrix((values, indices, indptr), shape=(n, n)) @ x

    from numba import cuda


    timer = launch_once if args.ncu or args.simulate else event_time
    results = []

    def record(name, ms, **extra):
        results.append({"name": name, "ms": ms, **extra})
        say(f"{name:<44} {ms:8.4f} ms  " + " ".join(f"{k}={v}" for k, v in extra.items()))

    matrix = upload(indptr, indices, values, x)
    d_indices, d_values, d_x = matrix["indices"], matrix["values"], matrix["x"]

    # ---- floors
    stream_floor, gather_floor = floors_kernels()
    threads = 64 if args.simulate else 132 * 2048
    d_out = cuda.device_array(threads, dtype=np.float64)
    floors = [("floor stream (values+indices)", lambda: stream_floor)]
    floors += [(f"floor gather loads={'stream' if streaming else 'plain'}",
                lambda streaming=streaming: gather_floor(streaming, not args.simulate)) for streaming in (False, True)]
    for name, make in floors:
        try:
            k = make()
            ms = timer(lambda k=k: k[threads // 64, 64](d_indices, d_values, d_x, d_out, nnz))
            record(name, ms, regs=regs(k), gbs=round(nnz * 12 / max(ms, 1e-9) / 1e6, 1))
        except Exception as exc:  # noqa: BLE001 - a diagnostic: say why and go on
            say(f"{name}: FAILED {type(exc).__name__}: {exc}")

    # ---- cuSPARSE, whole and per bin
    short_row, long_row = (8, 32) if args.simulate else (64, 16384)
    lengths = np.diff(indptr)
    masks = {"all": np.ones(n, bool), "short": lengths <= short_row,
             "vector": (lengths > short_row) & (lengths <= long_row), "long": lengths > long_row}
    if not args.simulate:
        for part, mask in masks.items() if not args.ncu else [("all", masks["all"])]:
            time_cusparse(f"cusparse {part}", indptr, indices, values, x, mask, reference, timer, record)

    # ---- gpu-adaptive per bin
    configs = [(mode, 4, 128, None, loads) for mode in ("stream", "group") for loads in ("plain", "stream", "auto")]
    configs += [("stream", 4, 256, None, "stream"), ("stream", 4, 128, 56, "stream"), ("group", 2, 128, None, "stream")]
    if args.simulate:
        configs = [("group", 4, 64, None, "plain"), ("stream", 4, 64, None, "stream")]
    parts = ("all",) if args.ncu else ("all", "short", "vector", "long")
    for config in configs[:6] if args.ncu else configs:
        time_adaptive(config, matrix, indptr, n, short_row, long_row, reference, parts, timer, record,
                      hardware=not args.simulate)

    if not args.simulate and not args.ncu:
        time_cusparse("cusparse all (again: drift)", indptr, indices, values, x, masks["all"], reference, timer,
                      record)

    # ---- a regular matrix: the load styles must not cost anything there
    if args.stencil and not args.simulate:
        from kernels.graph.generators import stencil

        g = stencil("27pt", 160, 160, 160)
        values_s = np.ones(g.nnz) if g.weights is None else g.weights
        xs = rng.random(g.n_cols)
        ref_s = scipy.sparse.csr_matrix((values_s, g.indices, g.indptr), shape=(g.n_rows, g.n_cols)) @ xs
        del matrix
        matrix_s = upload(g.indptr, g.indices, values_s, xs)
        time_cusparse("stencil cusparse", g.indptr, g.indices, values_s, xs, np.ones(g.n_rows, bool), ref_s,
                      timer, record)
        for loads in ("plain", "stream", "auto"):
            time_adaptive(("group", 4, 128, None, loads), matrix_s, g.indptr, g.n_rows, 64, 16384, ref_s, ("all",),
                          timer, record, hardware=True, prefix="stencil ")

    if args.json:
        Path(args.json).write_text(json.dumps({"rows": n, "nnz": nnz, "results": results}, indent=1))
    say(f"done in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
