"""BFS and SSSP in ONE cooperative launch: a persistent grid loops over the levels on the device.

The host loop (:mod:`.gpu_bfs`, :mod:`.gpu_sssp`) pays, per level, several launches (~45 µs
of host time each through numba's dispatcher) and a device->host copy of the counters. Here
one kernel runs the whole traversal: a *resident* grid (at most
``max_cooperative_grid_blocks``; see :func:`loop_grid`) expands a level, then waits at
``cuda.cg.this_grid().sync()`` (~1.5 µs on an H100 with one or two blocks per SM), and every
thread reads the next frontier's size from device memory after the sync -- so all threads
agree on termination and on the direction of the next step without talking to the host.

**The frontier is two queues**, both filled when a vertex is claimed (the claiming thread
locates the new vertex's list anyway, so its handle and degree are stored with it and never
searched for again):

* *small* entries ``(vertex, handle, degree)`` for lists of at most :data:`PER_LANE`
  neighbours: one thread walks the whole list;
* *chunk* entries ``(vertex, handle, first, degree)`` for longer lists, cut into chunks of
  ``group * PER_LANE`` neighbours: a group of ``group`` consecutive threads (a warp on the
  GPU) takes a chunk, lane ``l`` reading neighbours ``first + l, first + l + group, ...``
  (coalesced). A hub with 10^5 neighbours becomes ~400 chunks spread over the whole grid, so
  no thread walks it alone, and no prefix sum is needed. ``balance="tpv"`` sets ``group = 1``
  (chunks of ``PER_LANE`` neighbours, one thread each).

Per level, every thread runs "virtual threads" ``k`` in a block-uniform grid-stride loop:
``k < small`` is small entry ``k``; the chunk region starts at the next multiple of ``group``.
Each virtual thread claims at most ``PER_LANE`` vertices, held in local arrays, and publishes
them block-aggregated: one shared-memory atomic per thread, one global atomic per block and
counter (two ``syncthreads`` per round; the shared counters alternate by round so a third is
not needed).

**Counters** (int64, :data:`SLOTS` x :data:`FIELDS`): small entries, chunk entries, vertices
claimed, and their degree sum, for frontier ``L`` in slot ``L % 3``. During level ``L`` the
grid reads slot ``L % 3``, adds into slot ``(L + 1) % 3``, and thread 0 zeroes slot
``(L + 2) % 3`` -- the frontier of level ``L - 1``, which every thread read before the sync
that started level ``L``. The queues alternate by level parity.

**BFS** claims with the host loop's ``visit`` functor (compare-and-swap on the level);
**SSSP** relaxes with its ``relax`` functor (atomic min, a stamp so a vertex joins the next
frontier once per iteration). With ``direction="optimizing"`` (undirected graphs) a level may
be a *bottom-up* step instead: every unvisited vertex (block-uniform grid-stride over vertex
ids, its list found by the view's ``locate`` on either view) looks for a neighbour at the
current level and stops at the first. It also appends what it labels to the queue, so a
return to top-down needs no rebuild. Beamer's rule (alpha = 14, beta = 24, as the host loop)
uses the claimed-vertex and degree-sum counters read after the sync: every thread computes
the same decision.

The CUDA simulator runs ``this_grid().sync()`` only for a one-block grid (it is the block's
``syncthreads`` there), so simulator runs use one block.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, int32, int64
from numba.cuda.cudadrv.driver import CudaAPIError

from kernels.algorithms.traversal.gpu_bfs import ALPHA, BETA, visit
from kernels.algorithms.traversal.gpu_sssp import relax_bits_functor
from kernels.cuda.device import facts as device_facts
from kernels.cuda.jit import jit as kernel_jit
from kernels.errors import DeviceLoopError
from kernels.operators.device_clock import globaltimer
from kernels.operators.launch import Workspace, for_target, on_simulator
from kernels.operators.views import DeviceGraphView, functions

PER_LANE = 8          # neighbours one virtual thread reads per level (and the small-list limit)
LOG_PER_LANE = 3
GROUP = {"cuda": 32, "sim": 4}   # threads sharing a chunk of a long list under balance="lb"
THREADS_PER_SM = 512  # resident threads per SM of the persistent grid (see loop_grid)
MAX_REGISTERS = 0     # cap on the kernel's registers per thread (0: the compiler's choice; see
                      # benchmarks/diag/device_loop_occupancy.py: caps and more threads were slower)
SLOTS = 3             # counter slots: current frontier, next frontier, the one being reset
FIELDS = 4            # per slot: small entries, chunk entries, vertices claimed, degree sum
RESULT = 5            # levels, top-down steps, bottom-up steps, vertices reached, converged
STAMPS = 10           # traced phases per level and block (see trace_phases)


# ---- the algorithms' parts ------------------------------------------------------------------

@cuda.jit(device=True)
def _bfs_state(a, bits, b, level):
    return (a, level + 1)


@cuda.jit(device=True)
def _sssp_state(a, bits, b, level):
    return (a, bits, b, level)


@cuda.jit(device=True)
def _bfs_init(a, b, v, source):
    a[v] = 0 if v == source else -1


@cuda.jit(device=True)
def _sssp_init(a, b, v, source):
    a[v] = 0.0 if v == source else np.inf
    b[v] = -1


@cuda.jit(device=True)
def _stamp(trace, level, k):
    if level < trace.shape[0]:
        trace[level, cuda.blockIdx.x, k] = globaltimer()


@cuda.jit(device=True)
def _no_stamp(trace, level, k):
    pass


# ---- the kernel -----------------------------------------------------------------------------

@functools.cache
def device_loop_kernel(kind: str, algorithm: str, weighted: bool, block: int, group: int, optimizing: bool,
                       traced: bool = False):
    """The persistent traversal kernel for a view kind, an algorithm and launch parameters.

    ``kernel(g, n, m, source, a, bits, b, small, chunks, counters, result, trace)``: ``a`` is
    the output (BFS levels int32 / SSSP distances float64), ``bits`` the SSSP distances' int64
    view (their atomic min, see :func:`.gpu_sssp.relax_bits_functor`), ``b`` the SSSP stamp
    array (BFS uses neither), ``small`` int64[2, 3, cap], ``chunks`` int64[2, 4, cap], ``counters``
    int64[SLOTS * FIELDS], ``result`` int64[RESULT]. With ``traced``, thread 0 of every block
    writes ``globaltimer`` stamps into ``trace`` int64[levels, blocks, STAMPS] (see
    :func:`trace_phases`); otherwise ``trace`` is not touched."""
    f = functions(kind)
    locate, edge_at, target = f.locate, f.edge_at, f.target
    bfs = algorithm == "bfs"
    functor = visit if bfs else relax_bits_functor(kind, weighted)
    make_state = _bfs_state if bfs else _sssp_state
    init_vertex = _bfs_init if bfs else _sssp_init
    chunk = group * PER_LANE
    alpha, beta = ALPHA, BETA
    bottom_up_allowed = bool(optimizing and bfs)
    stamp = _stamp if traced else _no_stamp
    traced = bool(traced)

    @cuda.jit(device=True)
    def chunks_of(degree):
        if degree <= PER_LANE:
            return int64(0)
        return (degree + chunk - 1) // chunk

    @cuda.jit(device=True)
    def publish(mine, fv, fl, fd, sh, sd, half, t, counters, nxt, small, chunks, parity, trace, level):
        """Append this thread's ``mine`` claimed vertices to the next queues, block-aggregated.
        Every thread of the block calls it the same number of times (``syncthreads`` inside);
        returns whether the block claimed anything (the same answer in every thread)."""
        n_small = int32(0)
        n_chunks = int32(0)
        degrees = int64(0)
        for i in range(mine):
            c = chunks_of(fd[i])
            if c == 0:
                n_small += 1
            else:
                n_chunks += int32(c)
            degrees += fd[i]
        h = half * 4
        hd = half * 3
        # int32 shared atomics are native; int64 ones contend badly when a whole block claims
        my_small = cuda.atomic.add(sh, h, n_small) if n_small > 0 else int32(0)
        my_chunks = cuda.atomic.add(sh, h + 1, n_chunks) if n_chunks > 0 else int32(0)
        if mine > 0:
            cuda.atomic.add(sh, h + 2, int32(mine))
            if bottom_up_allowed:                 # only Beamer's rule reads the degree sums
                cuda.atomic.add(sd, hd, degrees)
        if traced and t == 0 and my_small + my_chunks != -1:
            stamp(trace, level, 9)
        claimed = cuda.syncthreads_count(int32(1) if mine > 0 else int32(0))
        if t == 0:
            stamp(trace, level, 2)
        if claimed == 0:
            # nothing to append, and this half is still all zeros: the next round may use it
            # again, so neither the global atomics nor the second barrier are needed
            return False
        if t == 0:
            sd[hd + 1] = cuda.atomic.add(counters, nxt * FIELDS, int64(sh[h]))
            sd[hd + 2] = cuda.atomic.add(counters, nxt * FIELDS + 1, int64(sh[h + 1]))
            cuda.atomic.add(counters, nxt * FIELDS + 2, int64(sh[h + 2]))
            if bottom_up_allowed:
                cuda.atomic.add(counters, nxt * FIELDS + 3, sd[hd])
            o = (1 - half) * 4          # the other half: last used a round ago, everyone is past it
            for k in range(3):
                sh[o + k] = 0
            sd[(1 - half) * 3] = 0
            stamp(trace, level, 3)
        cuda.syncthreads()
        if t == 0:
            stamp(trace, level, 4)
        s = sd[hd + 1] + my_small
        c0 = sd[hd + 2] + my_chunks
        for i in range(mine):
            d = fd[i]
            c = chunks_of(d)
            if c == 0:
                small[parity, 0, s] = fv[i]
                small[parity, 1, s] = fl[i]
                small[parity, 2, s] = d
                s += 1
            else:
                for q in range(c):
                    chunks[parity, 0, c0] = fv[i]
                    chunks[parity, 1, c0] = fl[i]
                    chunks[parity, 2, c0] = q * chunk
                    chunks[parity, 3, c0] = d
                    c0 += 1
        return True

    def kernel(g, n, m, source, a, bits, b, small, chunks, counters, result, trace):
        grid = cuda.cg.this_grid()
        t = cuda.threadIdx.x
        tid = cuda.grid(1)
        nthreads = cuda.gridsize(1)
        first_thread = int64(cuda.blockIdx.x) * block
        sh = cuda.shared.array(8, int32)        # two halves: small entries, chunks, vertices claimed, -
        sd = cuda.shared.array(6, int64)        # two halves: degree sum, queue bases (small, chunks)
        fv = cuda.local.array(PER_LANE, int32)
        fl = cuda.local.array(PER_LANE, int64)
        fd = cuda.local.array(PER_LANE, int64)
        if t < 8:
            sh[t] = 0
        if t < 6:
            sd[t] = 0
        for v in range(tid, n, nthreads):
            init_vertex(a, b, v, source)
        if tid == 0:
            for k in range(SLOTS * FIELDS):
                counters[k] = 0
            loc, degree = locate(g, source)
            c = chunks_of(degree)
            if c == 0:
                small[0, 0, 0] = source
                small[0, 1, 0] = loc
                small[0, 2, 0] = degree
                counters[0] = 1
            else:
                for q in range(c):
                    chunks[0, 0, q] = source
                    chunks[0, 1, q] = loc
                    chunks[0, 2, q] = q * chunk
                    chunks[0, 3, q] = degree
                counters[1] = c
            counters[2] = 1
            counters[3] = degree
        grid.sync()
        level = int64(0)
        rnd = 0
        explored = int64(0)
        previous = int64(1)
        bottom_up = False
        top_steps = int64(0)
        bottom_steps = int64(0)
        reached = int64(0)
        converged = 1
        while True:
            if t == 0:
                stamp(trace, level, 0)
            slot = level % SLOTS
            n_small = counters[slot * FIELDS]
            n_chunks = counters[slot * FIELDS + 1]
            grown = counters[slot * FIELDS + 2]
            grown_edges = counters[slot * FIELDS + 3]
            if t == 0:
                stamp(trace, level, 1)
            if grown == 0:
                break
            if level > n:
                converged = 0                  # more levels than vertices: a kernel bug
                break
            reached += grown
            if bottom_up_allowed and level > 0:   # Beamer's rule, from the same numbers in every thread
                explored += grown_edges
                if bottom_up:
                    bottom_up = not (grown < previous and grown * beta < n)
                else:
                    bottom_up = grown_edges * alpha > m - explored
            previous = grown
            parity = level & 1
            nxt = (level + 1) % SLOTS
            if tid == 0:
                reset = (level + 2) % SLOTS
                for k in range(FIELDS):
                    counters[reset * FIELDS + k] = 0
            if bottom_up_allowed and bottom_up:
                bottom_steps += 1
                for base in range(first_thread, n, nthreads):
                    v = base + t
                    mine = 0
                    if v < n and a[v] == -1:
                        loc, degree = locate(g, v)
                        for j in range(degree):
                            if a[target(g, edge_at(g, loc, j))] == level:
                                a[v] = level + 1
                                fv[0] = v
                                fl[0] = loc
                                fd[0] = degree
                                mine = 1
                                break
                    if publish(mine, fv, fl, fd, sh, sd, rnd & 1, t, counters, nxt, small, chunks, 1 - parity,
                               trace, level):
                        rnd += 1
            else:
                top_steps += 1
                state = make_state(a, bits, b, level)
                # lanes per small entry: the most (up to PER_LANE) that still let the level run
                # in one pass of the grid -- a small frontier's lists are then walked one
                # neighbour per thread, a chain of ~5 dependent memory round trips instead of
                # ~3 per neighbour (the per-level latency on long-diameter graphs)
                lanes = int64(PER_LANE)
                shift = LOG_PER_LANE
                while lanes > 1 and ((n_small * lanes + group - 1) // group + n_chunks) * group > nthreads:
                    lanes >>= 1
                    shift -= 1
                small_threads = n_small << shift
                chunk_start = (small_threads + group - 1) // group * group
                total = chunk_start + n_chunks * group
                for base in range(first_thread, total, nthreads):
                    k = base + t
                    mine = 0
                    src = int64(-1)
                    loc = int64(0)
                    j0 = int64(0)
                    j1 = int64(0)
                    step = int64(1)
                    if k < small_threads:
                        entry = k >> shift
                        src = small[parity, 0, entry]
                        loc = small[parity, 1, entry]
                        j0 = k & (lanes - 1)
                        j1 = small[parity, 2, entry]
                        step = lanes
                    elif k >= chunk_start and k < total:
                        c = (k - chunk_start) // group
                        lane = k - chunk_start - c * group
                        src = chunks[parity, 0, c]
                        loc = chunks[parity, 1, c]
                        first = chunks[parity, 2, c]
                        j0 = first + lane
                        j1 = min(first + chunk, chunks[parity, 3, c])
                        step = int64(group)
                    if traced and t == 0 and j1 != -1 - n:    # a branch on the loads: the stamp waits for them
                        stamp(trace, level, 6)
                    for j in range(j0, j1, step):
                        e = edge_at(g, loc, j)
                        u = target(g, e)
                        if functor(src, u, e, g, state):
                            fv[mine] = u
                            mine += 1
                    if traced and t == 0 and mine != n + 1:
                        stamp(trace, level, 7)
                    for i in range(mine):
                        where, degree = locate(g, fv[i])
                        fl[i] = where
                        fd[i] = degree
                    if traced and t == 0 and (mine == 0 or fd[mine - 1] != -1 - n):
                        stamp(trace, level, 8)
                    if publish(mine, fv, fl, fd, sh, sd, rnd & 1, t, counters, nxt, small, chunks, 1 - parity,
                               trace, level):
                        rnd += 1
            if t == 0:
                stamp(trace, level, 5)
            grid.sync()
            level += 1
        if tid == 0:
            result[0] = level
            result[1] = top_steps
            result[2] = bottom_steps
            result[3] = reached
            result[4] = converged

    if MAX_REGISTERS and not on_simulator():
        return kernel_jit(max_registers=MAX_REGISTERS)(kernel)
    return kernel_jit(kernel)


# ---- host side ------------------------------------------------------------------------------

@functools.cache
def _multiprocessors() -> int:
    return device_facts().multiprocessors


_COOPERATIVE_LIMIT: dict = {}


def cooperative_limit(kernel, args, block: int, key) -> int:
    """``max_cooperative_grid_blocks`` of the kernel compiled for ``args`` (cached by ``key``)."""
    if key not in _COOPERATIVE_LIMIT:
        argtypes = tuple(kernel.typeof_pyval(a) for a in args)
        _COOPERATIVE_LIMIT[key] = int(kernel.compile(argtypes).max_cooperative_grid_blocks(block))
    return _COOPERATIVE_LIMIT[key]


def loop_grid(block: int, limit: int, work: int) -> int:
    """Blocks of the persistent grid: ``THREADS_PER_SM`` threads per SM (one or two blocks of
    256-512 threads: a grid sync costs ~1.5 µs at 132 x 256 threads on an H100, ~4.5 µs at
    792 x 256), never more than the device holds at once (``limit``, a cooperative launch
    refuses more) nor more than the largest level could use (``work`` virtual threads)."""
    wanted = _multiprocessors() * max(1, THREADS_PER_SM // block)
    return max(1, min(wanted, limit, -(-max(work, 1) // block)))


class DeviceLoopTraversal:
    """BFS (``algorithm="bfs"``) or SSSP on a device view in one cooperative launch.

    ``run(view, source, out, stream=0)`` fills ``out`` (int32 levels / float64 distances) with
    one launch on ``stream`` and returns without waiting (after the first run with a view's
    sizes it allocates nothing: its launch may be captured into a CUDA graph); ``last_run``
    reads the kernel's small result array (levels, steps of each direction, vertices reached)
    when asked."""

    def __init__(self, algorithm: str, kind: str, *, weighted: bool = False, balance: str = "lb",
                 direction: str = "push", block: int = 256, workspace: Workspace | None = None,
                 trace_levels: int = 0):
        self.algorithm, self.kind, self.weighted = algorithm, kind, bool(weighted and algorithm == "sssp")
        self.balance, self.direction, self.block = balance, direction, int(block)
        self.workspace = workspace or Workspace()
        self.grid = 0
        self._result = None
        self._queues: tuple | None = None
        self.trace_levels = int(trace_levels)   # > 0: stamp the phases of that many levels (diagnostics)
        self._trace = None
        self._no_trace = None

    def _group(self) -> int:
        if self.balance == "tpv":
            return 1
        return min(for_target(GROUP), self.block)

    def _queue_arrays(self, n: int, m: int, group: int):
        """(small int64[2, 3, n], chunks int64[2, 4, cap]); ``cap`` bounds the chunks of one
        frontier: a list of degree d > PER_LANE gives ceil(d / chunk) <= d / chunk + 1 chunks,
        and at most min(n, m / PER_LANE) such lists are in a frontier (each vertex once)."""
        cap_small = max(n, 1)
        cap_chunks = m // (group * PER_LANE) + min(n, m // PER_LANE) + 1
        ws = self.workspace
        flat_small = ws.get("loop.small", np.int64, 6 * cap_small)
        flat_chunks = ws.get("loop.chunks", np.int64, 8 * cap_chunks)
        key = (id(flat_small), id(flat_chunks), cap_small, cap_chunks)
        if self._queues is None or self._queues[0] != key:
            # reshaping costs host time: keep the views while the workspace keeps its buffers
            self._queues = (key, flat_small[: 6 * cap_small].reshape(2, 3, cap_small),
                            flat_chunks[: 8 * cap_chunks].reshape(2, 4, cap_chunks))
        return self._queues[1], self._queues[2]

    def run(self, view: DeviceGraphView, source: int, out, stream=0) -> None:
        if self.weighted and not view.weighted:
            raise ValueError("a weighted SSSP needs a view with weights")
        ws = self.workspace
        n, m = view.n_vertices, view.n_entries
        group = self._group()
        optimizing = self.algorithm == "bfs" and self.direction == "optimizing" and not view.directed
        traced = self.trace_levels > 0
        kernel = device_loop_kernel(view.kind, self.algorithm, self.weighted, self.block, group, optimizing, traced)
        small, chunks = self._queue_arrays(n, m, group)
        stamp = ws.get("loop.stamp", np.int32, n if self.algorithm == "sssp" else 1)
        counters = ws.get("loop.counters", np.int64, SLOTS * FIELDS)
        self._result = result = ws.get("loop.result", np.int64, RESULT)
        if self._no_trace is None:
            self._no_trace = cuda.device_array((1, 1, 1), np.int64)   # untraced kernels never touch it
        bits = out.view(np.int64) if self.algorithm == "sssp" else counters
        args = (view.args, np.int64(n), np.int64(m), np.int64(source), out, bits, stamp, small, chunks, counters,
                result, self._no_trace)
        if on_simulator():
            grid = 1                           # the simulator's grid sync is one block's syncthreads
        else:
            key = (kernel, self.block, str(view.args[2].dtype))
            limit = cooperative_limit(kernel, args, self.block, key)
            if limit < 1:
                raise DeviceLoopError(f"loop=device: the traversal kernel cannot keep one block of {self.block} "
                                      f"threads resident on this GPU; use loop=host or a smaller block")
            grid = loop_grid(self.block, limit, max(n, m // PER_LANE))
        self.grid = grid
        if traced:
            self._trace = cuda.to_device(np.zeros((self.trace_levels, grid, STAMPS), np.int64))
            args = args[:-1] + (self._trace,)
        try:
            kernel[grid, self.block, stream](*args)
        except CudaAPIError as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DeviceLoopError(f"loop=device: the cooperative launch of {grid} blocks x {self.block} threads "
                                  f"was refused ({first}); use loop=host") from None

    @property
    def trace(self):
        """The last traced run's stamps, int64[levels, blocks, STAMPS] on the host (0: not reached)."""
        return None if self._trace is None else self._trace.copy_to_host()

    @property
    def last_run(self) -> dict:
        if self._result is None:
            return {}
        levels, top, bottom, reached, converged = (int(x) for x in self._result.copy_to_host()[:RESULT])
        if not converged:
            raise RuntimeError(f"the device-loop {self.algorithm} ran more levels than vertices: a kernel bug")
        out = {"loop": "device", "levels": levels, "grid_blocks": self.grid, "block": self.block}
        if self.algorithm == "bfs":
            out.update(top_down_steps=top, bottom_up_steps=bottom, visited=reached)
        else:
            out.update(iterations=levels, improvements=reached - 1)
        return out


