"""CPU k-clique counting on the oriented graph (kClist): numba, serial and parallel.

From every vertex v, the cliques whose lowest vertex is v are found by a depth-first search
over candidate lists: the level-0 list is N+(v); choosing a candidate x at level l leaves the
candidates after x that are also in N+(x) (a merge of two sorted lists). The search keeps an
explicit stack (one list buffer, length and cursor per level) instead of recursion. When two
more vertices are needed, the merge only counts. ``cpu-parallel`` runs the vertices in
parallel (``prange``), dealt out cyclically so that neighbouring (similar-degree) vertices go
to different threads.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _cliques_from(v, indptr, indices, r, bufs, lens, cursor, path, counts, per_vertex):
    """Cliques of r vertices in N+(v), i.e. (r+1)-cliques whose lowest vertex is v."""
    start = indptr[v]
    d = indptr[v + 1] - start
    if d < r:
        return 0
    for i in range(d):
        bufs[0, i] = indices[start + i]
    lens[0] = d
    cursor[0] = 0
    path[0] = v
    level = 0
    total = 0
    while level >= 0:
        need = r - level
        m = lens[level]
        j = cursor[level]
        if j > m - need:  # too few candidates left to complete a clique
            level -= 1
            continue
        cursor[level] = j + 1
        x = bufs[level, j]
        a = j + 1
        b = indptr[x]
        b_end = indptr[x + 1]
        if need == 2:
            found = 0
            while a < m and b < b_end:
                ya = bufs[level, a]
                yb = indices[b]
                if ya < yb:
                    a += 1
                elif ya > yb:
                    b += 1
                else:
                    found += 1
                    if per_vertex:
                        counts[ya] += 1
                    a += 1
                    b += 1
            total += found
            if per_vertex and found:
                for p in range(level + 1):
                    counts[path[p]] += found
                counts[x] += found
        else:
            length = 0
            while a < m and b < b_end:
                ya = bufs[level, a]
                yb = indices[b]
                if ya < yb:
                    a += 1
                elif ya > yb:
                    b += 1
                else:
                    bufs[level + 1, length] = ya
                    length += 1
                    a += 1
                    b += 1
            if length >= need - 1:
                level += 1
                lens[level] = length
                cursor[level] = 0
                path[level] = x
    return total


@numba.njit(cache=True, nogil=True)
def count_serial(indptr, indices, k, max_out_degree, counts, per_vertex):
    r = k - 1
    n = len(indptr) - 1
    bufs = np.empty((r, max(max_out_degree, 1)), dtype=np.int32)
    lens = np.empty(r, dtype=np.int64)
    cursor = np.empty(r, dtype=np.int64)
    path = np.empty(r + 1, dtype=np.int64)
    total = 0
    for v in range(n):
        total += _cliques_from(v, indptr, indices, r, bufs, lens, cursor, path, counts, per_vertex)
    return total


@numba.njit(cache=True, nogil=True, parallel=True)
def count_parallel(indptr, indices, k, max_out_degree, counts_by_chunk, per_vertex, n_chunks):
    """``counts_by_chunk`` has one per-vertex row per chunk when ``per_vertex`` (no races)."""
    r = k - 1
    n = len(indptr) - 1
    totals = np.zeros(n_chunks, dtype=np.int64)
    for chunk in numba.prange(n_chunks):
        c = np.int64(chunk)  # prange indices are unsigned; keep the arithmetic signed
        bufs = np.empty((r, max(max_out_degree, 1)), dtype=np.int32)
        lens = np.empty(r, dtype=np.int64)
        cursor = np.empty(r, dtype=np.int64)
        path = np.empty(r + 1, dtype=np.int64)
        counts = counts_by_chunk[c if per_vertex else np.int64(0)]
        subtotal = 0
        for v in range(c, n, n_chunks):
            subtotal += _cliques_from(v, indptr, indices, r, bufs, lens, cursor, path, counts, per_vertex)
        totals[c] = subtotal
    return totals.sum()


def run_serial(oriented, k: int, per_vertex: bool):
    n = oriented.n
    counts = np.zeros(n if per_vertex else 1, dtype=np.int64)
    total = count_serial(oriented.indptr, oriented.indices, k, oriented.max_out_degree, counts, per_vertex)
    return {"cliques": int(total), "per_vertex": oriented.to_original(counts)} if per_vertex else int(total)


def run_parallel(oriented, k: int, per_vertex: bool):
    threads = numba.get_num_threads()
    n_chunks = threads if per_vertex else 8 * threads
    counts = np.zeros((n_chunks, oriented.n) if per_vertex else (1, 1), dtype=np.int64)
    total = count_parallel(oriented.indptr, oriented.indices, k, oriented.max_out_degree, counts, per_vertex,
                           n_chunks)
    if per_vertex:
        return {"cliques": int(total), "per_vertex": oriented.to_original(counts.sum(axis=0))}
    return int(total)


def tiny_dag():
    """A triangle, oriented: enough for numba to compile the counting functions."""
    from kernels.algorithms.kclique.prepare import OrientedGraph

    return OrientedGraph(np.array([0, 2, 3, 3], dtype=np.int64), np.array([1, 2, 2], dtype=np.int32),
                         np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int32), "degree")
