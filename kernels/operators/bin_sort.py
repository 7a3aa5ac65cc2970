"""Stable counting sort of items by a small key (a device bucket sort): ``order`` lists the
indices ``i`` with ``keys[i] >= 0``, by key, equal keys in increasing ``i``.

Why a counting sort and not a radix sort: the keys here are work bins (``⌊log₂ work⌋``, at
most 64 of them), so one pass is the whole sort, and it is stable, which the callers rely on
(equal bins stay in id order, as the host's ``argsort(kind="stable")``).

How (the classic segmented counting sort): the items are cut into *segments* of
``segment`` consecutive items, one thread per segment.

1. Histogram: each thread counts the keys of its segment in a local array and writes the
   counts as column ``t`` of a ``bins × segments`` matrix (stored bin-major).
2. An exclusive scan of the matrix (:mod:`.scan`) in that order gives every (bin, segment)
   pair its first output position: all of bin 0 (segment by segment), then bin 1, ...
3. Scatter: each thread walks its segment again, in order, writing each item at its bin's
   cursor and advancing it. Order inside a bin: by segment, then by position in the
   segment, i.e. by ``i``: stable.

Keys < 0 are dropped (not counted, not written). The number kept is left in ``total[0]``
(device); nothing is read back. Under the CUDA simulator there are two segments in all,
so that the matrix to scan stays small.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, int32, int64

from kernels.cuda.jit import jit as kernel_jit
from kernels.operators.launch import Workspace, for_target, grid_for, on_simulator
from kernels.operators.scan import scan_array

SEGMENT = 128       # items per thread on a GPU (bins × n / SEGMENT histogram entries to scan)
SIM_SEGMENTS = 2
BLOCK = {"cuda": 256, "sim": 16}


@functools.cache
def histogram_kernel(bins: int):
    def kernel(keys, n, segment, segments, hist):
        counts = cuda.local.array(bins, int32)
        for t in range(cuda.grid(1), segments, cuda.gridsize(1)):
            for b in range(bins):
                counts[b] = 0
            lo = int64(t) * segment
            hi = min(lo + segment, n)
            for i in range(lo, hi):
                k = keys[i]
                if k >= 0:
                    counts[k] += 1
            for b in range(bins):          # bin-major: consecutive threads write consecutive words
                hist[b * segments + t] = counts[b]

    return kernel_jit(kernel)


@functools.cache
def scatter_kernel(bins: int):
    def kernel(keys, n, segment, segments, offsets, order):
        cursor = cuda.local.array(bins, int64)
        for t in range(cuda.grid(1), segments, cuda.gridsize(1)):
            for b in range(bins):
                cursor[b] = offsets[b * segments + t]
            lo = int64(t) * segment
            hi = min(lo + segment, n)
            for i in range(lo, hi):
                k = keys[i]
                if k >= 0:
                    order[cursor[k]] = i
                    cursor[k] += 1

    return kernel_jit(kernel)


def segment_length(n: int) -> int:
    """Items per thread: :data:`SEGMENT` on a GPU; on the simulator two segments in all (the
    histogram matrix to scan has ``bins × segments`` entries, and the simulated scan costs
    milliseconds per entry)."""
    if on_simulator():
        return max(1, -(-int(n) // SIM_SEGMENTS))
    return SEGMENT


def stable_bin_sort(keys, n: int, bins: int, order, total, workspace: Workspace, *, name: str = "bin_sort") -> None:
    """Write to ``order`` (int32, device, ≥ kept items) the indices ``i < n`` with
    ``0 <= keys[i] < bins``, sorted by key, stable; the count kept goes to ``total[0]``.
    ``keys`` must hold no value ≥ ``bins`` (the caller's contract: not checked on the device)."""
    n = int(n)
    segment = segment_length(n)
    segments = max(1, -(-n // segment))
    block = for_target(BLOCK)
    hist = workspace.get(f"{name}.hist", np.int64, bins * segments)
    offsets = workspace.get(f"{name}.offsets", np.int64, bins * segments)
    grid = grid_for(segments, block)
    histogram_kernel(bins)[grid, block](keys, n, segment, segments, hist)
    scan_array(hist, bins * segments, offsets, total, workspace)
    scatter_kernel(bins)[grid, block](keys, n, segment, segments, offsets, order)
