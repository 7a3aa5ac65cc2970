"""Turning generated edge lists into CSR arrays, fast and lean enough for 10^8 edges.

``CSRGraph.from_edges`` sorts the whole COO list (a lexsort of 64-bit pairs), and a plain
counting sort scatters every entry to a random place in a 1 GB array - one cache miss per
entry, serially. Here the entries are first partitioned into buckets of consecutive rows
(a radix pass: a few thousand sequential output streams, chunks of the input in parallel),
then each bucket - small enough for the cache - is counted, scattered into its rows,
sorted and deduplicated on its own, buckets in parallel. Indices stay int32 throughout.
The result does not depend on the number of threads (every row ends up sorted).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from kernels.graph.csr import INDEX_DTYPE, INDPTR_DTYPE
from kernels.graph.generators._sorting import sort_columns

_BUCKET_ENTRIES = 1 << 17  # aim: one bucket's columns (512 KB) stay in the L2 cache
_MAX_BUCKETS = 1 << 16


@njit(cache=True, nogil=True, parallel=True)
def _count_by_bucket(src, dst, shift, n_buckets, n_chunks, symmetrize, drop_loops):
    counts = np.zeros((n_chunks, n_buckets), dtype=np.int64)
    m = len(src)
    for t in prange(n_chunks):
        for e in range(m * t // n_chunks, m * (t + 1) // n_chunks):
            s = src[e]
            d = dst[e]
            if s == d:
                if not drop_loops:
                    counts[t, s >> shift] += 1
                continue
            counts[t, s >> shift] += 1
            if symmetrize:
                counts[t, d >> shift] += 1
    return counts


@njit(cache=True, nogil=True, parallel=True)
def _fill_buckets(src, dst, shift, starts, symmetrize, drop_loops, rows, cols):
    """Write the entries bucket by bucket; ``starts[t, b]`` is where chunk t writes bucket b."""
    n_chunks = starts.shape[0]
    m = len(src)
    for t in prange(n_chunks):
        cursor = starts[t].copy()
        for e in range(m * t // n_chunks, m * (t + 1) // n_chunks):
            s = src[e]
            d = dst[e]
            if s == d and drop_loops:
                continue
            b = s >> shift
            rows[cursor[b]] = s
            cols[cursor[b]] = d
            cursor[b] += 1
            if symmetrize and s != d:
                b = d >> shift
                rows[cursor[b]] = d
                cols[cursor[b]] = s
                cursor[b] += 1


@njit(cache=True, nogil=True)
def _sort_row(row, dedupe):
    """Sort in place; with ``dedupe`` move the distinct values to the front. Returns how many to keep."""
    sort_columns(row)
    if not dedupe or len(row) < 2:
        return len(row)
    w = 1
    for k in range(1, len(row)):
        if row[k] != row[w - 1]:
            row[w] = row[k]
            w += 1
    return w


@njit(cache=True, nogil=True, parallel=True)
def _rows_of_buckets(rows, cols, bucket_start, shift, n_rows, dedupe, indices, row_start, kept):
    """Per bucket: counting-sort its entries into rows, then sort/dedupe every row."""
    for b in prange(len(bucket_start) - 1):
        first_row = b << shift
        end_row = min(n_rows, (b + 1) << shift)
        lo = bucket_start[b]
        offset = np.zeros(end_row - first_row + 1, dtype=np.int64)
        for k in range(lo, bucket_start[b + 1]):
            offset[rows[k] - first_row + 1] += 1
        for i in range(end_row - first_row):
            offset[i + 1] += offset[i]
        cursor = offset[:-1].copy()
        for k in range(lo, bucket_start[b + 1]):
            r = rows[k] - first_row
            indices[lo + cursor[r]] = cols[k]
            cursor[r] += 1
        for i in range(end_row - first_row):
            row_start[first_row + i] = lo + offset[i]
            kept[first_row + i] = _sort_row(indices[lo + offset[i]:lo + offset[i + 1]], dedupe)


@njit(cache=True, nogil=True, parallel=True)
def _compact_rows(row_start, indices, new_indptr, out):
    for r in prange(len(new_indptr) - 1):
        lo = row_start[r]
        start = new_indptr[r]
        for k in range(new_indptr[r + 1] - start):
            out[start + k] = indices[lo + k]


def _bucket_shift(n_rows: int, n_entries: int) -> int:
    """log2 of the rows per bucket: about _BUCKET_ENTRIES entries each, at most _MAX_BUCKETS buckets."""
    per_row = max(n_entries / max(n_rows, 1), 1e-9)
    shift = max(0, int(np.log2(max(_BUCKET_ENTRIES / per_row, 1.0))))
    while (n_rows >> shift) >= _MAX_BUCKETS:
        shift += 1
    return shift


def csr_from_pairs(n_rows: int, src: np.ndarray, dst: np.ndarray, *, symmetrize: bool,
                   drop_loops: bool, dedupe: bool) -> tuple[np.ndarray, np.ndarray]:
    """CSR ``(indptr, indices)`` of the entries ``(src[e], dst[e])``, columns sorted.

    ``symmetrize`` also stores every non-loop entry reversed (an undirected edge list);
    ``drop_loops`` leaves out ``s == d``; ``dedupe`` keeps one copy of repeated entries.
    ``src`` and ``dst`` are integer arrays of equal length with values in ``[0, n_rows)``."""
    src = np.ascontiguousarray(src)
    dst = np.ascontiguousarray(dst)
    shift = _bucket_shift(n_rows, len(src) * (2 if symmetrize else 1))
    n_buckets = max(1, ((n_rows - 1) >> shift) + 1)
    n_chunks = max(1, min(4 * numba.get_num_threads(), len(src) // 65536))
    counts = _count_by_bucket(src, dst, shift, n_buckets, n_chunks, symmetrize, drop_loops)
    # Where chunk t writes bucket b: buckets in order, chunks in order inside each bucket.
    per_bucket = counts.sum(axis=0)
    bucket_start = np.zeros(n_buckets + 1, dtype=np.int64)
    np.cumsum(per_bucket, out=bucket_start[1:])
    starts = bucket_start[:-1] + np.cumsum(counts, axis=0) - counts
    n_entries = int(bucket_start[-1])
    rows = np.empty(n_entries, dtype=INDEX_DTYPE)
    cols = np.empty(n_entries, dtype=INDEX_DTYPE)
    _fill_buckets(src, dst, shift, starts, symmetrize, drop_loops, rows, cols)
    indices = np.empty(n_entries, dtype=INDEX_DTYPE)
    row_start = np.empty(n_rows + 1, dtype=INDPTR_DTYPE)
    row_start[n_rows] = n_entries
    kept = np.empty(n_rows, dtype=INDPTR_DTYPE)
    _rows_of_buckets(rows, cols, bucket_start, shift, n_rows, dedupe, indices, row_start, kept)
    del rows, cols
    if int(kept.sum()) == n_entries:
        return row_start, indices
    new_indptr = np.zeros(n_rows + 1, dtype=INDPTR_DTYPE)
    np.cumsum(kept, out=new_indptr[1:])
    out = np.empty(int(new_indptr[-1]), dtype=INDEX_DTYPE)
    _compact_rows(row_start, indices, new_indptr, out)
    return new_indptr, out


@njit(cache=True, nogil=True, parallel=True)
def _sort_rows(indptr, indices):
    for r in prange(len(indptr) - 1):
        _sort_row(indices[indptr[r]:indptr[r + 1]], False)


def sort_rows_in_place(indptr: np.ndarray, indices: np.ndarray) -> None:
    """Sort the columns of every row (for CSR arrays produced in another order)."""
    _sort_rows(indptr, indices)
