"""SciPy references (``scipy.sparse.csgraph``): BFS levels and SSSP distances from a source.

These are the oracles every other variant is checked against, and the ``scipy`` variants.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit


@njit(cache=True, nogil=True)
def _depths(order, predecessors, n):
    """BFS level of each vertex from SciPy's visiting order and predecessor tree."""
    levels = np.full(n, -1, dtype=np.int32)
    levels[order[0]] = 0
    for k in range(1, len(order)):
        v = order[k]
        levels[v] = levels[predecessors[v]] + 1
    return levels


def bfs_depth(order, predecessors, n: int) -> int:
    """The deepest BFS level of SciPy's visiting order and predecessor tree (0 for the source alone)."""
    if len(order) < 2:
        return 0
    return int(_depths(np.asarray(order, np.int64), np.asarray(predecessors, np.int64), n).max())


def _matrix(graph, weights=None) -> sp.csr_matrix:
    data = weights if weights is not None else np.ones(graph.nnz, dtype=np.float64)
    return sp.csr_matrix((data, graph.indices, graph.indptr), shape=(graph.n_rows, graph.n_cols))


def bfs_levels(graph, source: int) -> np.ndarray:
    """int32 levels, -1 where unreachable (``breadth_first_order`` + its predecessor tree)."""
    from scipy.sparse.csgraph import breadth_first_order

    order, predecessors = breadth_first_order(_matrix(graph), int(source), directed=True,
                                              return_predecessors=True)
    return _depths(order.astype(np.int64), predecessors.astype(np.int64), graph.n_rows)


def sssp_distances(graph, weights: np.ndarray, source: int) -> np.ndarray:
    """float64 distances, inf where unreachable (``dijkstra`` with ``indices=source``).

    SciPy treats explicitly stored zeros of a sparse matrix as edges, so zero weights count."""
    from scipy.sparse.csgraph import dijkstra

    return np.asarray(dijkstra(_matrix(graph, weights), directed=True, indices=int(source)), dtype=np.float64)
