"""What the numba.cuda SpMV variants share: device copies of the matrix, launch bounds, stages.

Imported only from ``Variant.make`` (never when algorithms are listed): it imports
``numba.cuda``, which must come after the runner has chosen the simulator or the real GPU.

* **Row pointers as int32** when ``nnz < 2**31``: the kernels read two row pointers per row,
  and for short rows (a 27-point stencil has 27 entries a row) 8-byte pointers would add
  ~2 % of the traffic for nothing. Matrices with ``nnz >= 2**31`` keep int64 pointers (the
  kernels are compiled per index width, so both work).
* **The matrix stays on the device between runs** of the same matrix in one process
  (:class:`ResidentMatrix`, one matrix at a time): a sweep of 45 configurations on a 10^8-entry
  matrix would otherwise copy 1.3 GB to the device 45 times. The run that reuses it says so
  in a notice, and its host→device time then covers ``x`` and ``y`` only.
* **Bounded grids with grid-stride loops**: every kernel works for any matrix size with at
  most :func:`grid_limit` blocks; under the simulator, where every CUDA thread is a Python
  thread, that bound is tiny.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from kernels.algorithms.execution import Execution
from kernels.cuda.simulator import SPMV_THREADS
from kernels.measure.targets import Target

INT32_LIMIT = 2**31 - 1
# numba's own limit for grid.x is 2**31 - 1; far fewer blocks already fill any GPU, and
# the grid-stride loops take care of the rest
MAX_GRID_CUDA = 1 << 20


def index_dtype(nnz: int):
    """Width of the row pointers on the device: int32 while every offset fits."""
    return np.int32 if nnz <= INT32_LIMIT else np.int64


def grid_limit(target: str, threads_per_block: int) -> int:
    """Most blocks one launch may have on ``target`` (the kernels grid-stride over the rest)."""
    if Target.parse(target).simulated:
        return max(1, SPMV_THREADS // threads_per_block)  # simulated threads cost ms each
    return MAX_GRID_CUDA


def blocks_for(work_items: int, target: str, threads_per_block: int) -> int:
    """One block per work item (row block, tile...), at most :func:`grid_limit`, at least 1."""
    return int(max(1, min(work_items, grid_limit(target, threads_per_block))))


def typed_zero(value_type: str):
    """A zero of the kernel's value type, for closures (numba freezes it as a typed constant,
    so accumulators stay fp32 in fp32 kernels)."""
    return np.float64(0.0) if value_type == "float64" else np.float32(0.0)


def to_device(array: np.ndarray):
    """``cuda.to_device`` that also accepts empty arrays (the kernels never read them)."""
    if array.size == 0:
        array = np.zeros(1, dtype=array.dtype)
    return cuda.to_device(np.ascontiguousarray(array))


class ResidentMatrix:
    """The matrix of the most recent GPU run, kept on the device for the next run.

    Keyed by the graph's content fingerprint, the value type and the row-pointer width, so an
    edited graph, another precision or another matrix is uploaded anew (and the previous one
    freed: only one matrix is kept, so device memory stays bounded)."""

    _key = None
    _arrays = None

    @classmethod
    def get(cls, graph, values: np.ndarray, idx_dtype):
        """``((indptr, indices, values) on the device, reused?)``."""
        key = (graph.fingerprint, np.dtype(values.dtype).str, np.dtype(idx_dtype).str, graph.n_rows, graph.nnz)
        if cls._key == key and cls._arrays is not None:
            return cls._arrays, True
        cls.forget()
        arrays = (to_device(graph.indptr.astype(idx_dtype, copy=False)), to_device(graph.indices),
                  to_device(values))
        cls._key, cls._arrays = key, arrays
        return arrays, False

    @classmethod
    def forget(cls) -> None:
        cls._key, cls._arrays = None, None


class DeviceSpmvExecution(Execution):
    """Stages of a numba.cuda SpMV run; subclasses build kernels in ``compile`` and
    queue them in ``launch`` (asynchronously: the runner times launches with CUDA events),
    every kernel on ``self.stream``. A product is a fixed kernel sequence: capturable."""

    capturable = True

    def __init__(self, problem, params, target: str):
        self.problem, self.params, self.target = problem, params, target
        graph = problem.graph
        d = problem.data
        self.graph = graph
        self.n_rows, self.n_cols, self.nnz = graph.n_rows, graph.n_cols, graph.nnz
        self.dtype = np.dtype(d["dtype"])
        self.idx_dtype = index_dtype(self.nnz)
        self.values, self.x = d["values"], d["x"]
        item = self.dtype.itemsize
        idx_item = np.dtype(self.idx_dtype).itemsize
        self.device_bytes = int((self.n_rows + 1) * idx_item + self.nnz * (4 + item)
                                + (self.n_cols + self.n_rows) * item)
        self.d_indptr = self.d_indices = self.d_values = self.d_x = self.d_y = None

    @property
    def value_type(self) -> str:
        return "float64" if self.dtype == np.float64 else "float32"

    @property
    def index_type(self) -> str:
        return "int32" if self.idx_dtype == np.int32 else "int64"

    def upload(self) -> None:
        (self.d_indptr, self.d_indices, self.d_values), reused = ResidentMatrix.get(
            self.graph, self.values, self.idx_dtype)
        if reused:
            self.problem.notices.append("the matrix was already on the device (kept from the previous run "
                                        "of this matrix): host->device time covers x and y only")
        self.d_x = to_device(self.x)
        self.d_y = cuda.device_array(max(self.n_rows, 1), dtype=self.dtype)
        self.upload_extra()

    def upload_extra(self) -> None:
        """Allocate variant-specific device buffers (part of the host→device stage)."""

    def synchronize(self) -> None:
        cuda.synchronize()

    def download(self):
        return self.d_y.copy_to_host()[: self.n_rows]

    def release(self) -> None:
        # the matrix itself stays resident (see ResidentMatrix); x and y go
        self.d_x = self.d_y = None
