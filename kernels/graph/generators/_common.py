"""What every generator shares: its random streams, its description, its final CSRGraph."""

from __future__ import annotations

import numpy as np

from kernels.graph.csr import CSRGraph
from kernels.graph.generators._counter_rng import draw_salt
from kernels.graph.generators._weights import DEFAULT_WEIGHT_RANGE, check_weight_options, edge_weights

# The weight stream is a separate child of the seed, so weighting a graph never changes it.
_WEIGHT_STREAM = 1


def structure_rng(seed: int) -> np.random.Generator:
    """The generator every structural draw comes from."""
    return np.random.default_rng(seed)


def weight_salt(seed: int) -> np.uint64:
    return draw_salt(np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_WEIGHT_STREAM,))))


def _format_value(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def describe(kind: str, params: dict, seed: int | None, weights=None,
             weight_range=DEFAULT_WEIGHT_RANGE) -> str:
    """``generated: <kind> <params> seed=<s>`` - enough to regenerate the graph.

    ``seed=None`` is for generators without randomness (stencil matrices)."""
    words = [f"{k}={_format_value(v)}" for k, v in params.items()]
    if seed is not None:
        words.append(f"seed={seed}")
    text = " ".join(["generated:", kind, *words])
    if weights not in (None, "none"):
        lo, hi = weight_range
        text += f" weights={weights}[{_format_value(float(lo))},{_format_value(float(hi))}]"
    return text


def finish_graph(indptr: np.ndarray, indices: np.ndarray, *, kind: str, name: str, params: dict,
                 seed: int, directed: bool, weights=None, weight_range=DEFAULT_WEIGHT_RANGE,
                 notices=()) -> CSRGraph:
    """The generated graph, with random weights attached when asked for."""
    weight_kind, lo, hi = check_weight_options(weights, weight_range)
    w = None
    if weight_kind is not None:
        w = edge_weights(indptr, indices, weight_kind, lo, hi, weight_salt(seed), symmetric=not directed)
    return CSRGraph(indptr, indices, w, directed=directed, name=name,
                    source=describe(kind, params, seed, weights, (lo, hi)), notices=tuple(notices))


def finish_matrix(indptr: np.ndarray, indices: np.ndarray, values: np.ndarray, *, n_cols: int,
                  kind: str, name: str, params: dict, seed: int | None) -> CSRGraph:
    """A generated SpMV matrix (``directed=True``, float64 values)."""
    return CSRGraph(indptr, indices, values, n_cols=n_cols, directed=True, name=name,
                    source=describe(kind, params, seed))
