"""Turning generated edge lists into CSR arrays, fast and lean enough for 10^8 edges.

``CSRGraph.from_edges`` sorts the whole COO list (a lexsort of 64-bit pairs); a generator
producing 1.3 x 10^8 entries cannot afford that. Here the entries are bucketed by row with
a counting sort (two linear passes), then each row is sorted and deduplicated on its own,
rows in parallel. Indices stay int32 throughout: 4 bytes per stored entry plus the input.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from kernels.graph.csr import INDEX_DTYPE, INDPTR_DTYPE


@njit(cache=True, nogil=True)
def _count_entries(src, dst, n_rows, symmetrize, drop_loops):
    counts = np.zeros(n_rows + 1, dtype=np.int64)
    for e in range(len(src)):
        s = src[e]
        d = dst[e]
        if s == d:
            if not drop_loops:
                counts[s + 1] += 1
            continue
        counts[s + 1] += 1
        if symmetrize:
            counts[d + 1] += 1
    return counts


@njit(cache=True, nogil=True)
def _scatter_entries(src, dst, cursor, indices, symmetrize, drop_loops):
    for e in range(len(src)):
        s = src[e]
        d = dst[e]
        if s == d:
            if not drop_loops:
                indices[cursor[s]] = d
                cursor[s] += 1
            continue
        indices[cursor[s]] = d
        cursor[s] += 1
        if symmetrize:
            indices[cursor[d]] = s
            cursor[d] += 1


@njit(cache=True, nogil=True, parallel=True)
def _sort_rows(indptr, indices, dedupe, kept):
    """Sort each row in place; with ``dedupe`` move its distinct columns to the front.

    ``kept[r]`` receives the number of entries row ``r`` keeps."""
    n_rows = len(indptr) - 1
    for r in prange(n_rows):
        lo = indptr[r]
        hi = indptr[r + 1]
        row = indices[lo:hi]
        row.sort()
        if not dedupe or hi - lo < 2:
            kept[r] = hi - lo
            continue
        w = 1
        for k in range(1, hi - lo):
            if row[k] != row[w - 1]:
                row[w] = row[k]
                w += 1
        kept[r] = w


@njit(cache=True, nogil=True, parallel=True)
def _compact_rows(indptr, indices, new_indptr, out):
    for r in prange(len(indptr) - 1):
        lo = indptr[r]
        start = new_indptr[r]
        for k in range(new_indptr[r + 1] - start):
            out[start + k] = indices[lo + k]


def csr_from_pairs(n_rows: int, src: np.ndarray, dst: np.ndarray, *, symmetrize: bool,
                   drop_loops: bool, dedupe: bool) -> tuple[np.ndarray, np.ndarray]:
    """CSR ``(indptr, indices)`` of the entries ``(src[e], dst[e])``, columns sorted.

    ``symmetrize`` also stores every non-loop entry reversed (an undirected edge list);
    ``drop_loops`` leaves out ``s == d``; ``dedupe`` keeps one copy of repeated entries.
    ``src`` and ``dst`` must be integer arrays of equal length with values in range."""
    src = np.ascontiguousarray(src)
    dst = np.ascontiguousarray(dst)
    counts = _count_entries(src, dst, n_rows, symmetrize, drop_loops)
    indptr = np.cumsum(counts, out=counts)  # in place: counts becomes the row pointer
    indices = np.empty(int(indptr[-1]), dtype=INDEX_DTYPE)
    _scatter_entries(src, dst, indptr[:-1].copy(), indices, symmetrize, drop_loops)
    kept = np.empty(n_rows, dtype=INDPTR_DTYPE)
    _sort_rows(indptr, indices, dedupe, kept)
    if not dedupe or int(kept.sum()) == len(indices):
        return indptr, indices
    new_indptr = np.zeros(n_rows + 1, dtype=INDPTR_DTYPE)
    np.cumsum(kept, out=new_indptr[1:])
    out = np.empty(int(new_indptr[-1]), dtype=INDEX_DTYPE)
    _compact_rows(indptr, indices, new_indptr, out)
    return new_indptr, out


def sort_rows_in_place(indptr: np.ndarray, indices: np.ndarray) -> None:
    """Sort the columns of every row (for CSR arrays produced in another order)."""
    kept = np.empty(len(indptr) - 1, dtype=INDPTR_DTYPE)
    _sort_rows(indptr, indices, False, kept)
