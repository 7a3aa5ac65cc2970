"""``filter``: keep the items a predicate accepts, in order (flag + scan + scatter).

``Filter(predicate)(items, n, state, out)`` evaluates ``predicate(item, state) -> bool``
exactly once per item -- inside the scan's load, which stores the flag and returns it as 0/1
-- then a scatter kernel writes each kept item at its scanned position. ``items=None``
filters the range ``0 .. n-1`` (e.g. "every vertex whose BFS level is L"), so no index array
is needed. The kept count is left in ``count[0]`` on the device and returned when
``read=True``.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, int64, uint8

from kernels.cuda.jit import jit as kernel_jit
from kernels.operators.launch import Workspace, grid_for
from kernels.operators.scan import exclusive_scan


@functools.cache
def flag_load(predicate, over_range: bool):
    """Scan ``load`` for ``args = (items, flags, state)``: evaluate, store the flag, return 0/1."""

    @cuda.jit(device=True)
    def load(i, args):
        item = i if over_range else args[0][i]
        keep = predicate(item, args[2])
        args[1][i] = uint8(1) if keep else uint8(0)
        return int64(1) if keep else int64(0)

    return load


@functools.cache
def scatter_kernel(over_range: bool):
    def kernel(items, flags, offsets, n, out):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            if flags[i]:
                out[offsets[i]] = i if over_range else items[i]

    return kernel_jit(kernel)


class Filter:
    """A filter specialised on a predicate ``predicate(item, state) -> bool`` (a device function)."""

    def __init__(self, predicate, *, block: int = 256, workspace: Workspace | None = None):
        self.predicate, self.block = predicate, int(block)
        self.workspace = workspace or Workspace()

    def __call__(self, items, n: int, state: tuple, out, *, count=None, read: bool = True):
        """Write the kept items of ``items[:n]`` (or of ``range(n)`` when ``items`` is None) to
        ``out`` in order; the count goes to ``count[0]`` (device) and is returned if ``read``."""
        ws = self.workspace
        n = int(n)
        over_range = items is None
        if count is None:
            count = ws.get("filter.count", np.int64, 1)
        flags = ws.get("filter.flags", np.uint8, n)
        offsets = ws.get("filter.offsets", np.int64, n)
        source = ws.get("filter.no_items", np.int32, 1) if over_range else items
        exclusive_scan(flag_load(self.predicate, over_range), (source, flags, state), n, offsets, count, ws)
        if n > 0:
            scatter_kernel(over_range)[grid_for(n, self.block), self.block](source, flags, offsets, n, out)
        return int(count.copy_to_host()[0]) if read else None
