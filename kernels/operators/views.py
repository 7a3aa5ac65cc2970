"""How a kernel finds a vertex's adjacency list: in the slotted page pool, or in CSR.

A *view* is a tuple of device arrays and sizes that kernels receive as one argument, plus
four device functions that every operator is written against:

* ``locate(g, v) -> (loc, degree)``: where ``v``'s list is (``loc`` is an int64 handle) and
  its length; ``(0, 0)`` for a vertex that is not stored;
* ``edge_at(g, loc, j) -> e``: the word (slotted) or entry (CSR) position of the ``j``-th
  neighbour; the weight of that edge is at the same position of the weight array;
* ``target(g, e)`` (the neighbour's id, int32) and ``weight(g, e)``.

**Slotted pages** (``docs/slotted.md``), ``g = (pool, index, weights, num_pages, page_size,
loc, degree)``: ``locate`` reads the mirror's vertex directory (``loc``, ``degree``: two loads,
as CSR's two row pointers; :mod:`kernels.graph.directory`). :func:`slotted_search` finds the
same from the pages alone -- the rightmost index column whose first vertex is ``<= v`` (binary
search over the index), back to the first page of a large list, then a binary search over the
page's slot ids -- about 26 dependent reads on a 4 M-vertex graph, which is why the directory
exists. An ordinary list's handle is the
global word of its first neighbour, so ``edge_at`` is ``loc + j``. A large list spans
consecutive logical pages, each full but the last, so its handle is ``-(first column + 1)``
and neighbour ``j`` is word ``4 + j % (P - 6)`` of the list's page ``j // (P - 6)``: any
thread finds any neighbour by arithmetic and one index read, without walking pages.

**CSR**, ``g = (indptr, indices, weights)``: ``locate`` is two row pointers, ``edge_at`` is
``indptr[v] + j``.

Unweighted graphs get a one-element weight array (never read: the functors of unweighted
runs do not ask for weights).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import cuda, int64

from kernels.graph.slotted.layout import (
    HEADER_WORDS,
    IDX_FIRST,
    IDX_LCOUNT,
    IDX_LPOS,
    IDX_SLOT,
    large_entries_per_page,
)

# word positions the device functions use, checked against the layout module
assert (HEADER_WORDS, IDX_FIRST, IDX_LPOS, IDX_LCOUNT, IDX_SLOT) == (3, 0, 1, 2, 3)
assert large_entries_per_page(1024) == 1024 - 6


# ---- CSR ----------------------------------------------------------------------------------

@cuda.jit(device=True)
def csr_locate(g, v):
    if v < 0:
        return int64(0), int64(0)
    indptr = g[0]
    start = int64(indptr[v])
    return start, int64(indptr[v + 1]) - start


@cuda.jit(device=True)
def csr_edge_at(g, loc, j):
    return loc + j


@cuda.jit(device=True)
def csr_target(g, e):
    return g[1][e]


@cuda.jit(device=True)
def csr_weight(g, e):
    return g[2][e]


# ---- slotted pages ------------------------------------------------------------------------

@cuda.jit(device=True)
def slotted_locate(g, v):
    loc = g[5]
    if v < 0 or v >= loc.shape[0]:
        return int64(0), int64(0)
    return int64(loc[v]), int64(g[6][v])


@cuda.jit(device=True)
def slotted_search(g, v):
    """``slotted_locate`` from the pages and index alone (the directory's definition)."""
    pool = g[0]
    index = g[1]
    num_pages = g[3]
    P = g[4]
    if v < 0 or num_pages == 0:
        return int64(0), int64(0)
    lo = int64(0)
    hi = int64(num_pages)
    while lo < hi:                      # first column whose first vertex is > v
        mid = (lo + hi) >> 1
        if index[0, mid] <= v:
            lo = mid + 1
        else:
            hi = mid
    col = lo - 1
    if col < 0:
        return int64(0), int64(0)
    pos = index[1, col]
    if pos > 0:                         # a continuation page of a large list: go to its first page
        col -= pos
    base = int64(index[3, col]) * P
    if index[2, col] > 0:               # large list: one vertex, total degree at word 3
        if pool[base + P - 1] != v:
            return int64(0), int64(0)
        return -(col + 1), int64(pool[base + 3])
    count = int64(pool[base])
    lo = int64(0)
    hi = count
    while lo < hi:                      # first slot whose vertex id is >= v
        mid = (lo + hi) >> 1
        if pool[base + P - 1 - 2 * mid] < v:
            lo = mid + 1
        else:
            hi = mid
    if lo < count and pool[base + P - 1 - 2 * lo] == v:
        off = int64(pool[base + P - 2 - 2 * lo])
        return base + off + 1, int64(pool[base + off])
    return int64(0), int64(0)


@cuda.jit(device=True)
def slotted_edge_at(g, loc, j):
    if loc >= 0:
        return loc + j
    P = g[4]
    per_page = P - 6
    col = -loc - 1 + j // per_page
    return int64(g[1][3, col]) * P + 4 + j % per_page


@cuda.jit(device=True)
def slotted_target(g, e):
    return g[0][e]


@cuda.jit(device=True)
def slotted_weight(g, e):
    return g[2][e]


@dataclass(frozen=True)
class ViewFunctions:
    locate: object
    edge_at: object
    target: object
    weight: object


FUNCTIONS = {
    "csr": ViewFunctions(csr_locate, csr_edge_at, csr_target, csr_weight),
    "slotted": ViewFunctions(slotted_locate, slotted_edge_at, slotted_target, slotted_weight),
}


def functions(kind: str) -> ViewFunctions:
    return FUNCTIONS[kind]


# ---- host side -----------------------------------------------------------------------------

_NO_WEIGHTS = {}


def _no_weights(dtype=np.float64):
    key = np.dtype(dtype).str
    if key not in _NO_WEIGHTS:
        _NO_WEIGHTS[key] = cuda.to_device(np.zeros(1, dtype=dtype))
    return _NO_WEIGHTS[key]


@dataclass
class DeviceGraphView:
    """A graph on the device as the operators see it.

    ``kind`` selects the device functions ("csr" or "slotted"); ``args`` is the tuple kernels
    receive; ``n_vertices`` is the id range (``0 .. n_vertices - 1``), ``n_entries`` the
    adjacency entries stored (a bound on any advance's output from a frontier without repeats);
    ``sorted_lists`` says whether lists are sorted (CSR), which the intersection can use."""

    kind: str
    args: tuple
    n_vertices: int
    n_entries: int
    weighted: bool
    directed: bool
    sorted_lists: bool

    @property
    def functions(self) -> ViewFunctions:
        return FUNCTIONS[self.kind]


def csr_view(indptr, indices, weights, *, n_vertices: int, n_entries: int, directed: bool) -> DeviceGraphView:
    """A view of CSR arrays already on the device (``weights`` may be ``None``)."""
    w = weights if weights is not None else _no_weights()
    return DeviceGraphView("csr", (indptr, indices, w), int(n_vertices), int(n_entries),
                           weights is not None, bool(directed), True)


def upload_csr(graph, *, weights: bool = True) -> DeviceGraphView:
    """Copy a :class:`~kernels.graph.csr.CSRGraph` to the device (int64 row pointers)."""
    indptr = cuda.to_device(np.ascontiguousarray(graph.indptr, dtype=np.int64))
    indices = cuda.to_device(graph.indices if graph.nnz else np.zeros(1, dtype=np.int32))
    w = None
    if weights and graph.weights is not None and graph.nnz:
        w = cuda.to_device(np.ascontiguousarray(graph.weights, dtype=np.float64))
    return csr_view(indptr, indices, w, n_vertices=graph.n_rows, n_entries=graph.nnz, directed=graph.directed)


def slotted_view(mirror) -> DeviceGraphView:
    """A view of a :class:`~kernels.graph.device.DeviceMirror`'s live pool and index.

    Take a new view after every ``sync()``: a sync may reallocate the device arrays."""
    g = mirror.graph
    w = mirror.weights if mirror.weights is not None else _no_weights(g.weight_dtype)
    args = (mirror.pool, mirror.index, w, np.int64(mirror.num_pages), np.int64(mirror.page_size),
            *mirror.directory)
    return DeviceGraphView("slotted", args, int(g.next_vertex_id), int(g.num_entries),
                           mirror.weights is not None, bool(g.directed), False)


def view_types() -> dict:
    """numba's types of the views kernels receive, for the PTX check: ``csr``, ``slotted``
    (float64 weight pool) and ``slotted_f32``."""
    from numba import types

    from kernels.cuda.jit import array_type

    i32, i64 = array_type(np.int32), array_type(np.int64)
    pool = (i32, array_type(np.int32, 2))
    tail = (types.int64, types.int64, i64, i32)
    return {"slotted": types.Tuple((*pool, array_type(np.float64), *tail)),
            "slotted_f32": types.Tuple((*pool, array_type(np.float32), *tail)),
            "csr": types.Tuple((i64, i32, array_type(np.float64)))}
