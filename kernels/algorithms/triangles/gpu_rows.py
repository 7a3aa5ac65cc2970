"""The course report's GPU kernels: one block per row (algorithm 8), and the same with the
row staged in shared memory (algorithm 9).

Block ``i`` owns row ``i``; its threads stride over the row's entries ``(i, k)``; a thread
with ``k > i`` merges the rest of row ``i`` (entries after ``k``) with row ``k`` and counts
the common ``j`` (all ``> k``): the CPU algorithm 6, row by row. Each thread adds its partial
count to the total with one ``atomicAdd`` (the report's choice, kept).

Algorithm 9 first copies row ``i`` into shared memory (``shared_capacity`` int32 entries),
so the repeated reads of row ``i`` by every merge come from shared memory. A row longer than
the capacity is read from global memory instead (the whole block decides together, so the
barrier stays uniform).

Per-vertex counts (``per_vertex``): each common ``j`` adds 1 at ``j``, each merge adds its
count at ``k`` and each thread its partial count at ``i``, by atomics.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import cuda, int32

from kernels.algorithms.registry import Problem
from kernels.algorithms.triangles.gpu_common import ARRAY_I32, ARRAY_I64, CountingExecution, kernel_jit, precompile


def _merge_device(per_vertex: bool):
    @cuda.jit(device=True)
    def merge(a_arr, a, a_hi, b_arr, b, b_hi, acc):
        """Common values of sorted ``a_arr[a:a_hi]`` and ``b_arr[b:b_hi]``."""
        found = 0
        while a < a_hi and b < b_hi:
            x = a_arr[a]
            y = b_arr[b]
            if x < y:
                a += 1
            elif x > y:
                b += 1
            else:
                found += 1
                if per_vertex:
                    cuda.atomic.add(acc, 1 + x, 1)
                a += 1
                b += 1
        return found

    return merge


@cache
def row_block_kernel(block_size: int, per_vertex: bool):
    merge = _merge_device(per_vertex)

    @kernel_jit(block_size)
    def row_block(indptr, indices, acc):
        i = cuda.blockIdx.x
        hi = indptr[i + 1]
        mine = 0
        for e in range(indptr[i] + cuda.threadIdx.x, hi, block_size):
            k = indices[e]
            if k > i:
                found = merge(indices, e + 1, hi, indices, indptr[k], indptr[k + 1], acc)
                if per_vertex and found:
                    cuda.atomic.add(acc, 1 + k, found)
                mine += found
        if mine:
            cuda.atomic.add(acc, 0, mine)
            if per_vertex:
                cuda.atomic.add(acc, 1 + i, mine)

    return row_block


@cache
def row_shared_kernel(block_size: int, capacity: int, per_vertex: bool):
    merge = _merge_device(per_vertex)

    @kernel_jit(block_size)
    def row_shared(indptr, indices, acc):
        row = cuda.shared.array(capacity, int32)
        i = cuda.blockIdx.x
        tid = cuda.threadIdx.x
        lo = indptr[i]
        hi = indptr[i + 1]
        length = hi - lo
        staged = length <= capacity
        if staged:
            for t in range(tid, length, block_size):
                row[t] = indices[lo + t]
        cuda.syncthreads()
        mine = 0
        for p in range(tid, length, block_size):
            k = row[p] if staged else indices[lo + p]
            if k > i:
                if staged:
                    found = merge(row, p + 1, length, indices, indptr[k], indptr[k + 1], acc)
                else:
                    found = merge(indices, lo + p + 1, hi, indices, indptr[k], indptr[k + 1], acc)
                if per_vertex and found:
                    cuda.atomic.add(acc, 1 + k, found)
                mine += found
        if mine:
            cuda.atomic.add(acc, 0, mine)
            if per_vertex:
                cuda.atomic.add(acc, 1 + i, mine)

    return row_shared


class RowExecution(CountingExecution):
    """One block per row: grid = number of rows."""

    def __init__(self, problem: Problem, params: dict, shared: bool):
        super().__init__(problem, params)
        self.block_size = int(params["block_size"])
        self.capacity = int(params["shared_capacity"]) if shared else None
        if shared:
            degrees = np.diff(problem.graph.indptr)
            self.stats["rows_over_shared_capacity"] = int(np.count_nonzero(degrees > self.capacity))

    def host_arrays(self):
        g = self.problem.graph
        return {"indptr": g.indptr, "indices": g.indices}

    def compile(self) -> None:
        if self.capacity is None:
            self.kernel = row_block_kernel(self.block_size, self.per_vertex)
        else:
            self.kernel = row_shared_kernel(self.block_size, self.capacity, self.per_vertex)
        precompile(self.kernel, ARRAY_I64, ARRAY_I32, ARRAY_I64)
        self.compile_accumulator_reset()

    def launch(self) -> None:
        self.reset_accumulator()
        if self.n:
            d = self.device
            self.kernel[self.n, self.block_size, self.stream](d["indptr"], d["indices"], self.d_acc)


def make_row_block(problem: Problem, params: dict, target: str) -> RowExecution:
    return RowExecution(problem, params, shared=False)


def make_row_shared(problem: Problem, params: dict, target: str) -> RowExecution:
    return RowExecution(problem, params, shared=True)


def ptx_kernels(variant):
    """The PTX check's kernels (:mod:`kernels.run.ptx_check`): total and per-vertex counts, a
    block size above 256 (registers capped), and the accumulator's reset."""
    from kernels.algorithms.triangles.gpu_common import zero_kernel

    args = (ARRAY_I64, ARRAY_I32, ARRAY_I64)
    out = []
    for block, per_vertex in ((256, False), (512, True)):
        tag = f"block={block}{' per vertex' if per_vertex else ''}"
        if variant.name == "gpu-row-shared":
            out.append((f"triangles gpu-row-shared[{tag}]", row_shared_kernel(block, 1024, per_vertex), args))
        else:
            out.append((f"triangles gpu-row-block[{tag}]", row_block_kernel(block, per_vertex), args))
    return out + [("triangles accumulator reset", zero_kernel(), (ARRAY_I64,))]
