"""CPU SpMV: serial (the paper's figure 4) and parallel over rows (figure 8's OpenMP)."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def spmv_serial(indptr, indices, values, x, y):
    for i in range(len(indptr) - 1):
        acc = values.dtype.type(0)
        for j in range(indptr[i], indptr[i + 1]):
            acc += values[j] * x[indices[j]]
        y[i] = acc
    return y


@numba.njit(cache=True, nogil=True, parallel=True)
def spmv_parallel(indptr, indices, values, x, y):
    for i in numba.prange(len(indptr) - 1):
        acc = values.dtype.type(0)
        for j in range(indptr[i], indptr[i + 1]):
            acc += values[j] * x[indices[j]]
        y[i] = acc
    return y


def empty_output(n_rows: int, dtype) -> np.ndarray:
    return np.empty(n_rows, dtype=dtype)
