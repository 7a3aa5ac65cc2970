"""Bulk conversion between CSR and slotted pages (numba-compiled, linear in the graph size).

Packing is greedy in vertex order: a vertex needs ``3 + degree`` words (degree word, list,
two slot words); it joins the current page while the page's records and slots stay within
``fill`` of the usable words (``page_size - 3``), else it opens the next page. A vertex
whose list does not fit a page on its own (degree > ``page_size - 6``) gets a large list of
``ceil(degree / (page_size - 6))`` pages. ``fill < 1`` leaves room in every page so that the
first edits shift words instead of splitting pages.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels.errors import InputRequirementError
from kernels.graph.csr import CSRGraph
from kernels.graph.slotted.layout import HEADER_WORDS, RECORD_START

_JIT = dict(cache=True, nogil=True)


@njit(**_JIT)
def _count_pages(indptr, P, limit):
    """Pages the greedy packing uses (and how many of them belong to large lists)."""
    per_large = P - 6
    n = indptr.shape[0] - 1
    pages = 0
    large_pages = 0
    used = -1                      # words used in the open ordinary page; -1: none open
    for v in range(n):
        d = indptr[v + 1] - indptr[v]
        need = d + 3
        if d > per_large:
            k = (d + per_large - 1) // per_large
            pages += k
            large_pages += k
            used = -1
        elif used >= 0 and used + need <= limit:
            used += need
        else:
            pages += 1
            used = need
    return pages, large_pages


@njit(**_JIT)
def _write_pages(indptr, indices, weights, weighted, P, limit, pool, wpool, index):
    """Fill ``pool`` page by page (physical order = logical order) and the index."""
    per_large = P - 6
    n = indptr.shape[0] - 1
    page = -1
    used = -1
    for v in range(n):
        a = indptr[v]
        d = indptr[v + 1] - a
        need = d + 3
        if d > per_large:
            k = (d + per_large - 1) // per_large
            for p in range(k):
                page += 1
                base = page * P
                lo = p * per_large
                hi = min(d, lo + per_large)
                pool[base] = 1
                pool[base + 1] = RECORD_START + 1 + hi - lo
                pool[base + 2] = 1
                pool[base + RECORD_START] = d if p == 0 else hi - lo
                for t in range(lo, hi):
                    pool[base + RECORD_START + 1 + t - lo] = indices[a + t]
                    if weighted:
                        wpool[base + RECORD_START + 1 + t - lo] = weights[a + t]
                pool[base + P - 2] = RECORD_START
                pool[base + P - 1] = v
                index[0, page] = v
                index[1, page] = p
                index[2, page] = k
                index[3, page] = page
            used = -1
            continue
        if not (used >= 0 and used + need <= limit):
            page += 1
            used = 0
            base = page * P
            pool[base + 1] = RECORD_START
            index[0, page] = v
            index[1, page] = -1
            index[2, page] = -1
            index[3, page] = page
        base = page * P
        s = pool[base]
        off = pool[base + 1]
        pool[base + off] = d
        for t in range(d):
            pool[base + off + 1 + t] = indices[a + t]
            if weighted:
                wpool[base + off + 1 + t] = weights[a + t]
        pool[base + P - 2 - 2 * s] = off
        pool[base + P - 1 - 2 * s] = v
        pool[base] = s + 1
        pool[base + 1] = off + 1 + d
        used += need


def usable_limit(page_size: int, fill: float) -> int:
    """Words of records + slots an ordinary page may take in a bulk build."""
    return max(3, int(fill * (page_size - HEADER_WORDS)))


def count_pages(indptr: np.ndarray, page_size: int, fill: float) -> tuple[int, int]:
    """(pages, pages in large lists) a bulk build of this degree structure takes."""
    pages, large = _count_pages(np.asarray(indptr, dtype=np.int64), page_size,
                                usable_limit(page_size, fill))
    return int(pages), int(large)


def write_pages(csr: CSRGraph, page_size: int, fill: float, n_pages: int, weight_dtype):
    """Pool, weight pool (or an empty array) and index (4 x n_pages) of the bulk build."""
    pool = np.zeros(n_pages * page_size, dtype=np.int32)
    weighted = csr.weights is not None
    wpool = np.zeros(n_pages * page_size if weighted else 0, dtype=weight_dtype)
    weights = (csr.weights.astype(weight_dtype, copy=False) if weighted
               else np.zeros(0, dtype=weight_dtype))
    index = np.zeros((4, n_pages), dtype=np.int32)
    _write_pages(csr.indptr, csr.indices, weights, weighted, page_size,
                 usable_limit(page_size, fill), pool, wpool, index)
    return pool, wpool, index


@njit(**_JIT)
def _row_sorted_copy(indptr, cols, wcols, weighted):
    """Sort each row's columns (and weights alongside) in place."""
    for r in range(indptr.shape[0] - 1):
        a = indptr[r]
        b = indptr[r + 1]
        sorted_already = True
        for t in range(a + 1, b):
            if cols[t - 1] > cols[t]:
                sorted_already = False
                break
        if sorted_already:
            continue
        order = np.argsort(cols[a:b], kind="mergesort")
        c = cols[a:b][order]
        cols[a:b] = c
        if weighted:
            wv = wcols[a:b][order]
            wcols[a:b] = wv


