"""Facts about the GPU a kernel runs on, read from the device, in one place.

Launch shapes and occupancy models need the SM count, the shared memory and registers an SM
holds and the threads it keeps resident. They are read once per process from the current CUDA
device (numba's device attributes). Without a real device (the CUDA simulator, a CPU-only test)
the figures of :data:`NOMINAL` are used: an H100's, the GPU the project measures on, so the
code paths stay the same shape; the simulator's own launch shapes are capped separately by its
thread budgets (:mod:`kernels.cuda.simulator`).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeviceFacts:
    multiprocessors: int
    shared_bytes_per_sm: int     # usable by blocks: the SM's, less the 1 KiB reserved for one block (cc >= 8)
    registers_per_sm: int
    threads_per_sm: int
    max_blocks_per_sm: int
    warp_size: int = 32
    measured: bool = True        # read from a device (False: the nominal figures)
    l2_bytes: int = 0            # the L2 cache (0: not read)


#: an H100 SXM's figures (compute capability 9.0): used where no device can be asked
NOMINAL = DeviceFacts(multiprocessors=132, shared_bytes_per_sm=227 * 1024, registers_per_sm=65536,
                      threads_per_sm=2048, max_blocks_per_sm=32, measured=False, l2_bytes=50 * 1000 * 1000)


@functools.cache
def facts() -> DeviceFacts:
    """The current device's facts (the first call in a GPU process opens its context)."""
    from kernels.measure.targets import simulator_enabled

    if simulator_enabled():
        return NOMINAL
    try:
        from numba import cuda

        d = cuda.get_current_device()
    except Exception:  # noqa: BLE001 - no device to ask (a CPU-only process): the nominal GPU
        return NOMINAL

    def optional(name: str, default: int) -> int:
        try:
            return int(getattr(d, name))
        except Exception:  # noqa: BLE001 - an attribute an older driver does not know
            return default

    try:
        return DeviceFacts(
            multiprocessors=int(d.MULTIPROCESSOR_COUNT),
            shared_bytes_per_sm=int(d.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
            - optional("RESERVED_SHARED_MEMORY_PER_BLOCK", 0),
            registers_per_sm=int(d.MAX_REGISTERS_PER_MULTIPROCESSOR),
            threads_per_sm=int(d.MAX_THREADS_PER_MULTIPROCESSOR),
            max_blocks_per_sm=optional("MAX_BLOCKS_PER_MULTIPROCESSOR", 32),
            warp_size=optional("WARP_SIZE", 32),
            l2_bytes=optional("L2_CACHE_SIZE", 0))
    except Exception as exc:  # noqa: BLE001 - say it: the launch shapes then follow a nominal H100
        logger.warning("could not read the GPU's attributes (%s): launch shapes assume an H100", exc)
        return NOMINAL


def multiprocessors() -> int:
    return facts().multiprocessors
