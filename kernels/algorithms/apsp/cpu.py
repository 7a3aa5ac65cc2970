"""CPU all-pairs shortest paths in numba: Dijkstra from every source and Floyd–Warshall.

* :func:`dijkstra_heap_all` - serial, one Dijkstra per source with an array-based binary heap
  and lazy deletion (a vertex may sit in the heap several times; stale entries are skipped
  when popped), the report's section 3.2;
* :func:`dijkstra_array_parallel` - sources in parallel (``prange``), each with the simple
  array priority of section 4.1.2: a linear scan for the closest unsettled vertex, O(n²)
  per source, no heap;
* :func:`fw_serial` / :func:`fw_parallel` - Floyd–Warshall in place on a dense matrix, the
  parallel one splitting the rows of each k-step over threads (section 4.2.1). The ``_pred``
  versions also keep the predecessor matrix; they are separate functions so that the plain
  inner loop stays branch-free (``min``) and vectorises.

Distances keep the dtype of the arrays passed in (float64 or float32). Predecessors are int32,
``-1`` for "none" (the source itself and unreachable vertices).
"""

from __future__ import annotations

import numba
import numpy as np

# ---- dense initial matrix for Floyd–Warshall -------------------------------------------


@numba.njit(cache=True, nogil=True, parallel=True)
def fill_initial(indptr, indices, weights, dist, pred, with_pred):
    """dist[i][j] = the edge weight (inf without an edge, 0 on the diagonal, or a negative
    self-loop's weight); pred[i][j] = i for an edge i -> j, else -1."""
    n = dist.shape[0]
    for i in numba.prange(n):
        for j in range(dist.shape[1]):
            dist[i, j] = np.inf
        if i < dist.shape[1]:
            dist[i, i] = 0
        if with_pred:
            for j in range(pred.shape[1]):
                pred[i, j] = -1
        if i >= len(indptr) - 1:
            continue  # a padding row (GPU tiles): no edges
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            w = weights[e]
            if w < dist[i, j]:
                dist[i, j] = w
                if with_pred and j != i:
                    pred[i, j] = i


# ---- Dijkstra ----------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True, inline="always")
def _heap_push(keys, verts, size, key, vert):
    x = size
    while x > 0:
        parent = (x - 1) >> 1
        if keys[parent] <= key:
            break
        keys[x] = keys[parent]
        verts[x] = verts[parent]
        x = parent
    keys[x] = key
    verts[x] = vert
    return size + 1


@numba.njit(cache=True, nogil=True, inline="always")
def _heap_pop(keys, verts, size):
    """Remove the root; returns the new size (the caller read the root before)."""
    size -= 1
    if size == 0:
        return 0
    key = keys[size]
    vert = verts[size]
    x = 0
    while True:
        child = 2 * x + 1
        if child >= size:
            break
        if child + 1 < size and keys[child + 1] < keys[child]:
            child += 1
        if keys[child] >= key:
            break
        keys[x] = keys[child]
        verts[x] = verts[child]
        x = child
    keys[x] = key
    verts[x] = vert
    return size


@numba.njit(cache=True, nogil=True)
def dijkstra_heap_all(indptr, indices, weights, dist, pred, with_pred):
    n = dist.shape[0]
    capacity = len(indices) + 1  # lazy deletion: at most one push per improving relaxation
    keys = np.empty(capacity, dtype=dist.dtype)
    verts = np.empty(capacity, dtype=np.int32)
    settled = np.zeros(n, dtype=np.bool_)
    for s in range(n):
        row = dist[s]
        row[:] = np.inf
        settled[:] = False
        if with_pred:
            pred[s, :] = -1
        row[s] = 0
        size = _heap_push(keys, verts, 0, row[s], s)
        while size > 0:
            du = keys[0]
            u = verts[0]
            size = _heap_pop(keys, verts, size)
            if settled[u]:
                continue  # a stale entry: u was settled with a smaller key
            settled[u] = True
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                nd = du + weights[e]
                if nd < row[v]:
                    row[v] = nd
                    if with_pred:
                        pred[s, v] = u
                    size = _heap_push(keys, verts, size, nd, v)
    return dist


@numba.njit(cache=True, nogil=True, parallel=True)
def dijkstra_array_parallel(indptr, indices, weights, dist, pred, with_pred):
    n = dist.shape[0]
    for s in numba.prange(n):
        row = dist[s]
        settled = np.zeros(n, dtype=np.bool_)
        row[:] = np.inf
        infinity = row[s]  # inf in the row's own dtype, so float32 runs stay float32
        if with_pred:
            pred[s, :] = -1
        row[s] = 0
        for _ in range(n):
            u = -1
            best = infinity
            for v in range(n):  # the array priority: scan for the closest unsettled vertex
                if not settled[v] and row[v] < best:
                    best = row[v]
                    u = v
            if u < 0:
                break  # everything left is unreachable
            settled[u] = True
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                nd = best + weights[e]
                if nd < row[v]:
                    row[v] = nd
                    if with_pred:
                        pred[s, v] = u
    return dist


# ---- Floyd–Warshall ----------------------------------------------------------------------


# Row k is copied into its own buffer before each k-step: it does not change during the step
# (unless dist[k][k] < 0, a negative cycle that is reported anyway), and without the copy
# LLVM must assume that row i may alias row k and does not vectorise the inner loop (5x slower).


@numba.njit(cache=True, nogil=True)
def fw_serial(dist):
    n = dist.shape[0]
    rowk = np.empty(n, dtype=dist.dtype)
    for k in range(n):
        rowk[:] = dist[k]
        for i in range(n):
            dik = dist[i, k]
            rowi = dist[i]
            for j in range(n):
                rowi[j] = min(rowi[j], dik + rowk[j])
    return dist


@numba.njit(cache=True, nogil=True)
def fw_serial_pred(dist, pred):
    n = dist.shape[0]
    rowk = np.empty(n, dtype=dist.dtype)
    predk = np.empty(n, dtype=pred.dtype)
    for k in range(n):
        rowk[:] = dist[k]
        predk[:] = pred[k]
        for i in range(n):
            dik = dist[i, k]
            rowi = dist[i]
            predi = pred[i]
            for j in range(n):
                c = dik + rowk[j]
                if c < rowi[j]:
                    rowi[j] = c
                    predi[j] = predk[j]
    return dist


@numba.njit(cache=True, nogil=True, parallel=True)
def fw_parallel(dist):
    n = dist.shape[0]
    rowk = np.empty(n, dtype=dist.dtype)
    for k in range(n):
        for j in range(n):  # a plain loop: numba would fuse an array copy into the prange below
            rowk[j] = dist[k, j]
        for i in numba.prange(n):
            dik = dist[i, k]
            rowi = dist[i]
            for j in range(n):
                rowi[j] = min(rowi[j], dik + rowk[j])
    return dist


@numba.njit(cache=True, nogil=True, parallel=True)
def fw_parallel_pred(dist, pred):
    n = dist.shape[0]
    rowk = np.empty(n, dtype=dist.dtype)
    predk = np.empty(n, dtype=pred.dtype)
    for k in range(n):
        for j in range(n):  # a plain loop: numba would fuse an array copy into the prange below
            rowk[j] = dist[k, j]
            predk[j] = pred[k, j]
        for i in numba.prange(n):
            dik = dist[i, k]
            rowi = dist[i]
            predi = pred[i]
            for j in range(n):
                c = dik + rowk[j]
                if c < rowi[j]:
                    rowi[j] = c
                    predi[j] = predk[j]
    return dist
