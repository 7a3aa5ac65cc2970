"""The vertex directory of a device mirror: where each vertex's list starts, and its length.

The slotted pages say which vertices a page holds (its slots) and the index says which page
holds which first vertex, so a kernel *can* find any list from the pages alone: a binary search
over the index, then one over the page's slots (about 26 dependent memory reads on a graph of
4 M vertices). Traversal kernels do that once for every vertex they put in a frontier, and a
bottom-up step once for every unvisited vertex, each a chain of reads the whole grid then waits
for at the next grid sync: on an H100 the direction-optimizing BFS on slotted pages took 3.56x
the CSR time on R-MAT 22 (2.2x once compiled for two blocks per SM), and 1.6x on a road-like
mesh (the frontier suite; benchmarks/diag/frontier_trace.py).

The directory is what dynamic GPU structures keep per vertex (Hornet's vertex array: a pointer
and a degree): ``loc`` int64 and ``degree`` int32 for every vertex id, derived from the pages:

* an ordinary list: ``loc`` is the pool word of its first neighbour (``edge_at`` is ``loc + j``);
* a large list (spanning pages): ``loc`` is ``-(its first index column + 1)``, as
  :func:`kernels.operators.views.slotted_locate` returns;
* a vertex without a slot (never added, or removed): ``(0, 0)``.

It is rebuilt on the device, from the device's pages and index, after every change to them
(:meth:`~kernels.graph.device.DeviceMirror.upload_full`, ``sync``, and a device batch of
:class:`~kernels.operators.device_updates.DeviceUpdater`), inside the time those report: one
pass clearing every entry, then a warp per index column writing its page's slots. A batch that
opens a page shifts the index columns after it, and with them every later large list's handle;
the fused compact batch therefore patches rather than rebuilds (``dir_patch`` there: the pages it
wrote, a warp each with :func:`_fill_column`, and every large list's first column, two reads a
column), since a batch removes no vertex and an ordinary list's handle moves only with its page.
(A single pass in which each column also wrote the ids of its range without a slot was tried:
the last column's range runs to the directory's headroom, one warp wrote 2 M ids, 20.8 ms on
R-MAT 22 on an H100.)
The host structure is unchanged; the directory is never sent over the bus.
"""

from __future__ import annotations

import functools

import numpy as np

WARP = 32
BLOCK = {"cuda": 256, "sim": 32}     # the simulator runs one warp: a few simulated threads in all
MAX_BLOCKS = {"cuda": 4096, "sim": 1}


cuda = None          # numba.cuda and its int64, bound on first use (the simulator switch must come
int64 = None         # first); module globals, so that the simulator can stand in its own ``cuda``
fill_column = None   # _fill_column compiled as a device function, bound with them


def _clear(loc, degree):
    for i in range(cuda.grid(1), loc.shape[0], cuda.gridsize(1)):
        loc[i] = 0
        degree[i] = 0


def _fill_column(pool, index, c, P, loc, degree, lane):
    """Column ``c``'s vertices, by the 32 lanes of a warp (its page's slots): each one's handle and
    degree (a large list's first page: its one vertex; its other pages are skipped)."""
    n = loc.shape[0]
    if index[1, c] > 0:                      # a continuation page of a large list: its first page says it
        return
    base = int64(index[3, c]) * P
    if index[2, c] > 0:                      # the first page of a large list: one vertex, its total degree
        v = int64(pool[base + P - 1])
        if lane == 0 and v >= 0 and v < n:
            loc[v] = -(c + 1)
            degree[v] = pool[base + 3]
        return
    count = int64(pool[base])
    for s in range(lane, count, WARP):
        v = int64(pool[base + P - 1 - 2 * s])
        if v >= 0 and v < n:
            off = int64(pool[base + P - 2 - 2 * s])
            loc[v] = base + off + 1
            degree[v] = pool[base + off]


def _fill(pool, index, num_pages, P, loc, degree):
    """A warp per index column (``_fill_column``)."""
    lane = cuda.threadIdx.x & (WARP - 1)
    warps = cuda.gridsize(1) // WARP
    for c in range(cuda.grid(1) // WARP, num_pages, warps):
        fill_column(pool, index, c, P, loc, degree, lane)


@functools.cache
def _target() -> str:
    """"sim" or "cuda", read once (fixed once numba.cuda is imported; a rebuild follows every
    device batch, whose host side is its cost)."""
    from kernels.measure.targets import simulator_enabled

    return "sim" if simulator_enabled() else "cuda"


@functools.cache
def directory_kernels():
    global cuda, int64
    from numba import cuda as numba_cuda
    from numba import int64 as numba_int64

    from kernels.cuda.fast_launch import fast
    from kernels.cuda.jit import jit as kernel_jit

    global fill_column
    cuda, int64 = numba_cuda, numba_int64
    fill_column = cuda.jit(device=True)(_fill_column)
    # planned launches: a rebuild follows every device batch, whose launches are host-bound
    return fast(kernel_jit(_clear)), fast(kernel_jit(_fill))


@functools.cache
def device_passes():
    """``(clear(loc, degree), fill(pool, index, num_pages, P, loc, degree), fill_column(pool, index,
    c, P, loc, degree, lane))`` as device functions, for a kernel that rebuilds the directory as
    phases of its own (a grid sync between the first two), or patches it column by column where a
    batch wrote (the fused batch of :mod:`kernels.operators.device_updates`)."""
    directory_kernels()                       # binds this module's ``cuda`` and ``fill_column``
    return cuda.jit(device=True)(_clear), cuda.jit(device=True)(_fill), fill_column


def _launch_shape(items: int) -> tuple[int, int]:
    target = _target()
    block = BLOCK[target]
    return max(1, min(MAX_BLOCKS[target], -(-max(items, 1) // block))), block


def build(pool, index, num_pages: int, page_size: int, loc, degree) -> None:
    """Fill ``loc``/``degree`` (device arrays of the same length, at least the vertex ids in
    use) from the device pages; queued on the default stream, not waited for."""
    clear, fill = directory_kernels()
    grid, block = _launch_shape(len(loc))
    clear[grid, block](loc, degree)
    if num_pages:
        grid, block = _launch_shape(num_pages * WARP)
        fill[grid, block](pool, index, np.int64(num_pages), np.int64(page_size), loc, degree)
