"""Direction-optimizing BFS with bitmap frontiers, and near-far SSSP: one cooperative launch each.

Both run as :mod:`.device_loop` does -- a persistent grid loops over the levels, a grid sync
between levels, every thread reading the next frontier's counters from device memory, so no
level needs the host -- and share its top-down machinery (the *small* / *chunk* queues filled
at claim time, block-aggregated appends, three rotating counter slots). What is new:

**BFS (``gpu-do``, ``gpu-do-slotted``).** Beamer's thresholds ``alpha`` and ``beta`` are
*kernel arguments* (``tune``), not compile-time constants, so sweeping them compiles nothing.

* Bottom-up steps read and write bitmap frontiers (``fb``: three uint32 bitmaps rotating by
  level, as the counter slots do: a bottom-up level ``L`` reads ``L % 3``, writes ``(L + 1) % 3``
  and clears ``(L + 2) % 3``, the next bottom-up step's output). Top-down steps do no bitmap work
  (a long-diameter graph that never goes bottom-up pays nothing for it): switching to bottom-up
  first writes the queued frontier into the bitmap (one ``atomicOr`` per queue entry, after
  clearing the two bitmaps; two grid syncs, once per switch).
* A bottom-up step reads only the current bitmap (512 KB for 4 M vertices: L2-resident) to ask
  "is this neighbour in the frontier". On CSR a fourth bitmap marks the *settled* vertices
  (labelled, or without edges: never candidates again; kept lazily by the bottom-up steps, which
  meet vertices labelled top-down since): the lanes of a warp read 32 of its words at once (1024
  vertices a round trip), then the warp takes the words still holding unsettled vertices one at a
  time, a lane per vertex (coalesced), and owns each such word in the step -- so the later
  bottom-up steps, where few vertices are left, skip the rest 1024 at a time. Slotted pages
  take the same path: ``locate`` reads the mirror's vertex directory (kernels/graph/directory.py),
  two loads as on CSR.
  Each lane scans the first :data:`SERIAL` neighbours of its own
  unvisited vertex and stops at the first frontier parent; lanes whose vertex has a longer list
  and no parent yet are then served one at a time by the whole warp, 32 neighbours a round, a
  ``ballot`` ending the scan at the first parent (warp-cooperative: a hub costs the warp
  ``degree / 32`` rounds, not one lane ``degree`` loads). The warp writes its word of the
  next bitmap with one store (the ballot of the lanes that found a parent).
* A bottom-up step only counts (vertices labelled and their degree sum, for Beamer's rule:
  per thread in registers, a warp sum, one shared atomic per warp and one global atomic per block
  and step): it writes no queue. Returning to top-down converts the bitmap to queue entries
  first (a thread per 8 vertices: one byte of the bitmap), then a grid sync.

**SSSP (``gpu-nearfar``, ``gpu-nearfar-slotted``)**: near-far (Davidson et al., IPDPS'14), the
GPU form of delta-stepping. Vertices whose tentative distance lies in the current bucket
``[b·delta, (b + 1)·delta)`` (or below) form the *near* frontier and are relaxed
Bellman-Ford-style level by level (the stamp of the frontier Bellman-Ford keeps each vertex
once per level); an improvement that lands beyond the bucket goes to the *far* pile instead
(once: a ``pending`` flag set by compare-and-swap). When the near frontier is empty, the far
pile is scanned twice: the smallest bucket among its still-pending vertices (an ``atomicMin``
on bucket numbers), a grid sync, then every pending vertex of that bucket moves to the near
frontier and the rest are compacted into the other far buffer (a per-vertex epoch stamp drops
repeated entries). ``delta`` is a kernel argument too. Each level's frontier carries the degree
sum of its vertices, so the relaxations (edges examined) are counted on the device for free.

Levels: BFS at most ``n + 1``; near-far at most ``3 n + 8`` (each vertex is relaxed in one
bucket only, at most ``|bucket| + 1`` levels a bucket, one advance per non-empty bucket); past
that the kernel stops and ``last_run`` raises (a kernel bug).

Under the CUDA simulator (no warp intrinsics; :mod:`kernels.cuda.warp`) the kernel runs one
block of one warp, so the warp-cooperative paths are exercised but inter-warp ones are not.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float64, int32, int64, uint32
from numba.cuda.cudadrv.driver import CudaAPIError

from kernels.algorithms.traversal.device_loop import (
    FIELDS,
    GROUP,
    LOG_PER_LANE,
    PER_LANE,
    SLOTS,
    THREADS_PER_SM,
    cooperative_limit,
    loop_grid,
)
from kernels.algorithms.traversal.gpu_bfs import visit
from kernels.cuda.device import facts as device_facts
from kernels.cuda.jit import jit as kernel_jit
from kernels.cuda.warp import WARP, exchange_size, lowest_lane, warp_ops
from kernels.errors import DeviceLoopError
from kernels.operators.device_bits import bits_float, float_bits
from kernels.operators.device_clock import globaltimer
from kernels.operators.launch import Workspace, for_target, on_simulator
from kernels.operators.views import DeviceGraphView, functions

SERIAL = 8                     # neighbours a lane scans alone before the warp helps (bottom-up)
SETTLED = 3                    # fb[SETTLED]: vertices known labelled or without edges (bottom-up)
FULL_WORD = 0xFFFFFFFF
FAR = SLOTS * FIELDS           # counters[FAR + k]: entries of far buffer k (near-far)
MIN_BUCKET = FAR + 2           # counters[MIN_BUCKET + e % 2]: smallest pending far bucket of advance e
COUNTERS = FAR + 4
NO_BUCKET = np.iinfo(np.int64).max
BUCKET_CAP = 4.0e18            # bucket numbers are clamped below int64's range (a tiny delta)
RESULT = 10                    # levels, top-down, bottom-up, frontier entries, converged, relaxations,
                               # bucket advances, which of the first 62 levels went bottom-up (bit L);
                               # near-far's block-local hops: relaxations, rounds (summed over blocks)
LOCAL_RELAXED, LOCAL_ROUNDS = 8, 9
TRACED_LEVELS = 62
#: registers per thread the kernels are compiled for on a GPU: ``None`` = what lets
#: ``THREADS_PER_SM`` threads (two blocks of 256) stay resident in an SM's registers (128 on an
#: H100). Uncapped, the slotted BFS took 138 and kept one block per SM: half the grid, each
#: level's latency-bound loops about 2x longer (benchmarks/diag/frontier_trace.py). 0: the
#: compiler's choice.
MAX_REGISTERS = None
TRACE_STAMPS = 4               # traced runs: per level and block, the start, after a direction switch's
                               # conversion (near-far: before the block-local rounds), before the closing
                               # grid sync (see level_trace), and (not a time) the block's local rounds
ALGORITHMS = ("bfs", "sssp")
#: near-far's block-local hops (``hops`` > 0): a block's items (an edge to relax, the distance
#: of its source) in shared memory, two buffers of this many (tiny on the simulator, so that
#: tests overflow them)
LOCAL_CAP = 1024
SIM_LOCAL_CAP = 12
#: skip an item whose source has improved since it was made (benchmarks/diag/nearfar_hops.py)
LOCAL_SKIP_STALE = True
#: vertices the local rounds send to the next frontier or the far pile, held in shared memory
#: until the rounds end (each of the two buffers); past it they are published at once
LOCAL_DEFER = 512
SIM_LOCAL_DEFER = 3
#: vertices with more neighbours than this go to the grid's next frontier, not a block's queue
#: (its edges would take too many items of a block's buffer)
LOCAL_DEGREE = PER_LANE


@cuda.jit(device=True)
def bucket_of(d, delta):
    q = d / delta
    if q > BUCKET_CAP:
        q = BUCKET_CAP
    return int64(q)


def nearfar_relax_functor(kind: str, weighted: bool):
    """``state = (dist, dist_bits, stamp, level, pending, far, counters, far_counter, far_offset, delta,
    bucket, local)`` (the far entries are the caller's: ``far`` ... ``far_offset`` ride along
    unused).

    An improvement (one native ``atomicMin`` on the bit patterns, as the device loop's SSSP) in
    the current bucket or below joins the next near frontier (once a level: the stamp): returns
    1; beyond it, the vertex joins the far pile unless it is pending there already: returns 2
    (the caller appends it, block-aggregated); otherwise 0. With ``local`` (block-local hops) a
    near improvement returns 3 instead, unstamped: the caller queues its edges in the block (or
    stamps it into the next frontier)."""
    weight = functions(kind).weight

    @cuda.jit(device=True)
    def relax(src, dst, edge, g, state):
        w = float64(weight(g, edge)) if weighted else float64(1.0)
        d = state[0][src] + w
        candidate = float_bits(d)
        if cuda.atomic.min(state[1], dst, candidate) > candidate:
            pending = state[4]
            if bucket_of(d, state[9]) <= state[10]:
                if pending[dst] != 0:
                    pending[dst] = 0          # its far entry is stale now
                if state[11]:
                    return int64(3)
                return int64(1) if cuda.atomic.max(state[2], dst, state[3]) < state[3] else int64(0)
            if cuda.atomic.cas(pending, dst, 0, 1) == 0:
                return int64(2)
        return int64(0)

    return relax


@cuda.jit(device=True)
def _bfs_state(a, bits, stamp, level, pending, far, counters, far_counter, far_offset, delta, bucket, local):
    return (a, level + 1)


@cuda.jit(device=True)
def _sssp_state(a, bits, stamp, level, pending, far, counters, far_counter, far_offset, delta, bucket, local):
    return (a, bits, stamp, level, pending, far, counters, far_counter, far_offset, delta, bucket, local)


@functools.cache
def frontier_loop_kernel(kind: str, algorithm: str, weighted: bool, block: int, group: int, optimizing: bool,
                         hardware: bool, traced: bool = False, max_registers: int | None = MAX_REGISTERS,
                         local_hops: bool = False):
    """The persistent kernel: ``kernel(g, n, m, source, a, bits, stamp, small, chunks, counters,
    result, fb, far, pending, fstamp, tune, trace)``.

    ``a``: BFS levels int32 / SSSP distances float64; ``bits`` their int64 view (SSSP); ``stamp``
    int32[n] (SSSP); ``small`` int64[2, 3, cap], ``chunks`` int64[2, 4, cap] (the queues);
    ``counters`` int64[COUNTERS]; ``result`` int64[RESULT]; ``fb`` uint32[4, words] (BFS bitmaps:
    three frontiers and the settled vertices); ``far`` int32[2 n], ``pending`` and ``fstamp``
    int32[n] (near-far); ``tune`` float64[4] = (alpha, beta, delta, hops). Unused arrays may be
    one-element stand-ins of the same type. ``local_hops``: compile in near-far's block-local hops
    (SSSP; the kernel of runs with ``hops`` > 0). With ``traced`` (diagnostics), thread 0 of every
    block writes ``globaltimer`` stamps into ``trace`` int64[levels, blocks, TRACE_STAMPS];
    otherwise ``trace`` is not touched."""
    f = functions(kind)
    locate, edge_at, target, weight = f.locate, f.edge_at, f.target, f.weight
    bfs = algorithm == "bfs"
    # block-local hops are compiled in only for runs with hops > 0 (SSSP): the level-synchronous
    # kernel keeps its shared memory and registers as they were without them
    with_hops = bool(local_hops) and not bfs
    local_cap = (LOCAL_CAP if hardware else SIM_LOCAL_CAP) if with_hops else 1
    skip_stale = LOCAL_SKIP_STALE
    defer_cap = (LOCAL_DEFER if hardware else SIM_LOCAL_DEFER) if with_hops else 1
    functor = visit if bfs else nearfar_relax_functor(kind, weighted)
    make_state = _bfs_state if bfs else _sssp_state
    chunk = group * PER_LANE
    bottom_up_allowed = bool(optimizing and bfs)
    ballot, shfl, warp_sum = warp_ops(hardware)
    ex_size = exchange_size(hardware)
    level_limit_factor = 1 if bfs else 3
    level_limit_extra = 1 if bfs else 8
    traced = bool(traced)

    @cuda.jit(device=True)
    def mark(trace, level, k):
        if traced and cuda.threadIdx.x == 0 and level < trace.shape[0]:
            trace[level, cuda.blockIdx.x, k] = globaltimer()

    @cuda.jit(device=True)
    def note(trace, level, value):
        if traced and cuda.threadIdx.x == 0 and level < trace.shape[0]:
            trace[level, cuda.blockIdx.x, TRACE_STAMPS - 1] = value

    @cuda.jit(device=True)
    def chunks_of(degree):
        if degree <= PER_LANE:
            return int64(0)
        return (degree + chunk - 1) // chunk

    @cuda.jit(device=True)
    def publish(mine, fv, fl, fd, nfar, ff, sh, sd, half, counters, slot, small, chunks, parity, far, far_counter,
                far_offset):
        """Append this thread's ``mine`` claimed vertices to queue ``parity`` and counter ``slot``,
        and its ``nfar`` far-pile entries ``ff`` to ``far[far_offset + ...]`` counted in
        ``counters[far_counter]``, block-aggregated (as :mod:`.device_loop`'s: one shared atomic per
        thread, one global atomic per block and counter -- a far push per thread on one global
        counter would serialise at L2). Every thread of the block calls it the same number of
        times; returns whether the block appended anything."""
        t = cuda.threadIdx.x
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
        hd = half * 4
        my_small = cuda.atomic.add(sh, h, n_small) if n_small > 0 else int32(0)
        my_chunks = cuda.atomic.add(sh, h + 1, n_chunks) if n_chunks > 0 else int32(0)
        my_far = cuda.atomic.add(sh, h + 3, int32(nfar)) if nfar > 0 else int32(0)
        if mine > 0:
            cuda.atomic.add(sh, h + 2, int32(mine))
            cuda.atomic.add(sd, hd, degrees)
        claimed = cuda.syncthreads_count(int32(1) if mine + nfar > 0 else int32(0))
        if claimed == 0:
            return False
        if t == 0:
            if sh[h + 2] > 0:
                sd[hd + 1] = cuda.atomic.add(counters, slot * FIELDS, int64(sh[h]))
                sd[hd + 2] = cuda.atomic.add(counters, slot * FIELDS + 1, int64(sh[h + 1]))
                cuda.atomic.add(counters, slot * FIELDS + 2, int64(sh[h + 2]))
                cuda.atomic.add(counters, slot * FIELDS + 3, sd[hd])
            if sh[h + 3] > 0:
                sd[hd + 3] = cuda.atomic.add(counters, far_counter, int64(sh[h + 3]))
            o = (1 - half) * 4
            for k in range(4):
                sh[o + k] = 0
            sd[o] = 0
        cuda.syncthreads()
        f0 = sd[hd + 3] + my_far
        for i in range(nfar):
            far[far_offset + f0 + i] = ff[i]
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

    @cuda.jit(device=True)
    def keep_local(g, u, d, lqe, lqd, lqs, lqn, side, stamp, level):
        where, degree = locate(g, u)
        return keep_local_at(g, u, where, degree, d, lqe, lqd, lqs, lqn, side, stamp, level)

    @cuda.jit(device=True)
    def keep_local_at(g, u, where, degree, d, lqe, lqd, lqs, lqn, side, stamp, level):
        """``u`` was just improved to ``d`` inside the bucket: its edges become items ``(edge, d)``
        of the block's buffer ``side`` (0 returned). A list longer than
        :data:`LOCAL_DEGREE`, or one the buffer has no room for, stamps ``u`` into the next
        frontier instead: 1 if this call stamped it (the caller publishes it), else 0. An item
        carries the distance it was made with, so nobody reads ``u``'s distance again (a later
        improvement makes its own).
        ``keep_local_at`` takes ``u``'s list as the caller located it."""
        if degree == 0:
            return 0
        # a plain read first: a full buffer costs no atomic, and its counter cannot run on and wrap
        if degree <= LOCAL_DEGREE and lqn[side] < local_cap:
            k = cuda.atomic.add(lqn, side, int32(degree))
            if k + degree <= local_cap:
                for q in range(degree):
                    lqe[side, k + q] = edge_at(g, where, q)
                    lqd[side, k + q] = d
                    lqs[side, k + q] = u
                return 0
            for q in range(k, local_cap):        # this call's share of the full buffer: empty items
                lqe[side, q] = -1
        return 1 if cuda.atomic.max(stamp, u, level) < level else 0

    @cuda.jit(device=True)
    def defer(u, buf, lqn, slot):
        """Hold ``u`` in the block's shared ``buf`` (count ``lqn[slot]``) for one publish after the
        local rounds; False when it is full."""
        k = cuda.atomic.add(lqn, slot, 1)
        if k < defer_cap:
            buf[k] = u
            return True
        return False

    @cuda.jit(device=True)
    def in_frontier(fb, cur, u):
        return (fb[cur, u >> 5] >> (u & 31)) & 1 != 0

    @cuda.jit(device=True)
    def find_parent(g, fb, cur, candidate, loc, degree, lane, ex):
        """Bottom-up scan of the warp's 32 candidates (``candidate``: this lane has an unvisited
        vertex with list ``loc``/``degree``): whether this lane's vertex has a neighbour in the
        frontier ``cur``. Called by every lane of the warp."""
        found = False
        if candidate:
            # four neighbours a round: their ids, then their bits, loaded independently (two
            # memory round trips per four neighbours instead of two per neighbour)
            lim = min(degree, SERIAL)
            j = int64(0)
            while j < lim and not found:
                u0 = target(g, edge_at(g, loc, j))
                u1 = target(g, edge_at(g, loc, j + 1)) if j + 1 < lim else u0
                u2 = target(g, edge_at(g, loc, j + 2)) if j + 2 < lim else u0
                u3 = target(g, edge_at(g, loc, j + 3)) if j + 3 < lim else u0
                hits = ((int64(fb[cur, u0 >> 5]) >> (u0 & 31)) | (int64(fb[cur, u1 >> 5]) >> (u1 & 31))
                        | (int64(fb[cur, u2 >> 5]) >> (u2 & 31)) | (int64(fb[cur, u3 >> 5]) >> (u3 & 31)))
                found = (hits & 1) != 0
                j += 4
        waiting = ballot(ex, lane, candidate and not found and degree > SERIAL)
        while waiting != 0:
            leader = lowest_lane(waiting)
            waiting &= waiting - uint32(1)
            lloc = shfl(ex, lane, loc, leader)
            ldeg = shfl(ex, lane, degree, leader)
            start = int64(SERIAL)
            hit = False
            while start < ldeg:
                j = start + lane
                p = False
                if j < ldeg:
                    p = in_frontier(fb, cur, target(g, edge_at(g, lloc, j)))
                if ballot(ex, lane, p) != 0:
                    hit = True
                    break
                start += WARP
            if hit and lane == leader:
                found = True
        return found

    @cuda.jit(device=True)
    def count_block(mine, degrees, lane, ex, sc, counters, slot):
        """Add the block's labelled vertices and degree sum to counter ``slot``: a warp sum, one
        shared atomic per warp, one global atomic per block. Block-uniform."""
        t = cuda.threadIdx.x
        c = warp_sum(ex, lane, mine)
        d = warp_sum(ex, lane, degrees)
        if t == 0:
            sc[0] = 0
            sc[1] = 0
        cuda.syncthreads()
        if lane == 0 and c > 0:
            cuda.atomic.add(sc, 0, c)
            cuda.atomic.add(sc, 1, d)
        cuda.syncthreads()
        if t == 0 and sc[0] > 0:
            cuda.atomic.add(counters, slot * FIELDS + 2, sc[0])
            cuda.atomic.add(counters, slot * FIELDS + 3, sc[1])

    @cuda.jit(device=True)
    def bottom_up_step(g, n, a, fb, cur, nb, level, first_thread, nthreads, lane, ex, sc, counters, nxt):
        t = cuda.threadIdx.x
        mine = int64(0)
        degrees = int64(0)
        # lanes scan 32 words of the settled bitmap at once (1024 vertices a round trip); the
        # warp then takes the words that still hold unsettled vertices one at a time, a lane
        # per vertex (coalesced), and owns each such word in this step. On slotted pages too:
        # ``locate`` reads the vertex directory, as CSR's row pointers
        words = fb.shape[1]
        warp = (first_thread + t) >> 5
        for wbase in range(warp * WARP, words, (nthreads >> 5) * WARP):
            w = wbase + lane
            open_bits = int64(0)
            if w < words:
                open_bits = ~int64(fb[SETTLED, w]) & FULL_WORD
                if w * WARP + WARP > n:
                    open_bits &= (int64(1) << (n - w * WARP)) - 1
            busy = ballot(ex, lane, open_bits != 0)
            while busy != 0:
                k = lowest_lane(busy)
                busy &= busy - uint32(1)
                ww = wbase + k
                todo = shfl(ex, lane, open_bits, k)
                v = ww * WARP + lane
                loc = int64(0)
                degree = int64(0)
                candidate = False
                settled = False
                if (todo >> lane) & 1 != 0:
                    if a[v] != -1:
                        settled = True            # labelled by a top-down step since
                    else:
                        loc, degree = locate(g, v)
                        if degree == 0:
                            settled = True        # no edges: never a candidate again
                        else:
                            candidate = True
                found = find_parent(g, fb, cur, candidate, loc, degree, lane, ex)
                if found:
                    a[v] = level + 1
                    mine += 1
                    degrees += degree
                word = ballot(ex, lane, found)
                newly = ballot(ex, lane, settled or found)
                if lane == 0:
                    fb[SETTLED, ww] = (~todo & FULL_WORD) | int64(newly)
                    if word != 0:
                        fb[nb, ww] = word          # this warp owns the word in this step
        count_block(mine, degrees, lane, ex, sc, counters, nxt)

    def kernel(g, n, m, source, a, bits, stamp, small, chunks, counters, result, fb, far, pending, fstamp, tune,
               trace):
        grid = cuda.cg.this_grid()
        t = cuda.threadIdx.x
        lane = t & (WARP - 1)
        tid = cuda.grid(1)
        nthreads = cuda.gridsize(1)
        first_thread = int64(cuda.blockIdx.x) * block
        sh = cuda.shared.array(8, int32)
        sd = cuda.shared.array(8, int64)        # two halves: degree sum, queue bases (small, chunks, far)
        sc = cuda.shared.array(2, int64)        # a bottom-up step's block counts, the far pile's smallest bucket
        ex = cuda.shared.array(ex_size, int64)
        fv = cuda.local.array(PER_LANE, int32)
        fl = cuda.local.array(PER_LANE, int64)
        fd = cuda.local.array(PER_LANE, int64)
        ff = cuda.local.array(PER_LANE, int32)  # far-pile entries of this virtual thread (near-far)
        lqe = cuda.shared.array((2, local_cap), int64)   # block-local hops: items (edge, distance) of this
        lqd = cuda.shared.array((2, local_cap), float64)  # round and of the next, and the edge's source
        lqs = cuda.shared.array((2, local_cap), int32)
        lqn = cuda.shared.array(4, int32)       # items of each buffer; vertices deferred to the next frontier, far
        lgv = cuda.shared.array(defer_cap, int32)   # deferred: vertices for the next frontier
        lgf = cuda.shared.array(defer_cap, int32)   # and for the far pile
        alpha = tune[0]
        beta = tune[1]
        delta = tune[2]
        hops = int64(tune[3])
        local = with_hops and hops > 0
        local_relaxed = int64(0)
        if t < 8:
            sh[t] = 0
        if t < 8:
            sd[t] = 0
        for v in range(tid, n, nthreads):
            if bfs:
                a[v] = 0 if v == source else -1
            else:
                a[v] = 0.0 if v == source else np.inf
                stamp[v] = -1
                pending[v] = 0
                fstamp[v] = 0
        if tid == 0:
            for k in range(COUNTERS):
                counters[k] = 0
            counters[MIN_BUCKET] = NO_BUCKET
            counters[MIN_BUCKET + 1] = NO_BUCKET
            for k in range(LOCAL_RELAXED, RESULT):
                result[k] = 0
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
        was_bottom_up = False
        top_steps = int64(0)
        bottom_steps = int64(0)
        reached = int64(0)
        relaxed = int64(0)
        advances = int64(0)
        far_side = 0                         # far buffer the relaxations append to
        bucket = int64(0)
        directions = int64(0)
        converged = 1
        while True:
            slot = level % SLOTS
            n_small = counters[slot * FIELDS]
            n_chunks = counters[slot * FIELDS + 1]
            grown = counters[slot * FIELDS + 2]
            grown_edges = counters[slot * FIELDS + 3]
            far_count = int64(0)
            if not bfs:
                far_count = counters[FAR + far_side]
            if grown == 0 and far_count == 0:
                break
            if level > level_limit_factor * n + level_limit_extra:
                converged = 0
                break
            parity = level & 1
            nxt = (level + 1) % SLOTS
            mark(trace, level, 0)
            if tid == 0:
                reset = (level + 2) % SLOTS
                for k in range(FIELDS):
                    counters[reset * FIELDS + k] = 0
            if grown == 0:
                # near-far: the near frontier is empty, the far pile is not -> the next bucket
                min_slot = MIN_BUCKET + (advances & 1)
                if t == 0:
                    sc[0] = NO_BUCKET
                cuda.syncthreads()
                lowest = int64(NO_BUCKET)
                for i in range(tid, far_count, nthreads):
                    u = far[far_side * n + i]
                    if pending[u] == 1:
                        lowest = min(lowest, bucket_of(a[u], delta))
                if lowest < NO_BUCKET:
                    cuda.atomic.min(sc, 0, lowest)
                cuda.syncthreads()
                if t == 0 and sc[0] < NO_BUCKET:
                    cuda.atomic.min(counters, min_slot, sc[0])   # one global atomic per block
                grid.sync()
                bucket = counters[min_slot]
                advances += 1
                if tid == 0:
                    counters[MIN_BUCKET + (advances & 1)] = NO_BUCKET
                    counters[FAR + far_side] = 0
                other = 1 - far_side
                for base in range(first_thread, far_count, nthreads):
                    i = base + t
                    mine = 0
                    nfar = 0
                    if i < far_count:
                        u = far[far_side * n + i]
                        if pending[u] == 1:
                            if bucket_of(a[u], delta) <= bucket:
                                # one of a vertex's repeated entries moves it; the stamp keeps it once a level
                                if cuda.atomic.cas(pending, u, 1, 0) == 1 and cuda.atomic.max(stamp, u, level) < level:
                                    where, degree = locate(g, u)
                                    fv[0] = u
                                    fl[0] = where
                                    fd[0] = degree
                                    mine = 1
                            elif cuda.atomic.max(fstamp, u, advances) < advances:
                                ff[0] = u                # still later: kept, once (the epoch stamp)
                                nfar = 1
                    if publish(mine, fv, fl, fd, nfar, ff, sh, sd, rnd & 1, counters, nxt, small, chunks, 1 - parity,
                               far, FAR + other, other * n):
                        rnd += 1
                far_side = other
            else:
                reached += grown
                if bottom_up_allowed and level > 0:   # Beamer's rule, from the same numbers in every thread
                    explored += grown_edges
                    if bottom_up:
                        bottom_up = not (grown < previous and grown * beta < n)
                    else:
                        bottom_up = grown_edges * alpha > m - explored
                previous = grown
                if bottom_up:
                    words = fb.shape[1]
                    if not was_bottom_up:
                        # the frontier is only a queue: write it as a bitmap (and clear the next one;
                        # the settled bitmap at the first switch: it is kept up to date lazily)
                        for k in range(tid, words, nthreads):
                            fb[slot, k] = 0
                            fb[nxt, k] = 0
                            if bottom_steps == 0:
                                fb[SETTLED, k] = 0
                        grid.sync()
                        for k in range(tid, n_small + n_chunks, nthreads):
                            v = small[parity, 0, k] if k < n_small else chunks[parity, 0, k - n_small]
                            cuda.atomic.or_(fb, (slot, v >> 5), uint32(1) << uint32(v & 31))
                        grid.sync()
                        mark(trace, level, 1)
                    bottom_steps += 1
                    if level < TRACED_LEVELS:
                        directions |= int64(1) << level
                    bottom_up_step(g, n, a, fb, slot, nxt, level, first_thread, nthreads, lane, ex, sc, counters,
                                   nxt)
                    clear = (level + 2) % SLOTS          # the next bottom-up step's output, unread now
                    for k in range(tid, words, nthreads):
                        fb[clear, k] = 0
                else:
                    if was_bottom_up:
                        # the frontier is only a bitmap: queue it (a thread per byte: <= 8 claims)
                        n_bytes = (n + 7) >> 3
                        for base in range(first_thread, n_bytes, nthreads):
                            byte = base + t
                            mine = 0
                            if byte < n_bytes:
                                bits8 = (fb[slot, byte >> 2] >> ((byte & 3) * 8)) & 255
                                while bits8 != 0:
                                    low = bits8 & (~bits8 + 1)
                                    v = byte * 8 + cuda.popc(low - 1)
                                    bits8 ^= low
                                    where, degree = locate(g, v)
                                    fv[mine] = v
                                    fl[mine] = where
                                    fd[mine] = degree
                                    mine += 1
                            if publish(mine, fv, fl, fd, 0, ff, sh, sd, rnd & 1, counters, slot, small, chunks,
                                       parity, far, FAR, 0):
                                rnd += 1
                        grid.sync()
                        n_small = counters[slot * FIELDS]
                        n_chunks = counters[slot * FIELDS + 1]
                        mark(trace, level, 1)
                    top_steps += 1
                    relaxed += grown_edges
                    state = make_state(a, bits, stamp, level, pending, far, counters, FAR + far_side, far_side * n,
                                       delta, bucket, local)
                    if with_hops and local:
                        if t < 4:
                            lqn[t] = 0
                        cuda.syncthreads()
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
                        nfar = 0
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
                            lane_c = k - chunk_start - c * group
                            src = chunks[parity, 0, c]
                            loc = chunks[parity, 1, c]
                            first = chunks[parity, 2, c]
                            j0 = first + lane_c
                            j1 = min(first + chunk, chunks[parity, 3, c])
                            step = int64(group)
                        for j in range(j0, j1, step):
                            e = edge_at(g, loc, j)
                            u = target(g, e)
                            outcome = functor(src, u, e, g, state)
                            if outcome == 3:
                                # the distance now (an atomic reads it at L2: L1 may hold an older one)
                                now = bits_float(cuda.atomic.add(bits, u, 0))
                                outcome = keep_local(g, u, now, lqe, lqd, lqs, lqn, 0, stamp, level)
                            if outcome == 1:
                                fv[mine] = u
                                mine += 1
                            elif outcome == 2:
                                ff[nfar] = u
                                nfar += 1
                        for i in range(mine):
                            where, degree = locate(g, fv[i])
                            fl[i] = where
                            fd[i] = degree
                        if publish(mine, fv, fl, fd, nfar, ff, sh, sd, rnd & 1, counters, nxt, small, chunks,
                                   1 - parity, far, FAR + far_side, far_side * n):
                            rnd += 1
                    if with_hops and local:
                        # block-local hops: the edges of the vertices this block improved into the bucket
                        # are relaxed by the block, a round per hop, with block barriers only, up to
                        # `hops` rounds; what is left goes to the next frontier. Vertices for the next
                        # frontier or the far pile wait in shared buffers, published once at the end
                        # (a publish costs barriers and global atomics: not in every round)
                        cuda.syncthreads()
                        mark(trace, level, 1)
                        side = 0
                        rounds = int64(0)
                        last = False
                        while True:
                            count = min(lqn[side], local_cap)
                            if count == 0:
                                break
                            last = rounds >= hops      # hops rounds done: these items once more, no new ones
                            for base in range(0, count, block):
                                i = base + t
                                mine = 0
                                nfar = 0
                                e = lqe[side, i] if i < count else int64(-1)
                                d0 = float64(0.0)
                                u = int32(0)
                                w = float64(0.0)
                                if e >= 0:
                                    # every read an item needs is issued before the first use, so that
                                    # the round waits for memory twice, not five times
                                    d0 = lqd[side, i]
                                    now = a[lqs[side, i]] if skip_stale else d0
                                    u = target(g, e)
                                    w = float64(weight(g, e)) if weighted else float64(1.0)
                                    if now < d0:
                                        e = int64(-1)   # its source improved since: a newer item exists
                                if e >= 0:
                                    d = d0 + w
                                    candidate = float_bits(d)
                                    local_relaxed += 1
                                    # read beside the atomic; a far push between the two leaves the
                                    # flag set: the vertex comes back at the next advance (work, not
                                    # a lost improvement), as it could before
                                    was_pending = pending[u]
                                    where, degree = locate(g, u)
                                    if cuda.atomic.min(bits, u, candidate) > candidate:
                                        if bucket_of(d, delta) <= bucket:
                                            if was_pending != 0:
                                                pending[u] = 0
                                            if last:
                                                queue_it = cuda.atomic.max(stamp, u, level) < level
                                            else:
                                                queue_it = keep_local_at(g, u, where, degree, d, lqe, lqd, lqs, lqn,
                                                                         1 - side, stamp, level) == 1
                                            if queue_it and not defer(u, lgv, lqn, 2):
                                                fv[0] = u
                                                fl[0] = where
                                                fd[0] = degree
                                                mine = 1
                                        elif cuda.atomic.cas(pending, u, 0, 1) == 0 and not defer(u, lgf, lqn, 3):
                                            ff[0] = u
                                            nfar = 1
                                # the shared buffers were full for these (rare): published now
                                if cuda.syncthreads_or(mine + nfar) and publish(
                                        mine, fv, fl, fd, nfar, ff, sh, sd, rnd & 1, counters, nxt, small, chunks,
                                        1 - parity, far, FAR + far_side, far_side * n):
                                    rnd += 1
                            # every thread read the count before the pass's barrier: this buffer is
                            # the next round's output
                            if t == 0:
                                lqn[side] = 0
                            cuda.syncthreads()
                            rounds += 1                # the last round too: it relaxed items
                            if last:
                                break
                            side = 1 - side
                        n_next = min(lqn[2], defer_cap)
                        n_far = min(lqn[3], defer_cap)
                        for base in range(0, max(n_next, n_far), block):
                            i = base + t
                            mine = 0
                            nfar = 0
                            if i < n_next:
                                where, degree = locate(g, lgv[i])
                                fv[0] = lgv[i]
                                fl[0] = where
                                fd[0] = degree
                                mine = 1
                            if i < n_far:
                                ff[0] = lgf[i]
                                nfar = 1
                            if publish(mine, fv, fl, fd, nfar, ff, sh, sd, rnd & 1, counters, nxt, small, chunks,
                                       1 - parity, far, FAR + far_side, far_side * n):
                                rnd += 1
                        if t == 0 and rounds > 0:
                            cuda.atomic.add(result, LOCAL_ROUNDS, rounds)
                        note(trace, level, rounds)
                was_bottom_up = bottom_up
            mark(trace, level, 2)
            grid.sync()
            level += 1
        if tid == 0:
            result[0] = level
            result[1] = top_steps
            result[2] = bottom_steps
            result[3] = reached
            result[4] = converged
            result[5] = relaxed
            result[6] = advances
            result[7] = directions
        if local_relaxed > 0:
            cuda.atomic.add(result, LOCAL_RELAXED, local_relaxed)

    if max_registers is None:
        max_registers = device_facts().registers_per_sm // THREADS_PER_SM
    if max_registers and hardware:     # the simulator has no such option
        return kernel_jit(max_registers=int(max_registers))(kernel)
    return kernel_jit(kernel)


