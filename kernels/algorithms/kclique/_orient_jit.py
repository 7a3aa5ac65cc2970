"""numba helpers of :mod:`kernels.algorithms.kclique.prepare` (linear-time on 10^7 edges)."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def peeling_order(indptr, indices):
    """Batagelj-Zaversnik core decomposition; returns the vertices in the order they are peeled.

    When a vertex is peeled its bucket value equals its core number and bounds the number of
    its neighbours peeled after it, so orienting edges along this order gives out-degrees of
    at most the degeneracy."""
    n = len(indptr) - 1
    deg = np.empty(n, dtype=np.int64)
    max_deg = 0
    for v in range(n):
        deg[v] = indptr[v + 1] - indptr[v]
        if deg[v] > max_deg:
            max_deg = deg[v]
    bin_start = np.zeros(max_deg + 2, dtype=np.int64)
    for v in range(n):
        bin_start[deg[v]] += 1
    start = 0
    for d in range(max_deg + 1):
        count = bin_start[d]
        bin_start[d] = start
        start += count
    vert = np.empty(n, dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)
    for v in range(n):
        pos[v] = bin_start[deg[v]]
        vert[pos[v]] = v
        bin_start[deg[v]] += 1
    for d in range(max_deg, 0, -1):
        bin_start[d] = bin_start[d - 1]
    bin_start[0] = 0
    for i in range(n):
        v = vert[i]
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if deg[u] > deg[v]:
                du = deg[u]
                pu = pos[u]
                pw = bin_start[du]
                w = vert[pw]
                if u != w:
                    pos[u] = pw
                    vert[pu] = w
                    pos[w] = pu
                    vert[pw] = u
                bin_start[du] += 1
                deg[u] = du - 1
    return vert


@numba.njit(cache=True, nogil=True)
def oriented_csr(indptr, indices, rank):
    """Out-lists of the DAG "lower rank -> higher rank" in the relabelled ids, sorted."""
    n = len(indptr) - 1
    out_deg = np.zeros(n, dtype=np.int64)
    for v in range(n):
        rv = rank[v]
        for e in range(indptr[v], indptr[v + 1]):
            if rank[indices[e]] > rv:
                out_deg[rv] += 1
    new_indptr = np.zeros(n + 1, dtype=np.int64)
    for v in range(n):
        new_indptr[v + 1] = new_indptr[v] + out_deg[v]
    new_indices = np.empty(new_indptr[n], dtype=np.int32)
    cursor = new_indptr[:n].copy()
    for v in range(n):
        rv = rank[v]
        for e in range(indptr[v], indptr[v + 1]):
            ru = rank[indices[e]]
            if ru > rv:
                new_indices[cursor[rv]] = ru
                cursor[rv] += 1
    for v in range(n):
        new_indices[new_indptr[v]:new_indptr[v + 1]].sort()
    return new_indptr, new_indices
