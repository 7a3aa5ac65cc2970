"""``kernels.operators.sorted_search.lower_bound`` inside a kernel (the CUDA simulator here) equals
NumPy's ``searchsorted(side="left")`` on slices of a sorted array: present, absent, below, above,
duplicates and empty slices."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

from kernels.measure.targets import simulator_enabled
from kernels.operators.sorted_search import lower_bound

pytestmark = pytest.mark.skipif(not simulator_enabled(), reason="runs a kernel: the CUDA simulator or a GPU")


@cuda.jit
def _search(values, lo, hi, queries, out):
    i = cuda.grid(1)
    if i < queries.size:
        out[i] = lower_bound(values, lo[i], hi[i], queries[i])


def test_lower_bound_equals_numpy_searchsorted_on_slices():
    rng = np.random.default_rng(5)
    values = np.sort(rng.integers(0, 40, 50)).astype(np.int32)          # duplicates included
    lo = rng.integers(0, 50, 60)
    hi = np.maximum(lo, rng.integers(0, 51, 60))                          # some slices empty
    queries = rng.integers(-5, 45, 60).astype(np.int32)
    out = np.zeros(60, np.int64)
    _search[1, 64](values, lo, hi, queries, out)
    expected = [a + np.searchsorted(values[a:b], q, side="left") for a, b, q in zip(lo, hi, queries, strict=True)]
    assert out.tolist() == expected
