"""Warp-wide votes and exchanges: hardware intrinsics on a GPU, shared memory in the simulator.

numba's CUDA simulator has no ``ballot_sync`` or ``shfl_*_sync`` (DESIGN.md, "Hard-won facts").
Kernels written against :func:`warp_ops` get, on a GPU, the one-instruction intrinsics over the
full warp, and under the simulator an exchange through a shared array and ``syncthreads``.

The simulator form is a *block*-wide exchange, so it is exact only when the block is one warp:
kernels using these operators launch blocks of :data:`WARP` threads under the simulator (their
warp-divergent loops are then block-uniform, as ``syncthreads`` needs). Every lane of a warp must
make the same calls (the mask is the full warp on the GPU too).

``ballot(ex, lane, pred)`` -> uint32 mask of the lanes whose ``pred`` is true;
``shfl(ex, lane, value, src)`` -> lane ``src``'s int64 ``value``;
``warp_sum(ex, lane, value)`` -> the int64 sum over the warp, valid in lane 0.
``ex`` is an int64 shared array of :func:`exchange_size` items (unused on a GPU).
"""

from __future__ import annotations

import functools

from numba import cuda, int32, int64, uint32

WARP = 32
FULL_MASK = 0xFFFFFFFF


def exchange_size(hardware: bool) -> int:
    return 1 if hardware else WARP


@functools.cache
def warp_ops(hardware: bool):
    """``(ballot, shfl, warp_sum)`` for a GPU (``hardware``) or the simulator."""
    if hardware:
        inline = cuda.jit(device=True, inline=True)

        def ballot_hw(ex, lane, pred):
            return uint32(cuda.ballot_sync(FULL_MASK, pred))

        def shfl_hw(ex, lane, value, src):
            return cuda.shfl_sync(FULL_MASK, int64(value), int32(src))

        def warp_sum_hw(ex, lane, value):
            total = int64(value)
            offset = WARP // 2
            while offset > 0:
                total += cuda.shfl_down_sync(FULL_MASK, total, offset)
                offset //= 2
            return total

        return inline(ballot_hw), inline(shfl_hw), inline(warp_sum_hw)

    def ballot_sim(ex, lane, pred):
        cuda.syncthreads()
        ex[lane] = 1 if pred else 0
        cuda.syncthreads()
        mask = 0
        for i in range(WARP):
            if ex[i] != 0:
                mask |= 1 << i
        cuda.syncthreads()
        return uint32(mask)

    def shfl_sim(ex, lane, value, src):
        cuda.syncthreads()
        ex[lane] = value
        cuda.syncthreads()
        got = ex[src]
        cuda.syncthreads()
        return int64(got)

    def warp_sum_sim(ex, lane, value):
        cuda.syncthreads()
        ex[lane] = value
        cuda.syncthreads()
        total = 0
        for i in range(WARP):
            total += ex[i]
        cuda.syncthreads()
        return int64(total)

    device = cuda.jit(device=True)
    return device(ballot_sim), device(shfl_sim), device(warp_sum_sim)


@cuda.jit(device=True)
def lowest_lane(mask):
    """Index of the lowest set bit of a non-zero uint32 ``mask`` (popc works in the simulator)."""
    m = int64(mask)
    return int64(cuda.popc((m & -m) - 1))
