"""``gpu-naive``: one thread per row (the paper's figure 6, ViennaCL's CSR kernel).

Each thread walks its row alone, so neighbouring threads read entries ``nnz/row`` apart:
the loads of a warp are not coalesced, which is what the tunable kernel fixes. The block
size ``wg`` is a launch parameter only; the kernel itself does not depend on it.
"""

from __future__ import annotations

import functools

from numba import cuda

from kernels.algorithms.spmv.gpu_common import DeviceSpmvExecution, blocks_for, typed_zero
from kernels.cuda.jit import jit as kernel_jit


@functools.cache  # an lru_cache without bound: one compiled kernel per tuple
def naive_kernel(value_type: str, index_type: str):
    """The compiled kernel for one value type and row-pointer width."""

    zero = typed_zero(value_type)

    def spmv_row_per_thread(indptr, indices, values, x, y, n_rows):
        for row in range(cuda.grid(1), n_rows, cuda.gridsize(1)):
            acc = zero
            for j in range(indptr[row], indptr[row + 1]):
                acc += values[j] * x[indices[j]]
            y[row] = acc

    sig = f"void({index_type}[::1], int32[::1], {value_type}[::1], {value_type}[::1], {value_type}[::1], int64)"
    return kernel_jit(sig)(spmv_row_per_thread)


class NaiveExecution(DeviceSpmvExecution):
    def compile(self) -> None:
        self.kernel = naive_kernel(self.value_type, self.index_type)

    def launch(self) -> None:
        if self.n_rows == 0:
            return
        wg = self.params["wg"]
        blocks = blocks_for(-(-self.n_rows // wg), self.target, wg)
        self.kernel[blocks, wg, self.stream](self.d_indptr, self.d_indices, self.d_values, self.d_x, self.d_y,
                                             self.n_rows)


def make(problem, params, target):
    return NaiveExecution(problem, params, target)


def ptx_kernels(variant):
    """The PTX check's kernels (:mod:`kernels.run.ptx_check`): every value type and row-pointer width."""
    return [(f"spmv gpu-naive[{v}, {i}]", naive_kernel(v, i), None)
            for v in ("float64", "float32") for i in ("int32", "int64")]
