"""k-clique counting's work models (docs/kclique.md, "Roofline model").

Bytes: the oriented CSR read once (int64 row pointers, int32 out-lists) and the int64 counts
written (the total, or one per vertex). Operations (int32: compares, AND, popc), the search's
first levels, which every k pays; deeper levels depend on how many cliques there are, so for
k > 3 the count is a lower bound:

* vertex-centric (``gpu-vertex``, ``gpu-list``, ``gpu`` with ``work=vertex``): for each vertex
  ``v``, each out-neighbour's out-list looked up in ``N⁺(v)`` (``Σ_{u∈N⁺(v)} d⁺(u)``) and, for the
  bitmap kernels, the ``d⁺(v)·⌈d⁺(v)/32⌉`` words of the encoded subgraph ANDed once;
* edge-centric (``gpu-edge``, ``gpu`` with ``work=edge``): for each oriented edge ``(v, u)`` the
  intersection of the two out-lists, ``d⁺(v) + d⁺(u)`` steps.
"""

from __future__ import annotations

import numpy as np

from kernels.roofline import Work, counted, register


def _bytes(dag, params) -> int:
    n = dag.n
    return 8 * (n + 1) + 4 * dag.num_edges + 8 * (1 + (n if params.get("per_vertex") else 0))


def vertex_ops(dag, bitmap: bool) -> float:
    out = np.diff(dag.indptr).astype(np.int64)
    lookups = float(out[dag.indices].sum())                    # Σ_v Σ_{u in N+(v)} d+(u)
    words = float((out * ((out + 31) // 32)).sum()) if bitmap else 0.0
    return lookups + words


def edge_ops(dag) -> float:
    out = np.diff(dag.indptr).astype(np.int64)
    tails = np.repeat(np.arange(dag.n), out)
    return float((out[tails] + out[dag.indices]).sum())


def _model(kind: str):
    def model(problem, params, result) -> Work:
        dag = problem.data["oriented"]
        work = params.get("work", kind) if kind == "auto" else kind
        g = problem.graph
        key = ("kclique", work, g.fingerprint, g.n_rows, g.nnz, dag.orientation)
        if work == "edge":
            return Work(_bytes(dag, params), counted(key, lambda: edge_ops(dag)), "int32",
                        "oriented CSR read once + counts written; d+(v) + d+(u) intersection steps per oriented edge")
        bitmap = work != "list"
        return Work(_bytes(dag, params), counted(key, lambda: vertex_ops(dag, bitmap)), "int32",
                    "oriented CSR read once + counts written; out-neighbours' lists looked up in N+(v)"
                    + (" and the encoded subgraph's words ANDed once" if bitmap else "")
                    + " (levels 1-2 of the search)")
    return model


register("kclique", ("gpu",), _model("auto"))
register("kclique", ("gpu-vertex",), _model("vertex"))
register("kclique", ("gpu-edge",), _model("edge"))
register("kclique", ("gpu-list",), _model("list"))
