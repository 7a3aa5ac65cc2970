"""APSP work models (docs/apsp.md, "Roofline model").

Operations are add+min pairs of the distance type: ``n³`` for Floyd–Warshall, ``n·m`` for
Dijkstra (every stored edge relaxed once per source). Bytes (``item`` = 8 for fp64, 4 for fp32;
predecessors add 4 bytes per matrix entry wherever distances move):

* ``gpu-fw-naive``: one launch per ``k``, each reading and writing the whole ``n²`` matrix:
  ``2·n³·item`` (row and column ``k`` come from cache);
* ``gpu-fw-blocked`` / ``gpu-fw-staged``: one pass over the padded matrix per round of
  ``tile`` values of ``k``: ``2·(N/tile)·N²·item`` with ``N`` the padded side (the dependency
  tiles are re-read from L2);
* ``gpu-dijkstra``: the CSR once, the transposed distances written, then read and written
  again by the transpose: ``3·n²·item`` (its per-thread queues live in the same scratch and are
  left out).
"""

from __future__ import annotations

import numpy as np

from kernels.roofline import Work, register

PRED_BYTES = 4


def _item(problem) -> int:
    return np.dtype(problem.data["dtype"]).itemsize


def _per_entry(problem) -> int:
    return _item(problem) + (PRED_BYTES if problem.data["predecessors"] else 0)


def _op(problem) -> str:
    return f"add+min-{problem.data['dtype_name']}"


def _naive(problem, params, result) -> Work:
    n = problem.data["n"]
    return Work(int(2 * n ** 3 * _per_entry(problem)), float(n) ** 3, _op(problem),
                "the n² matrix read and written once per k; n³ add+min")


def _tiled(problem, params, result) -> Work:
    n, tile = problem.data["n"], params["tile"]
    padded = -(-n // tile) * tile
    rounds = padded // tile
    return Work(int(2 * rounds * padded ** 2 * _per_entry(problem)), float(n) ** 3, _op(problem),
                "the padded matrix read and written once per round of tile k-values; n³ add+min")


def _dijkstra(problem, params, result) -> Work:
    d = problem.data
    n, m = d["n"], len(d["indices"])
    csr = d["indptr"].nbytes + d["indices"].nbytes + d["weights"].nbytes
    return Work(int(csr + 3 * n * n * _per_entry(problem)), float(n) * m, _op(problem),
                "CSR read once, transposed distances written, read and written by the transpose; n·m add+min")


register("apsp", ("gpu-fw-naive",), _naive)
register("apsp", ("gpu-fw-blocked", "gpu-fw-staged"), _tiled)
register("apsp", ("gpu-dijkstra",), _dijkstra)
