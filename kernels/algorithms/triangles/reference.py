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
when the estimate exceeds :data:`SCIPY_WORK_LIMIT`, the reference is the oriented count in
numba instead (a marker array per thread; parallel), and the verification says so.
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
    u = sp.csr_matrix((np.ones(int(keep.sum()), dtype=np.int64), (rows[keep], graph.indices[keep])),
                      shape=(n, n))
    u.sort_indices()
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


@numba.njit(cache=True, nogil=True, parallel=True)
def _marker_count(uptr, uidx, n, per_vertex, n_parts):
    """Oriented count with a marker array: mark N⁺(a), walk N⁺(b) for each b in N⁺(a).

    Part ``p`` takes vertices p, p + n_parts, ... (interleaved, so hubs spread over parts)
    and has its own marker and, for per-vertex counts, its own row of ``counts``."""
    totals = np.zeros(n_parts, dtype=np.int64)
    counts = np.zeros((n_parts if per_vertex else 1, n if per_vertex else 1), dtype=np.int64)
    for p in numba.prange(n_parts):
        mark = np.zeros(n, dtype=np.bool_)
        found = 0
        for a in range(p, n, n_parts):
            lo, hi = uptr[a], uptr[a + 1]
            if hi - lo < 2:
                continue
            for e in range(lo, hi):
                mark[uidx[e]] = True
            for e in range(lo, hi):
                b = uidx[e]
                here = 0
                for f in range(uptr[b], uptr[b + 1]):
                    c = uidx[f]
                    if mark[c]:
                        here += 1
                        if per_vertex:
                            counts[p, c] += 1
                if per_vertex and here:
                    counts[p, a] += here
                    counts[p, b] += here
                found += here
            for e in range(lo, hi):
                mark[uidx[e]] = False
        totals[p] = found
    if per_vertex:
        return totals.sum(), counts.sum(axis=0)
    return totals.sum(), counts[0]


def oriented_count(graph: CSRGraph, per_vertex: bool, u: sp.csr_matrix | None = None):
    """The numba count: the total (np.int64) or the per-vertex array."""
    u = degree_oriented(graph) if u is None else u
    parts = max(1, numba.get_num_threads())
    total, counts = _marker_count(u.indptr.astype(np.int64), u.indices.astype(np.int32), graph.n_rows,
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
