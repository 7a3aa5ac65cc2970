"""The oracle (SciPy's ``csgraph.shortest_path``), verification and summaries.

SciPy runs on the *cleaned* problem (duplicates merged to their lightest weight, weights
already rounded to the run's dtype and then computed in float64), so a correct variant and
the reference differ only by rounding.

Tolerance. A computed distance is a tree of additions over at most n-1 edges, so its
rounding error is at most about ``(n - 1) * eps * |d|`` (eps of the output dtype); with
negative weights partial sums can exceed the final value, so the largest finite reference
distance is added to the scale. The check is ``|d - ref| <= 4 (n - 1) eps (|ref| + S)``,
tight for fp64 (2e-12 relative at n = 2000) and loose for fp32 (1e-3): fp32 results are
verified to about three digits. Unreachable pairs must be ``inf`` on both sides.

Cost. A full SciPy APSP is O(n³) (Floyd–Warshall) or O(n·(n log n + m)) (Dijkstra); when the
estimate exceeds :data:`REFERENCE_BUDGET_S` the reference covers a seeded sample of source
rows instead (SciPy Dijkstra/Johnson with ``indices=``), and the verification says how many
rows it checked. Predecessor matrices are checked in full on every row, without a reference:
each ``pred[i][j] = p`` must be a real edge p -> j with ``dist[i][p] + w(p, j) == dist[i][j]``
(same tolerance), and following predecessors from j must reach i.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from kernels.algorithms.apsp.negative_cycle import negative_cycle_error
from kernels.algorithms.registry import Verification

REFERENCE_BUDGET_S = 5.0
MIN_SAMPLED_ROWS = 32
# SciPy 1.17 cost model, measured on the project's machine (n = 1000, p = 0.5 and 0.01):
SCIPY_FW_S_PER_RELAXATION = 1.2e-9
SCIPY_DIJKSTRA_S_PER_VERTEX = 4e-7   # Fibonacci-heap work per (source, vertex)
SCIPY_DIJKSTRA_S_PER_EDGE = 4e-9     # per (source, edge)
TOLERANCE_FACTOR = 4.0
MAX_WORST = 5


def scipy_costs(n: int, m: int) -> tuple[float, float]:
    """Estimated seconds of SciPy's Floyd–Warshall and of one Dijkstra source."""
    fw = float(n) ** 3 * SCIPY_FW_S_PER_RELAXATION
    per_source = n * SCIPY_DIJKSTRA_S_PER_VERTEX + m * SCIPY_DIJKSTRA_S_PER_EDGE
    return fw, per_source


def scipy_method(n: int, m: int, negative: bool) -> str:
    """The cheaper exact SciPy method: Floyd–Warshall on dense graphs, else Dijkstra
    (Johnson when weights can be negative)."""
    fw, per_source = scipy_costs(n, m)
    if n * per_source < fw:
        return "J" if negative else "D"
    return "FW"


METHOD_NAMES = {"D": "Dijkstra", "FW": "Floyd-Warshall", "J": "Johnson"}


def scipy_matrix(problem) -> sp.csr_matrix:
    d = problem.data
    n = d["n"]
    return sp.csr_matrix((d["weights"].astype(np.float64), d["indices"], d["indptr"]), shape=(n, n))


def scipy_apsp(problem, method: str, rows=None, predecessors: bool = False):
    """SciPy's distances (float64) for all sources or for ``rows`` (and its predecessors when
    asked: a pair); negative cycles become :class:`NegativeCycleError` naming the cycle."""
    d = problem.data
    n = d["n"]
    if d["negative_count"]:
        loops = np.repeat(np.arange(n), np.diff(d["indptr"])) == d["indices"]
        if loops.any():  # SciPy ignores the diagonal, but a negative self-loop is a negative cycle
            raise negative_cycle_error(problem)
    graph = scipy_matrix(problem)
    try:
        return csgraph.shortest_path(graph, method=method, directed=True, indices=rows,
                                     return_predecessors=predecessors)
    except csgraph.NegativeCycleError:
        raise negative_cycle_error(problem) from None


def reference(problem, params) -> dict:
    d = problem.data
    n, m = d["n"], len(d["indices"])
    negative = bool(d["negative_count"])
    method = scipy_method(n, m, negative)
    fw, per_source = scipy_costs(n, m)
    full_cost = min(fw, n * per_source)
    if full_cost <= REFERENCE_BUDGET_S or n <= MIN_SAMPLED_ROWS:
        return {"dist": scipy_apsp(problem, method), "rows": None, "method": method}
    count = int(min(n, max(MIN_SAMPLED_ROWS, REFERENCE_BUDGET_S / per_source)))
    rng = np.random.default_rng(n)  # the same rows for every variant run on this input
    rows = np.union1d([0, n - 1], rng.choice(n, size=count, replace=False))
    sampled_method = "J" if negative else "D"
    return {"dist": scipy_apsp(problem, sampled_method, rows), "rows": rows, "method": sampled_method}


# ---- verification --------------------------------------------------------------------------


def split_output(output):
    if isinstance(output, dict):
        return np.asarray(output["dist"]), (None if output.get("pred") is None else np.asarray(output["pred"]))
    return np.asarray(output), None


def tolerance(dist: np.ndarray, n: int) -> float:
    eps = np.finfo(dist.dtype).eps if np.issubdtype(dist.dtype, np.floating) else np.finfo(np.float64).eps
    return TOLERANCE_FACTOR * max(n - 1, 1) * float(eps)


