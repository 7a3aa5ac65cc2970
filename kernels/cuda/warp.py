"""Warp shuffles for the project's kernels: the hardware intrinsics on a GPU, and the one
emulation of them for numba's CUDA simulator, which has no ``shfl_*_sync``, ``ballot_sync`` or
``syncwarp``.

:func:`make_shuffles` is called when a kernel is built (its factory knows whether it builds for
a GPU) and gives three device functions, each called as ``f(exchange, t, value, arg)``:

* ``down``: lane ``i`` receives lane ``i + arg`` of its warp (it keeps its own value where that
  lane lies past the warp's, or the block's, end);
* ``up``: lane ``i`` receives lane ``i - arg`` (its own value below lane ``arg``);
* ``idx``: lane ``i`` receives lane ``arg`` of its warp.

On a GPU they are ``cuda.shfl_down_sync`` / ``shfl_up_sync`` / ``shfl_sync``, inlined, on the
warp's lanes (the whole warp, or the block's lanes when the block is smaller than a warp), and
they ignore ``exchange`` and ``t``: the kernel's machine code is that of the intrinsics alone.

Under the simulator each thread writes its value to a shared ``exchange`` array, the block
synchronises, and each thread reads its source lane's slot. Successive calls alternate between
two halves of ``block`` slots, so one barrier per call suffices: a half is written again only two
calls later, after a barrier every thread reaches after its read. Each thread's turn (which half
is next) lives in the array too, after the halves; the kernel zeroes it once at its start
(``reset``). The array holds :func:`exchange_slots` slots from ``base`` on (a kernel may keep its
own data in front of them). Every thread of the block must make the same calls, in the same
order (the emulation synchronises the block).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from numba import cuda, int32, int64, uint32

WARP = 32
FULL_MASK = 0xFFFFFFFF


def lane_mask(block: int) -> int:
    """Lanes taking part in a shuffle: the whole warp, or the block's when it is smaller."""
    return FULL_MASK if block >= WARP else (1 << block) - 1


def exchange_slots(block: int, hardware: bool) -> int:
    """Slots of the shared exchange array the shuffles need: none on a GPU (one, never used);
    under the simulator two halves of ``block`` slots and each thread's turn."""
    return 1 if hardware else 3 * block


@dataclass(frozen=True)
class Shuffles:
    down: object
    up: object
    idx: object
    reset: object       # reset(exchange, t): the thread's turn to the first half (the kernel's start)


def make_shuffles(block: int, hardware: bool, base: int = 0) -> Shuffles:
    """The shuffles of a kernel of ``block`` threads per block (a multiple of the warp, or a power
    of two below it); ``hardware`` False under the simulator, where the exchange array's slots
    from ``base`` on are used (see the module docstring)."""
    if block % WARP and (block > WARP or block & (block - 1)):
        raise ValueError(f"block ({block}) must be a multiple of {WARP} or a power of two below it")
    if hardware:
        mask = lane_mask(block)

        def shfl_down_hw(exchange, t, value, delta):
            return cuda.shfl_down_sync(mask, value, delta)

        def shfl_up_hw(exchange, t, value, delta):
            return cuda.shfl_up_sync(mask, value, delta)

        def shfl_idx_hw(exchange, t, value, lane):
            return cuda.shfl_sync(mask, value, lane)

        def reset_hw(exchange, t):
            pass

        inline = cuda.jit(device=True, inline=True)
        return Shuffles(inline(shfl_down_hw), inline(shfl_up_hw), inline(shfl_idx_hw), inline(reset_hw))

    width = min(block, WARP)            # lanes of a warp that exist
    turns = base + 2 * block

    @cuda.jit(device=True)
    def publish(exchange, t, value):
        """Write ``value`` to this call's half, wait for the block; returns the thread's slot."""
        half = int(exchange[turns + t])
        exchange[turns + t] = 1 - half
        slot = base + half * block + t
        exchange[slot] = value
        cuda.syncthreads()
        return slot

    def shfl_down_emulated(exchange, t, value, delta):
        slot = publish(exchange, t, value)
        got = value
        if t % WARP + delta < width:
            got = exchange[slot + delta]
        return got

    def shfl_up_emulated(exchange, t, value, delta):
        slot = publish(exchange, t, value)
        got = value
        if t % WARP >= delta:
            got = exchange[slot - delta]
        return got

    def shfl_idx_emulated(exchange, t, value, lane):
        slot = publish(exchange, t, value)
        return exchange[slot - t % WARP + lane]

    def reset_emulated(exchange, t):
        exchange[turns + t] = 0

    device = cuda.jit(device=True)
    return Shuffles(device(shfl_down_emulated), device(shfl_up_emulated), device(shfl_idx_emulated),
                    device(reset_emulated))


# ---- votes and exchanges of one warp (gpu-do, gpu-nearfar) -----------------------------------
# ``warp_ops(hardware)`` gives ``(ballot, shfl, warp_sum)``: on a GPU the one-instruction
# intrinsics over the full warp; under the simulator an exchange through a shared int64 array of
# :func:`exchange_size` items and ``syncthreads``. That form is a *block*-wide exchange, so it is
# exact only when the block is one warp: kernels using these launch blocks of :data:`WARP` threads
# under the simulator (their warp-divergent loops are then block-uniform, as ``syncthreads``
# needs). Every lane must make the same calls (the mask is the full warp on the GPU too).
#   ballot(ex, lane, pred) -> uint32 mask of the lanes whose ``pred`` is true;
#   shfl(ex, lane, value, src) -> lane ``src``'s int64 ``value``;
#   warp_sum(ex, lane, value) -> the int64 sum over the warp, valid in lane 0.

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


@functools.cache
def warp_sync(hardware: bool):
    """A device function ``sync()`` ordering the warp's memory writes before its reads:
    ``cuda.syncwarp`` on a GPU; under the simulator (one warp per block) ``syncthreads``, so every
    thread of the block must call it, as the hardware's every lane of the warp."""
    if hardware:
        def sync_hw():
            cuda.syncwarp(FULL_MASK)

        return cuda.jit(device=True, inline=True)(sync_hw)

    def sync_sim():
        cuda.syncthreads()

    return cuda.jit(device=True)(sync_sim)
