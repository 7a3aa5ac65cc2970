"""Random edge weights for generated graphs.

Weights are a function of the edge, not of the order entries were produced in: entry
``(r, c)`` gets draw number ``key(r, c)`` of a counter stream. For an undirected graph the
key is ``(min, max)``, so both stored directions of an edge carry the same weight without
any search for the reverse entry, and adding weights never changes the structure drawn
from the same seed (the weight stream is separate from the structure stream).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from kernels.errors import ParameterError
from kernels.graph.generators._counter_rng import draw64, to_unit53

WEIGHT_KINDS = ("none", "uniform", "integer")
DEFAULT_WEIGHT_RANGE = (0.0, 1.0)


def check_weight_options(weights, weight_range) -> tuple[str | None, float, float]:
    """Normalise ``weights`` (None / "none" / "uniform" / "integer") and its range."""
    kind = "none" if weights is None else weights
    if kind not in WEIGHT_KINDS:
        raise ParameterError("weights", weights, "one of " + ", ".join(WEIGHT_KINDS))
    try:
        lo, hi = (float(v) for v in weight_range)
    except (TypeError, ValueError):
        raise ParameterError("weight_range", weight_range, "a pair of numbers (min, max)") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ParameterError("weight_range", weight_range, "finite numbers")
    if kind == "integer":
        if lo != int(lo) or hi != int(hi) or lo > hi:
            raise ParameterError("weight_range", weight_range,
                                 "whole numbers with min <= max for integer weights")
    elif kind == "uniform" and not lo < hi:
        raise ParameterError("weight_range", weight_range, "min < max for uniform weights")
    return (None if kind == "none" else kind), lo, hi


@njit(cache=True, nogil=True, parallel=True)
def _edge_uniforms(indptr, indices, salt, symmetric, out):
    for r in prange(len(indptr) - 1):
        for k in range(indptr[r], indptr[r + 1]):
            c = np.int64(indices[k])
            a = np.int64(r)
            b = c
            if symmetric and c < a:
                a, b = c, a
            key = (np.uint64(a) << np.uint64(32)) | np.uint64(b)
            out[k] = to_unit53(draw64(salt, key))


def edge_weights(indptr: np.ndarray, indices: np.ndarray, kind: str, lo: float, hi: float,
                 salt: np.uint64, *, symmetric: bool) -> np.ndarray:
    """float64 weights for the stored entries: uniform in [lo, hi) or whole numbers in [lo, hi]."""
    w = np.empty(len(indices), dtype=np.float64)
    _edge_uniforms(indptr, indices, salt, symmetric, w)
    if kind == "uniform":
        w *= hi - lo
        w += lo
    else:
        w *= hi - lo + 1.0
        np.floor(w, out=w)
        w += lo
        np.minimum(w, hi, out=w)  # guard against rounding up to hi + 1
    return w
