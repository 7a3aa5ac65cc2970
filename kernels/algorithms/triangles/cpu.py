"""CPU triangle counting: the course report's algorithm 6, serial and over rows in parallel.

What is counted: for every stored entry ``(i, k)`` with ``k > i``, the common entries ``j``
of the sorted rows ``i`` and ``k`` with ``j > k``. Row ``i`` is merged from just after ``k``
(its later entries are all ``> k``) with the whole of row ``k`` (the merge steps over row
``k``'s entries ``<= k``, as the report's merge does). Each triangle ``i < k < j`` is thus
found exactly once, at its two smallest corners. Rows must be sorted and free of self-loops
and repeats (the family's ``prepare`` sees to it).

Per-vertex counts: the serial version adds each triangle found to its three corners. The
parallel one cannot scatter without races, so each vertex ``v`` counts for itself:
``t(v) = ½ Σ_{u ∈ N(v)} |N(v) ∩ N(u)|`` (every triangle at ``v`` is seen from both of its
other corners); more merging, no shared writes.
"""

from __future__ import annotations

import numba
import numpy as np

# Rows per chunk handed to a thread by prange: small, because rows of R-MAT graphs differ in
# cost by orders of magnitude and numba's default splits the rows into equal static blocks.
PARALLEL_CHUNK_ROWS = 16


@numba.njit(cache=True, nogil=True, inline="always")
def _common(indices, a_lo, a_hi, b_lo, b_hi):
    """Number of values present in both sorted ranges of ``indices``."""
    found = 0
    while a_lo < a_hi and b_lo < b_hi:
        x = indices[a_lo]
        y = indices[b_lo]
        if x < y:
            a_lo += 1
        elif x > y:
            b_lo += 1
        else:
            found += 1
            a_lo += 1
            b_lo += 1
    return found


# The per-row work of the parallel loops lives in separate (not inlined) functions: numba
# 0.68 on Python 3.12 fails to compile a prange body holding these nested loops ("unexpected
# cycle in lookup()", numba issue #10132; seen on the GPU machine), and moving the inner loop
# into its own function is the documented workaround.
@numba.njit(cache=True, nogil=True)
def _row_triangles(indptr, indices, i):
    hi = indptr[i + 1]
    row = 0
    for e in range(indptr[i], hi):
        k = indices[e]
        if k > i:
            row += _common(indices, e + 1, hi, indptr[k], indptr[k + 1])
    return row


@numba.njit(cache=True, nogil=True)
def _vertex_triangles(indptr, indices, v):
    lo, hi = indptr[v], indptr[v + 1]
    twice = 0
    for e in range(lo, hi):
        u = indices[e]
        twice += _common(indices, lo, hi, indptr[u], indptr[u + 1])
    return twice // 2


@numba.njit(cache=True, nogil=True)
def count_serial(indptr, indices):
    total = 0
    for i in range(len(indptr) - 1):
        hi = indptr[i + 1]
        for e in range(indptr[i], hi):
            k = indices[e]
            if k > i:
                total += _common(indices, e + 1, hi, indptr[k], indptr[k + 1])
    return np.int64(total)


@numba.njit(cache=True, nogil=True)
def per_vertex_serial(indptr, indices):
    n = len(indptr) - 1
    counts = np.zeros(n, dtype=np.int64)
    for i in range(n):
        hi = indptr[i + 1]
        for e in range(indptr[i], hi):
            k = indices[e]
            if k <= i:
                continue
            a, a_hi = e + 1, hi
            b, b_hi = indptr[k], indptr[k + 1]
            found = 0
            while a < a_hi and b < b_hi:
                x = indices[a]
                y = indices[b]
                if x < y:
                    a += 1
                elif x > y:
                    b += 1
                else:
                    counts[x] += 1
                    found += 1
                    a += 1
                    b += 1
            counts[i] += found
            counts[k] += found
    return counts


@numba.njit(cache=True, nogil=True, parallel=True)
def count_parallel(indptr, indices):
    total = 0
    for i in numba.prange(len(indptr) - 1):
        total += _row_triangles(indptr, indices, i)
    return np.int64(total)


@numba.njit(cache=True, nogil=True, parallel=True)
def per_vertex_parallel(indptr, indices):
    n = len(indptr) - 1
    counts = np.zeros(n, dtype=np.int64)
    for v in numba.prange(n):
        counts[v] = _vertex_triangles(indptr, indices, v)
    return counts


def run_serial(indptr, indices, per_vertex: bool):
    return per_vertex_serial(indptr, indices) if per_vertex else count_serial(indptr, indices)


def run_parallel(indptr, indices, per_vertex: bool):
    with numba.parallel_chunksize(PARALLEL_CHUNK_ROWS):
        return per_vertex_parallel(indptr, indices) if per_vertex else count_parallel(indptr, indices)


@numba.njit(cache=True, nogil=True, parallel=True)
def merge_steps_per_row(indptr, indices):
    """Upper bound on the merge steps of algorithm 6 at each row ``i`` (to skip hopeless CPU
    runs): ``Σ over entries (i, k), k > i, of (entries of row i after k) + deg(k)``."""
    n = len(indptr) - 1
    steps = np.zeros(n, dtype=np.int64)
    for i in numba.prange(n):
        steps[i] = _row_merge_steps(indptr, indices, i)
    return steps


@numba.njit(cache=True, nogil=True)
def _row_merge_steps(indptr, indices, i):
    hi = indptr[i + 1]
    s = 0
    for e in range(indptr[i], hi):
        k = indices[e]
        if k > i:
            s += hi - e - 1 + indptr[k + 1] - indptr[k]
    return s
