"""CPU variants (numba): serial BFS and Dijkstra, and level-synchronous parallel versions.

* ``bfs_serial``: a FIFO queue in an array.
* ``bfs_parallel``: level-synchronous. The frontier is cut into chunks; each chunk gets a
  region of the next-frontier buffer as large as its degree sum and appends the unvisited
  neighbours it labels (``prange`` over chunks); the regions are then concatenated. Two
  threads may label the same vertex at once -- both write the same level, and the vertex
  appears twice in the next frontier, which only repeats work -- so no atomics are needed
  (numba has none on the CPU).
* ``dijkstra_serial``: binary heap with lazy deletion (stale entries are skipped).
* ``sssp_parallel``: frontier Bellman–Ford. The relaxations of a level are computed in
  parallel into per-chunk candidate lists without writing any distance (so no update can be
  lost between threads); a serial pass applies the improvements and builds the next frontier
  (each vertex once). Work is O(levels x frontier edges), as on the GPU.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

CHUNKS_PER_THREAD = 4


def parallel_chunks() -> int:
    """Frontier chunks per level for the parallel variants (a few per thread, for balance)."""
    return numba.get_num_threads() * CHUNKS_PER_THREAD


@njit(cache=True, nogil=True)
def bfs_serial(indptr, indices, source):
    n = len(indptr) - 1
    levels = np.full(n, -1, dtype=np.int32)
    queue = np.empty(n, dtype=np.int32)
    levels[source] = 0
    queue[0] = source
    head, tail = 0, 1
    while head < tail:
        v = queue[head]
        head += 1
        nxt = levels[v] + 1
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if levels[u] < 0:
                levels[u] = nxt
                queue[tail] = u
                tail += 1
    return levels


@njit(cache=True, nogil=True)
def _chunk_bounds(count, chunks):
    bounds = np.empty(chunks + 1, dtype=np.int64)
    for c in range(chunks + 1):
        bounds[c] = (count * c) // chunks
    return bounds


@njit(cache=True, nogil=True)
def _exclusive_sum(sizes):
    out = np.zeros(len(sizes) + 1, dtype=np.int64)
    for c in range(len(sizes)):
        out[c + 1] = out[c] + sizes[c]
    return out


@njit(cache=True, nogil=True, parallel=True)
def _degree_sums(indptr, frontier, bounds, sizes):
    for c in prange(len(sizes)):
        s = 0
        for i in range(bounds[c], bounds[c + 1]):
            v = frontier[i]
            s += indptr[v + 1] - indptr[v]
        sizes[c] = s


@njit(cache=True, nogil=True, parallel=True)
def _bfs_expand(indptr, indices, levels, frontier, bounds, starts, buffer, counts, nxt):
    for c in prange(len(counts)):
        pos = starts[c]
        for i in range(bounds[c], bounds[c + 1]):
            v = frontier[i]
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                if levels[u] < 0:
                    levels[u] = nxt           # racing threads write the same value
                    buffer[pos] = u
                    pos += 1
        counts[c] = pos - starts[c]


@njit(cache=True, nogil=True, parallel=True)
def _gather(buffer, starts, counts, offsets, out):
    for c in prange(len(counts)):
        for k in range(counts[c]):
            out[offsets[c] + k] = buffer[starts[c] + k]


@njit(cache=True, nogil=True)
def _regions(indptr, frontier, max_chunks):
    """(chunk bounds, region starts) for a frontier: chunks of the frontier, each with a
    region as large as its degree sum."""
    chunks = max(1, min(len(frontier), max_chunks))
    bounds = _chunk_bounds(len(frontier), chunks)
    sizes = np.zeros(chunks, dtype=np.int64)
    _degree_sums(indptr, frontier, bounds, sizes)
    return bounds, _exclusive_sum(sizes)


@njit(cache=True, nogil=True)
def bfs_parallel(indptr, indices, source, max_chunks):
    n = len(indptr) - 1
    levels = np.full(n, -1, dtype=np.int32)
    levels[source] = 0
    frontier = np.full(1, source, dtype=np.int32)
    level = 0
    while len(frontier) > 0:
        bounds, starts = _regions(indptr, frontier, max_chunks)
        buffer = np.empty(starts[-1], dtype=np.int32)
        counts = np.zeros(len(bounds) - 1, dtype=np.int64)
        _bfs_expand(indptr, indices, levels, frontier, bounds, starts, buffer, counts, np.int32(level + 1))
        offsets = _exclusive_sum(counts)
        frontier = np.empty(offsets[-1], dtype=np.int32)
        _gather(buffer, starts, counts, offsets, frontier)
        level += 1
    return levels


@njit(cache=True, nogil=True)
def _heap_push(keys, vals, size, key, val):
    i = size
    keys[i] = key
    vals[i] = val
    while i > 0:
        parent = (i - 1) >> 1
        if keys[parent] <= keys[i]:
            break
        keys[parent], keys[i] = keys[i], keys[parent]
        vals[parent], vals[i] = vals[i], vals[parent]
        i = parent
    return size + 1


@njit(cache=True, nogil=True)
def _heap_pop(keys, vals, size):
    """Remove the root (the caller read it); returns the new size."""
    size -= 1
    keys[0] = keys[size]
    vals[0] = vals[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        child = left
        if left + 1 < size and keys[left + 1] < keys[left]:
            child = left + 1
        if keys[i] <= keys[child]:
            break
        keys[child], keys[i] = keys[i], keys[child]
        vals[child], vals[i] = vals[i], vals[child]
        i = child
    return size


@njit(cache=True, nogil=True)
def dijkstra_serial(indptr, indices, weights, source):
    n = len(indptr) - 1
    dist = np.full(n, np.inf)
    done = np.zeros(n, dtype=np.bool_)
    capacity = len(indices) + 1            # each improvement pushes once
    keys = np.empty(capacity, dtype=np.float64)
    vals = np.empty(capacity, dtype=np.int32)
    dist[source] = 0.0
    size = _heap_push(keys, vals, 0, 0.0, source)
    while size > 0:
        d = keys[0]
        v = vals[0]
        size = _heap_pop(keys, vals, size)
        if done[v]:
            continue                       # a stale entry
        done[v] = True
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            nd = d + weights[e]
            if nd < dist[u]:
                dist[u] = nd
                size = _heap_push(keys, vals, size, nd, u)
    return dist


@njit(cache=True, nogil=True, parallel=True)
def _relax_candidates(indptr, indices, weights, dist, frontier, bounds, starts, cand_v, cand_d, counts):
    for c in prange(len(counts)):          # read-only on dist: nothing to race on
        pos = starts[c]
        for i in range(bounds[c], bounds[c + 1]):
            v = frontier[i]
            dv = dist[v]
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                nd = dv + weights[e]
                if nd < dist[u]:
                    cand_v[pos] = u
                    cand_d[pos] = nd
                    pos += 1
        counts[c] = pos - starts[c]


@njit(cache=True, nogil=True)
def sssp_parallel(indptr, indices, weights, source, max_chunks):
    n = len(indptr) - 1
    dist = np.full(n, np.inf)
    queued = np.full(n, -1, dtype=np.int64)
    dist[source] = 0.0
    frontier = np.full(1, source, dtype=np.int32)
    iteration = 0
    while len(frontier) > 0:
        bounds, starts = _regions(indptr, frontier, max_chunks)
        cand_v = np.empty(starts[-1], dtype=np.int32)
        cand_d = np.empty(starts[-1], dtype=np.float64)
        counts = np.zeros(len(bounds) - 1, dtype=np.int64)
        _relax_candidates(indptr, indices, weights, dist, frontier, bounds, starts, cand_v, cand_d, counts)
        nxt = np.empty(min(n, starts[-1]), dtype=np.int32)
        m = 0
        for c in range(len(counts)):       # apply in one thread: the lowest candidate wins
            for k in range(starts[c], starts[c] + counts[c]):
                u = cand_v[k]
                if cand_d[k] < dist[u]:
                    dist[u] = cand_d[k]
                    if queued[u] != iteration:
                        queued[u] = iteration
                        nxt[m] = u
                        m += 1
        frontier = nxt[:m].copy()
        iteration += 1
    return dist
