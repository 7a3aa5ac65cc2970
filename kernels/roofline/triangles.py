"""Triangle counting's work models (docs/triangles.md, "Roofline model").

Bytes: the cleaned CSR read once (int64 row pointers, int32 columns; the oriented CSR for
``gpu-oriented``, whose orientation is the separately timed preprocess) and the int64 counts
written (the total, or ``1 + n`` with per-vertex counts). Operations are int32 compares:

* ``gpu-row-block`` / ``gpu-row-shared`` (the report's algorithms 8 and 9): for each entry
  ``(i, k)`` with ``k > i`` a merge of the rest of row ``i`` (after ``k``) with the entries of row
  ``k`` above ``k``: at most the two lengths' sum of steps, counted so;
* ``gpu-oriented``: ``min(d⁺a, d⁺b)`` hash probes per oriented edge ``(a, b)``;
* ``gpu-spgemm``: the products of ``L·L``, ``Σ_k in_L(k)·out_L(k)`` (fp32 multiply-adds, cuSPARSE
  works on float32 ones), with ``L`` the lower triangle in the variant's ordering.
"""

from __future__ import annotations

import numpy as np

from kernels.roofline import Work, counted, register


def _rows(g) -> np.ndarray:
    return g.row_of_entry()


def _out_bytes(g, params) -> int:
    return 8 * (1 + (g.n_rows if params.get("per_vertex") else 0))


def _csr_bytes(n: int, entries: int) -> int:
    return 8 * (n + 1) + 4 * entries


def merge_steps(g) -> float:
    """Σ over entries (i, k), k > i, of (entries of row i after k) + (entries of row k above k)."""
    rows = _rows(g)
    cols = g.indices.astype(np.int64)
    upper = np.bincount(rows[cols > rows], minlength=g.n_rows)
    e = np.flatnonzero(cols > rows)
    rest_i = g.indptr[rows[e] + 1] - e - 1
    return float(rest_i.sum() + upper[cols[e]].sum())


def degree_rank(g) -> np.ndarray:
    """Each vertex's position in ascending (degree, id) order."""
    order = np.lexsort((np.arange(g.n_rows), g.degrees()))
    rank = np.empty(g.n_rows, dtype=np.int64)
    rank[order] = np.arange(g.n_rows)
    return rank


def oriented_out_degrees(g) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(out-degree per vertex, tails, heads) of the degree orientation: a -> b when a ranks lower."""
    rank = degree_rank(g)
    rows = _rows(g)
    keep = rank[rows] < rank[g.indices]
    tails, heads = rows[keep], g.indices[keep].astype(np.int64)
    return np.bincount(tails, minlength=g.n_rows), tails, heads


def _key(g, what: str) -> tuple:
    return ("triangles", what, g.fingerprint, g.n_rows, g.nnz)


def _rows_model(problem, params, result) -> Work:
    g = problem.graph
    steps = counted(_key(g, "merge"), lambda: merge_steps(g))
    return Work(_csr_bytes(g.n_rows, g.nnz) + _out_bytes(g, params), steps, "int32",
                "CSR read once + counts written; merge steps of rows i and k for each entry (i, k), k > i")


def _oriented_model(problem, params, result) -> Work:
    g = problem.graph

    def count() -> tuple[int, float]:
        out, tails, heads = oriented_out_degrees(g)
        return len(tails), float(np.minimum(out[tails], out[heads]).sum())

    edges, probes = counted(_key(g, "probes"), count)
    return Work(_csr_bytes(g.n_rows, edges) + _out_bytes(g, params), probes, "int32",
                "oriented CSR read once + counts written; min(d+a, d+b) hash probes per oriented edge")


def _spgemm_model(problem, params, result) -> Work:
    g = problem.graph
    ordering = params.get("ordering")

    def count() -> tuple[int, float]:
        rows = _rows(g)
        key = degree_rank(g) if ordering == "degree" else np.arange(g.n_rows)
        lower_entry = key[g.indices] < key[rows]                 # (i, j) in L: j before i
        in_l = np.bincount(g.indices[lower_entry], minlength=g.n_rows)   # entries of column k of L
        out_l = np.bincount(rows[lower_entry], minlength=g.n_rows)       # entries of row k of L
        return int(lower_entry.sum()), float((in_l * out_l).sum())

    m, products = counted(_key(g, f"spgemm-{ordering}"), count)
    # L read as both operands, the mask L once more; the product's entries are not counted
    return Work(3 * (_csr_bytes(g.n_rows, m) + 4 * m) + 8, products, "fma-fp32",
                "L (float32 values) read as two operands and the mask; Σ_k in_L(k)·out_L(k) multiply-adds")


register("triangles", ("gpu-row-block", "gpu-row-shared"), _rows_model)
register("triangles", ("gpu-oriented",), _oriented_model)
register("triangles", ("gpu-spgemm",), _spgemm_model)
