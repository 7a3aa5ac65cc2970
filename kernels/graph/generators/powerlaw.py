"""Power-law inputs: Chung–Lu graphs and sparse matrices with power-law row lengths.

Both do their heavy loops in parallel numba code on counter-based random streams (seeded
from ``numpy.random.default_rng(seed)``), so 10^8 entries take seconds and the result
does not depend on the number of threads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from kernels.errors import ParameterError
from kernels.graph.csr import INDEX_DTYPE, INDPTR_DTYPE, CSRGraph
from kernels.graph.generators._build import csr_from_pairs
from kernels.graph.generators._common import finish_graph, finish_matrix, structure_rng
from kernels.graph.generators._counter_rng import draw64, draw_salt, to_unit53
from kernels.graph.generators._sorting import sort_columns
from kernels.graph.generators._weights import DEFAULT_WEIGHT_RANGE
from kernels.graph.generators.registry import OptionSpec, register_generator

MAX_VERTICES = 2**31 - 1
_ROW_STREAM = np.int64(1) << np.int64(32)  # counters of row r start at r * 2^32


# ---- Chung–Lu ---------------------------------------------------------------------------
def powerlaw_expected_degrees(n: int, avg_degree: float, exponent: float, max_degree: float) -> np.ndarray:
    """Expected degrees ``w_i ∝ (i + 1)^(-1 / (exponent - 1))`` with mean ``avg_degree``, capped.

    With these weights the number of vertices of degree >= k falls like ``k^(1 - exponent)``,
    i.e. the degree distribution has the requested exponent. Capping the largest ones moves
    their excess onto the rest so that the mean stays ``avg_degree``."""
    w = np.arange(1, n + 1, dtype=np.float64) ** (-1.0 / (exponent - 1.0))
    target = avg_degree * n
    for _ in range(100):
        capped = w >= max_degree
        free_total = w[~capped].sum()
        if free_total == 0:
            break
        w[~capped] *= (target - max_degree * capped.sum()) / free_total
        np.minimum(w, max_degree, out=w)
        if abs(w.sum() - target) <= 1e-9 * target:
            break
    return w


@njit(cache=True, nogil=True)
def _alias_table(p):
    """Vose's alias method: sampling index i with probability p[i] in O(1)."""
    n = len(p)
    prob = p * n
    alias = np.arange(n).astype(np.int32)
    small = np.empty(n, dtype=np.int64)
    large = np.empty(n, dtype=np.int64)
    ns = 0
    nl = 0
    for i in range(n):
        if prob[i] < 1.0:
            small[ns] = i
            ns += 1
        else:
            large[nl] = i
            nl += 1
    while ns > 0 and nl > 0:
        ns -= 1
        s = small[ns]
        g = large[nl - 1]
        alias[s] = g
        prob[g] -= 1.0 - prob[s]
        if prob[g] < 1.0:
            nl -= 1
            small[ns] = g
            ns += 1
    for k in range(nl):
        prob[large[k]] = 1.0
    for k in range(ns):
        prob[small[k]] = 1.0  # leftovers of rounding
    return prob, alias


@njit(cache=True, nogil=True, parallel=True)
def _alias_draw_pairs(prob, alias, salt, src, dst):
    n = len(prob)
    for e in prange(len(src)):
        for end in range(2):
            base = np.int64(4) * e + 2 * end
            slot = min(int(to_unit53(draw64(salt, base)) * n), n - 1)
            vertex = slot if to_unit53(draw64(salt, base + 1)) < prob[slot] else alias[slot]
            if end == 0:
                src[e] = vertex
            else:
                dst[e] = vertex


@register_generator(
    "chung_lu", summary="Chung–Lu power-law graph: expected degrees follow a power law",
    options=(OptionSpec("n", int, help="number of vertices", minimum=2, maximum=MAX_VERTICES),
             OptionSpec("avg_degree", float, 16.0, "mean expected degree", minimum=0.0,
                        exclusive_minimum=True),
             OptionSpec("exponent", float, 2.5, "power-law exponent of the degree distribution, "
                        "typically 2-3",
                        minimum=1.0, exclusive_minimum=True),
             OptionSpec("max_degree", float, None, "cap on an expected degree (automatic: n - 1)",
                        minimum=1.0, optional=True)))
