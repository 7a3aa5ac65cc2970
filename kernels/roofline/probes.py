"""The probes behind :mod:`kernels.roofline.peaks`: copy bandwidth and peak operation rates.

* Bandwidth: a device-to-device copy (``cuMemcpyDtoD``) of ``COPY_BYTES`` (a quarter of the free
  memory at most), the best of ``REPEATS``; it reads and writes every byte, so the rate is
  ``2·bytes / t``. The copy engine's streaming is the best a kernel's loads and stores can
  expect.
* Rates: one kernel per operation kind, each thread running ``CHAINS`` independent chains of
  the operation for ``ITERATIONS`` steps (independent chains hide the pipeline's latency), over
  16 blocks of 256 threads per SM; the best of ``REPEATS``. They are compiled by numba like the
  project's kernels, so "peak" means what numba's code for that operation reaches (an add+min
  as the SSSP and APSP kernels write it), not the data sheet.

Needs a real GPU (numba.cuda, simulator off) to mean anything; imported only by ``graph-kernels device-peaks``
and the benchmarks.
"""

from __future__ import annotations

import functools
import time

import numpy as np
from numba import cuda, float32, float64, int32

from kernels.cuda.jit import jit

COPY_BYTES = 1 << 30
REPEATS = 5
ITERATIONS = 4096
CHAINS = 8
THREADS = 256
BLOCKS_PER_SM = 16


def _ops_per_step(kind: str) -> int:
    return 2 if kind == "int32" else 1       # int32: an add and a xor per step


@functools.cache
def _rate_kernel(kind: str):
    fp = float32 if kind.endswith("fp32") else float64
    n = ITERATIONS

    if kind.startswith("fma"):
        @jit
        def fma(seed, out):
            t = cuda.grid(1)
            x = fp(seed[0])
            y = fp(seed[1])
            a0 = fp(t); a1 = a0 + fp(1); a2 = a0 + fp(2); a3 = a0 + fp(3)  # noqa: E702
            a4 = a0 + fp(4); a5 = a0 + fp(5); a6 = a0 + fp(6); a7 = a0 + fp(7)  # noqa: E702
            for _ in range(n):
                a0 = a0 * x + y; a1 = a1 * x + y; a2 = a2 * x + y; a3 = a3 * x + y  # noqa: E702
                a4 = a4 * x + y; a5 = a5 * x + y; a6 = a6 * x + y; a7 = a7 * x + y  # noqa: E702
            s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
            if s == fp(-1.2345):            # never true: keeps the chains from being removed
                out[0] = s
        return fma

    if kind.startswith("add+min"):
        @jit
        def add_min(seed, out):
            t = cuda.grid(1)
            w = fp(seed[0])
            cap = fp(seed[1]) * fp(1e9)
            a0 = fp(t); a1 = a0 + fp(1); a2 = a0 + fp(2); a3 = a0 + fp(3)  # noqa: E702
            a4 = a0 + fp(4); a5 = a0 + fp(5); a6 = a0 + fp(6); a7 = a0 + fp(7)  # noqa: E702
            for _ in range(n):
                a0 = min(a0 + w, cap); a1 = min(a1 + w, cap); a2 = min(a2 + w, cap)  # noqa: E702
                a3 = min(a3 + w, cap); a4 = min(a4 + w, cap); a5 = min(a5 + w, cap)  # noqa: E702
                a6 = min(a6 + w, cap); a7 = min(a7 + w, cap)  # noqa: E702
            s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
            if s == fp(-1.2345):
                out[0] = s
        return add_min

    @jit
    def int_ops(seed, out):
        t = cuda.grid(1)
        s0 = int32(seed[0])
        a0 = int32(t); a1 = int32(t + 1); a2 = int32(t + 2); a3 = int32(t + 3)  # noqa: E702
        a4 = int32(t + 4); a5 = int32(t + 5); a6 = int32(t + 6); a7 = int32(t + 7)  # noqa: E702
        for i in range(n):
            k = int32(i)
            a0 = int32((a0 + k) ^ s0); a1 = int32((a1 + k) ^ s0); a2 = int32((a2 + k) ^ s0)  # noqa: E702
            a3 = int32((a3 + k) ^ s0); a4 = int32((a4 + k) ^ s0); a5 = int32((a5 + k) ^ s0)  # noqa: E702
            a6 = int32((a6 + k) ^ s0); a7 = int32((a7 + k) ^ s0)  # noqa: E702
        s = a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7
        if s == -12345:
            out[0] = s
    return int_ops


def _best_seconds(run, sync, repeats: int) -> float:
    run()                               # compile and warm up
    sync()
    best = float("inf")
    for _ in range(repeats):
        start, end = cuda.event(), cuda.event()
        start.record()
        run()
        end.record()
        end.synchronize()
        best = min(best, cuda.event_elapsed_time(start, end) / 1e3)
    return best


def copy_bandwidth(nbytes: int = COPY_BYTES, repeats: int = REPEATS) -> tuple[float, int]:
    """(bytes/s of a device-to-device copy, counting read and write, the bytes copied)."""

    free, _ = cuda.current_context().get_memory_info()
    nbytes = int(min(nbytes, free // 4)) // 8 * 8
    src = cuda.device_array(nbytes // 8, dtype=np.float64)
    dst = cuda.device_array_like(src)
    seconds = _best_seconds(lambda: dst.copy_to_device(src), cuda.synchronize, repeats)
    return 2.0 * nbytes / seconds, nbytes


def op_rate(kind: str, repeats: int = REPEATS) -> float:
    """Peak operations per second of ``kind`` (an ``OP_KINDS`` name)."""
    from kernels.cuda.device import multiprocessors

    kernel = _rate_kernel(kind)
    blocks = multiprocessors() * BLOCKS_PER_SM
    seed = cuda.to_device(np.array([0.999999, 1e-7], dtype=np.float64))
    out = cuda.device_array(1, dtype=np.float64 if kind != "int32" else np.int32)
    seconds = _best_seconds(lambda: kernel[blocks, THREADS](seed, out), cuda.synchronize, repeats)
    return blocks * THREADS * ITERATIONS * CHAINS * _ops_per_step(kind) / seconds


def probe_device() -> dict:
    """Every peak the work models compare with, as :func:`kernels.roofline.peaks.measure_peaks` keeps them."""
    from kernels.roofline import OP_KINDS

    started = time.perf_counter()
    bandwidth, nbytes = copy_bandwidth()
    rates = {kind: op_rate(kind) for kind in OP_KINDS}
    return {"bandwidth_Bps": bandwidth, "rates": rates,
            "method": {"bandwidth": f"device-to-device copy of {nbytes:,} bytes, read + write, best of {REPEATS}",
                       "rates": f"{CHAINS} independent chains x {ITERATIONS} steps per thread, {BLOCKS_PER_SM} "
                                f"blocks of {THREADS} per SM, numba-compiled, best of {REPEATS}",
                       "probe_s": round(time.perf_counter() - started, 3)}}