@njit(**_JIT)
def _gather(pool, wpool, weighted, index, n_pages, P, n_ids, indptr, cols, wcols):
    """Walk the pages in logical order and write each vertex's list at its CSR row."""
    fill = np.zeros(n_ids, dtype=np.int64)
    for i in range(n_pages):
        base = index[3, i] * P
        if index[2, i] > 0:
            v = pool[base + P - 1]
            for w in range(RECORD_START + 1, pool[base + 1]):
                cols[indptr[v] + fill[v]] = pool[base + w]
                if weighted:
                    wcols[indptr[v] + fill[v]] = wpool[base + w]
                fill[v] += 1
            continue
        for s in range(pool[base]):
            off = pool[base + P - 2 - 2 * s]
            v = pool[base + P - 1 - 2 * s]
            d = pool[base + off]
            for t in range(d):
                cols[indptr[v] + t] = pool[base + off + 1 + t]
                if weighted:
                    wcols[indptr[v] + t] = wpool[base + off + 1 + t]


@njit(**_JIT)
def _degrees(pool, index, n_pages, P, n_ids):
    deg = np.zeros(n_ids, dtype=np.int64)
    for i in range(n_pages):
        base = index[3, i] * P
        if index[2, i] > 0:
            if index[1, i] == 0:
                deg[pool[base + P - 1]] = pool[base + RECORD_START]
            continue
        for s in range(pool[base]):
            deg[pool[base + P - 1 - 2 * s]] = pool[base + pool[base + P - 2 - 2 * s]]
    return deg


def gather_csr(pool, wpool, weighted, index, n_pages, page_size, n_ids, weight_dtype):
    """indptr, indices (columns sorted within rows) and weights over ids 0..n_ids-1."""
    deg = _degrees(pool, index, n_pages, page_size, n_ids)
    indptr = np.zeros(n_ids + 1, dtype=np.int64)
    np.cumsum(deg, out=indptr[1:])
    cols = np.empty(indptr[-1], dtype=np.int32)
    wcols = np.empty(indptr[-1] if weighted else 0, dtype=weight_dtype)
    _gather(pool, wpool, weighted, index, n_pages, page_size, n_ids, indptr, cols, wcols)
    _row_sorted_copy(indptr, cols, wcols, weighted)
    return indptr, cols, (wcols if weighted else None)


# ---- inputs -----------------------------------------------------------------------------
@njit(**_JIT)
def _first_duplicate(indptr, indices):
    """Row of the first repeated column (columns sorted within rows), or -1."""
    for r in range(indptr.shape[0] - 1):
        for t in range(indptr[r] + 1, indptr[r + 1]):
            if indices[t] == indices[t - 1]:
                return r
    return -1


@njit(**_JIT)
def _first_unmatched(indptr, indices):
    """Row of the first entry r -> c without c -> r, or -1 (columns sorted, no duplicates).

    Visiting entries in row order, column c is met by increasing rows; in a symmetric matrix
    the k-th visit to column c must read row c's k-th entry. One pass, no binary searches."""
    cursor = indptr[:-1].copy()
    for r in range(indptr.shape[0] - 1):
        for t in range(indptr[r], indptr[r + 1]):
            c = indices[t]
            k = cursor[c]
            if k >= indptr[c + 1] or indices[k] != r:
                return r
            cursor[c] = k + 1
    return -1


def check_buildable(csr: CSRGraph, check_symmetry: bool = True) -> None:
    """Refuse what a slotted graph cannot hold faithfully, saying how to fix it."""
    if not csr.is_square:
        raise InputRequirementError(
            f"slotted pages hold graphs; '{csr.name}' is a {csr.n_rows} x {csr.n_cols} matrix "
            "(use square_graph_form() to read it as a directed graph over max(rows, cols) vertices)")
    if csr.n_rows >= 2**31 - 1:
        raise InputRequirementError("slotted pages hold at most 2**31 - 2 vertices (int32 ids)")
    row = int(_first_duplicate(csr.indptr, csr.indices))
    if row >= 0:
        raise InputRequirementError(
            f"'{csr.name}' repeats an entry in row {row}; slotted graphs refuse duplicate edges "
            "(clean it first: graph-kernels convert --drop-duplicates)")
    if check_symmetry and not csr.directed:
        row = int(_first_unmatched(csr.indptr, csr.indices))
        if row >= 0:
            raise InputRequirementError(
                f"'{csr.name}' is marked undirected but row {row} has an entry without its reverse")


def square_graph_form(csr: CSRGraph) -> CSRGraph:
    """A rectangular matrix read as a directed graph over max(rows, cols) vertices (empty
    rows added); a square input is returned unchanged."""
    if csr.is_square:
        return csr
    n = max(csr.n_rows, csr.n_cols)
    indptr = np.concatenate([csr.indptr, np.full(n - csr.n_rows, csr.indptr[-1], dtype=np.int64)])
    return CSRGraph(indptr, csr.indices, csr.weights, n_cols=n, directed=True, name=csr.name,
                    source=csr.source, notices=(*csr.notices, f"read as a directed graph on {n} vertices"))
