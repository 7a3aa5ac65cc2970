"""Launch shapes, reusable device buffers and small device helpers shared by the operators.

* **Grids.** On a GPU a kernel gets one block per work tile up to :data:`MAX_GRID` (the
  kernels grid-stride over the rest). Kernels whose work size lives in device memory (the
  load-balanced expansion reads its output count there, so the host need not read it) run
  on a *resident* grid: as many blocks as the device holds at once. Under the CUDA simulator
  every CUDA thread is a Python thread (~2 ms each), so every launch is capped at
  :data:`kernels.cuda.simulator.OPERATOR_THREADS` threads.
* **Workspace.** Traversals launch several kernels per level; allocating their scratch
  arrays each time would cost more than the kernels on small levels. A :class:`Workspace`
  keeps named device buffers and grows them (with headroom) only when a call needs more.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, int64

from kernels.cuda.occupancy import resident_blocks
from kernels.cuda.simulator import OPERATOR_THREADS, capped_blocks
from kernels.measure.targets import simulator_enabled

MAX_GRID = 1 << 16
GROWTH = 1.25


def on_simulator() -> bool:
    return simulator_enabled()


def for_target(table: dict):
    """``table["sim"]`` under the CUDA simulator, else ``table["cuda"]``: launch shapes that
    differ because a simulated thread costs milliseconds."""
    return table["sim" if on_simulator() else "cuda"]


def grid_for(items: int, block: int) -> int:
    """Blocks for ``items`` work items of ``block`` threads each (at least 1, capped)."""
    wanted = max(1, -(-int(items) // block))
    if on_simulator():
        return capped_blocks(wanted, block, OPERATOR_THREADS)
    return min(wanted, MAX_GRID)


def resident_grid(block: int) -> int:
    """Blocks that fill the device once (its resident threads per SM), for kernels that read their
    work size from device memory and grid-stride over it."""
    if on_simulator():
        return max(1, OPERATOR_THREADS // block)
    return resident_blocks(block)


class Workspace:
    """Named device buffers reused between calls; a buffer grows only when a call needs more.

    ``get(name, dtype, size)`` returns a device array with at least ``size`` items (kernels
    are always given the live length explicitly). ``upload`` and ``download`` copy through a
    pinned host buffer kept beside the device one, straight to and from the buffer's start: a
    pageable copy, and numba's slicing of a device array to copy into part of it, cost
    0.1-0.2 ms each on an H100 host (a batch of edge updates makes four or five of them)."""

    def __init__(self):
        self._buffers: dict[str, object] = {}
        self._pinned: dict[str, np.ndarray] = {}

    def get(self, name: str, dtype, size: int):
        dtype = np.dtype(dtype)
        size = max(int(size), 1)
        buf = self._buffers.get(name)
        if buf is None or buf.dtype != dtype or buf.size < size:
            buf = cuda.device_array(math.ceil(size * GROWTH), dtype=dtype)
            self._buffers[name] = buf
        return buf

    def _host(self, name: str, dtype, size: int) -> np.ndarray:
        buf = self._pinned.get(name)
        if buf is None or buf.dtype != dtype or buf.size < size:
            buf = cuda.pinned_array(math.ceil(max(size, 1) * GROWTH), dtype=dtype)
            self._pinned[name] = buf
        return buf

    def upload(self, name: str, *parts, dtype=None) -> object:
        """The 1-D arrays ``parts``, one after another, copied to the start of device buffer
        ``name`` (of ``dtype``, default the first part's) in one copy; returns the buffer."""
        dtype = np.dtype(dtype or np.asarray(parts[0]).dtype)
        n = sum(len(part) for part in parts)
        device = self.get(name, dtype, n)
        if n == 0:
            return device
        host = self._host(name, dtype, n) if not on_simulator() else np.empty(n, dtype=dtype)
        at = 0
        for part in parts:
            host[at:at + len(part)] = part
            at += len(part)
        if on_simulator():
            device[:n].copy_to_device(host)
            return device
        from numba.cuda.cudadrv import driver

        driver.host_to_device(device, host, n * dtype.itemsize)
        return device

    def download(self, name: str, device, n: int) -> np.ndarray:
        """The first ``n`` items of ``device`` on the host (a pinned buffer of this workspace's,
        valid until the next download under ``name``: copy what must outlive it)."""
        if n <= 0:
            return np.zeros(0, dtype=device.dtype)
        if on_simulator():
            return device[:n].copy_to_host()
        from numba.cuda.cudadrv import driver

        host = self._host(f"down.{name}", device.dtype, n)
        driver.device_to_host(host, device, n * device.dtype.itemsize)
        return host[:n]

    def release(self) -> None:
        self._buffers.clear()
        self._pinned.clear()

    @property
    def nbytes(self) -> int:
        return int(sum(b.size * b.dtype.itemsize for b in self._buffers.values()))


@cuda.jit(device=True)
def rightmost_at_most(values, lo, hi, key):
    """The largest ``i`` in ``[lo, hi]`` with ``values[i] <= key`` (``values`` ascending,
    ``values[lo] <= key`` assumed): which segment of an exclusive scan holds position ``key``."""
    lo = int64(lo)
    hi = int64(hi)
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if values[mid] <= key:
            lo = mid
        else:
            hi = mid - 1
    return lo
