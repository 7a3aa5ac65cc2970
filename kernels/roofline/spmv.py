"""SpMV's work model (docs/spmv.md, "Roofline model").

Every GPU variant streams the matrix once and gathers ``x``: values (``nnz`` items), column
indices (``4 nnz``), row pointers (``(rows + 1)`` of the device index type), ``x`` read once
(``cols`` items) and ``y`` written once (``rows`` items); ``nnz`` multiply-adds. The variants
differ in how threads share rows, not in what must cross the memory bus: their own small tables
(merge-path tiles, adaptive bins) are a few bytes per row block and are left out.
"""

from __future__ import annotations

import numpy as np

from kernels.roofline import Work, register

VARIANTS = ("gpu-naive", "gpu-tunable", "gpu-merge", "gpu-adaptive", "cusparse")


def _index_item(nnz: int) -> int:
    # the device row pointers are int32 while nnz fits (kernels/algorithms/spmv/gpu_common.py)
    return 4 if nnz <= 2 ** 31 - 1 else 8


def model(problem, params: dict, result: dict) -> Work:
    g = problem.graph
    item = np.dtype(problem.data["dtype"]).itemsize
    nbytes = g.nnz * (item + 4) + (g.n_rows + 1) * _index_item(g.nnz) + (g.n_cols + g.n_rows) * item
    return Work(int(nbytes), float(g.nnz), f"fma-{params['dtype']}",
                "values + column indices + row pointers + x read once + y written once; nnz multiply-adds")


register("spmv", VARIANTS, model)
