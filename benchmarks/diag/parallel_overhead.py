"""Diagnose the fixed per-call cost of a numba ``prange`` loop (seen on the GPU machine: small
CPU-parallel SpMV calls took 8-12 ms inside the benchmark process, 7 us in a fresh one).

    python3 benchmarks/diag/parallel_overhead.py
"""

import time

import numba
import numpy as np

from kernels.algorithms.spmv.cpu import spmv_parallel
from kernels.graph.io import read_graph


def timed_calls(g, values, x, y, n=5):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        spmv_parallel(g.indptr, g.indices, values, x, y)
        out.append(time.perf_counter() - t)
    return [f"{t * 1e3:.3f} ms" for t in out]


def main():
    g = read_graph("tests/data/lp_afiro.mtx")
    values, x, y = np.ones(g.nnz), np.ones(g.n_cols), np.empty(g.n_rows)
    spmv_parallel(g.indptr, g.indices, values, x, y)
    print("threading layer", numba.threading_layer(), "threads", numba.get_num_threads())
    print("before CUDA", timed_calls(g, values, x, y))
    from numba import cuda

    cuda.to_device(np.ones(10))
    cuda.synchronize()
    print("after CUDA", timed_calls(g, values, x, y))


if __name__ == "__main__":
    main()
