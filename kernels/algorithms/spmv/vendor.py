"""``cusparse``: y = A x by NVIDIA's cuSPARSE through CuPy, the vendor baseline.

CuPy is imported only when a run is made (never when the module is imported or the
variants are listed); ``available()`` says why the variant cannot run without importing it.
The product goes through ``cupyx.cusparse.spmv`` (cuSPARSE's generic SpMV with its default
algorithm) when CuPy offers it, otherwise through ``csr_matrix @ x``; a notice in the record
says which. cuSPARSE's SpMV through CuPy expects a canonical matrix (sorted columns, no
duplicates): a matrix with duplicates is given to it with the duplicates summed on the device
(in the upload stage; the product is the same) and the record says so. Row pointers go up as
int32 when they fit, as for the numba kernels. Like every variant, the result is verified.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from kernels.algorithms.execution import Execution
from kernels.measure.targets import probe_gpu, simulator_enabled

INT32_LIMIT = 2**31 - 1


def available() -> str | None:
    if importlib.util.find_spec("cupy") is None:
        return "CuPy is not installed (pip install cupy-cuda12x or cupy-cuda13x)"
    if simulator_enabled():
        return "cuSPARSE needs a real GPU; this process runs the CUDA simulator"
    if probe_gpu() is None:
        return "no CUDA GPU found"
    return None


def is_canonical(indptr: np.ndarray, indices: np.ndarray) -> bool:
    """Columns strictly increasing within every row (sorted, no duplicates)."""
    if len(indices) < 2:
        return True
    rising = np.diff(indices.astype(np.int64)) > 0
    row_starts = indptr[1:-1]
    row_starts = row_starts[(row_starts > 0) & (row_starts < len(indices))]
    rising[row_starts - 1] = True  # a new row may start at any column
    return bool(rising.all())


class CusparseExecution(Execution):
    def __init__(self, problem, params, target: str):
        graph = problem.graph
        self.problem, self.graph = problem, graph
        self.values, self.x_host = problem.data["values"], problem.data["x"]
        self.dtype = np.dtype(problem.data["dtype"])
        self.canonical = is_canonical(graph.indptr, graph.indices)
        self.idx_dtype = np.int32 if graph.nnz <= INT32_LIMIT else np.int64
        item = self.dtype.itemsize
        self.device_bytes = int((graph.n_rows + 1) * np.dtype(self.idx_dtype).itemsize + graph.nnz * (4 + item)
                                + (graph.n_cols + graph.n_rows) * item)
        self.A = self.x = self.y = None

    def compile(self) -> None:
        import cupy
        import cupyx.cusparse
        import cupyx.scipy.sparse

        self.cp, self.cusparse, self.sparse = cupy, cupyx.cusparse, cupyx.scipy.sparse
        self.use_spmv = bool(cupyx.cusparse.check_availability("spmv"))
        how = "cupyx.cusparse.spmv (cuSPARSE generic SpMV, default algorithm)" if self.use_spmv \
            else "cupyx.scipy.sparse.csr_matrix @ x"
        self.problem.notices.append(f"cuSPARSE called through {how}, CuPy {cupy.__version__}")

    def upload(self) -> None:
        cp, g = self.cp, self.graph
        data = cp.asarray(self.values)
        indices = cp.asarray(g.indices)
        indptr = cp.asarray(g.indptr.astype(self.idx_dtype, copy=False))
        self.A = self.sparse.csr_matrix((data, indices, indptr), shape=(g.n_rows, g.n_cols))
        if self.canonical:
            self.A.has_canonical_format = True  # checked on the host above; spares CuPy a device check
        else:
            self.A.sum_duplicates()
            self.problem.notices.append("the matrix has duplicate or unsorted entries: cuSPARSE got a copy with "
                                        "duplicates summed (same product)")
        self.x = cp.asarray(self.x_host)
        self.y = cp.zeros(g.n_rows, dtype=self.dtype)

    def launch(self) -> None:
        if self.graph.n_rows == 0:
            return
        if self.use_spmv:
            self.cusparse.spmv(self.A, self.x, y=self.y)
        else:
            self.y = self.A @ self.x

    def synchronize(self) -> None:
        self.cp.cuda.Device().synchronize()

    def download(self):
        return self.cp.asnumpy(self.y)

    def release(self) -> None:
        self.A = self.x = self.y = None


def make(problem, params, target):
    return CusparseExecution(problem, params, target)
