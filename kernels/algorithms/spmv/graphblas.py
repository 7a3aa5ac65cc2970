"""``graphblas``: y = A x by SuiteSparse:GraphBLAS (``GrB_mxv`` over the plus_times semiring).

The honest CPU baseline (issue 18): SuiteSparse's multi-threaded SpMV, in the family's dtype
(fp64 or fp32: the matrix, x and y all of that type, so the semiring is ``plus_times`` of that
type). The matrix and x are built in ``upload`` (a copy of the CSR into GraphBLAS); the timed
launch is ``w << A.mxv(x)`` into a preallocated vector, with GraphBLAS in blocking mode so the
product is finished when the launch returns. Rows without entries are absent from GraphBLAS's
sparse result: ``download`` fills them with 0, as every other variant writes them.
"""

from __future__ import annotations

import numpy as np

from kernels.algorithms import graphblas_support as support
from kernels.algorithms.execution import Execution
from kernels.algorithms.registry import Problem


class GraphBlasSpmv(Execution):
    def __init__(self, problem: Problem):
        self.problem = problem
        self.dtype = np.dtype(problem.data["dtype"])
        self.A = self.x = self.y = None

    def compile(self) -> None:
        self.gb = support.load()
        self.problem.notices.append(support.notice(self.gb))

    def upload(self) -> None:
        gb, d, g = self.gb, self.problem.data, self.problem.graph
        self.A = support.matrix_from_csr(gb, d["indptr"], d["indices"], d["values"], g.n_rows, g.n_cols,
                                         dup="plus")
        self.x = gb.Vector.from_dense(d["x"])
        self.y = gb.Vector(self.A.dtype, g.n_rows)
        self.semiring = gb.semiring.plus_times[self.A.dtype]

    def launch(self) -> None:
        self.y << self.A.mxv(self.x, self.semiring)
        # finish any deferred work (sorting a jumbled result) inside the timed launch, in case
        # python-graphblas was initialised elsewhere in non-blocking mode
        self.y.wait()

    def download(self):
        return self.y.to_dense(fill_value=0, dtype=self.dtype)

    def release(self) -> None:
        self.A = self.x = self.y = None


def make(problem: Problem, params, target) -> GraphBlasSpmv:
    return GraphBlasSpmv(problem)
