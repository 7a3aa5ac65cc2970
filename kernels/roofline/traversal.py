"""BFS and SSSP work models (docs/traversal.md, "Roofline model").

A traversal from ``source`` touches only what it reaches. For each reached vertex: its two row
pointers (int64), its adjacency (int32 columns; float64 weights for SSSP) and, per stored entry
it scans, the neighbour's level (int32) or distance (float64) read; its own level or distance
written once and its frontier slot (int32) written and read once. Operations: one int32 compare
per scanned entry (BFS) or one fp64 add+min (SSSP). SSSP may relax a vertex more than once; the
model counts each once, so it is the lower bound. ``gpu-slotted`` scans the same entries from
slotted pages (its page headers and index, a few bytes per page, are left out). A BFS with
``direction="optimizing"`` on an undirected graph (``gpu-csr``'s default) gets ``gpu-do``'s model,
the lower bound: its bottom-up steps scan only part of each list.
"""

from __future__ import annotations

from collections import OrderedDict

from kernels.roofline import Work, register

_SCANNED: OrderedDict = OrderedDict()       # (fingerprint, source) -> (reached, entries scanned)
_LIMIT = 4


def scanned(graph, source: int) -> tuple[int, int]:
    """(vertices reached from ``source``, stored entries of those vertices)."""
    key = (graph.fingerprint, int(source))
    if key not in _SCANNED:
        from scipy.sparse.csgraph import breadth_first_order

        reached = breadth_first_order(graph.to_scipy(), int(source), directed=True, return_predecessors=False)
        _SCANNED[key] = (int(len(reached)), int(graph.degrees()[reached].sum()))
        while len(_SCANNED) > _LIMIT:
            _SCANNED.popitem(last=False)
    return _SCANNED[key]


def _model(weighted: bool):
    value = 8 if weighted else 4            # float64 distance or int32 level

    def model(problem, params, result) -> Work:
        g = problem.data["graph"]
        if not weighted and params.get("direction") == "optimizing" and not g.directed:
            # bottom-up steps stop at a vertex's first visited parent: the top-down count (every
            # entry of every reached vertex) is then an upper bound ncu saw 0.19 of on R-MAT 18
            return _direction_optimizing(problem, params, result)
        reached, entries = scanned(g, problem.data["source"])
        per_entry = 4 + (8 if weighted else 0) + value
        nbytes = reached * (16 + value + 8) + entries * per_entry
        what = "distance" if weighted else "level"
        return Work(int(nbytes), float(entries), "add+min-fp64" if weighted else "int32",
                    f"per reached vertex: row pointers, its {what} and frontier slot; per scanned entry: "
                    f"column{', weight' if weighted else ''} and the neighbour's {what}; "
                    f"one {'add+min' if weighted else 'compare'} per scanned entry")
    return model


def _direction_optimizing(problem, params, result) -> Work:
    """``gpu-do``: bottom-up steps stop at a vertex's first visited parent, so the entries a run
    scans depend on the run; the model is what any BFS must do: per reached vertex its row
    pointers, its level written and one entry (column and the neighbour's level) read, plus the
    frontier bitmap once. A lower bound: a point far below the roof is scanning it could skip."""
    g = problem.data["graph"]
    reached, _ = scanned(g, problem.data["source"])
    nbytes = reached * (16 + 4 + 4 + 4) + (int(g.n_rows) + 7) // 8
    return Work(int(nbytes), float(reached), "int32",
                "per reached vertex: row pointers, its level and one scanned entry (column, the neighbour's "
                "level); the frontier bitmap once; one compare per reached vertex (a lower bound: bottom-up "
                "steps stop at the first parent)")


register("bfs", ("gpu-csr", "gpu-slotted"), _model(False))
register("bfs", ("gpu-do", "gpu-do-slotted"), _direction_optimizing)
# near-far relaxes an edge at least once, as frontier Bellman-Ford does: the same lower bound
register("sssp", ("gpu-csr", "gpu-slotted", "gpu-nearfar", "gpu-nearfar-slotted"), _model(True))
