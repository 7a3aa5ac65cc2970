"""From a graph to an APSP problem: the cap on n, edge weights, duplicates, self-loops.

The rules every variant then relies on:

* unweighted edges weigh 1; weights are cast to the run's ``dtype`` (fp64 or fp32);
* duplicate (u, v) entries are merged and the *smallest* weight counts (a shortest path
  would take the lightest parallel edge);
* a self-loop of non-negative weight is dropped (it never shortens a path); a negative one is
  kept, because it is a negative cycle that Floyd–Warshall must report;
* ``max_vertices = k > 0`` keeps the induced subgraph on vertices 0..k-1.

Each rule that changes something says so in a notice.
"""

from __future__ import annotations

import numba
import numpy as np

from kernels.algorithms.apsp.memory import check_host
from kernels.algorithms.registry import Problem
from kernels.errors import InputRequirementError

DTYPES = {"fp64": np.float64, "fp32": np.float32}
PRED_DTYPE = np.int32
PRED_BYTES = np.dtype(PRED_DTYPE).itemsize


@numba.njit(cache=True, nogil=True)
def _clean_rows(indptr, indices, weights):
    """Rows with sorted columns, duplicates merged to their lightest weight, non-negative
    self-loops dropped. Returns the new CSR and the counts of what was changed."""
    n = len(indptr) - 1
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    out_idx = np.empty(len(indices), dtype=np.int32)
    out_w = np.empty(len(weights), dtype=weights.dtype)
    duplicates = 0
    loops_dropped = 0
    negative_loops = 0
    pos = 0
    for i in range(n):
        lo = indptr[i]
        hi = indptr[i + 1]
        cols = indices[lo:hi]
        ws = weights[lo:hi]
        for k in range(1, hi - lo):
            if cols[k] < cols[k - 1]:  # the CSR convention says sorted, but do not rely on it
                order = np.argsort(cols, kind="mergesort")
                cols = cols[order]
                ws = ws[order]
                break
        k = 0
        while k < hi - lo:
            c = cols[k]
            w = ws[k]
            k2 = k + 1
            while k2 < hi - lo and cols[k2] == c:
                if ws[k2] < w:
                    w = ws[k2]
                duplicates += 1
                k2 += 1
            if c == i and w >= 0:
                loops_dropped += 1
            else:
                if c == i:
                    negative_loops += 1
                out_idx[pos] = c
                out_w[pos] = w
                pos += 1
            k = k2
        out_ptr[i + 1] = pos
    return out_ptr, out_idx[:pos].copy(), out_w[:pos].copy(), duplicates, loops_dropped, negative_loops


def _first_vertices(indptr, indices, weights, k):
    """The induced subgraph on vertices 0..k-1."""
    head = indices[:indptr[k]]
    keep = head < k
    kept_before = np.zeros(len(head) + 1, dtype=np.int64)
    np.cumsum(keep, out=kept_before[1:])
    return kept_before[indptr[:k + 1]], head[keep], weights[:indptr[k]][keep]


def _plural(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def prepare(graph, params: dict, seed: int) -> Problem:
    graph.require(square=True, what="all-pairs shortest paths")
    dtype = DTYPES[params["dtype"]]
    notices: list[str] = []
    indptr, indices = graph.indptr, graph.indices
    if graph.weights is None:
        weights = np.ones(graph.nnz, dtype=dtype)
        notices.append("unweighted input: every edge weighs 1")
    else:
        weights = graph.weights
        finite = np.isfinite(weights)
        if not finite.all():
            bad = int(np.flatnonzero(~finite)[0])
            raise InputRequirementError(
                f"'{graph.name}' has {int((~finite).sum()):,} edge weights that are not finite numbers "
                f"(the first is entry {bad}: {weights[bad]}); shortest paths need finite weights")

    n_total = graph.n_rows
    cap = params["max_vertices"]
    n = n_total
    if cap and cap < n_total:
        n = cap
        indptr, indices, weights = _first_vertices(indptr, indices, weights, cap)
        notices.append(f"max_vertices={cap:,}: using the subgraph induced by the first {cap:,} of "
                       f"{n_total:,} vertices ({_plural(len(indices), 'stored edge', 'stored edges')} "
                       f"of {graph.nnz:,} kept)")

    # fresh writable copies: numba compiles read-only arrays (a CSRGraph's) as another signature
    indptr, indices, weights, dups, loops, neg_loops = _clean_rows(
        np.array(indptr, dtype=np.int64), np.array(indices, dtype=np.int32), np.array(weights, dtype=dtype))
    if dups:
        notices.append(f"{_plural(dups, 'duplicate entry', 'duplicate entries')} merged: the smallest "
                       "weight of each edge counts")
    if loops:
        notices.append(f"{_plural(loops, 'self-loop', 'self-loops')} of non-negative weight ignored "
                       "(they never shorten a path)")
    if neg_loops:
        notices.append(f"{_plural(neg_loops, 'self-loop', 'self-loops')} of negative weight kept: "
                       "each is a negative cycle")
    negative = int(np.count_nonzero(weights < 0))
    if negative:
        notices.append(f"{_plural(negative, 'edge has', 'edges have')} negative weight (min "
                       f"{float(weights.min()):.6g}): Dijkstra variants refuse this input")

    item = np.dtype(dtype).itemsize
    with_pred = bool(params["predecessors"])
    per_pair = item + (PRED_BYTES if with_pred else 0)
    check_host("all-pairs shortest paths", n, per_pair,
               f"the {n:,} x {n:,} {params['dtype']} distance matrix"
               + (" and the int32 predecessor matrix" if with_pred else ""))

    data = {
        "indptr": indptr, "indices": indices, "weights": weights, "n": n, "dtype": dtype,
        "dtype_name": params["dtype"], "predecessors": with_pred, "name": graph.name,
        "directed": bool(graph.directed), "negative_count": negative,
        "min_weight": float(weights.min()) if len(weights) else 0.0,
        "max_abs_weight": float(np.abs(weights).max()) if len(weights) else 0.0,
    }
    size = {
        "n": n, "m": int(len(indices)),
        # the family's metric counts the relaxations the chosen algorithm performs: make() of a
        # Dijkstra variant replaces this n³ (Floyd–Warshall) by n·m
        "relaxations": float(n) ** 3, "relaxations_counted": "n^3 (Floyd-Warshall)",
        "bytes": int(n * n * per_pair + indptr.nbytes + indices.nbytes + weights.nbytes),
    }
    return Problem(graph=graph, data=data, size=size, notices=notices)


def count_dijkstra_relaxations(problem: Problem) -> None:
    """Dijkstra relaxes every stored edge once per source: n·m."""
    problem.size["relaxations"] = float(problem.size["n"]) * problem.size["m"]
    problem.size["relaxations_counted"] = "n*m (Dijkstra: every edge once per source)"


def refuse_negative_weights(problem: Problem, variant: str) -> None:
    d = problem.data
    if d["negative_count"]:
        raise InputRequirementError(
            f"{variant} needs non-negative edge weights; '{d['name']}' has "
            f"{_plural(d['negative_count'], 'negative weight', 'negative weights')} (min "
            f"{d['min_weight']:.6g}): use a Floyd-Warshall variant or scipy, or make the weights "
            "non-negative")
