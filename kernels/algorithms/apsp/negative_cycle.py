"""Negative cycles: the error, and finding one to name in it.

Floyd–Warshall tells *that* there is a negative cycle (some ``dist[i][i] < 0`` afterwards) but
a vertex with a negative diagonal may only lead to a cycle, not lie on one. To name a real
cycle, :func:`find_negative_cycle` runs Bellman–Ford from a virtual source joined to every
vertex and, after each pass, looks for a cycle in the predecessor graph (such a cycle is
always negative); it usually stops after a few passes.
"""

from __future__ import annotations

import numba
import numpy as np

from kernels.algorithms.apsp.errors import NegativeCycleError


@numba.njit(cache=True, nogil=True)
def _cycle_in_predecessors(pred):
    """A cycle of the functional graph v -> pred[v] (as a vertex array), or an empty array."""
    n = len(pred)
    state = np.zeros(n, dtype=np.int32)  # 0 unseen, 1 on the current walk, 2 finished
    for start in range(n):
        if state[start] != 0:
            continue
        v = start
        while v >= 0 and state[v] == 0:
            state[v] = 1
            v = pred[v]
        if v >= 0 and state[v] == 1:
            # v is on a cycle: collect it by walking once around
            length = 1
            u = pred[v]
            while u != v:
                length += 1
                u = pred[u]
            cycle = np.empty(length, dtype=np.int64)
            u = v
            for t in range(length):
                cycle[length - 1 - t] = u  # stored forwards: cycle[t] -> cycle[t + 1] is an edge
                u = pred[u]
            return cycle
        v = start
        while v >= 0 and state[v] == 1:
            state[v] = 2
            v = pred[v]
    return np.zeros(0, dtype=np.int64)


@numba.njit(cache=True, nogil=True)
def _bellman_ford_cycle(indptr, indices, weights):
    n = len(indptr) - 1
    dist = np.zeros(n, dtype=np.float64)  # the virtual source reaches everyone at 0
    pred = np.full(n, -1, dtype=np.int64)
    for _ in range(n + 1):
        changed = False
        for u in range(n):
            du = dist[u]
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                nd = du + weights[e]
                if nd < dist[v]:
                    dist[v] = nd
                    pred[v] = u
                    changed = True
        if not changed:
            break
        cycle = _cycle_in_predecessors(pred)
        if len(cycle):
            return cycle
    return np.zeros(0, dtype=np.int64)


def find_negative_cycle(indptr, indices, weights) -> list[int]:
    """The vertices of one negative cycle in edge order, from its smallest vertex, or []."""
    cycle = [int(v) for v in _bellman_ford_cycle(indptr, indices, np.asarray(weights, dtype=np.float64))]
    if cycle:
        start = cycle.index(min(cycle))
        cycle = cycle[start:] + cycle[:start]
    return cycle


def cycle_weight(cycle: list[int], indptr, indices, weights) -> float:
    """Total weight of ``cycle`` using the lightest stored edge between consecutive vertices."""
    total = 0.0
    for a, b in zip(cycle, cycle[1:] + cycle[:1], strict=True):
        row = slice(indptr[a], indptr[a + 1])
        hits = np.flatnonzero(indices[row] == b)
        total += float(np.min(np.asarray(weights[row])[hits]))
    return total


def negative_cycle_error(problem, witness: int | None = None) -> NegativeCycleError:
    """The error for ``problem``'s graph, naming a cycle found on the host."""
    d = problem.data
    cycle = find_negative_cycle(d["indptr"], d["indices"], d["weights"])
    weight = cycle_weight(cycle, d["indptr"], d["indices"], d["weights"]) if cycle else None
    return NegativeCycleError(d["name"], cycle, weight, undirected=not d["directed"], witness=witness)


def raise_if_negative_diagonal(dist: np.ndarray, problem) -> None:
    """After Floyd–Warshall: a negative ``dist[i][i]`` means a negative cycle."""
    bad = np.flatnonzero(np.diagonal(dist) < 0)
    if len(bad):
        raise negative_cycle_error(problem, witness=int(bad[0]))
