"""GPU BFS from the operators, on the slotted page pool or a CSR snapshot.

Level-synchronous, one host round trip per level (the size of the next frontier):

* **top-down** (push) step: ``Advance`` with the visit functor -- a neighbour still at level
  -1 is claimed by a compare-and-swap to the next level, and the thread that wins appends it
  to the next frontier (append output, counted on the device);
* **bottom-up** (pull) step, for ``direction="optimizing"`` on undirected graphs (Beamer et
  al.): every unvisited vertex looks for a neighbour in the current frontier (level ==
  current) and stops at the first one. On CSR one thread per vertex; on slotted pages a group
  of ``GROUP`` threads per page walks the page's slots -- no search needed, the page says
  which vertices it holds -- and a large list's group splits its entries across the lanes.
  The frontier is implicit (the level array); returning to top-down rebuilds it with
  ``Filter`` (level == current, over all vertex ids).

The direction rule is Beamer's: switch to bottom-up when the edges of the next frontier
exceed ``1/alpha`` of the edges of the vertices not yet labelled (alpha = 14), back to
top-down when the frontier shrinks below ``1/beta`` of all vertices (beta = 24). The edge
counts come for free with the one number read per level: the top-down advance sums the
degrees of the vertices it claims (``with_degrees``), the bottom-up step those it labels,
next to the counts, in the same small counter array.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, int64

from kernels.cuda.jit import jit as kernel_jit
from kernels.operators.advance import Advance
from kernels.operators.compute import Compute
from kernels.operators.filter import Filter
from kernels.operators.launch import Workspace, for_target, grid_for
from kernels.operators.views import DeviceGraphView, csr_locate, slotted_edge_at

DIRECTIONS = ("push", "optimizing")
ALPHA = 14
BETA = 24
GROUP = {"cuda": 32, "sim": 4}   # threads per page in the slotted bottom-up step


@cuda.jit(device=True)
def visit(src, dst, edge, g, state):
    """Top-down functor: claim an unvisited neighbour for the next level (``state = (levels, next)``)."""
    levels = state[0]
    if levels[dst] != -1:
        return False
    return cuda.atomic.cas(levels, dst, -1, state[1]) == -1


@cuda.jit(device=True)
def start_levels(v, state):
    """``state = (levels, source, frontier, counters)``: -1 everywhere, 0 at the source, which is
    the first frontier; both level counters and both degree sums zeroed."""
    levels = state[0]
    source = state[1]
    levels[v] = 0 if v == source else -1
    if v == source:
        state[2][0] = source
    if v == 0:
        for k in range(4):
            state[3][k] = 0


@cuda.jit(device=True)
def at_level(v, state):
    return state[0][v] == state[1]


@functools.cache
def bottom_up_csr(block: int):
    def kernel(g, n, levels, current, counters, slot, reset_slot):
        found = cuda.shared.array(2, int64)     # vertices labelled, and their degree sum
        t = cuda.threadIdx.x
        if t == 0:
            found[0] = 0
            found[1] = 0
        if reset_slot >= 0 and cuda.grid(1) == 0:
            counters[reset_slot] = 0
            counters[reset_slot + 2] = 0
        cuda.syncthreads()
        indices = g[1]
        mine = 0
        degrees = int64(0)
        for v in range(cuda.grid(1), n, cuda.gridsize(1)):
            if levels[v] == -1:
                start, degree = csr_locate(g, v)
                for j in range(degree):
                    if levels[indices[start + j]] == current:
                        levels[v] = current + 1
                        mine += 1
                        degrees += degree
                        break
        if mine > 0:
            cuda.atomic.add(found, 0, mine)
            cuda.atomic.add(found, 1, degrees)
        cuda.syncthreads()
        if t == 0 and found[0] > 0:
            cuda.atomic.add(counters, slot, found[0])
            cuda.atomic.add(counters, slot + 2, found[1])

    return kernel_jit(kernel)


@functools.cache
def bottom_up_slotted(block: int, group: int):
    groups = block // group

    def kernel(g, levels, current, counters, slot, reset_slot):
        found = cuda.shared.array(2, int64)     # vertices labelled, and their degree sum
        t = cuda.threadIdx.x
        if t == 0:
            found[0] = 0
            found[1] = 0
        if reset_slot >= 0 and cuda.grid(1) == 0:
            counters[reset_slot] = 0
            counters[reset_slot + 2] = 0
        cuda.syncthreads()
        pool = g[0]
        index = g[1]
        num_pages = g[3]
        P = g[4]
        lane = t % group
        mine = 0
        degrees = int64(0)
        for p in range(cuda.blockIdx.x * groups + t // group, num_pages, cuda.gridDim.x * groups):
            if index[1, p] > 0:
                continue                           # continuation page: the first page's group owns the list
            base = int64(index[3, p]) * P
            if index[2, p] > 0:                    # large list: its lanes split the entries
                v = pool[base + P - 1]
                if levels[v] == -1:
                    degree = pool[base + 3]
                    for j in range(lane, degree, group):
                        if levels[v] != -1:
                            break                  # another lane found a parent
                        if levels[pool[slotted_edge_at(g, -(p + 1), j)]] == current:
                            if cuda.atomic.cas(levels, v, -1, current + 1) == -1:
                                mine += 1
                                degrees += degree
                            break
            else:
                count = pool[base]
                for s in range(lane, count, group):
                    v = pool[base + P - 1 - 2 * s]
                    if levels[v] == -1:
                        off = base + pool[base + P - 2 - 2 * s]
                        degree = pool[off]
                        for j in range(degree):
                            if levels[pool[off + 1 + j]] == current:
                                levels[v] = current + 1
                                mine += 1
                                degrees += degree
                                break
        if mine > 0:
            cuda.atomic.add(found, 0, mine)
            cuda.atomic.add(found, 1, degrees)
        cuda.syncthreads()
        if t == 0 and found[0] > 0:
            cuda.atomic.add(counters, slot, found[0])
            cuda.atomic.add(counters, slot + 2, found[1])

    return kernel_jit(kernel)


class GpuBfs:
    """BFS on a device view; ``run(view, source, levels)`` fills ``levels`` (int32, device).

    ``balance`` ("lb" | "tpv") and ``block`` go to the advance; ``direction`` is "push" or
    "optimizing" (needs an undirected graph: the bottom-up step reads a vertex's own list as
    its in-neighbours). ``last_run`` describes the most recent run (levels, steps of each
    direction, round trips)."""

    def __init__(self, kind: str, *, balance: str = "lb", direction: str = "optimizing", block: int = 256,
                 workspace: Workspace | None = None):
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, not {direction!r}")
        self.kind, self.direction, self.block = kind, direction, int(block)
        self.workspace = ws = workspace or Workspace()
        self.advance = Advance(kind, visit, balance=balance, block=block, output="append", workspace=ws)
        # direction-optimizing runs also sum the degrees of each new frontier while finding it
        self.counting_advance = Advance(kind, visit, balance=balance, block=block, output="append",
                                        with_degrees=True, workspace=ws)
        self.frontier_filter = Filter(at_level, block=block, workspace=ws)
        self.start = Compute(start_levels, block=block, workspace=ws)
        self.alpha, self.beta = ALPHA, BETA
        self.alternate = False        # warm-up only: switch direction every level (compiles every kernel)
        self.last_run: dict = {}

    def _bottom_up(self, view: DeviceGraphView, levels, current: int, counters, slot: int) -> None:
        if view.kind == "csr":
            n = view.n_vertices
            bottom_up_csr(self.block)[grid_for(n, self.block), self.block](
                view.args, n, levels, current, counters, slot, 1 - slot)
        else:
            group = min(for_target(GROUP), self.block)
            pages = int(view.args[3])
            bottom_up_slotted(self.block, group)[grid_for(pages * group, self.block), self.block](
                view.args, levels, current, counters, slot, 1 - slot)

    def run(self, view: DeviceGraphView, source: int, levels) -> None:
        ws = self.workspace
        n, m = view.n_vertices, view.n_entries
        optimizing = self.direction == "optimizing" and not view.directed
        frontier = ws.get("bfs.frontier.a", np.int32, n)
        spare = ws.get("bfs.frontier.b", np.int32, n)
        counters = ws.get("bfs.counters", np.int64, 4)     # [size, size, degree sum, degree sum] by parity
        host_counts = np.zeros(counters.size, dtype=np.int64)
        self.start(None, n, (levels, source, frontier, counters))
        size, visited, level = 1, 1, 0
        explored = 0                                       # degree sum of the vertices labelled so far
        bottom_up = False
        steps = {"top-down": 0, "bottom-up": 0}
        while size > 0:
            slot = level & 1
            if bottom_up:
                self._bottom_up(view, levels, level, counters, slot)
            else:
                advance = self.counting_advance if optimizing else self.advance
                advance(view, frontier, size, (levels, level + 1), spare, counters=counters, slot=slot,
                        reset_slot=1 - slot, total_bound=m)
                frontier, spare = spare, frontier
            steps["bottom-up" if bottom_up else "top-down"] += 1
            counters.copy_to_host(host_counts)          # the one round trip of the level
            grown = int(host_counts[slot])
            grown_edges = int(host_counts[slot + 2])
            visited += grown
            explored += grown_edges
            if optimizing and grown > 0:
                if self.alternate:
                    to_bottom_up = not bottom_up
                elif bottom_up:                          # Beamer: back when the frontier is small again
                    to_bottom_up = not (grown < size and grown * self.beta < n)
                else:                                    # Beamer: the frontier's edges outweigh the rest's
                    to_bottom_up = grown_edges * self.alpha > m - explored
                if bottom_up and not to_bottom_up:     # rebuild the frontier the bottom-up step left implicit
                    self.frontier_filter(None, n, (levels, level + 1), frontier, read=False)
                bottom_up = to_bottom_up
            size = grown
            level += 1
            if level > n + 1:
                raise RuntimeError("BFS did not terminate (more levels than vertices): a kernel bug")
        self.last_run = {"loop": "host", "levels": level, "top_down_steps": steps["top-down"],
                         "bottom_up_steps": steps["bottom-up"], "visited": visited}
