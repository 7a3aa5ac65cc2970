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
    are always given the live length explicitly)."""

    def __init__(self):
        self._buffers: dict[str, object] = {}

    def get(self, name: str, dtype, size: int):
        dtype = np.dtype(dtype)
        size = max(int(size), 1)
        buf = self._buffers.get(name)
        if buf is None or buf.dtype != dtype or buf.size < size:
            buf = cuda.device_array(math.ceil(size * GROWTH), dtype=dtype)
            self._buffers[name] = buf
        return buf

    def release(self) -> None:
        self._buffers.clear()

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
