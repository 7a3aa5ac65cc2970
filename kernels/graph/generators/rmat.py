"""R-MAT / Kronecker graphs with the Graph500 parameters.

Each of the ``edge_factor * 2**scale`` edges descends ``scale`` levels of the adjacency
matrix, choosing a quadrant with probabilities ``a, b, c, d`` at each level - the Graph500
reference generator's bit-by-bit formulation. Like Graph500, vertex labels are then
randomly permuted (otherwise the hubs sit at the low ids, which flatters caches).

The descent runs in a parallel numba loop on a counter-based stream (one 64-bit draw per
edge and level gives both bits), so scale 22 (6.7 x 10^7 edges) needs no random arrays.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from kernels.errors import ParameterError
from kernels.graph.csr import CSRGraph
from kernels.graph.generators._build import csr_from_pairs
from kernels.graph.generators._common import finish_graph, structure_rng
from kernels.graph.generators._counter_rng import draw64, draw_salt
from kernels.graph.generators._weights import DEFAULT_WEIGHT_RANGE
from kernels.graph.generators.registry import OptionSpec, register_generator

MAX_SCALE = 31  # vertex ids are int32


def _probability(name: str, default: float) -> OptionSpec:
    return OptionSpec(name, float, default, f"quadrant probability {name}", minimum=0.0, maximum=1.0)


# Each level needs two uniform draws; 16-bit ones (probabilities resolved to 2^-16, far
# below the model's own noise) let one 64-bit draw serve two levels, halving the hashing.
_LEVEL_BITS = 16
_ONE = 1 << _LEVEL_BITS


@njit(cache=True, nogil=True, parallel=True)
def _rmat_edges(scale, top_cut, a_cut, c_cut, salt, perm, src, dst):
    """``u < cut`` with ``u`` uniform on 16 bits has probability ``cut / 2^16``."""
    draws_per_edge = (scale + 1) // 2
    mask = np.uint64(_ONE - 1)
    for e in prange(len(src)):
        i = 0
        j = 0
        bits = np.uint64(0)
        for level in range(scale):
            if level % 2 == 0:
                bits = draw64(salt, np.int64(e) * draws_per_edge + level // 2)
            else:
                bits >>= np.uint64(2 * _LEVEL_BITS)
            bottom = (bits & mask) >= top_cut
            right = ((bits >> np.uint64(_LEVEL_BITS)) & mask) >= (c_cut if bottom else a_cut)
            i = (i << 1) | int(bottom)
            j = (j << 1) | int(right)
        src[e] = perm[i]
        dst[e] = perm[j]


def rmat_edge_list(scale: int, edge_factor: int, a: float, b: float, c: float, *, permute: bool,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The raw R-MAT edge list (with the self-loops and repeats the model produces)."""
    n = 1 << scale
    m = edge_factor * n
    salt = draw_salt(rng)  # drawn first: permute=True relabels exactly the permute=False graph
    perm = rng.permutation(n).astype(np.int32) if permute else np.arange(n, dtype=np.int32)
    src = np.empty(m, dtype=np.int32)
    dst = np.empty(m, dtype=np.int32)
    ab = a + b
    # Graph500: the row bit is 1 with probability c + d, then the column bit is drawn
    # conditionally on it (left with probability a/(a+b) in the top half, c/(c+d) below).
    a_given_top = a / ab if ab > 0 else 0.0
    c_given_bottom = c / (1.0 - ab) if ab < 1 else 0.0
    cuts = [np.uint64(round(p * _ONE)) for p in (ab, a_given_top, c_given_bottom)]
    _rmat_edges(scale, *cuts, salt, perm, src, dst)
    return src, dst


@register_generator(
    "rmat", summary="R-MAT / Kronecker graph (Graph500): 2^scale vertices, skewed degrees",
    options=(OptionSpec("scale", int, help="log2 of the number of vertices", minimum=1, maximum=MAX_SCALE),
             OptionSpec("edge_factor", int, 16, "edges drawn per vertex", minimum=1),
             _probability("a", 0.57), _probability("b", 0.19), _probability("c", 0.19),
             _probability("d", 0.05),
             OptionSpec("directed", bool, False, "keep edge directions (no symmetrization)"),
             OptionSpec("simple", bool, True, "drop self-loops and repeated edges"),
             OptionSpec("permute", bool, True, "randomly permute vertex labels, as Graph500 does")))
def rmat(scale: int, edge_factor: int = 16, a: float = 0.57, b: float = 0.19, c: float = 0.19,
         d: float = 0.05, *, directed: bool = False, simple: bool = True, permute: bool = True,
         seed: int = 0, weights=None, weight_range=DEFAULT_WEIGHT_RANGE) -> CSRGraph:
    """R-MAT graph on ``2**scale`` vertices from ``edge_factor * 2**scale`` drawn edges.

    Undirected and simple by default (symmetrized, no self-loops, no repeats), so it has
    fewer than ``edge_factor * 2**scale`` edges."""
    if abs(a + b + c + d - 1.0) > 1e-6:
        raise ParameterError("a, b, c, d", (a, b, c, d), "probabilities that sum to 1")
    if edge_factor << scale >= 2**62:
        raise ParameterError("edge_factor", edge_factor, f"a value with edge_factor * 2^{scale} < 2^62")
    rng = structure_rng(seed)
    src, dst = rmat_edge_list(scale, edge_factor, a, b, c, permute=permute, rng=rng)
    indptr, indices = csr_from_pairs(1 << scale, src, dst, symmetrize=not directed,
                                     drop_loops=simple, dedupe=simple)
    del src, dst
    name = f"rmat_s{scale}_ef{edge_factor}" + ("_directed" if directed else "")
    params = {"scale": scale, "edge_factor": edge_factor, "a": a, "b": b, "c": c, "d": d,
              "directed": directed, "simple": simple, "permute": permute}
    return finish_graph(indptr, indices, kind="rmat", name=name, params=params, seed=seed,
                        directed=directed, weights=weights, weight_range=weight_range)
