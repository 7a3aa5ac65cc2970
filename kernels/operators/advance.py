"""``advance``: from a frontier of vertices to their neighbours (Gunrock's advance).

For every frontier vertex ``v`` and every neighbour ``u`` (edge position ``e``) a *functor*
``functor(v, u, e, g, state) -> bool`` runs once; it may update state (a BFS label, an SSSP
distance) and says whether ``u`` goes to the output. ``state`` is any tuple of device arrays
and scalars, passed through to the functor.

Load balancing is a launch parameter, as in Gunrock:

* ``"lb"`` (load-balanced, the thesis' method): (1) a scan kernel *locates* each frontier
  vertex's list (:mod:`.views`: the slotted mirror's vertex directory, or CSR's row
  pointers) and scans the degrees exclusively (:mod:`.scan`); (2) a partition kernel finds, for
  each tile of ``block * ITEMS`` output positions, the frontier vertex of its first position
  (binary search over the scan); (3) the expansion kernel stages that stretch of the scan in
  shared memory and every output position finds its source there by binary search, so each
  thread fetches exactly one neighbour per position whatever the degrees. Lists may start
  anywhere in a page and span pages; a thread computes its neighbour's word directly.
* ``"tpv"`` (thread per vertex): one thread walks a frontier vertex's whole list. Cheap when
  degrees are even (grids, meshes); a hub stalls its warp.

Two output modes:

* ``"append"``: emitted neighbours are appended to ``out`` and counted in ``counters[slot]``
  (block-aggregated: one shared-memory atomic per thread, one global atomic per tile). Order
  is not deterministic. Nothing is read back: a traversal reads the count once per level. The
  kernel also zeroes ``counters[reset_slot]`` (``>= 0``) for the next level, so that two
  counters alternate without a separate launch. With ``with_degrees`` the degrees of the
  emitted vertices are summed too, into ``counters[slot + 2]`` (the edges the next frontier
  will expand: what a direction-optimizing BFS decides on); each emitted vertex is located
  once more for it.
* ``"positions"``: output position ``k`` (in frontier order, then list order) gets the
  neighbour, or -1 when the functor rejects it, and optionally its source in ``out_src``. The
  output length (the degree sum) is read back and returned: a filter can compact it after.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, int32, int64

from kernels.cuda.jit import jit as kernel_jit
from kernels.operators.launch import Workspace, for_target, grid_for, resident_grid, rightmost_at_most
from kernels.operators.scan import exclusive_scan
from kernels.operators.views import DeviceGraphView, functions

BALANCES = ("lb", "tpv")
OUTPUTS = ("append", "positions")
ITEMS = 4   # output positions per thread and tile in the load-balanced expansion
PARTITION_BLOCK = {"cuda": 128, "sim": 16}


@cuda.jit(device=True)
def emit_all(src, dst, edge, g, state):
    """A functor that emits every neighbour (the plain neighbourhood expansion)."""
    return True


@functools.cache
def locate_load(kind: str):
    """Scan ``load`` that locates frontier vertex ``i``'s list, stores its handle, returns its degree.
    ``args = (g, frontier, loc)``."""
    locate = functions(kind).locate

    @cuda.jit(device=True)
    def load(i, args):
        loc, degree = locate(args[0], args[1][i])
        args[2][i] = loc
        return degree

    return load


@functools.cache
def partition_kernel():
    def kernel(offsets, n, total_ref, tile, first_src, capacity):
        total = total_ref[0]
        n_tiles = min((total + tile - 1) // tile, capacity - 1)
        boundaries = n_tiles + 1 if total > 0 else 0
        for b in range(cuda.grid(1), boundaries, cuda.gridsize(1)):
            k = min(int64(b) * tile, total - 1)
            first_src[b] = rightmost_at_most(offsets, 0, n - 1, k)

    return kernel_jit(kernel)


@functools.cache
def lb_expand_kernel(kind: str, functor, block: int, output: str, with_sources: bool, with_degrees: bool = False):
    f = functions(kind)
    locate, edge_at, target = f.locate, f.edge_at, f.target
    tile = block * ITEMS
    stage = tile + 1
    append = output == "append"

    def kernel(g, frontier, loc, offsets, n, total_ref, first_src, capacity, state, out, out_src,
               counters, slot, reset_slot):
        staged = cuda.shared.array(stage, int64)
        block_count = cuda.shared.array(1, int32)
        block_base = cuda.shared.array(1, int64)
        block_degrees = cuda.shared.array(1, int64)
        found = cuda.local.array(ITEMS, int32)
        t = cuda.threadIdx.x
        if append and reset_slot >= 0 and cuda.blockIdx.x == 0 and t == 0:
            counters[reset_slot] = 0
            if with_degrees:
                counters[reset_slot + 2] = 0
        total = total_ref[0]
        n_tiles = min((total + tile - 1) // tile, capacity - 1)
        for b in range(cuda.blockIdx.x, n_tiles, cuda.gridDim.x):
            lo = first_src[b]
            hi = first_src[b + 1]
            span = hi - lo + 1
            in_shared = span <= stage          # uniform across the block
            if in_shared:
                for s in range(t, span, block):
                    staged[s] = offsets[lo + s]
            if append and t == 0:
                block_count[0] = 0
                block_degrees[0] = 0
            cuda.syncthreads()
            mine = 0
            degrees = int64(0)
            k0 = int64(b) * tile
            for u in range(ITEMS):
                k = k0 + u * block + t
                emitted = False
                dst = int32(-1)
                src = int32(-1)
                if k < total:
                    if in_shared:
                        s = rightmost_at_most(staged, 0, span - 1, k)
                        i = lo + s
                        start = staged[s]
                    else:
                        i = rightmost_at_most(offsets, lo, hi, k)
                        start = offsets[i]
                    src = frontier[i]
                    e = edge_at(g, loc[i], k - start)
                    dst = target(g, e)
                    emitted = functor(src, dst, e, g, state)
                if append:
                    if emitted:
                        found[mine] = dst
                        mine += 1
                        if with_degrees:
                            degrees += locate(g, dst)[1]
                elif k < total:
                    out[k] = dst if emitted else int32(-1)
                    if with_sources:
                        out_src[k] = src
            if append:
                local = cuda.atomic.add(block_count, 0, mine) if mine > 0 else 0
                if with_degrees and degrees > 0:
                    cuda.atomic.add(block_degrees, 0, degrees)
                cuda.syncthreads()
                if t == 0 and block_count[0] > 0:
                    block_base[0] = cuda.atomic.add(counters, slot, int64(block_count[0]))
                    if with_degrees:
                        cuda.atomic.add(counters, slot + 2, block_degrees[0])
                cuda.syncthreads()
                for u in range(mine):
                    out[block_base[0] + local + u] = found[u]
            cuda.syncthreads()                 # staged offsets and counters are reused next tile

    return kernel_jit(kernel)


@functools.cache
def tpv_kernel(kind: str, functor, output: str, with_sources: bool, with_degrees: bool = False):
    f = functions(kind)
    locate, edge_at, target = f.locate, f.edge_at, f.target
    append = output == "append"

    def kernel(g, frontier, loc, offsets, n, total_ref, state, out, out_src, counters, slot, reset_slot):
        if append and reset_slot >= 0 and cuda.grid(1) == 0:
            counters[reset_slot] = 0
            if with_degrees:
                counters[reset_slot + 2] = 0
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            src = frontier[i]
            degrees = int64(0)
            if append:
                start, degree = locate(g, src)
            else:                              # positions: the scan located the lists already
                start = loc[i]
                degree = (offsets[i + 1] if i + 1 < n else total_ref[0]) - offsets[i]
            for j in range(degree):
                e = edge_at(g, start, j)
                dst = target(g, e)
                emitted = functor(src, dst, e, g, state)
                if append:
                    if emitted:
                        out[cuda.atomic.add(counters, slot, 1)] = dst
                        if with_degrees:
                            degrees += locate(g, dst)[1]
                else:
                    k = offsets[i] + j
                    out[k] = dst if emitted else int32(-1)
                    if with_sources:
                        out_src[k] = src
            if with_degrees and degrees > 0:
                cuda.atomic.add(counters, slot + 2, degrees)

    return kernel_jit(kernel)


class Advance:
    """An advance specialised on a view kind, a functor and launch parameters.

    ``Advance("slotted", functor, balance="lb", block=256, output="append")(view, frontier, n,
    state, out, counters=c, slot=0, reset_slot=1)``; kernels are compiled once per
    combination and cached."""

    def __init__(self, kind: str, functor=emit_all, *, balance: str = "lb", block: int = 256,
                 output: str = "append", with_sources: bool = False, with_degrees: bool = False,
                 workspace: Workspace | None = None):
        if balance not in BALANCES:
            raise ValueError(f"balance must be one of {BALANCES}, not {balance!r}")
        if output not in OUTPUTS:
            raise ValueError(f"output must be one of {OUTPUTS}, not {output!r}")
        if with_sources and output != "positions":
            raise ValueError("sources are written in 'positions' output only")
        if with_degrees and output != "append":
            raise ValueError("degree sums are counted in 'append' output only")
        self.kind, self.functor, self.balance, self.block = kind, functor, balance, int(block)
        self.output, self.with_sources, self.with_degrees = output, with_sources, with_degrees
        self.workspace = workspace or Workspace()

    @property
    def tile(self) -> int:
        return self.block * ITEMS

    def __call__(self, view: DeviceGraphView, frontier, n: int, state: tuple, out, *, out_src=None,
                 counters=None, slot: int = 0, reset_slot: int = -1, total_bound: int | None = None):
        """Advance ``frontier[:n]``. In append mode returns ``None`` and reads nothing back;
        ``total_bound`` (e.g. the graph's entry count for a frontier without repeats) sizes the
        partition buffer without reading the degree sum back -- without it, the degree sum is
        read (one round trip). In positions mode returns the output length."""
        if view.kind != self.kind:
            raise ValueError(f"this advance is specialised for {self.kind!r} views, not {view.kind!r}")
        ws = self.workspace
        n = int(n)
        positions = self.output == "positions"
        if counters is None:
            counters = ws.get("advance.counters", np.int64, 4)
        if out_src is None:
            out_src = ws.get("advance.no_sources", np.int32, 1)
        if n == 0:
            return 0 if positions else None
        g = view.args
        need_scan = self.balance == "lb" or positions
        loc = offsets = total = None
        if need_scan:
            loc = ws.get("advance.loc", np.int64, n)
            offsets = ws.get("advance.offsets", np.int64, n)
            total = ws.get("advance.total", np.int64, 1)
            exclusive_scan(locate_load(self.kind), (g, frontier, loc), n, offsets, total, ws)
        bound = total_bound
        if positions or bound is None:
            bound = int(total.copy_to_host()[0]) if need_scan else None
        if self.balance == "tpv":
            if loc is None:
                loc = offsets = total = ws.get("advance.unused", np.int64, 1)
            kernel = tpv_kernel(self.kind, self.functor, self.output, self.with_sources, self.with_degrees)
            kernel[grid_for(n, self.block), self.block](g, frontier, loc, offsets, n, total, state, out, out_src,
                                                        counters, slot, reset_slot)
            return bound if positions else None
        capacity = -(-max(bound, 1) // self.tile) + 1
        first_src = ws.get("advance.first_src", np.int64, capacity)
        pblock = for_target(PARTITION_BLOCK)
        partition_kernel()[grid_for(capacity, pblock), pblock](offsets, n, total, self.tile, first_src, capacity)
        kernel = lb_expand_kernel(self.kind, self.functor, self.block, self.output, self.with_sources,
                                  self.with_degrees)
        grid = max(1, min(resident_grid(self.block), capacity - 1))   # at most one block per tile
        kernel[grid, self.block](g, frontier, loc, offsets, n, total, first_src, capacity, state, out,
                                 out_src, counters, slot, reset_slot)
        return bound if positions else None
