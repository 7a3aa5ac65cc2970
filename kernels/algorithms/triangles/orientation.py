"""Degree orientation and the work schedule of ``gpu-oriented`` (host side, numba, parallel).

Every undirected edge ``{u, v}`` is kept once, as ``u → v`` where ``(deg u, u) < (deg v, v)``.
Each triangle then has exactly one corner ``a`` with both other corners in ``N⁺(a)``, and
``|N⁺(v)| ≤ √(2m)`` for every vertex (a vertex with ``d⁺`` out-neighbours has them all of
degree ≥ its own ``≥ d⁺``, so ``d⁺² ≤ 2m``): hubs lose their long lists. Out-lists stay sorted
by id (filtering a sorted row keeps its order); vertices are not renumbered.

The kernel's cost at vertex ``a`` is ``work(a) = Σ_{b ∈ N⁺(a)} d⁺(b)`` probes. Only vertices
with ``d⁺ ≥ 2`` and ``work > 0`` can be the first corner of a triangle; they are listed in
decreasing order of ``⌊log₂ work⌋`` (a stable radix sort of small keys, O(n)) so that the
vertices processed side by side in one block have similar costs, the heaviest first.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, parallel=True)
def _out_degrees(indptr, indices, out_deg):
    for u in numba.prange(len(indptr) - 1):
        du = indptr[u + 1] - indptr[u]
        c = 0
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            dv = indptr[v + 1] - indptr[v]
            if dv > du or (dv == du and v > u):
                c += 1
        out_deg[u] = c


@numba.njit(cache=True, nogil=True, parallel=True)
def _fill_out_lists(indptr, indices, out_ptr, out_idx):
    for u in numba.prange(len(indptr) - 1):
        du = indptr[u + 1] - indptr[u]
        p = out_ptr[u]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            dv = indptr[v + 1] - indptr[v]
            if dv > du or (dv == du and v > u):
                out_idx[p] = v
                p += 1


@numba.njit(cache=True, nogil=True, parallel=True)
def _work(out_ptr, out_idx, work):
    for u in numba.prange(len(out_ptr) - 1):
        w = 0
        if out_ptr[u + 1] - out_ptr[u] >= 2:
            for e in range(out_ptr[u], out_ptr[u + 1]):
                v = out_idx[e]
                w += out_ptr[v + 1] - out_ptr[v]
        work[u] = w


@dataclass
class OrientedGraph:
    out_ptr: np.ndarray   # int64, n + 1
    out_idx: np.ndarray   # int32, m: out-lists sorted by id
    work: np.ndarray      # int64, n: probes of the kernel at each vertex
    candidates: np.ndarray  # int32: vertices that may be a first corner, heaviest (log2 bins) first
    seconds: float        # time to build all of the above

    @property
    def max_out_degree(self) -> int:
        return int(np.diff(self.out_ptr).max()) if len(self.out_ptr) > 1 else 0

    @property
    def total_work(self) -> int:
        return int(self.work.sum())


def orient(indptr: np.ndarray, indices: np.ndarray) -> OrientedGraph:
    t0 = time.perf_counter()
    n = len(indptr) - 1
    out_deg = np.empty(n, dtype=np.int64)
    _out_degrees(indptr, indices, out_deg)
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(out_deg, out=out_ptr[1:])
    out_idx = np.empty(int(out_ptr[-1]), dtype=np.int32)
    _fill_out_lists(indptr, indices, out_ptr, out_idx)
    work = np.empty(n, dtype=np.int64)
    _work(out_ptr, out_idx, work)
    candidates = np.flatnonzero(work > 0).astype(np.int32)
    bins = np.log2(work[candidates]).astype(np.int8)  # ⌊log₂ work⌋ ≤ 62
    candidates = candidates[np.argsort(-bins, kind="stable")]
    return OrientedGraph(out_ptr, out_idx, work, candidates, time.perf_counter() - t0)


def table_size(out_degree: np.ndarray) -> np.ndarray:
    """Hash-table slots a vertex needs: the smallest power of two ≥ 2·d⁺ (load ≤ ½)."""
    d = np.maximum(np.asarray(out_degree, dtype=np.int64), 1)
    return np.left_shift(1, np.ceil(np.log2(2 * d)).astype(np.int64))


@dataclass
class Schedule:
    heavy: np.ndarray   # int32: vertices processed by a whole block each
    light: np.ndarray   # int32: vertices processed by one group of threads each
    rounds: int         # heavy rounds + light rounds (one round = one block's turn)


def schedule(g: OrientedGraph, light_table_slots: int, vertices_per_light_round: int) -> Schedule:
    """Split the candidates: a vertex whose table fits a group's share of shared memory is
    light, else heavy. Both lists keep the heaviest-first order."""
    out_deg = np.diff(g.out_ptr)[g.candidates]
    fits = table_size(out_deg) <= light_table_slots
    heavy = g.candidates[~fits]
    light = g.candidates[fits]
    light_rounds = -(-len(light) // vertices_per_light_round)
    return Schedule(np.ascontiguousarray(heavy), np.ascontiguousarray(light), len(heavy) + light_rounds)