# ---- host side ------------------------------------------------------------------------------

class FrontierLoopTraversal:
    """Direction-optimizing BFS (``algorithm="bfs"``) or near-far SSSP on a device view in one
    cooperative launch; ``alpha``/``beta``/``delta`` are run-time arguments.

    ``run(view, source, out, stream=0)`` launches and returns without waiting (no allocation
    after the first run with a view's sizes: capturable into a CUDA graph); ``last_run`` reads
    the small result array when asked."""

    def __init__(self, algorithm: str, kind: str, *, weighted: bool = False, balance: str = "lb",
                 block: int = 256, alpha: float = 14.0, beta: float = 24.0, delta: float = 1.0,
                 hops: int = 0, workspace: Workspace | None = None, trace_levels: int = 0,
                 max_registers: int | None = MAX_REGISTERS):
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, not {algorithm!r}")
        self.algorithm, self.kind = algorithm, kind
        self.weighted = bool(weighted and algorithm == "sssp")
        self.balance, self.block = balance, int(block)
        if int(hops) < 0:
            raise ValueError(f"hops must be 0 or more, not {hops!r}")
        self.tune_values = np.array([alpha, beta, delta, int(hops)], dtype=np.float64)
        self.workspace = workspace or Workspace()
        self.grid = 0
        self.hardware = not on_simulator()
        self._result = None
        self.last_kernel = None                 # the kernel the last run launched (diagnostics)
        self._tune = None
        self._queues: tuple | None = None
        self._bitmaps: tuple | None = None
        self._optimizing = False
        self._entries = 0
        self.trace_levels = int(trace_levels)   # > 0: stamp that many levels per block (diagnostics)
        self.max_registers = max_registers
        self._trace = None
        self._no_trace = None

    def launch_block(self) -> int:
        # the simulator's warp intrinsics are block-wide exchanges: one warp per block there
        return self.block if self.hardware else WARP

    def _group(self, block: int) -> int:
        if self.balance == "tpv":
            return 1
        return min(for_target(GROUP), block)

    def _queue_arrays(self, n: int, m: int, group: int):
        cap_small = max(n, 1)
        cap_chunks = m // (group * PER_LANE) + min(n, m // PER_LANE) + 1
        ws = self.workspace
        flat_small = ws.get("frontier.small", np.int64, 6 * cap_small)
        flat_chunks = ws.get("frontier.chunks", np.int64, 8 * cap_chunks)
        key = (id(flat_small), id(flat_chunks), cap_small, cap_chunks)
        if self._queues is None or self._queues[0] != key:
            self._queues = (key, flat_small[: 6 * cap_small].reshape(2, 3, cap_small),
                            flat_chunks[: 8 * cap_chunks].reshape(2, 4, cap_chunks))
        return self._queues[1], self._queues[2]

    def run(self, view: DeviceGraphView, source: int, out, stream=0) -> None:
        if self.weighted and not view.weighted:
            raise ValueError("a weighted SSSP needs a view with weights")
        ws = self.workspace
        n, m = view.n_vertices, view.n_entries
        block = self.launch_block()
        group = self._group(block)
        bfs = self.algorithm == "bfs"
        optimizing = bfs and not view.directed
        self._optimizing = optimizing
        self._entries = m
        traced = self.trace_levels > 0
        kernel = frontier_loop_kernel(view.kind, self.algorithm, self.weighted, block, group, optimizing,
                                      self.hardware, traced, self.max_registers,
                                      bool(not bfs and self.tune_values[3] > 0))
        self.last_kernel = kernel
        small, chunks = self._queue_arrays(n, m, group)
        counters = ws.get("frontier.counters", np.int64, COUNTERS)
        self._result = result = ws.get("frontier.result", np.int64, RESULT)
        words = (n + 31) // 32 if optimizing else 1
        fb_flat = ws.get("frontier.bitmaps", np.uint32, 4 * words)
        fb_key = (id(fb_flat), words)
        if self._bitmaps is None or self._bitmaps[0] != fb_key:
            self._bitmaps = (fb_key, fb_flat[: 4 * words].reshape(4, words))   # reshaping costs host time
        fb = self._bitmaps[1]
        per_vertex = n if not bfs else 1
        stamp = ws.get("frontier.stamp", np.int32, per_vertex)
        pending = ws.get("frontier.pending", np.int32, per_vertex)
        fstamp = ws.get("frontier.fstamp", np.int32, per_vertex)
        far = ws.get("frontier.far", np.int32, 2 * per_vertex)
        if self._tune is None:
            self._tune = cuda.to_device(self.tune_values)
        bits = out.view(np.int64) if not bfs else counters
        if self._no_trace is None:
            self._no_trace = cuda.device_array((1, 1, 1), np.int64)   # untraced kernels never touch it
        args = (view.args, np.int64(n), np.int64(m), np.int64(source), out, bits, stamp, small, chunks, counters,
                result, fb, far, pending, fstamp, self._tune, self._no_trace)
        if not self.hardware:
            grid = 1                           # the simulator's grid sync is one block's syncthreads
        else:
            key = ("frontier", kernel, block, str(view.args[2].dtype))
            limit = cooperative_limit(kernel, args, block, key)
            if limit < 1:
                raise DeviceLoopError(f"the frontier kernel cannot keep one block of {block} threads resident on "
                                      f"this GPU; use a smaller block")
            grid = loop_grid(block, limit, max(n, m // PER_LANE))
        self.grid = grid
        if traced:
            self._trace = cuda.to_device(np.zeros((self.trace_levels, grid, TRACE_STAMPS), np.int64))
            args = args[:-1] + (self._trace,)
        try:
            kernel[grid, block, stream](*args)
        except CudaAPIError as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DeviceLoopError(f"the cooperative launch of {grid} blocks x {block} threads was refused "
                                  f"({first}); use a smaller block") from None

    @property
    def trace(self):
        """The last traced run's stamps, int64[levels, blocks, TRACE_STAMPS] on the host (0: not reached)."""
        return None if self._trace is None else self._trace.copy_to_host()

    @property
    def last_run(self) -> dict:
        if self._result is None:
            return {}
        (levels, top, bottom, entries, converged, relaxed, advances, directions, local_relaxed, local_rounds) = (
            int(x) for x in self._result.copy_to_host()[:RESULT])
        if not converged:
            raise RuntimeError(f"the frontier-loop {self.algorithm} ran more levels than its bound: a kernel bug")
        out = {"loop": "device", "levels": levels, "grid_blocks": self.grid, "block": self.launch_block()}
        if self.algorithm == "bfs":
            alpha, beta = (float(x) for x in self.tune_values[:2])
            steps = "".join("B" if directions >> k & 1 else "T" for k in range(min(levels, TRACED_LEVELS)))
            out.update(top_down_steps=top, bottom_up_steps=bottom, visited=entries, alpha=alpha, beta=beta,
                       optimizing=self._optimizing, steps=steps)
        else:
            relaxed += local_relaxed
            out.update(iterations=levels, relax_levels=top, bucket_advances=advances, frontier_entries=entries,
                       relaxations=relaxed, relaxations_per_edge=relaxed / max(self._entries, 1),
                       delta=float(self.tune_values[2]), hops=int(self.tune_values[3]),
                       local_relaxations=local_relaxed, local_rounds=local_rounds)
        return out


def level_trace(trace: np.ndarray, levels: int) -> list[dict]:
    """Per level, from a traced run's stamps (nanoseconds of ``globaltimer``; thread 0 of each
    block: 0 at the level's start, 1 after a direction switch's conversion (near-far with
    ``hops``: before the block-local rounds), 2 before the grid sync that ends the level; 3 is not
    a time but the block's local rounds, read by benchmarks/diag/nearfar_rounds.py), in µs:
    ``period`` (the first start to the next level's first start, or to the last block's arrival
    for the last level), ``convert`` (the first start to the last block past the conversion; 0
    without a switch), ``work`` (the first start to the last block's arrival) and
    ``median_block`` (a block's own start to its arrival, median over blocks)."""
    rows = []
    count = min(int(levels), trace.shape[0])

    def first_start(st):
        stamped = st[:, 0][st[:, 0] > 0]          # 0: a block that left no stamp
        return stamped.min() if len(stamped) else 0

    for lv in range(count):
        st = trace[lv]
        start = first_start(st)
        if start == 0:
            continue
        arrival = st[:, 2].max()
        end = first_start(trace[lv + 1]) if lv + 1 < count else arrival
        end = end if end > 0 else arrival
        converted = st[:, 1].max()
        both = (st[:, 0] > 0) & (st[:, 2] > 0)
        rows.append({"level": lv, "period": (end - start) / 1e3, "work": (arrival - start) / 1e3,
                     "convert": (converted - start) / 1e3 if converted > 0 else 0.0,
                     "median_block": float(np.median(st[both, 2] - st[both, 0])) / 1e3 if both.any() else 0.0})
    return rows