def verify(output, ref, problem, params) -> Verification:
    d = problem.data
    n = d["n"]
    name = f"scipy ({METHOD_NAMES[ref['method']]})"
    dist, pred = split_output(output)
    if dist.shape != (n, n):
        return Verification(False, name, f"distance matrix has shape {dist.shape}, expected {(n, n)}")
    rows = ref["rows"]
    got = dist if rows is None else dist[rows]
    expected = ref["dist"]
    finite_ref = np.isfinite(expected)
    rtol = tolerance(dist, n)
    extra = float(np.abs(expected[finite_ref]).max()) if d["negative_count"] and finite_ref.any() else 0.0
    got64 = got.astype(np.float64)
    with np.errstate(invalid="ignore"):
        err = np.abs(got64 - expected)
        bound = rtol * (np.abs(expected) + extra) + 1e-300
        bad = np.where(finite_ref, ~(err <= bound), ~(got64 == expected))  # NaN is always bad
    what = (f"all {n * n:,} distances" if rows is None
            else f"{len(rows):,} sampled source rows of {n:,} ({len(rows) * n:,} distances)")
    problems = []
    worst = []
    if bad.any():
        problems.append(f"{int(bad.sum()):,} distances differ beyond tolerance {rtol:.1e} (relative)")
        score = np.where(finite_ref, np.where(np.isnan(err), np.inf, err / bound), np.inf)
        score = np.where(bad, score, -1.0)
        for flat in np.argsort(-score, axis=None)[:MAX_WORST]:
            r, c = np.unravel_index(flat, score.shape)
            if not bad[r, c]:
                break
            src = int(r if rows is None else rows[r])
            worst.append({"source": src, "target": int(c), "got": float(got64[r, c]),
                          "expected": float(expected[r, c])})
    if d["predecessors"]:
        if pred is None:
            problems.append("predecessors were asked for but the output has none")
        elif pred.shape != (n, n):
            problems.append(f"predecessor matrix has shape {pred.shape}, expected {(n, n)}")
        else:
            bad_pred, example = check_predecessors(dist, pred, d, rtol, extra)
            if bad_pred:
                problems.append(f"{bad_pred:,} predecessor entries do not rebuild a shortest path "
                                f"(first: source {example[0]}, target {example[1]})")
    if problems:
        return Verification(False, name, "; ".join(problems), worst)
    max_rel = float(np.max(np.where(finite_ref, err / (np.abs(expected) + extra + 1e-300), 0.0))) if got.size else 0.0
    detail = f"{what} match (max relative error {max_rel:.1e}, tolerance {rtol:.1e})"
    if d["predecessors"]:
        detail += "; every predecessor rebuilds a shortest path"
    return Verification(True, name, detail)


@numba.njit(cache=True, nogil=True)
def _edge_weight(indptr, indices, weights, p, j):
    """Weight of the (merged, sorted) edge p -> j, or NaN if there is none."""
    lo = indptr[p]
    hi = indptr[p + 1]
    k = lo + np.searchsorted(indices[lo:hi], j)
    if k < hi and indices[k] == j:
        return np.float64(weights[k])
    return np.nan


@numba.njit(cache=True, nogil=True, parallel=True)
def _check_predecessors(dist, pred, indptr, indices, weights, rtol, extra):
    n = dist.shape[0]
    bad = np.zeros(n, dtype=np.int64)
    first = np.full(n, -1, dtype=np.int64)
    for i in numba.prange(n):
        # local rule: pred[i][j] = p is an edge with dist[i][p] + w(p, j) == dist[i][j]
        for j in range(n):
            p = pred[i, j]
            dij = np.float64(dist[i, j])
            if j == i or np.isinf(dij):
                ok = p == -1
            elif p < 0 or p >= n:
                ok = False
            else:
                w = _edge_weight(indptr, indices, weights, p, j)
                ok = (not np.isnan(w)) and abs(np.float64(dist[i, p]) + w - dij) <= rtol * (abs(dij) + extra) + 1e-300
            if not ok:
                if bad[i] == 0:
                    first[i] = j
                bad[i] += 1
        # global rule: following predecessors from any reachable j ends at i (no cycles)
        state = np.zeros(n, dtype=np.int8)  # 0 unknown, 1 on the current walk, 2 reaches i, 3 does not
        state[i] = 2
        for j in range(n):
            if state[j] != 0 or np.isinf(dist[i, j]):
                continue
            v = j
            while 0 <= v < n and state[v] == 0:
                state[v] = 1
                v = pred[i, v]
            reached = 0 <= v < n and state[v] == 2
            v = j
            while 0 <= v < n and state[v] == 1:
                state[v] = 2 if reached else 3
                v = pred[i, v]
            if not reached:
                if bad[i] == 0:
                    first[i] = j
                bad[i] += 1
    return bad, first


def check_predecessors(dist, pred, data, rtol, extra) -> tuple[int, tuple[int, int]]:
    bad, first = _check_predecessors(dist, pred, data["indptr"], data["indices"], data["weights"],
                                     float(rtol), float(extra))
    total = int(bad.sum())
    if not total:
        return 0, (-1, -1)
    i = int(np.flatnonzero(bad)[0])
    return total, (i, int(first[i]))


def summarize(output, problem) -> dict:
    dist, pred = split_output(output)
    n = dist.shape[0]
    finite = np.isfinite(dist)
    reachable = int(finite.sum()) - n  # the diagonal is always 0
    off = finite.copy()
    np.fill_diagonal(off, False)
    values = dist[off]
    return {"n": int(n), "reachable_pairs": reachable, "unreachable_pairs": int(n * n - n - reachable),
            "max_distance": float(values.max()) if values.size else None,
            "mean_distance": float(values.mean(dtype=np.float64)) if values.size else None,
            "predecessors": pred is not None}
