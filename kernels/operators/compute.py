"""``compute``: apply a device function to every item (Gunrock's compute, a map).

``Compute(f)(items, n, state)`` calls ``f(item, state)`` once per item of ``items[:n]``, or
of ``range(n)`` when ``items`` is None (initialising a label array, for example). ``f``
writes whatever it computes into the arrays of ``state``.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda

from kernels.cuda.jit import jit as kernel_jit
from kernels.operators.launch import Workspace, grid_for


@functools.cache
def compute_kernel(f, over_range: bool):
    def kernel(items, n, state):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            f(i if over_range else items[i], state)

    return kernel_jit(kernel)


class Compute:
    def __init__(self, f, *, block: int = 256, workspace: Workspace | None = None):
        self.f, self.block = f, int(block)
        self.workspace = workspace or Workspace()

    def __call__(self, items, n: int, state: tuple) -> None:
        n = int(n)
        if n <= 0:
            return
        over_range = items is None
        source = self.workspace.get("compute.no_items", np.int32, 1) if over_range else items
        compute_kernel(self.f, over_range)[grid_for(n, self.block), self.block](source, n, state)