def trace_phases(trace: np.ndarray, levels: int) -> dict:
    """Where a level's time goes, from a traced run's stamps (nanoseconds of ``globaltimer``).

    Stamps per level and block (thread 0): 0 after the grid sync that starts the level, 1 after
    the frontier's counters are read, 2 after the block's claims (publish's first
    ``syncthreads``), 3 after its global atomics, 4 after the second ``syncthreads``, 5 before
    the grid sync that ends the level; in a top-down step, 6 once thread 0's frontier entry
    has arrived, 7 after its neighbours, 8 after it located what it claimed, 9 after its shared
    atomics. A block that expanded nothing has none of 2-4 and 6-9, a round in which it
    claimed nothing has no 3-4, and a block with several rounds keeps its last. Returns
    medians over levels (in µs) of: the level's period (first start to the next first start),
    the spread of the starts over blocks, the counters read,
    the number of busy blocks, for the block that finished last: expand, atomics, second
    barrier, queue writes, and the wait from its arrival to the next level's first start
    (``sync``); and thread 0's steps in the first busy block (``t0_*``)."""
    levels = min(int(levels) - 1, trace.shape[0] - 1)     # the last traced level has no successor
    rows = []
    for lv in range(levels):
        st, nxt = trace[lv], trace[lv + 1]
        start, start_next = st[:, 0].min(), nxt[:, 0].min()
        busy = st[:, 2] > 0
        last = int(np.argmax(st[:, 5]))
        row = {"period": start_next - start, "start_spread": st[:, 0].max() - start,
               "counters": float(np.median(st[:, 1] - st[:, 0])), "busy_blocks": int(busy.sum()),
               "sync": start_next - st[:, 5].max()}
        if st[last, 2] > 0:
            row.update(expand=st[last, 2] - st[last, 1], atomics=st[last, 3] - st[last, 2],
                       barrier=st[last, 4] - st[last, 3], writes=st[last, 5] - st[last, 4])
        first = int(np.argmax(busy)) if busy.any() else -1
        if first >= 0 and st[first, 9] > 0:     # thread 0 of the first busy block, step by step
            s0 = st[first]
            row.update(t0_entry=s0[6] - s0[1], t0_neighbours=s0[7] - s0[6], t0_locate=s0[8] - s0[7],
                       t0_shared_atomics=s0[9] - s0[8], t0_first_barrier=s0[2] - s0[9])
        rows.append(row)
    keys = sorted({k for r in rows for k in r})
    return {k: float(np.median([r[k] for r in rows if k in r])) / (1 if k == "busy_blocks" else 1e3)
            for k in keys}
