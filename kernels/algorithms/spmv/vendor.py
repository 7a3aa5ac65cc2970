"""``cusparse``: y = A x by NVIDIA's cuSPARSE through CuPy, the vendor baseline.

CuPy is imported only when a run is made (never when the module is imported or the
variants are listed); ``available()`` says why the variant cannot run without importing it.
The product goes through ``cupyx.cusparse.spmv`` (cuSPARSE's generic SpMV with its default
algorithm) when CuPy offers it, otherwise through ``csr_matrix @ x``; a notice in the record
says which. cuSPARSE's SpMV through CuPy expects a canonical matrix (sorted columns, no
duplicates): a matrix with duplicates is given to it with the duplicates summed on the device
(in the upload stage; the product is the same) and the record says so. Row pointers go up as
int32 when they fit, as for the numba kernels. Like every variant, the result is verified.

The product goes on the execution's stream (``self.stream``, a numba stream: CuPy gets it as an
external stream), into the ``y`` allocated at upload: with ``cupyx.cusparse.spmv`` the launch is
one fixed cuSPARSE call, so it is offered for CUDA-graph capture (``capturable``); cuSPARSE's
work buffer, which CuPy allocates inside the call, is kept alive with the graph by the
capturer (``kernels.measure.cuda_graphs``). The ``csr_matrix @ x`` fallback allocates a new
``y`` per call and is run directly.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from kernels.algorithms.execution import Execution
from kernels.graph.csr import is_canonical
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
        self.capturable = False  # decided in compile(): only the cupyx.cusparse.spmv path is

    def compile(self) -> None:
        import cupy
        import cupyx.cusparse
        import cupyx.scipy.sparse

        self.cp, self.cusparse, self.sparse = cupy, cupyx.cusparse, cupyx.scipy.sparse
        self.use_spmv = bool(cupyx.cusparse.check_availability("spmv"))
        self.capturable = self.use_spmv
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

    def cupy_stream(self):
        """``self.stream`` (a numba stream, or 0 for the default stream) as a CuPy stream."""
        if not self.stream:
            return self.cp.cuda.Stream.null
        cached = getattr(self, "_cupy_streams", None)
        if cached is None or cached[0] is not self.stream:  # one wrapper per stream, not per launch
            cached = self._cupy_streams = (self.stream, self.cp.cuda.ExternalStream(int(self.stream)))
        return cached[1]

    def launch(self) -> None:
        if self.graph.n_rows == 0:
            return
        with self.cupy_stream():
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
