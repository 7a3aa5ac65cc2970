"""Reference triangle counts: SciPy sparse products, and an oriented CPU count for big inputs.

Both are written independently of the GPU code (their own orientation, their own
intersection method), so that they can judge it.

* Total: with ``U`` the degree-oriented adjacency (``U[u, v] = 1`` for an edge whose end
  ``v`` has the larger (degree, id)), every triangle ``a < b < c`` in that order is one
  term of ``sum((Uᵀ·U) ∘ U)``: ``Uᵀ·U`` counts the common lower neighbour ``a`` of each
  pair ``(b, c)`` and the mask keeps pairs that are edges. This is the report's
  ``(L·L) ∘ L`` after renumbering vertices by degree; its cost is ``Σ d⁺(a)²`` multiply-adds,
  which degree ordering keeps small (``d⁺ ≤ √(2m)``), where the natural order's ``L·L``
  explodes on hubs.
* Per vertex: ``t = rowsum((A·A) ∘ A) / 2`` (each triangle at each of its corners,
  NetworkX's ``triangles``), cost ``Σ d²``.

Products are taken over blocks of rows holding a bounded number of multiply-adds, so memory
stays bounded. SciPy's products run on one core (about 6·10⁷ multiply-adds per second here):
when the estimate exceeds :data:`SCIPY_WORK_LIMIT`, the reference is an oriented count in
numba instead (a bitmap per thread, in parallel, each edge counted from the end with the
shorter out-list; see :func:`_bitmap_count`), and the verification says so.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from kernels.graph.csr import CSRGraph

# Multiply-adds per block of rows: bounds the product's memory (~16 bytes each).
CHUNK_WORK = 8_000_000
# Above this many multiply-adds SciPy would take more than ~5 s: use the numba count.
SCIPY_WORK_LIMIT = 300_000_000


def degree_oriented(graph: CSRGraph) -> sp.csr_matrix:
    """``U``: each undirected edge once, from the end of smaller (degree, id) to the larger."""
    n = graph.n_rows
    deg = np.diff(graph.indptr)
    rank_key = deg.astype(np.int64) * max(n, 1) + np.arange(n, dtype=np.int64)
    rows = graph.row_of_entry()
    keep = rank_key[rows] < rank_key[graph.indices]
    # filtering sorted rows keeps them sorted: the CSR arrays come straight from the mask
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[keep], minlength=n), out=indptr[1:])
    indices = graph.indices[keep]
    u = sp.csr_matrix((np.ones(len(indices), dtype=np.int64), indices, indptr), shape=(n, n))
    u.has_sorted_indices = True
    return u


def _row_blocks(row_work: np.ndarray, limit: int) -> list[tuple[int, int]]:
    """Consecutive row ranges whose summed work stays near ``limit`` (a heavy row is alone)."""
    n = len(row_work)
    if n == 0:
        return []
    cum = np.cumsum(row_work, dtype=np.int64)
    blocks, start = [], 0
    while start < n:
        base = cum[start - 1] if start else 0
        stop = int(np.searchsorted(cum, base + limit, side="right"))
        stop = max(stop, start + 1)
        blocks.append((start, min(stop, n)))
        start = stop
    return blocks


def scipy_work_total(u: sp.csr_matrix) -> int:
    out_deg = np.diff(u.indptr).astype(np.int64)
    return int(np.dot(out_deg, out_deg))


def scipy_work_per_vertex(graph: CSRGraph) -> int:
    deg = np.diff(graph.indptr).astype(np.int64)
    return int(np.dot(deg, deg))


def scipy_total(graph: CSRGraph, u: sp.csr_matrix | None = None) -> np.int64:
    """``sum((Uᵀ·U) ∘ U)`` over blocks of rows of ``Uᵀ``."""
    u = degree_oriented(graph) if u is None else u
    ut = u.T.tocsr()
    row_work = ut @ np.diff(u.indptr).astype(np.int64)  # multiply-adds of each row of Uᵀ·U
    total = 0
    for a, b in _row_blocks(row_work, CHUNK_WORK):
        if row_work[a:b].sum() == 0:
            continue
        total += int((ut[a:b] @ u).multiply(u[a:b]).sum())
    return np.int64(total)


def scipy_per_vertex(graph: CSRGraph) -> np.ndarray:
    """``rowsum((A·A) ∘ A) / 2`` over blocks of rows."""
    a = graph.to_scipy(dtype=np.int64)
    a.data[:] = 1
    deg = np.diff(a.indptr).astype(np.int64)
    row_work = a @ deg
    out = np.zeros(graph.n_rows, dtype=np.int64)
    for lo, hi in _row_blocks(row_work, CHUNK_WORK):
        block = (a[lo:hi] @ a).multiply(a[lo:hi])
        out[lo:hi] = np.asarray(block.sum(axis=1)).ravel()
    return out // 2


@numba.njit(cache=True, nogil=True, inline="always")
def _marked(bits, words, lo, hi):
    """How many of ``words[lo:hi]`` have their bit set in ``bits``."""
    found = 0
    for f in range(lo, hi):
        c = words[f]
        found += np.int64((bits[c >> 6] >> np.uint64(c & 63)) & np.uint64(1))
    return found


@numba.njit(cache=True, nogil=True, parallel=True)
def _bitmap_count(uptr, uidx, tptr, tidx, n, per_vertex, n_parts):
    """Oriented count with a bitmap of ``N⁺(v)`` per owner ``v``.

    Each oriented edge ``a → b`` (``U[a, b]``) is counted at one end: at ``a`` (walking
    ``N⁺(b)`` through ``a``'s bitmap) when ``d⁺b ≤ d⁺a``, else at ``b`` (walking ``N⁺(a)``,
    ``a`` found in ``b``'s row of ``Uᵀ``); either way the common ``c`` close the triangles
    whose two lowest corners are ``a, b``, at the cost of the smaller out-list. Part ``p``
    takes owners p, p + n_parts, ... (interleaved, so hubs spread over parts) and has its own
    bitmap and, for per-vertex counts, its own row of ``counts``."""
    totals = np.zeros(n_parts, dtype=np.int64)
    counts = np.zeros((n_parts if per_vertex else 1, n if per_vertex else 1), dtype=np.int64)
    words = (n + 63) // 64
    for part in numba.prange(n_parts):
        bits = np.zeros(max(words, 1), dtype=np.uint64)
        found_here = 0
        for v in range(part, n, n_parts):
            lo, hi = uptr[v], uptr[v + 1]
            dv = hi - lo
            if dv == 0:
                continue
            for e in range(lo, hi):
                c = uidx[e]
                bits[c >> 6] |= np.uint64(1) << np.uint64(c & 63)
            # partners: out-neighbours with d+ <= d+(v), in-neighbours with d+ < d+(v)
            for side in range(2):
                plo, phi = (lo, hi) if side == 0 else (tptr[v], tptr[v + 1])
                for e in range(plo, phi):
                    p = uidx[e] if side == 0 else tidx[e]
                    dp = uptr[p + 1] - uptr[p]
                    if dp == 0 or (side == 0 and dp > dv) or (side == 1 and dp >= dv):
                        continue
                    if per_vertex:
                        found = 0
                        for f in range(uptr[p], uptr[p + 1]):
                            c = uidx[f]
                            if (bits[c >> 6] >> np.uint64(c & 63)) & np.uint64(1):
                                counts[part, c] += 1
                                found += 1
                        counts[part, p] += found
                        counts[part, v] += found
                    else:
                        found = _marked(bits, uidx, uptr[p], uptr[p + 1])
                    found_here += found
            for e in range(lo, hi):
                bits[uidx[e] >> 6] = np.uint64(0)
        totals[part] = found_here
    if per_vertex:
        return totals.sum(), counts.sum(axis=0)
    return totals.sum(), counts[0]


def oriented_count(graph: CSRGraph, per_vertex: bool, u: sp.csr_matrix | None = None):
    """The numba count: the total (np.int64) or the per-vertex array."""
    u = degree_oriented(graph) if u is None else u
    ut = u.T.tocsr()
    parts = max(1, numba.get_num_threads())
    total, counts = _bitmap_count(u.indptr.astype(np.int64), u.indices.astype(np.int32),
                                  ut.indptr.astype(np.int64), ut.indices.astype(np.int32), graph.n_rows,
                                  per_vertex, parts)
    return counts if per_vertex else np.int64(total)


def reference_counts(graph: CSRGraph, per_vertex: bool) -> tuple[object, str]:
    """The reference output and the name of the method that produced it."""
    if per_vertex:
        work = scipy_work_per_vertex(graph)
        if work <= SCIPY_WORK_LIMIT:
            return scipy_per_vertex(graph), "scipy rowsum((A·A)∘A)/2"
        return oriented_count(graph, True), (f"numba oriented count (SciPy would need {work:.2e} "
                                             "multiply-adds)")
    u = degree_oriented(graph)
    work = scipy_work_total(u)
    if work <= SCIPY_WORK_LIMIT:
        return scipy_total(graph, u), "scipy sum((Uᵀ·U)∘U)"
    return oriented_count(graph, False, u), f"numba oriented count (SciPy would need {work:.2e} multiply-adds)"
