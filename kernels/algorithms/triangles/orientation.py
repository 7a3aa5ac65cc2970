"""Degree orientation, edge ownership and the work schedule of ``gpu-oriented`` (host side,
numba, parallel).

**Orientation.** Every undirected edge ``{u, v}`` is kept once, as ``u → v`` where
``(deg u, u) < (deg v, v)``. Each triangle then has one *lowest* corner ``a``, one *middle*
``b`` and one *highest* ``c`` with ``a → b``, ``a → c``, ``b → c``, and
``d⁺(v) ≤ √(2m)`` for every vertex (its out-neighbours all have degree ≥ ``d⁺(v)``, so
``d⁺(v)² ≤ 2m``): hubs lose their long lists. Out-lists stay sorted by id; vertices are not
renumbered.

**Ownership.** The triangle is found from its edge ``a → b``: ``c`` is in
``N⁺(a) ∩ N⁺(b)``. The kernel keeps one out-list in a hash table (the *owner*'s) and streams
the other (the *partner*'s) through it, so the cost of an edge is the partner's out-degree.
Each edge ``a → b`` is owned by the end with the larger out-degree (``a`` on a tie), so it
costs ``min(d⁺a, d⁺b)`` probes: on R-MAT scale 20 that is 2.0·10⁹ probes in all, against
4.4·10⁹ if ``a`` always owned its out-edges. Edges whose partner has ``d⁺ = 0`` close no
triangle and are dropped. ``partners(v)`` lists, for owner ``v``, the partner of each edge
it owns (out-neighbours first, then in-neighbours); ``work(v) = Σ d⁺(p)`` over them.

**Schedule** (per launch configuration, see :func:`schedule`): owners are sorted by
``⌊log₂ work⌋``, heaviest first (a stable sort of small keys). An owner whose table fits a
group's share of the block's table and whose work is at most ``LIGHT_PROBES_PER_LANE`` per
thread of a group is *light* (one group takes it whole); the others are *heavy*: the whole
block takes them, in chunks of partners, so that no vertex makes a long critical path. With
``L = HEAVY_PROBES_PER_LANE × block_size`` and ``P`` the work of the owner's partners before
a partner, the partner goes to the chunk ``⌊P / L⌋`` (empty windows skipped): a chunk does
at most ``L`` probes plus its last partner's. This rule, unlike a greedy cut, needs only a
prefix sum, so the device builds the very same chunks (:mod:`.device_orientation`). Heavy
rounds: the chunks of the heavy owners in owner id order, then stably sorted by
``⌊log₂ chunk work⌋``, heaviest first.

The host path is kept (``preprocess=host``) to compare against the device one; both give
the same arrays, element for element.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np

LIGHT_PROBES_PER_LANE = 256
HEAVY_PROBES_PER_LANE = 512

# what each oriented edge is, for the partner lists
_DROPPED, _OWNED_BY_SOURCE, _OWNED_BY_TARGET = 0, 1, 2


@numba.njit(inline="always")
def _points_to(u, du, v, dv):
    """The orientation: the edge {u, v} is kept as u → v when (deg u, u) < (deg v, v)."""
    return dv > du or (dv == du and v > u)


@numba.njit(cache=True, nogil=True, parallel=True)
def _out_degrees(indptr, indices, out_deg):
    for u in numba.prange(len(indptr) - 1):
        du = indptr[u + 1] - indptr[u]
        c = 0
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            dv = indptr[v + 1] - indptr[v]
            if _points_to(u, du, v, dv):
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
            if _points_to(u, du, v, dv):
                out_idx[p] = v
                p += 1


@numba.njit(cache=True, nogil=True, parallel=True)
def _classify_edges(out_ptr, out_idx, kind, owned_out):
    for a in numba.prange(len(out_ptr) - 1):
        da = out_ptr[a + 1] - out_ptr[a]
        own = 0
        for e in range(out_ptr[a], out_ptr[a + 1]):
            b = out_idx[e]
            db = out_ptr[b + 1] - out_ptr[b]
            if db == 0:
                kind[e] = _DROPPED
            elif db <= da:
                kind[e] = _OWNED_BY_SOURCE
                own += 1
            else:
                kind[e] = _OWNED_BY_TARGET
        owned_out[a] = own


@numba.njit(cache=True, nogil=True, parallel=True)
def _fill_out_partners(out_ptr, out_idx, kind, part_ptr, part_idx):
    for a in numba.prange(len(out_ptr) - 1):
        p = part_ptr[a]
        for e in range(out_ptr[a], out_ptr[a + 1]):
            if kind[e] == _OWNED_BY_SOURCE:
                part_idx[p] = out_idx[e]
                p += 1


@numba.njit(cache=True, nogil=True)
def _fill_in_partners(out_ptr, out_idx, kind, cursor, part_idx):
    # a scatter by target: serial (about 1 ns per edge), in increasing source order
    for a in range(len(out_ptr) - 1):
        for e in range(out_ptr[a], out_ptr[a + 1]):
            if kind[e] == _OWNED_BY_TARGET:
                b = out_idx[e]
                part_idx[cursor[b]] = a
                cursor[b] += 1


@numba.njit(cache=True, nogil=True, parallel=True)
def _work(out_ptr, part_ptr, part_idx, work):
    for v in numba.prange(len(part_ptr) - 1):
        w = 0
        for e in range(part_ptr[v], part_ptr[v + 1]):
            p = part_idx[e]
            w += out_ptr[p + 1] - out_ptr[p]
        work[v] = w


@dataclass
class OrientedGraph:
    out_ptr: np.ndarray     # int64, n + 1
    out_idx: np.ndarray     # int32: out-lists, sorted by id
    part_ptr: np.ndarray    # int64, n + 1
    part_idx: np.ndarray    # int32: partners of each owner (one entry per edge that can close a triangle)
    work: np.ndarray        # int64, n: probes made for each owner
    owners: np.ndarray      # int32: vertices with work, heaviest (⌊log₂ work⌋) first
    seconds: float          # time to build all of the above

    @property
    def max_out_degree(self) -> int:
        return int(np.diff(self.out_ptr).max()) if len(self.out_ptr) > 1 else 0

    @property
    def total_work(self) -> int:
        return int(self.work.sum())


def log2_bins(work: np.ndarray) -> np.ndarray:
    """``⌊log₂ max(work, 1)⌋`` exactly (frexp, not a rounded log2: the device computes it
    with integer shifts, and both must agree)."""
    return (np.frexp(np.maximum(np.asarray(work, dtype=np.int64), 1).astype(np.float64))[1] - 1).astype(np.int8)


def heaviest_first(vertices: np.ndarray, work: np.ndarray) -> np.ndarray:
    return vertices[np.argsort(-log2_bins(work), kind="stable")]


def orient(indptr: np.ndarray, indices: np.ndarray) -> OrientedGraph:
    t0 = time.perf_counter()
    n = len(indptr) - 1
    out_deg = np.empty(n, dtype=np.int64)
    _out_degrees(indptr, indices, out_deg)
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(out_deg, out=out_ptr[1:])
    out_idx = np.empty(int(out_ptr[-1]), dtype=np.int32)
    _fill_out_lists(indptr, indices, out_ptr, out_idx)

    kind = np.empty(len(out_idx), dtype=np.int8)
    owned_out = np.empty(n, dtype=np.int64)
    _classify_edges(out_ptr, out_idx, kind, owned_out)
    owned_in = np.bincount(out_idx[kind == _OWNED_BY_TARGET], minlength=n)
    part_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(owned_out + owned_in, out=part_ptr[1:])
    part_idx = np.empty(int(part_ptr[-1]), dtype=np.int32)
    _fill_out_partners(out_ptr, out_idx, kind, part_ptr, part_idx)
    _fill_in_partners(out_ptr, out_idx, kind, part_ptr[:-1] + owned_out, part_idx)

    work = np.empty(n, dtype=np.int64)
    _work(out_ptr, part_ptr, part_idx, work)
    owners = heaviest_first(np.flatnonzero(work > 0).astype(np.int32), work[work > 0])
    return OrientedGraph(out_ptr, out_idx, part_ptr, part_idx, work, owners, time.perf_counter() - t0)


@numba.njit(cache=True, nogil=True, parallel=True)
def _ownership_sums(indptr, indices, out_deg, owns):
    total = 0
    partners = 0
    for a in numba.prange(len(indptr) - 1):
        deg_a = indptr[a + 1] - indptr[a]
        da = out_deg[a]
        for e in range(indptr[a], indptr[a + 1]):
            b = indices[e]
            deg_b = indptr[b + 1] - indptr[b]
            if _points_to(a, deg_a, b, deg_b):                     # the edge is a -> b
                db = out_deg[b]
                if db == 0:
                    continue                                       # closes no triangle: dropped
                partners += 1
                if db <= da:                                       # owned by a, partner b
                    total += db
                    owns[a] = 1
                else:                                              # owned by b, partner a
                    total += da
                    owns[b] = 1                                    # a benign race: every writer writes 1
    return total, partners


def ownership_summary(indptr: np.ndarray, indices: np.ndarray) -> tuple[int, int, int]:
    """``(total probes, partner entries, owners)`` of :func:`orient`'s result, without building
    the out-lists and partner lists: two parallel passes over the adjacency (what the ``auto``
    group-size rule reads; building the whole orientation on the host for it took ~1.5 s on
    R-MAT 22, where ``preprocess=gpu`` builds it on the device anyway)."""
    n = len(indptr) - 1
    out_deg = np.empty(n, dtype=np.int64)
    _out_degrees(indptr, indices, out_deg)
    owns = np.zeros(n, dtype=np.int8)
    total, partners = _ownership_sums(indptr, indices, out_deg, owns)
    return int(total), int(partners), int(owns.sum())


def oriented_graph(problem) -> tuple[OrientedGraph, bool]:
    """The prepared input's oriented graph, built once per input (kept with the prepared
    input, see :mod:`.prepare`), and whether it was already there."""
    derived = problem.data["derived"]
    cached = "oriented" in derived
    if not cached:
        g = problem.graph
        derived["oriented"] = orient(g.indptr, g.indices)
    return derived["oriented"], cached


def table_size(out_degree: np.ndarray) -> np.ndarray:
    """Hash-table slots a vertex needs: the smallest power of two ≥ 2·d⁺ (load ≤ ½)."""
    d = np.maximum(np.asarray(out_degree, dtype=np.int64), 1)
    return np.left_shift(1, np.ceil(np.log2(2 * d)).astype(np.int64))


@numba.njit(cache=True, nogil=True, parallel=True)
def _count_chunks(heavy, out_ptr, part_ptr, part_idx, limit, chunks):
    for i in numba.prange(len(heavy)):
        v = heavy[i]
        c = 0
        before = 0       # work of the partners before this one
        window = -1
        for e in range(part_ptr[v], part_ptr[v + 1]):
            if before // limit != window:
                window = before // limit
                c += 1
            p = part_idx[e]
            before += out_ptr[p + 1] - out_ptr[p]
        chunks[i] = c


@numba.njit(cache=True, nogil=True, parallel=True)
def _fill_chunks(heavy, out_ptr, part_ptr, part_idx, limit, first, vertex, lo, hi, work):
    for i in numba.prange(len(heavy)):
        v = heavy[i]
        k = first[i] - 1
        before = 0
        window = -1
        start = 0
        for e in range(part_ptr[v], part_ptr[v + 1]):
            if before // limit != window:
                if k >= first[i]:
                    hi[k] = e
                    work[k] = before - start
                window = before // limit
                k += 1
                vertex[k] = v
                lo[k] = e
                start = before
            p = part_idx[e]
            before += out_ptr[p + 1] - out_ptr[p]
        if k >= first[i]:
            hi[k] = part_ptr[v + 1]
            work[k] = before - start


@dataclass
class Schedule:
    heavy_vertex: np.ndarray  # int32: one heavy round each: the owner ...
    heavy_lo: np.ndarray      # int64: ... and its partners part_idx[lo:hi]
    heavy_hi: np.ndarray      # int64
    light: np.ndarray         # int32: owners taken whole by one group each
    rounds: int               # heavy rounds + light rounds (one round = one block's turn)


def schedule(g: OrientedGraph, block_size: int, group_size: int, light_table_slots: int) -> Schedule:
    """Rounds for one launch configuration (see the module's docstring)."""
    groups = block_size // group_size
    out_deg = np.diff(g.out_ptr)[g.owners]
    light_mask = ((table_size(out_deg) <= light_table_slots)
                  & (g.work[g.owners] <= LIGHT_PROBES_PER_LANE * group_size))
    light = np.ascontiguousarray(g.owners[light_mask])
    heavy = np.sort(g.owners[~light_mask])  # chunks in owner id order, as the device numbers them
    limit = HEAVY_PROBES_PER_LANE * block_size
    chunks = np.empty(len(heavy), dtype=np.int64)
    _count_chunks(heavy, g.out_ptr, g.part_ptr, g.part_idx, limit, chunks)
    first = np.zeros(len(heavy), dtype=np.int64)
    np.cumsum(chunks[:-1], out=first[1:])
    total = int(chunks.sum())
    vertex = np.empty(total, dtype=np.int32)
    lo = np.empty(total, dtype=np.int64)
    hi = np.empty(total, dtype=np.int64)
    work = np.empty(total, dtype=np.int64)
    _fill_chunks(heavy, g.out_ptr, g.part_ptr, g.part_idx, limit, first, vertex, lo, hi, work)
    order = np.argsort(-log2_bins(work), kind="stable")
    light_rounds = -(-len(light) // groups)
    return Schedule(vertex[order], lo[order], hi[order], light, total + light_rounds)
