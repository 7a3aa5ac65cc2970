"""``graphblas`` BFS and SSSP: SuiteSparse:GraphBLAS through python-graphblas, LAGraph style.

The honest CPU baseline (issue 18). Both follow the stored entries (out-edges), as the
families do; the matrix is built from the prepared CSR in ``upload`` and the timed launch is
the whole traversal.

* BFS: level-synchronous push as in LAGraph's ``LAGr_BreadthFirstSearch`` (its push step; the
  library also pulls on large frontiers): ``level⟨q⟩ = depth``, then
  ``q⟨¬level⟩ = q·A`` over the any_pair semiring (structural complement mask, replace), until
  the frontier is empty.
* SSSP: frontier Bellman–Ford over the min_plus semiring (LAGraph's ``LAGr_SingleSourceShortestPath``
  is delta-stepping; Bellman–Ford keeps the sketch short and exact): ``t = f·A``,
  ``d' = min(d, t)``, the next frontier is the entries of ``d'`` that are new or smaller, until
  none is. Weights are the family's (1 per edge when unweighted).
"""

from __future__ import annotations

import numpy as np

from kernels.algorithms import graphblas_support as support
from kernels.algorithms.execution import Execution
from kernels.algorithms.registry import Problem


class GraphBlasTraversal(Execution):
    def __init__(self, problem: Problem, algorithm: str):
        self.problem = problem
        self.algorithm = algorithm
        self.A = self.result = None

    def compile(self) -> None:
        self.gb = support.load()
        self.problem.notices.append(support.notice(self.gb))

    def upload(self) -> None:
        d = self.problem.data
        g = d["graph"]
        # prepare dropped repeated entries (SSSP kept the lightest); "min" would be the same choice
        if self.algorithm == "bfs":
            self.A = support.matrix_from_csr(self.gb, g.indptr, g.indices, True, g.n_rows, g.n_cols, dup="any")
        else:
            self.A = support.matrix_from_csr(self.gb, g.indptr, g.indices, d["weights"], g.n_rows, g.n_cols,
                                             dup="min")

    def launch(self) -> None:
        self.result = self._bfs() if self.algorithm == "bfs" else self._sssp()

    def _bfs(self):
        gb, A = self.gb, self.A
        n = A.nrows
        levels = gb.Vector(gb.dtypes.INT32, n)
        frontier = gb.Vector(gb.dtypes.BOOL, n)
        frontier[self.problem.data["source"]] = True
        any_pair = gb.semiring.any_pair[gb.dtypes.BOOL]
        depth = 0
        while frontier.nvals:
            levels(mask=frontier.S) << depth
            frontier(mask=~levels.S, replace=True) << frontier.vxm(A, any_pair)
            depth += 1
        return levels

    def _sssp(self):
        gb, A = self.gb, self.A
        n = A.nrows
        dist = gb.Vector(gb.dtypes.FP64, n)
        dist[self.problem.data["source"]] = 0.0
        frontier = dist.dup()
        min_plus = gb.semiring.min_plus[gb.dtypes.FP64]
        while frontier.nvals:
            reached = frontier.vxm(A, min_plus).new()
            better = dist.ewise_add(reached, gb.binary.min).new()
            unchanged = better.ewise_mult(dist, gb.binary.eq).new()  # True where the old distance stands
            frontier = gb.Vector(gb.dtypes.FP64, n)
            frontier(mask=~unchanged.V) << better
            dist = better
        return dist

    def download(self):
        if self.algorithm == "bfs":
            return self.result.to_dense(fill_value=-1, dtype=np.int32)
        return self.result.to_dense(fill_value=np.inf, dtype=np.float64)

    def release(self) -> None:
        self.A = self.result = None


def make_bfs(problem: Problem, params, target) -> GraphBlasTraversal:
    return GraphBlasTraversal(problem, "bfs")


def make_sssp(problem: Problem, params, target) -> GraphBlasTraversal:
    return GraphBlasTraversal(problem, "sssp")
