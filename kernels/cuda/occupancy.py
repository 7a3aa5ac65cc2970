"""Occupancy: how many blocks of a kernel an SM holds at once, from the device's facts
(:mod:`kernels.cuda.device`), and the register cap that lets one block fit an SM at all."""

from __future__ import annotations

from kernels.cuda.device import facts as device_facts

#: registers are allocated to a warp in units of this many
REGISTER_ALLOCATION_UNIT = 256
#: the most registers a thread may use (every compute capability the project runs on)
MAX_REGISTERS_PER_THREAD = 255


def blocks_per_sm(block_size: int, shared_bytes: int = 0, registers: int | None = None) -> int:
    """Blocks of ``block_size`` threads, each using ``shared_bytes`` of shared memory and
    ``registers`` per thread (None or 0: not known, not counted), that an SM holds at once
    (threads, blocks, shared memory and registers); at least 1."""
    gpu = device_facts()
    limits = [gpu.threads_per_sm // block_size, gpu.max_blocks_per_sm]
    if shared_bytes:
        limits.append(gpu.shared_bytes_per_sm // shared_bytes)
    if registers:
        unit = REGISTER_ALLOCATION_UNIT
        per_warp = -(-registers * gpu.warp_size // unit) * unit
        limits.append((gpu.registers_per_sm // per_warp) // max(1, block_size // gpu.warp_size))
    return max(1, min(limits))


def resident_blocks(block_size: int) -> int:
    """Blocks of ``block_size`` threads that fill the device once by its resident threads."""
    gpu = device_facts()
    return max(1, gpu.multiprocessors * max(1, gpu.threads_per_sm // block_size))


def register_cap(block_size: int) -> int:
    """Registers per thread a kernel of ``block_size`` threads may use so that one block fits an
    SM (a launch would otherwise fail with "too many resources requested"): the SM's registers
    shared among the block's threads above 256 threads, the hardware's per-thread limit below."""
    if block_size <= 256:
        return MAX_REGISTERS_PER_THREAD
    return device_facts().registers_per_sm // block_size
