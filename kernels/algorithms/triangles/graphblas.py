"""``graphblas``: triangle counting by SuiteSparse:GraphBLAS, LAGraph's masked-product methods.

The honest CPU baseline (issue 18). Total count: LAGraph's ``LAGr_TriangleCount`` methods
(Davis, "Algorithm 1000: SuiteSparse:GraphBLAS", and Wolf et al., "Fast linear algebra-based
triangle counting with KokkosKernels", the "Sandia" methods):

* ``method=sandia-ll``: ``C⟨L⟩ = L·L`` over the plus_pair semiring, ``ntri = sum(C)``
  (LAGraph's ``LAGr_TriangleCount_SandiaLL``): ``L[i, j]`` holds each edge once, at the end
  ranked higher; each triangle ``i > k > j`` is one term.
* ``method=sandia-lut``: ``C⟨L⟩ = L·Uᵀ`` with ``U = Lᵀ`` stored on its own (LAGraph's
  ``Sandia_LUT``, its default): the same count, but SuiteSparse computes each masked entry as a
  dot product (a merge of two sorted rows) instead of scattering ``L·L``.

``ordering`` ranks the vertices as LAGraph's presort does for these two methods: ``degree``
ranks by ascending (degree, id), so ``L``'s rows hold each vertex's lower-degree neighbours;
``natural`` by id (``L = tril(A)``).
The per-vertex counts use Burkhardt's method, ``rowsum(C⟨A⟩ = A·A) / 2`` (LAGraph's
``LAGr_TriangleCount_Burkhardt`` without the final division by 6): each triangle at its three
corners. ``L`` (or ``A``) is built in ``upload``; the timed launch is the masked product and
the reduction.
"""

from __future__ import annotations

import numpy as np

from kernels.algorithms import graphblas_support as support
from kernels.algorithms.execution import Execution
from kernels.algorithms.registry import Problem


class GraphBlasTriangles(Execution):
    def __init__(self, problem: Problem, params: dict):
        self.problem = problem
        self.A = self.L = self.right = None
        self.per_vertex = bool(params["per_vertex"])
        self.method = params["method"]
        self.ordering = params["ordering"]
        self.result = None

    def compile(self) -> None:
        self.gb = support.load()
        self.problem.notices.append(support.notice(self.gb))

    def upload(self) -> None:
        gb, g = self.gb, self.problem.graph
        n = g.n_rows
        if self.per_vertex:
            # the whole adjacency (prepare made it simple and symmetric); int64 ones for plus_pair
            self.A = support.matrix_from_csr(gb, g.indptr, g.indices, np.int64(1), n, n, dup="any")
            return
        from kernels.algorithms.triangles.vendor import lower_triangle

        lower = lower_triangle(g, self.ordering)
        self.L = support.matrix_from_csr(gb, lower.indptr, lower.indices, np.int64(1), n, n, dup="any")
        # Sandia_LUT: U = Lᵀ stored by rows of its own, multiplied transposed (C⟨L⟩ = L·Uᵀ), so
        # SuiteSparse takes its masked dot-product kernel, as LAGraph's GrB_DESC_ST1 call does
        self.right = self.L if self.method == "sandia-ll" else self.L.T.new()
        self.problem.data["stats"]["lower_nnz"] = int(lower.nnz)

    def launch(self) -> None:
        gb = self.gb
        plus_pair = gb.semiring.plus_pair[gb.dtypes.INT64]
        if self.per_vertex:
            C = self.A.mxm(self.A, plus_pair).new(mask=self.A.S)
            self.result = C.reduce_rowwise(gb.monoid.plus).new()
            return
        right = self.right if self.method == "sandia-ll" else self.right.T
        C = self.L.mxm(right, plus_pair).new(mask=self.L.S)
        self.result = C.reduce_scalar(gb.monoid.plus[gb.dtypes.INT64]).new()

    def download(self):
        if self.per_vertex:
            counts = self.result.to_dense(fill_value=0, dtype=np.int64)
            return counts // 2
        return np.int64(self.result.get(0))

    def release(self) -> None:
        self.A = self.L = self.right = self.result = None


def make(problem: Problem, params, target) -> GraphBlasTriangles:
    return GraphBlasTriangles(problem, params)
