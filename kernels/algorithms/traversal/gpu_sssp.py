"""GPU SSSP from the operators: frontier Bellman–Ford with atomic min (as Gunrock's SSSP).

Each iteration advances the frontier (the vertices whose distance dropped in the previous
iteration) with the relax functor: ``d = dist[v] + w(v, u)``; if ``d < dist[u]``,
``cuda.atomic.min`` lowers ``dist[u]`` (float64: numba-cuda supports atomic min on float32
and float64, on the GPU and in the simulator) and, if this thread's value was the improvement,
``u`` joins the next frontier -- once per iteration, thanks to a stamp array raised with
``atomic.max(stamp, u, iteration)`` (only the thread that raises it appends). Distances only
decrease, and the loop ends when an iteration improves nothing, which with non-negative
weights happens after at most ``n - 1`` iterations.

Distances are float64 (exact sums of the float64 weights the readers produce); +inf marks
unreachable vertices.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float64

from kernels.operators.advance import Advance
from kernels.operators.compute import Compute
from kernels.operators.device_bits import float_bits
from kernels.operators.launch import Workspace
from kernels.operators.views import DeviceGraphView, functions


@functools.cache
def relax_functor(kind: str, weighted: bool):
    weight = functions(kind).weight

    @cuda.jit(device=True)
    def relax(src, dst, edge, g, state):
        dist = state[0]
        w = float64(weight(g, edge)) if weighted else float64(1.0)
        candidate = dist[src] + w
        # the plain read first skips the atomic for most edges; the atomic's old value says
        # whether this thread's candidate was the improvement
        if candidate < dist[dst] and candidate < cuda.atomic.min(dist, dst, candidate):
            return cuda.atomic.max(state[1], dst, state[2]) < state[2]
        return False

    return relax


@functools.cache
def relax_bits_functor(kind: str, weighted: bool):
    """The relax functor of the device loop: ``state = (dist, dist_bits, stamp, iteration)``,
    ``dist_bits`` the int64 view of ``dist``. One native ``atomicMin`` on the bit patterns
    (:mod:`kernels.operators.device_bits`; distances are >= +0.0) replaces the plain read and
    the float64 compare-and-swap loop: in a level bound by one thread's chain of dependent
    memory round trips (a small frontier), that chain is what a level costs."""
    weight = functions(kind).weight

    @cuda.jit(device=True)
    def relax(src, dst, edge, g, state):
        w = float64(weight(g, edge)) if weighted else float64(1.0)
        candidate = float_bits(state[0][src] + w)
        if cuda.atomic.min(state[1], dst, candidate) > candidate:
            return cuda.atomic.max(state[2], dst, state[3]) < state[3]
        return False

    return relax


@cuda.jit(device=True)
def start_distances(v, state):
    """``state = (dist, stamp, source, frontier, counters)``."""
    source = state[2]
    state[0][v] = 0.0 if v == source else np.inf
    state[1][v] = -1
    if v == source:
        state[3][0] = source
    if v == 0:
        state[4][0] = 0
        state[4][1] = 0


class GpuSssp:
    """SSSP on a device view; ``run(view, source, dist)`` fills ``dist`` (float64, device)."""

    def __init__(self, kind: str, *, weighted: bool, balance: str = "lb", block: int = 256,
                 workspace: Workspace | None = None):
        self.kind, self.weighted, self.block = kind, bool(weighted), int(block)
        self.workspace = ws = workspace or Workspace()
        self.advance = Advance(kind, relax_functor(kind, self.weighted), balance=balance, block=block,
                               output="append", workspace=ws)
        self.start = Compute(start_distances, block=block, workspace=ws)
        self.last_run: dict = {}

    def run(self, view: DeviceGraphView, source: int, dist) -> None:
        if self.weighted and not view.weighted:
            raise ValueError("a weighted SSSP needs a view with weights")
        ws = self.workspace
        n = view.n_vertices
        frontier = ws.get("sssp.frontier.a", np.int32, n)
        spare = ws.get("sssp.frontier.b", np.int32, n)
        stamp = ws.get("sssp.stamp", np.int32, n)
        counters = ws.get("sssp.counters", np.int64, 2)
        host_counts = np.zeros(counters.size, dtype=np.int64)
        self.start(None, n, (dist, stamp, source, frontier, counters))
        size, iteration, relaxed = 1, 0, 0
        while size > 0:
            slot = iteration & 1
            self.advance(view, frontier, size, (dist, stamp, iteration), spare, counters=counters, slot=slot,
                         reset_slot=1 - slot, total_bound=view.n_entries)
            frontier, spare = spare, frontier
            counters.copy_to_host(host_counts)          # the one round trip of the iteration
            size = int(host_counts[slot])
            relaxed += size
            iteration += 1
            if iteration > n + 1:
                raise RuntimeError("SSSP did not converge within n iterations (negative weights or a kernel bug)")
        self.last_run = {"loop": "host", "levels": iteration, "iterations": iteration, "improvements": relaxed}