def chung_lu(n: int, avg_degree: float = 16.0, exponent: float = 2.5, *, max_degree: float | None = None,
             seed: int = 0, weights=None, weight_range=DEFAULT_WEIGHT_RANGE) -> CSRGraph:
    """Undirected simple power-law graph (Chung–Lu, Poissonised: the Norros–Reittu variant).

    ``Poisson(S / 2)`` edges (``S`` = sum of expected degrees) are drawn with both ends
    chosen proportionally to the expected degrees; self-loops and repeats are dropped, so a
    pair is linked with probability ``1 - exp(-w_i w_j / S)`` ≈ ``w_i w_j / S``. Vertex ids
    are shuffled so that the hubs are not the low ids."""
    cap = float(n - 1) if max_degree is None else min(float(max_degree), n - 1.0)
    if avg_degree > cap:
        raise ParameterError("avg_degree", avg_degree, f"at most the degree cap {cap:g}")
    rng = structure_rng(seed)
    w = powerlaw_expected_degrees(n, avg_degree, exponent, cap)
    w = w[rng.permutation(n)]
    total = float(w.sum())
    prob, alias = _alias_table(w / total)
    m = int(rng.poisson(total / 2.0))
    src = np.empty(m, dtype=np.int32)
    dst = np.empty(m, dtype=np.int32)
    _alias_draw_pairs(prob, alias, draw_salt(rng), src, dst)
    indptr, indices = csr_from_pairs(n, src, dst, symmetrize=True, drop_loops=True, dedupe=True)
    del src, dst
    params = {"n": n, "avg_degree": avg_degree, "exponent": exponent, "max_degree": cap}
    return finish_graph(indptr, indices, kind="chung_lu", name=f"chunglu_n{n}_d{avg_degree:g}_g{exponent:g}",
                        params=params, seed=seed, directed=False, weights=weights, weight_range=weight_range)


# ---- power-law matrices -----------------------------------------------------------------
@njit(inline="always", nogil=True)
def _capped_length(spread, scale, cap):
    x = spread * scale
    return cap if x >= cap else int(math.floor(x))  # compare first: x may exceed int64


@njit(cache=True, nogil=True, parallel=True)
def _total_length(spread, scale, cap):
    total = 0
    for r in prange(len(spread)):
        total += _capped_length(spread[r], scale, cap)
    return total


@njit(cache=True, nogil=True, parallel=True)
def _row_lengths(spread, scale, cap, out):
    for r in prange(len(spread)):
        out[r] = _capped_length(spread[r], scale, cap)


def powerlaw_row_lengths(rng: np.random.Generator, n_rows: int, total: int, exponent: float,
                         max_row: int) -> np.ndarray:
    """Row lengths ``min(max_row, floor(s * x_r))`` with Pareto ``x_r`` (density ∝ x^-exponent)
    and the scale ``s`` found by bisection so that they add up to ``total`` (up to ties)."""
    # Pareto draws by inversion; 1 - random() is in (0, 1], so no division by zero.
    spread = (1.0 - rng.random(n_rows)) ** (-1.0 / (exponent - 1.0))
    lo, hi = 0.0, float(max_row)  # spread >= 1, so scale max_row fills every row
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _total_length(spread, mid, max_row) >= total:
            hi = mid
        else:
            lo = mid
    lengths = np.empty(n_rows, dtype=INDPTR_DTYPE)
    _row_lengths(spread, hi, max_row, lengths)
    return lengths


