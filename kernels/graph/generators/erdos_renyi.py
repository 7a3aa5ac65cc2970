"""Erdős–Rényi random graphs: G(n, p) and G(n, m).

Both number the possible edges (the pairs ``j < i``, or the ``n (n - 1)`` ordered pairs of
a directed graph) and draw a set of pair numbers: G(n, p) by geometric skipping (the gaps
between successive kept pairs are geometric), so the work is proportional to the edges
drawn and the same code serves p = 0.01 and p = 0.5; G(n, m) by sampling exactly ``m``
distinct numbers. Pair numbers come out sorted, so the CSR needs no global sort.
"""

from __future__ import annotations

import math

import numpy as np

from kernels.errors import ParameterError
from kernels.graph.csr import INDEX_DTYPE, INDPTR_DTYPE, CSRGraph
from kernels.graph.generators._build import csr_from_pairs
from kernels.graph.generators._common import finish_graph, structure_rng
from kernels.graph.generators._weights import DEFAULT_WEIGHT_RANGE
from kernels.graph.generators.registry import OptionSpec, register_generator

MAX_VERTICES = 2**31 - 1  # column indices are int32

N_OPTION = OptionSpec("n", int, help="number of vertices", minimum=1, maximum=MAX_VERTICES)
DIRECTED_OPTION = OptionSpec("directed", bool, False,
                             help="draw ordered pairs (a directed graph) instead of unordered ones")


def pair_count(n: int, directed: bool) -> int:
    """How many distinct edges (no self-loops) a graph on ``n`` vertices can have."""
    return n * (n - 1) if directed else n * (n - 1) // 2


def bernoulli_positions(rng: np.random.Generator, total: int, p: float) -> np.ndarray:
    """Sorted positions in ``[0, total)``, each one kept independently with probability ``p``."""
    if total == 0 or p == 0.0:
        return np.zeros(0, dtype=np.int64)
    if p == 1.0:
        return np.arange(total, dtype=np.int64)
    expected = total * p
    chunk = int(expected + 6.0 * math.sqrt(expected * (1.0 - p)) + 16)
    parts = []
    last = -1
    while True:
        positions = np.cumsum(rng.geometric(p, size=chunk))
        positions += last
        inside = int(np.searchsorted(positions, total))
        parts.append(positions[:inside])
        if inside < len(positions):
            break
        last = int(positions[-1])  # rare: the first chunk fell short of the end
        chunk = int((total - last) * p * 1.1) + 16
    return np.concatenate(parts)


def _sorted_distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique`` for int64, through a sort: NumPy 2.4's ``unique`` hashes and took 14 s
    for 10^7 values here, the sort 0.06 s."""
    values.sort()
    keep = np.empty(len(values), dtype=bool)
    keep[:1] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def distinct_positions(rng: np.random.Generator, total: int, m: int) -> np.ndarray:
    """``m`` distinct positions drawn uniformly from ``[0, total)``, sorted."""
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    if 2 * m > total:
        # Denser than half: draw the positions left out instead (few, and cheap to draw).
        keep = np.ones(total, dtype=bool)
        keep[distinct_positions(rng, total, total - m)] = False
        return np.flatnonzero(keep)
    keys = np.zeros(0, dtype=np.int64)
    while len(keys) < m:
        missing = m - len(keys)
        draws = int(missing * total / (total - len(keys)) * 1.02) + 16
        keys = _sorted_distinct(np.concatenate([keys, rng.integers(0, total, size=draws)]))
    if len(keys) > m:
        # Dropping a uniformly chosen surplus keeps the set uniform over all m-subsets.
        keys = np.delete(keys, rng.choice(len(keys), size=len(keys) - m, replace=False))
    return keys


def _lower_pair(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair number -> ``(i, j)`` with ``j < i``, numbering row by row: (1,0), (2,0), (2,1), ..."""
    i = ((1.0 + np.sqrt(1.0 + 8.0 * k.astype(np.float64))) // 2).astype(np.int64)
    i -= (i * (i - 1) // 2 > k)  # float rounding may be one off either way
    i += ((i + 1) * i // 2 <= k)
    return i, k - i * (i - 1) // 2


def _graph_from_positions(n: int, positions: np.ndarray, directed: bool):
    if directed:
        rows = positions // (n - 1) if n > 1 else positions
        cols = positions - rows * (n - 1)
        cols += cols >= rows  # skip the diagonal
        indptr = np.zeros(n + 1, dtype=INDPTR_DTYPE)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        return indptr, cols.astype(INDEX_DTYPE)
    i, j = _lower_pair(positions)
    return csr_from_pairs(n, i, j, symmetrize=True, drop_loops=True, dedupe=False)


@register_generator(
    "gnp", summary="Erdős–Rényi G(n, p): every pair is an edge with probability p",
    options=(N_OPTION,
             OptionSpec("p", float, help="edge probability", minimum=0.0, maximum=1.0),
             DIRECTED_OPTION))
def gnp(n: int, p: float, *, directed: bool = False, seed: int = 0, weights=None,
        weight_range=DEFAULT_WEIGHT_RANGE) -> CSRGraph:
    """G(n, p) without self-loops; undirected unless ``directed``."""
    positions = bernoulli_positions(structure_rng(seed), pair_count(n, directed), p)
    indptr, indices = _graph_from_positions(n, positions, directed)
    name = f"gnp_n{n}_p{p:g}" + ("_directed" if directed else "")
    return finish_graph(indptr, indices, kind="gnp", name=name,
                        params={"n": n, "p": p, "directed": directed}, seed=seed, directed=directed,
                        weights=weights, weight_range=weight_range)


@register_generator(
    "gnm", summary="Erdős–Rényi G(n, m): exactly m edges chosen uniformly",
    options=(N_OPTION, OptionSpec("m", int, help="number of edges", minimum=0), DIRECTED_OPTION))
def gnm(n: int, m: int, *, directed: bool = False, seed: int = 0, weights=None,
        weight_range=DEFAULT_WEIGHT_RANGE) -> CSRGraph:
    """G(n, m) without self-loops or repeated edges; undirected unless ``directed``."""
    total = pair_count(n, directed)
    if m > total:
        raise ParameterError("m", m, f"at most {total:,} (all pairs of {n} vertices)")
    positions = distinct_positions(structure_rng(seed), total, m)
    indptr, indices = _graph_from_positions(n, positions, directed)
    name = f"gnm_n{n}_m{m}" + ("_directed" if directed else "")
    return finish_graph(indptr, indices, kind="gnm", name=name,
                        params={"n": n, "m": m, "directed": directed}, seed=seed, directed=directed,
                        weights=weights, weight_range=weight_range)
