"""Memory checks made *before* an n x n matrix is allocated.

An all-pairs result grows as n²: 100,000 vertices need 80 GB for one fp64 distance matrix.
Every variant states what it will allocate (host and, for GPU variants, device) and is
refused with a :class:`ResourceLimitError` that names the figure, what is available and the
largest ``max_vertices`` that would fit, instead of failing half-way with an out-of-memory.
"""

from __future__ import annotations

import math

from kernels.errors import ResourceLimitError
from kernels.memory import available_memory as available_host_bytes
from kernels.memory import format_bytes

# Leave room for the interpreter, the CSR input and the allocator's own overhead.
HOST_HEADROOM = 0.9
DEVICE_HEADROOM = 0.92
DEVICE_RESERVE_BYTES = 256 * 2**20


def free_device_bytes() -> float | None:
    """Free memory on the current CUDA device (infinite on the simulator), or None if unknown."""
    from numba import cuda

    try:
        return float(cuda.current_context().get_memory_info()[0])
    except Exception:  # no context / driver quirk: the allocation itself will tell
        return None


def largest_fitting_n(available: float, bytes_per_pair: float, fixed: float = 0.0) -> int:
    """The largest n with ``bytes_per_pair * n² + fixed <= available``."""
    if available <= fixed or bytes_per_pair <= 0:
        return 0
    return int(math.isqrt(int((available - fixed) / bytes_per_pair)))


def check_host(what: str, n: int, bytes_per_pair: float, detail: str, fixed: float = 0.0,
               available: int | None = None) -> None:
    """Refuse when ``bytes_per_pair * n² + fixed`` bytes would not fit in host memory."""
    need = bytes_per_pair * n * n + fixed
    available = available_host_bytes() if available is None else available
    if available is None:
        return
    usable = available * HOST_HEADROOM
    if need > usable:
        fit = largest_fitting_n(usable, bytes_per_pair, fixed)
        raise ResourceLimitError(
            f"{what} on {n:,} vertices needs {format_bytes(need)} of host memory ({detail}); "
            f"{format_bytes(available)} is available: cap the input with --param max_vertices=N "
            f"(N <= {fit:,} fits)")


def check_device(what: str, n: int, bytes_per_pair: float, detail: str, fixed: float = 0.0) -> None:
    """Refuse when the device allocations of a GPU variant would not fit in free device memory."""
    free = free_device_bytes()
    if free is None or math.isinf(free):
        return
    need = bytes_per_pair * n * n + fixed
    usable = free * DEVICE_HEADROOM - DEVICE_RESERVE_BYTES
    if need > usable:
        fit = largest_fitting_n(usable, bytes_per_pair, fixed)
        raise ResourceLimitError(
            f"{what} on {n:,} vertices needs {format_bytes(need)} of device memory ({detail}); "
            f"the GPU has {format_bytes(free)} free: cap the input with --param max_vertices=N "
            f"(N <= {fit:,} fits)")