@njit(cache=True, nogil=True)
def _sample_sorted_columns(row, n_cols, salt, counter):
    """Fill ``row`` with ``len(row)`` distinct columns in ``[0, n_cols)``, sorted, uniformly."""
    need = len(row)
    if 8 * need >= n_cols:
        # Dense row: selection sampling visits every column once (Knuth's algorithm S),
        # at most 8 draws per kept column; redrawing would need many sorting rounds.
        k = 0
        for c in range(n_cols):
            if to_unit53(draw64(salt, counter + c)) * (n_cols - c) < need - k:
                row[k] = c
                k += 1
                if k == need:
                    break
        return
    # Sparse row: draw the missing columns until all are distinct (each round leaves at
    # most 1/8 of the missing). Drawing only what is missing, never more, keeps the
    # resulting set uniform over all subsets.
    have = 0
    drawn = 0
    while have < need:
        for k in range(have, need):
            row[k] = min(int(to_unit53(draw64(salt, counter + drawn)) * n_cols), n_cols - 1)
            drawn += 1
        sort_columns(row)
        have = 1
        for k in range(1, need):
            if row[k] != row[have - 1]:
                row[have] = row[k]
                have += 1


@njit(cache=True, nogil=True, parallel=True)
def _fill_rows(indptr, n_cols, column_salt, value_salt, indices, values):
    for r in prange(len(indptr) - 1):
        lo = indptr[r]
        hi = indptr[r + 1]
        if hi > lo:
            _sample_sorted_columns(indices[lo:hi], n_cols, column_salt, np.int64(r) * _ROW_STREAM)
        for k in range(lo, hi):
            values[k] = to_unit53(draw64(value_salt, k))


@register_generator(
    "powerlaw_matrix", produces="matrix",
    summary="sparse matrix with power-law row lengths (irregular SpMV input), values in [0, 1)",
    options=(OptionSpec("n_rows", int, help="number of rows", minimum=1, maximum=MAX_VERTICES),
             OptionSpec("n_cols", int, help="number of columns", minimum=1, maximum=MAX_VERTICES),
             OptionSpec("avg_nnz_per_row", float, 16.0, "mean nonzeros per row", minimum=0.0),
             OptionSpec("exponent", float, 2.0, "power-law exponent of the row-length distribution",
                        minimum=1.0, exclusive_minimum=True),
             OptionSpec("max_row", int, None, "longest allowed row (automatic: n_cols)", minimum=1,
                        optional=True)))
def powerlaw_matrix(n_rows: int, n_cols: int, avg_nnz_per_row: float = 16.0, exponent: float = 2.0,
                    max_row: int | None = None, *, seed: int = 0) -> CSRGraph:
    """An ``n_rows x n_cols`` matrix whose row lengths follow a power law.

    ``round(n_rows * avg_nnz_per_row)`` nonzeros in all (exactly, barring ties), row lengths
    ``P(len >= k) ~ k^(1 - exponent)`` capped at ``max_row``; each row's columns are a
    uniform random set (sorted), values uniform in [0, 1), float64."""
    max_row = n_cols if max_row is None else max_row
    if max_row > n_cols:
        raise ParameterError("max_row", max_row, f"at most n_cols = {n_cols}")
    if avg_nnz_per_row > max_row:
        raise ParameterError("avg_nnz_per_row", avg_nnz_per_row, f"at most max_row = {max_row}")
    rng = structure_rng(seed)
    lengths = powerlaw_row_lengths(rng, n_rows, round(n_rows * avg_nnz_per_row), exponent, max_row)
    indptr = np.zeros(n_rows + 1, dtype=INDPTR_DTYPE)
    np.cumsum(lengths, out=indptr[1:])
    del lengths
    indices = np.empty(int(indptr[-1]), dtype=INDEX_DTYPE)
    values = np.empty(len(indices), dtype=np.float64)
    _fill_rows(indptr, n_cols, draw_salt(rng), draw_salt(rng), indices, values)
    params = {"n_rows": n_rows, "n_cols": n_cols, "avg_nnz_per_row": avg_nnz_per_row,
              "exponent": exponent, "max_row": max_row}
    return finish_matrix(indptr, indices, values, n_cols=n_cols, kind="powerlaw_matrix",
                         name=f"powerlaw_{n_rows}x{n_cols}_nnz{avg_nnz_per_row:g}_a{exponent:g}",
                         params=params, seed=seed)
