"""List-based GPU k-clique kernel (``gpu-list``): the vertex-centric search of
:mod:`~kernels.algorithms.kclique.gpu_bitmap` without the binary encoding, so that the gain
from bitmaps can be measured on the same parallel structure.

A block takes a vertex v (``max_blocks`` blocks loop over the vertices), copies N+(v) into its
scratch, and its groups of ``group_size`` threads search the subtrees rooted at N+(v)[g],
N+(v)[g+G], ... depth-first. A level is a sorted list of candidate vertex ids; choosing
candidate x leaves ``candidates after x ∩ N+(x)``, an intersection of two sorted lists: each
thread of the group takes a contiguous chunk of the candidates, finds where it starts in N+(x)
by binary search and merges. At the last level the threads only count.

Pushing a level keeps the list sorted with a two-round ordered compaction: in the first round
each thread counts its matches into shared memory; after the block barrier, each thread sums
the counts of the threads before it in its group (its output offset) and merges again, this
time writing. The counts alternate between two shared buffers, so a group may start its next
push in the same round in which it read the previous counts. As in the bitmap kernels the
block meets at ``syncthreads_or(still busy)`` after every round and no warp intrinsics are
used, so the simulator runs the same code. No out-degree cap: the lists need no bitmaps.
"""

from __future__ import annotations

from functools import cache

from numba import cuda, int32, int64

from kernels.algorithms.kclique.gpu_bitmap import MAX_LEVELS, block_total
from kernels.cuda.jit import jit as kernel_jit
from kernels.operators.sorted_search import lower_bound

# state[] of a group's search
LEVEL, ACTIVE, PENDING, PARITY, PUSHED = 0, 1, 2, 3, 4


@cuda.jit(device=True)
def merge_chunk(scratch, cb, lo, hi, indptr, indices, x, out, write, pv, per_vertex):
    """Candidates ``scratch[cb+lo : cb+hi]`` that are out-neighbours of x: counted, and written
    to ``scratch[out:]`` when ``write``; in per-vertex mode each counts a clique (leaf)."""
    if lo >= hi:
        return 0
    b_end = indptr[x + 1]
    b = lower_bound(indices, indptr[x], b_end, scratch[cb + lo])
    a = lo
    found = 0
    while a < hi and b < b_end:
        ya = scratch[cb + a]
        yb = indices[b]
        if ya < yb:
            a += 1
        elif ya > yb:
            b += 1
        else:
            if write:
                scratch[out + found] = ya
            elif per_vertex:
                cuda.atomic.add(pv, ya, 1)
            found += 1
            a += 1
            b += 1
    return found


@cache
def list_search(r: int, block_size: int, group_size: int, per_vertex: bool):
    """Device function: advance one group's list-based search for r-cliques in N+(v)."""
    n_groups = block_size // group_size

    @cuda.jit(device=True)
    def advance(scratch, lbase, sbase, max_deg, state, cursor, lens, path, tid, lane, indptr, indices, hits,
                pv, v):
        found = int64(0)
        level = state[LEVEL]
        group_first = tid - lane
        if state[PENDING]:
            # second round of a push from `level`: offsets from the counts of the first round
            hb = state[PARITY] * block_size + group_first
            offset = 0
            total = 0
            for t in range(group_size):
                h = hits[hb + t]
                if t < lane:
                    offset += h
                total += h
            state[PENDING] = 0
            state[PARITY] = 1 - state[PARITY]
            if total >= r - level:
                m = lens[level]
                j = state[PUSHED]
                cb = lbase if level == 1 else sbase + (level - 2) * max_deg
                chunk = (m - j - 1 + group_size - 1) // group_size
                lo = j + 1 + lane * chunk
                hi = min(lo + chunk, m)
                nb = sbase + (level - 1) * max_deg
                merge_chunk(scratch, cb, lo, hi, indptr, indices, path[level], nb + offset, True, pv, False)
                level += 1
                lens[level] = total
                cursor[level] = 0
                state[LEVEL] = level
                return found
        while True:
            m = lens[level]
            j = cursor[level]
            if j > m - 1 - (r - level):
                if level == 1:
                    state[ACTIVE] = 0
                    break
                level -= 1
                continue
            cursor[level] = j + (n_groups if level == 1 else 1)
            cb = lbase if level == 1 else sbase + (level - 2) * max_deg
            x = scratch[cb + j]
            path[level] = x
            chunk = (m - j - 1 + group_size - 1) // group_size
            lo = j + 1 + lane * chunk
            hi = min(lo + chunk, m)
            if level == r - 1:
                lane_found = merge_chunk(scratch, cb, lo, hi, indptr, indices, x, 0, False, pv, per_vertex)
                found += lane_found
                if per_vertex and lane_found > 0:
                    cuda.atomic.add(pv, v, lane_found)
                    for t in range(1, level + 1):
                        cuda.atomic.add(pv, path[t], lane_found)
                continue
            hits[state[PARITY] * block_size + tid] = merge_chunk(scratch, cb, lo, hi, indptr, indices, x, 0,
                                                                 False, pv, False)
            state[PENDING] = 1
            state[PUSHED] = j
            break
        state[LEVEL] = level
        return found

    return advance


def scratch_ints(k: int, block_size: int, group_size: int, max_out_degree: int) -> int:
    """int32 entries of global scratch one block needs (N+(v) + per-group list stacks)."""
    r = k - 1
    n_groups = block_size // group_size
    return max(max_out_degree, 1) * (1 + n_groups * max(r - 2, 0))


@cache
def list_kernel(k: int, block_size: int, group_size: int, per_vertex: bool):
    r = k - 1
    n_groups = block_size // group_size
    stored_levels = max(r - 2, 0)
    advance = list_search(r, block_size, group_size, per_vertex)
    hits_size = 2 * block_size  # numba needs shared-array sizes as plain constants

    @kernel_jit
    def kernel(indptr, indices, n, root0, root_step, max_deg, scratch, counter, pv):
        tid = cuda.threadIdx.x
        g = tid // group_size
        lane = tid % group_size
        partial = cuda.shared.array(block_size, int64)
        hits = cuda.shared.array(hits_size, int32)
        cursor = cuda.local.array(MAX_LEVELS, int64)
        lens = cuda.local.array(MAX_LEVELS, int64)
        path = cuda.local.array(MAX_LEVELS, int64)
        state = cuda.local.array(5, int64)
        block_ints = max_deg * (1 + n_groups * stored_levels)
        lbase = int64(cuda.blockIdx.x) * block_ints
        sbase = lbase + max_deg + g * stored_levels * max_deg
        mine = int64(0)
        item = int64(cuda.blockIdx.x)
        while item < n:
            v = root0 + item * root_step     # root0 0, root_step 1 but in a sampled trial (kclique/trial.py)
            start = indptr[v]
            d = indptr[v + 1] - start
            if d >= r:
                i = tid
                while i < d:
                    scratch[lbase + i] = indices[start + i]
                    i += block_size
                cuda.syncthreads()
                state[LEVEL] = 1
                state[ACTIVE] = 1
                state[PENDING] = 0
                state[PARITY] = 0
                cursor[1] = g
                lens[1] = d
                while cuda.syncthreads_or(int32(state[ACTIVE])):
                    if state[ACTIVE]:
                        mine += advance(scratch, lbase, sbase, max_deg, state, cursor, lens, path, tid, lane,
                                        indptr, indices, hits, pv, v)
            item += cuda.gridDim.x
        block_total(partial, tid, mine, counter, block_size)

    return kernel
