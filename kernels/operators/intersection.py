"""``segmented_intersection``: how many neighbours each vertex pair ``(f1[i], f2[i])`` shares.

Gunrock's segmented intersection (the core of triangle counting on frontiers of edges): one
thread per pair locates both lists (:mod:`.views`), walks the shorter one and looks each of
its entries up in the longer one -- by binary search when the view's lists are sorted (CSR),
by a linear scan on slotted pages, whose lists are in insertion order (removals swap the last
entry into the hole). Writes ``counts[i]`` and adds the total to ``total[0]``
(block-aggregated). Lists are sets (the structures refuse duplicate edges), so a count is the
size of the intersection.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, int64

from kernels.cuda.jit import jit as kernel_jit
from kernels.operators.launch import Workspace, grid_for
from kernels.operators.views import DeviceGraphView, functions


@functools.cache
def intersection_kernel(kind: str, sorted_lists: bool):
    f = functions(kind)
    locate, edge_at, target = f.locate, f.edge_at, f.target

    def kernel(g, f1, f2, n, counts, total):
        block_total = cuda.shared.array(1, int64)
        if cuda.threadIdx.x == 0:
            block_total[0] = 0
        cuda.syncthreads()
        mine = int64(0)
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            la, da = locate(g, f1[i])
            lb, db = locate(g, f2[i])
            if da > db:                         # walk the shorter list
                la, lb = lb, la
                da, db = db, da
            common = int64(0)
            for j in range(da):
                x = target(g, edge_at(g, la, j))
                if sorted_lists:
                    lo = int64(0)
                    hi = db
                    while lo < hi:
                        mid = (lo + hi) >> 1
                        if target(g, edge_at(g, lb, mid)) < x:
                            lo = mid + 1
                        else:
                            hi = mid
                    if lo < db and target(g, edge_at(g, lb, lo)) == x:
                        common += 1
                else:
                    for m in range(db):
                        if target(g, edge_at(g, lb, m)) == x:
                            common += 1
                            break
            counts[i] = common
            mine += common
        if mine > 0:
            cuda.atomic.add(block_total, 0, mine)
        cuda.syncthreads()
        if cuda.threadIdx.x == 0 and block_total[0] > 0:
            cuda.atomic.add(total, 0, block_total[0])

    return kernel_jit(kernel)


def segmented_intersection(view: DeviceGraphView, f1, f2, n: int, counts, *, block: int = 128,
                           workspace: Workspace | None = None, read: bool = True):
    """Common-neighbour counts of the pairs ``(f1[i], f2[i])``, ``i < n``, into ``counts``
    (int64, device). Returns the total when ``read`` (else leaves it in device memory and
    returns the device scalar)."""
    ws = workspace or Workspace()
    total = ws.get("intersection.total", np.int64, 1)
    total[:1].copy_to_device(np.zeros(1, dtype=np.int64))
    n = int(n)
    if n > 0:
        intersection_kernel(view.kind, view.sorted_lists)[grid_for(n, block), block](
            view.args, f1, f2, n, counts, total)
    return int(total.copy_to_host()[0]) if read else total
