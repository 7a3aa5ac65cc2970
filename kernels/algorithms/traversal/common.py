"""What the BFS and SSSP families share: input checks, the source parameter, the GTEPS size.

* The input must be a square adjacency matrix; an undirected graph stores both directions
  (the project's CSR convention), a directed one is traversed along its stored entries.
* Repeated entries are dropped (SSSP keeps the lightest of them, which is the edge a shortest
  path uses) with a notice, because the slotted pages refuse duplicate edges.
* SSSP needs finite non-negative weights (a negative one is refused with
  :class:`InputRequirementError`); an unweighted graph weighs 1 per edge.
* ``source`` must name a vertex: :class:`ParameterError` with the allowed range otherwise.

**GTEPS** (Graph500 style): the edges of the part of the graph the source reaches, divided by
the kernel time -- every variant is charged for the same edge count, whichever edges it
actually examines (a direction-optimizing BFS looks at far fewer). For an undirected graph an
edge is counted once (a self-loop once), for a directed one each entry whose source is
reached. The count comes from a SciPy BFS during ``prepare`` (cached per input and source).
"""

from __future__ import annotations

import numpy as np

from kernels.algorithms.registry import Param, Problem
from kernels.errors import InputRequirementError, ParameterError

SOURCE_PARAM = Param("source", int, 0, "the vertex the traversal starts from (0 .. n-1)", minimum=0)
_REACH_CACHE: dict = {}
_REACH_CACHE_LIMIT = 8
_CLEAN_CACHE: dict = {}      # (fingerprint, keep) -> (graph without repeats, notice): sweeps re-prepare
_CLEAN_CACHE_LIMIT = 2


def check_source(graph, source: int) -> int:
    n = graph.n_rows
    if not 0 <= int(source) < n:
        raise ParameterError("source", source, f"a vertex id from 0 to {n - 1}" if n else "none (empty graph)",
                             detail=f"'{graph.name}' has {n} vertices")
    return int(source)


def without_duplicates(graph, *, keep: str):
    """``graph`` with repeated (row, column) entries removed, and a notice (or ``None``).

    ``keep="lightest"`` keeps the smallest weight of a run of repeats (SSSP), ``"first"`` the
    first entry (BFS, where weights do not matter)."""
    if graph.nnz < 2:
        return graph, None
    rows = graph.row_of_entry()
    repeat = np.zeros(graph.nnz, dtype=bool)
    repeat[1:] = (rows[1:] == rows[:-1]) & (graph.indices[1:] == graph.indices[:-1])
    removed = int(np.count_nonzero(repeat))
    if removed == 0:
        return graph, None
    from kernels.graph.csr import CSRGraph

    keep_mask = ~repeat
    weights = None
    if graph.weights is not None:
        if keep == "lightest":
            starts = np.flatnonzero(keep_mask)
            weights = np.minimum.reduceat(graph.weights, starts)
        else:
            weights = graph.weights[keep_mask]
    counts = np.bincount(rows[keep_mask], minlength=graph.n_rows)
    indptr = np.zeros(graph.n_rows + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    out = CSRGraph(indptr, graph.indices[keep_mask], weights, n_cols=graph.n_cols, directed=graph.directed,
                   name=graph.name, source=graph.source, notices=graph.notices)
    what = "the lightest of each set kept" if keep == "lightest" and weights is not None else "the first kept"
    return out, f"removed {removed} repeated entr{'y' if removed == 1 else 'ies'} ({what})"


def traversal_weights(graph) -> tuple[np.ndarray, str | None]:
    """float64 weights for SSSP, after checking them; ones (and a notice) when unweighted."""
    if graph.weights is None:
        return np.ones(graph.nnz, dtype=np.float64), "unweighted input: every edge weighs 1"
    w = np.asarray(graph.weights, dtype=np.float64)
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        i = int(np.argmax(bad))
        rows = graph.row_of_entry()
        raise InputRequirementError(
            f"SSSP needs finite non-negative edge weights; '{graph.name}' has {int(bad.sum())} that are not "
            f"(first: {rows[i]} -> {graph.indices[i]} weighs {w[i]!r})")
    return w, None


def reach_counts(graph, source: int) -> tuple[int, int]:
    """(vertices reached from ``source``, edges among them as GTEPS counts them), cached."""
    return _reach(graph, source)[:2]


def _reach(graph, source: int) -> tuple[int, int, int]:
    """``reach_counts`` and the source's BFS depth (the deepest level of its BFS tree, 0 for a
    vertex without edges; ``data["hop_eccentricity"]``: how the ``alpha`` and ``delta`` rules
    measure the levels a traversal from it takes, docs/defaults.md), from one cached SciPy BFS."""
    key = (graph.fingerprint, int(source))
    if key not in _REACH_CACHE:
        from scipy.sparse.csgraph import breadth_first_order

        from kernels.algorithms.traversal.reference import bfs_depth

        if len(_REACH_CACHE) >= _REACH_CACHE_LIMIT:
            _REACH_CACHE.pop(next(iter(_REACH_CACHE)))
        reached, predecessors = breadth_first_order(graph.to_scipy(), int(source), directed=True,
                                                    return_predecessors=True)
        depth = bfs_depth(reached, predecessors, graph.n_rows)
        degrees = graph.degrees()
        entries = int(degrees[reached].sum())
        if graph.directed:
            edges = entries
        else:
            rows = graph.row_of_entry()
            loop_rows = rows[rows == graph.indices]
            in_reach = np.zeros(graph.n_rows, dtype=bool)
            in_reach[reached] = True
            loops = int(np.count_nonzero(in_reach[loop_rows]))
            edges = (entries + loops) // 2
        _REACH_CACHE[key] = (int(len(reached)), edges, depth)
    return _REACH_CACHE[key]


def prepare_traversal(graph, params: dict, *, weighted: bool, what: str) -> Problem:
    graph.require(square=True, what=what)
    if graph.n_rows == 0:
        raise InputRequirementError(f"{what} needs at least one vertex; '{graph.name}' is empty")
    source = check_source(graph, params["source"])
    notices = []
    keep = "lightest" if weighted else "first"
    key = (graph.fingerprint, keep)
    if key not in _CLEAN_CACHE:
        if len(_CLEAN_CACHE) >= _CLEAN_CACHE_LIMIT:
            _CLEAN_CACHE.pop(next(iter(_CLEAN_CACHE)))
        _CLEAN_CACHE[key] = without_duplicates(graph, keep=keep)
    clean, notice = _CLEAN_CACHE[key]
    if notice:
        notices.append(notice)
    weights = None
    if weighted:
        weights, notice = traversal_weights(clean)
        if notice:
            notices.append(notice)
    reached, edges, depth = _reach(clean, source)
    nbytes = clean.indptr.nbytes + clean.indices.nbytes + (weights.nbytes if weights is not None else 0)
    nbytes += clean.n_rows * (8 if weighted else 4)
    return Problem(graph=graph,
                   data={"graph": clean, "weights": weights, "source": source, "hop_eccentricity": depth},
                   # no "source" here: the record's input.source is the graph's origin (the source
                   # vertex is in params and result); a number there broke the record schema
                   size={"vertices": clean.n_rows, "entries": clean.nnz,
                         "reached": reached, "traversed_edges": edges, "bytes": int(nbytes)},
                   notices=notices)


def gteps(problem: Problem, seconds: float) -> float:
    return problem.size["traversed_edges"] / seconds / 1e9


def milliseconds(problem: Problem, seconds: float) -> float:
    return seconds * 1e3
