"""``triangles/cpu-marker``: triangle counting with a marker array (the "forward" algorithm).

Vertices are ranked (by id, or by degree with ``order=degree``, which bounds every vertex's
higher-ranked neighbours by about √(2m)); for each vertex ``u`` its higher-ranked neighbours
are marked with ``u``, and for each such neighbour ``v`` the higher-ranked neighbours ``w`` of
``v`` that carry the mark close a triangle ``u < v < w``. Each triangle is found once, at its
lowest-ranked corner. No sorted rows are needed and no merge: one O(n) array of marks.

The variant joins the existing ``triangles`` family, so the family's ``prepare`` (simple
undirected graph), reference (SciPy) and ``verify`` (exact equality) apply to it unchanged.
"""

from __future__ import annotations

import numba
import numpy as np

from kernels.algorithms.execution import HostExecution
from kernels.algorithms.registry import Constraint, Param, Variant

# the family object itself (not registry.get_family: the registry is loading this module)
from kernels.algorithms.triangles import FAMILY


@numba.njit(nogil=True)     # nogil: the GUI may call CPU kernels from a worker thread
def count_marked(indptr, indices, rank):
    n = len(indptr) - 1
    mark = np.full(n, -1, np.int64)
    total = 0
    for u in range(n):
        ru = rank[u]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if rank[v] > ru:
                mark[v] = u
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            rv = rank[v]
            if rv > ru:
                for f in range(indptr[v], indptr[v + 1]):
                    w = indices[f]
                    if rank[w] > rv and mark[w] == u:
                        total += 1
    return np.int64(total)


def ranks(indptr: np.ndarray, order: str) -> np.ndarray:
    """Each vertex's rank: its id, or its position in (degree, id) order."""
    n = len(indptr) - 1
    if order == "natural":
        return np.arange(n, dtype=np.int64)
    by_degree = np.lexsort((np.arange(n), np.diff(indptr)))
    rank = np.empty(n, dtype=np.int64)
    rank[by_degree] = np.arange(n, dtype=np.int64)
    return rank


def make_marker(problem, params, target):
    g = problem.graph
    tiny = (np.zeros(2, np.int64), np.zeros(0, np.int32), np.zeros(1, np.int64))   # compile on its own
    return HostExecution(count_marked, g.indptr, g.indices, ranks(g.indptr, params["order"]), warm_args=tiny)


VARIANT = FAMILY.add(Variant(
    "cpu-marker", "cpu-serial",
    "a user's plug-in (examples/plugin-triangles): for each vertex, mark its higher-ranked neighbours, "
    "then count the marked higher-ranked neighbours of each of them (numba)",
    make_marker,
    params=(Param("order", str, "degree", "how vertices are ranked: natural = by id, degree = by (degree, id)",
                  choices=("natural", "degree")),),
    constraints=(Constraint("not per_vertex", "this variant counts the total only"),),
))
