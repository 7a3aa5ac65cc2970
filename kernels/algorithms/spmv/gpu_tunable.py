"""``gpu-tunable``: the paper's figure 7, a CSR kernel specialised on its launch shape.

A block of ``wg`` threads handles ``rows`` consecutive rows at a time, so ``T = wg / rows``
threads cooperate on each row. Thread ``t`` of a row's group reads entries ``start + t``,
``start + t + T``, ... : the group's loads are consecutive addresses (coalesced), unlike the
naive kernel's one-thread-per-row walk. Each thread keeps two such loads in flight per step
(entries ``j`` and ``j + T``), then the group's ``T`` partial sums are reduced:

* ``reduce=shared``: the paper's shared-memory tree, ``log2 T`` halving steps separated by
  ``syncthreads``;
* ``reduce=shuffle`` (default): warp shuffles within each 32-lane warp (a group of ``T <= 32``
  lanes never straddles a warp, because ``T`` and ``wg`` are powers of two); groups wider than
  a warp first fold onto their first warp through the shared-memory tree.

The kernel is built by a factory that closes over ``(wg, rows, value type, row-pointer
width, reduction)`` — the numba analogue of the paper's preprocessor macros: the thread
count, the shared array size and every loop stride are compile-time constants — and the
compiled kernel is cached per tuple. Blocks grid-stride over the row blocks, so any matrix
runs with a bounded grid.

The CUDA simulator has no warp shuffles. The shuffle comes from :mod:`kernels.cuda.warp`,
chosen when the kernel is built: on a GPU it is ``cuda.shfl_down_sync``; under the simulator
the project's one emulation, an exchange through shared memory with the same semantics (lane
``i`` receives lane ``i + offset`` of its warp, or keeps its own value past the warp's end),
kept behind the tree's ``wg`` slots of the same shared array. The kernel source, and so the lane
arithmetic that the shuffle path relies on, is the same on both.
"""

from __future__ import annotations

import functools

import numba
from numba import cuda

from kernels.algorithms.spmv.gpu_common import DeviceSpmvExecution, blocks_for, typed_zero
from kernels.cuda.jit import jit as kernel_jit
from kernels.cuda.warp import WARP, exchange_slots, make_shuffles
from kernels.measure.targets import simulator_enabled

REDUCTIONS = ("shuffle", "shared")


@functools.cache  # an lru_cache without bound: one compiled kernel per tuple
def tunable_kernel(wg: int, rows: int, value_type: str, index_type: str, reduce: str,
                   hardware_shuffles: bool):
    """The kernel specialised on one launch shape (compiled once per argument tuple)."""
    if reduce not in REDUCTIONS:
        raise ValueError(f"reduce must be one of {REDUCTIONS}")
    if rows > wg or wg % rows:
        raise ValueError(f"rows ({rows}) must divide wg ({wg})")
    per_row = wg // rows              # T: threads cooperating on a row
    step2 = 2 * per_row
    use_shuffles = reduce == "shuffle" and per_row > 1
    # tree steps with a stride >= tree_floor go through shared memory; the rest are shuffles
    tree_floor = WARP if use_shuffles else 1
    first_shuffle = min(per_row, WARP) // 2
    emulated = use_shuffles and not hardware_shuffles
    # the emulated shuffles' exchange lies behind the tree's wg slots (on a GPU: the tree's alone)
    partial_slots = wg + exchange_slots(wg, hardware_shuffles) if emulated else wg
    shuffles = make_shuffles(wg, hardware_shuffles, base=wg)
    shfl_down, reset_shuffles = shuffles.down, shuffles.reset
    zero = typed_zero(value_type)
    value_nb = getattr(numba, value_type)

    def spmv_tunable(indptr, indices, values, x, y, n_rows, n_row_blocks):
        partial = cuda.shared.array(partial_slots, value_nb)
        t = cuda.threadIdx.x
        if emulated:
            reset_shuffles(partial, t)
        lane = t % per_row
        local_row = t // per_row
        for block_of_rows in range(cuda.blockIdx.x, n_row_blocks, cuda.gridDim.x):
            row = block_of_rows * rows + local_row
            acc = zero
            if row < n_rows:
                j = indptr[row] + lane
                end = indptr[row + 1]
                while j + per_row < end:  # two independent loads in flight
                    acc += values[j] * x[indices[j]] + values[j + per_row] * x[indices[j + per_row]]
                    j += step2
                if j < end:
                    acc += values[j] * x[indices[j]]
            if per_row > tree_floor:
                partial[t] = acc
                cuda.syncthreads()
                s = per_row // 2
                while s >= tree_floor:
                    if lane < s:
                        partial[t] += partial[t + s]
                    cuda.syncthreads()
                    s //= 2
                acc = partial[t]  # each thread reads only its own slot: safe to reuse below
            if use_shuffles:
                offset = first_shuffle
                while offset > 0:
                    acc += shfl_down(partial, t, acc, offset)
                    offset //= 2
            if lane == 0 and row < n_rows:
                y[row] = acc

    sig = (f"void({index_type}[::1], int32[::1], {value_type}[::1], {value_type}[::1], {value_type}[::1], "
           "int64, int64)")
    return kernel_jit(sig)(spmv_tunable)


class TunableExecution(DeviceSpmvExecution):
    def compile(self) -> None:
        p = self.params
        self.kernel = tunable_kernel(p["wg"], p["rows"], self.value_type, self.index_type, p["reduce"],
                                     not simulator_enabled())

    def launch(self) -> None:
        if self.n_rows == 0:
            return
        wg, rows = self.params["wg"], self.params["rows"]
        n_row_blocks = -(-self.n_rows // rows)
        blocks = blocks_for(n_row_blocks, self.target, wg)
        self.kernel[blocks, wg, self.stream](self.d_indptr, self.d_indices, self.d_values, self.d_x, self.d_y,
                                self.n_rows, n_row_blocks)


def make(problem, params, target):
    return TunableExecution(problem, params, target)


def ptx_kernels(variant):
    """The PTX check's kernels (:mod:`kernels.run.ptx_check`), with the hardware shuffles: groups
    of a warp or less (shuffles alone), wider than a warp (the tree first), a thread a row, and the
    shared-memory tree; both value types, both row-pointer widths."""
    shapes = [(128, 32, "shuffle", "float64", "int32"), (256, 2, "shuffle", "float64", "int32"),
              (128, 128, "shuffle", "float32", "int32"), (128, 16, "shared", "float64", "int64"),
              (64, 4, "shuffle", "float32", "int64")]
    return [(f"spmv gpu-tunable[wg={wg} rows={rows} {reduce} {v} {i}]", tunable_kernel(wg, rows, v, i, reduce, True),
             None) for wg, rows, reduce, v, i in shapes]
