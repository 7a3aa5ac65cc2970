"""Binary-encoded GPU k-clique kernels (the report's method, after Almasri et al., ICS 2022).

``gpu-vertex``: a grid of ``max_blocks`` blocks loops over the vertices. For vertex v the block
builds the subgraph induced by v's out-neighbours u_0 < ... < u_{d-1}, *binary-encoded*: row i
is a bitmap of ceil(d/32) 32-bit words with bit j set when u_j is an out-neighbour of u_i
(one thread per row, merging the two sorted out-lists). The rows live in global scratch
reserved for the block, reused for every vertex it takes. The (k-1)-cliques of that DAG are
the k-cliques whose lowest vertex is v.

The block is split into groups of ``group_size`` threads. Each group takes the subtrees rooted
at u_g, u_{g+G}, ... and searches them depth-first with an explicit stack (a cursor per level
in local memory, a candidate bitmap per level in the block's scratch): choosing candidate j at
level l makes the next level ``C_l AND row_j``, the words shared out among the group's threads;
at the last level the threads only add ``popc(C_l AND row_j)`` to their own counters. The
counters are summed in shared memory and added to the global total once per block.

``gpu-edge``: the same search, one oriented edge (v, u) at a time: the block first collects the
common out-neighbours of v and u (a shared-memory bitmap over N+(v), then an ordered
compaction by popcount prefix), builds their induced bitmaps and counts (k-2)-cliques there.

Synchronisation (why there are no warp intrinsics): all threads of a group always take the
same decisions, because each reads the same candidate words. The only hazard is a group
reading a level its threads have just written; so a group stops after every *push*, and the
whole block meets at ``syncthreads_or(still busy)``, which also tells every thread whether a
further round is needed. Counting steps need no barrier. This runs unchanged on numba's CUDA
simulator (which has no ``shfl``/``ballot``/``syncwarp``) and on a GPU; the price on a GPU is
a block barrier per push instead of a warp barrier.

The maximum out-degree a block can encode is :data:`MAX_OUT_DEGREE` (the report's 1024):
it sizes the edge kernel's shared arrays and bounds every bitmap row to 32 words.
"""

from __future__ import annotations

from functools import cache

from numba import cuda, int32, int64, uint32

from kernels.cuda.jit import jit as kernel_jit
from kernels.operators.sorted_search import lower_bound

MAX_OUT_DEGREE = 1024
MAX_LEVELS = 18  # local per-level arrays; k <= 16 uses levels 0..16
WORD_MASK = 0xFFFFFFFF

# state[] of a group's search, kept in local memory so the device function can update it
LEVEL, ROOT, ACTIVE = 0, 1, 2


@cuda.jit(device=True)
def trailing_zeros(word):
    """Index of the lowest set bit of a non-zero word (popc of the bits below it)."""
    return cuda.popc(word ^ (word - 1)) - 1


@cuda.jit(device=True)
def next_bit(scratch, base, start, limit):
    """The first set bit j with start <= j <= limit in the bitmap at ``scratch[base:]``, or -1."""
    if start > limit:
        return -1
    w = start >> 5
    word = int64(scratch[base + w]) & ((WORD_MASK << (start & 31)) & WORD_MASK)
    while True:
        if word != 0:
            j = (w << 5) + trailing_zeros(word)
            if j <= limit:
                return j
            return -1
        w += 1
        if (w << 5) > limit:
            return -1
        word = int64(scratch[base + w])


@cuda.jit(device=True)
def count_leaves(bits, first_index, verts, voff, per_vertex_counts):
    """Per-vertex mode: one more clique at every vertex whose bit is set."""
    while bits != 0:
        b = trailing_zeros(bits)
        bits &= bits - 1
        cuda.atomic.add(per_vertex_counts, verts[voff + first_index + b], 1)


@cache
def group_search(r: int, group_size: int, n_groups: int, per_vertex: bool):
    """Device function: advance one group's search for r-cliques in a binary-encoded DAG.

    It runs until the group pushes a level (the block must then synchronise before anyone
    reads it) or has no subtree left (``state[ACTIVE] = 0``), and returns the cliques this
    thread counted. ``path`` holds the chosen rows (path[1] is the subtree root); ``prefix0``
    and ``prefix1`` are the clique vertices outside the subgraph (v; or v and u for an edge),
    -1 when absent."""

    @cuda.jit(device=True)
    def advance(scratch, ibase, stride, d, sbase, state, cursor, path, flip, lane, verts, voff, pv, prefix0,
                prefix1):
        words = (d + 31) >> 5
        found = int64(0)
        level = state[LEVEL]
        root = state[ROOT]
        while True:
            if level == 1:
                root += n_groups
                if root > d - r:
                    state[ACTIVE] = 0
                    break
                path[1] = root
                if r == 2:
                    rb = ibase + root * stride
                    lane_found = int64(0)
                    w = ((root + 1) >> 5) + lane
                    while w < words:
                        bits = int64(scratch[rb + w])
                        lane_found += cuda.popc(bits)
                        if per_vertex:
                            count_leaves(bits, w << 5, verts, voff, pv)
                        w += group_size
                    found += lane_found
                    if per_vertex and lane_found > 0:
                        _add_path(pv, lane_found, prefix0, prefix1, verts, voff, path, 1)
                    continue
                level = 2
                cursor[2] = root + 1
                continue
            if level == 2:
                cb = ibase + path[1] * stride
            else:
                cb = sbase + ((level - 3) * 2 + flip[level]) * stride
            j = next_bit(scratch, cb, cursor[level], d - 1 - (r - level))
            if j < 0:
                level -= 1
                continue
            cursor[level] = j + 1
            path[level] = j
            jb = ibase + j * stride
            w = ((j + 1) >> 5) + lane
            if level == r - 1:
                lane_found = int64(0)
                while w < words:
                    bits = int64(scratch[cb + w]) & int64(scratch[jb + w])
                    lane_found += cuda.popc(bits)
                    if per_vertex:
                        count_leaves(bits, w << 5, verts, voff, pv)
                    w += group_size
                found += lane_found
                if per_vertex and lane_found > 0:
                    _add_path(pv, lane_found, prefix0, prefix1, verts, voff, path, level)
                continue
            flip[level + 1] = 1 - flip[level + 1]
            nb = sbase + ((level - 2) * 2 + flip[level + 1]) * stride
            while w < words:
                scratch[nb + w] = scratch[cb + w] & scratch[jb + w]
                w += group_size
            level += 1
            cursor[level] = j + 1
            break
        state[LEVEL] = level
        state[ROOT] = root
        return found

    return advance


@cuda.jit(device=True)
def _add_path(pv, amount, prefix0, prefix1, verts, voff, path, last_level):
    """Per-vertex mode: ``amount`` cliques at every vertex on the current path."""
    if prefix0 >= 0:
        cuda.atomic.add(pv, prefix0, amount)
    if prefix1 >= 0:
        cuda.atomic.add(pv, prefix1, amount)
    for t in range(1, last_level + 1):
        cuda.atomic.add(pv, verts[voff + path[t]], amount)


@cuda.jit(device=True)
def build_row(scratch, row_base, i, d, verts, voff, indptr, indices):
    """Row i of the induced bitmap: bit j (j > i) when verts[j] is an out-neighbour of verts[i].

    Both lists are sorted, so one merge fills the row word by word; words below (i+1)/32
    are never read and are left as they are."""
    u = verts[voff + i]
    a = i + 1
    b = indptr[u]
    b_end = indptr[u + 1]
    words = (d + 31) >> 5
    current = a >> 5
    acc = int64(0)
    while a < d and b < b_end:
        x = verts[voff + a]
        y = indices[b]
        if x < y:
            a += 1
        elif x > y:
            b += 1
        else:
            wa = a >> 5
            while current < wa:
                scratch[row_base + current] = acc
                acc = 0
                current += 1
            acc |= int64(1) << (a & 31)
            a += 1
            b += 1
    while current < words:
        scratch[row_base + current] = acc
        acc = 0
        current += 1


def scratch_words(kind: str, k: int, block_size: int, group_size: int, max_out_degree: int) -> int:
    """32-bit words of global scratch one block needs (induced rows + per-group stacks)."""
    r = k - 1 if kind == "vertex" else k - 2
    stride = max((max_out_degree + 31) // 32, 1)
    n_groups = block_size // group_size
    return max_out_degree * stride + n_groups * 2 * max(r - 3, 0) * stride


@cache
def vertex_kernel(k: int, block_size: int, group_size: int, per_vertex: bool):
    r = k - 1
    n_groups = block_size // group_size
    advance = group_search(r, group_size, n_groups, per_vertex)
    stack_buffers = 2 * max(r - 3, 0)

    @kernel_jit
    def kernel(indptr, indices, n, root0, root_step, max_deg, stride, scratch, counter, pv):
        tid = cuda.threadIdx.x
        g = tid // group_size
        lane = tid % group_size
        partial = cuda.shared.array(block_size, int64)
        cursor = cuda.local.array(MAX_LEVELS, int64)
        path = cuda.local.array(MAX_LEVELS, int64)
        flip = cuda.local.array(MAX_LEVELS, int64)
        state = cuda.local.array(3, int64)
        block_words = max_deg * stride + n_groups * stack_buffers * stride
        ibase = int64(cuda.blockIdx.x) * block_words
        sbase = ibase + max_deg * stride + g * stack_buffers * stride
        mine = int64(0)
        item = int64(cuda.blockIdx.x)
        while item < n:
            v = root0 + item * root_step     # root0 0, root_step 1 but in a sampled trial (kclique/trial.py)
            start = indptr[v]
            d = indptr[v + 1] - start
            if d >= r:
                i = tid
                while i < d:
                    build_row(scratch, ibase + i * stride, i, d, indices, start, indptr, indices)
                    i += block_size
                cuda.syncthreads()
                state[LEVEL] = 1
                state[ROOT] = g - n_groups
                state[ACTIVE] = 1
                for t in range(MAX_LEVELS):
                    flip[t] = 0
                while cuda.syncthreads_or(int32(state[ACTIVE])):
                    if state[ACTIVE]:
                        mine += advance(scratch, ibase, stride, d, sbase, state, cursor, path, flip, lane, indices,
                                        start, pv, v, -1)
            item += cuda.gridDim.x
        block_total(partial, tid, mine, counter, block_size)

    return kernel


@cache
def edge_kernel(k: int, block_size: int, group_size: int, per_vertex: bool, cap: int = MAX_OUT_DEGREE):
    r = k - 2
    n_groups = block_size // group_size
    advance = group_search(max(r, 2), group_size, n_groups, per_vertex)
    stack_buffers = 2 * max(r - 3, 0)
    cap_words = (cap + 31) // 32

    @kernel_jit
    def kernel(indptr, indices, sources, m, root0, root_step, max_deg, stride, scratch, counter, pv):
        tid = cuda.threadIdx.x
        g = tid // group_size
        lane = tid % group_size
        partial = cuda.shared.array(block_size, int64)
        common = cuda.shared.array(cap, int32)
        mask = cuda.shared.array(cap_words, uint32)
        cursor = cuda.local.array(MAX_LEVELS, int64)
        path = cuda.local.array(MAX_LEVELS, int64)
        flip = cuda.local.array(MAX_LEVELS, int64)
        state = cuda.local.array(3, int64)
        block_words = max_deg * stride + n_groups * stack_buffers * stride
        ibase = int64(cuda.blockIdx.x) * block_words
        sbase = ibase + max_deg * stride + g * stack_buffers * stride
        mine = int64(0)
        item = int64(cuda.blockIdx.x)
        while item < m:
            e = root0 + item * root_step     # root0 0, root_step 1 but in a sampled trial (kclique/trial.py)
            v = sources[e]
            u = indices[e]
            first = e + 1  # out-neighbours of v after u: only they can be out-neighbours of u
            span = indptr[v + 1] - first
            if span >= r:
                mask_words = (span + 31) >> 5
                i = tid
                while i < mask_words:
                    mask[i] = 0
                    i += block_size
                cuda.syncthreads()
                p = tid
                lo0 = indptr[u]
                hi0 = indptr[u + 1]
                while p < span:
                    x = indices[first + p]
                    lo = lower_bound(indices, lo0, hi0, x)
                    if lo < hi0 and indices[lo] == x:
                        cuda.atomic.or_(mask, p >> 5, uint32(1 << (p & 31)))
                    p += block_size
                cuda.syncthreads()
                c = 0
                for w in range(mask_words):
                    c += cuda.popc(mask[w])
                if c >= r:
                    p = tid
                    while p < span:
                        word = int64(mask[p >> 5])
                        bit = int64(1) << (p & 31)
                        if word & bit:
                            before = cuda.popc(word & (bit - 1))
                            for w in range(p >> 5):
                                before += cuda.popc(mask[w])
                            common[before] = indices[first + p]
                        p += block_size
                    cuda.syncthreads()
                    if r == 1:
                        if tid == 0:
                            mine += c
                        if per_vertex:
                            if tid == 0:
                                cuda.atomic.add(pv, v, c)
                                cuda.atomic.add(pv, u, c)
                            i = tid
                            while i < c:
                                cuda.atomic.add(pv, common[i], 1)
                                i += block_size
                    else:
                        i = tid
                        while i < c:
                            build_row(scratch, ibase + i * stride, i, c, common, 0, indptr, indices)
                            i += block_size
                        cuda.syncthreads()
                        state[LEVEL] = 1
                        state[ROOT] = g - n_groups
                        state[ACTIVE] = 1
                        for t in range(MAX_LEVELS):
                            flip[t] = 0
                        while cuda.syncthreads_or(int32(state[ACTIVE])):
                            if state[ACTIVE]:
                                mine += advance(scratch, ibase, stride, c, sbase, state, cursor, path, flip, lane,
                                                common, 0, pv, v, u)
                # the next edge rewrites mask and common
                cuda.syncthreads()
            item += cuda.gridDim.x
        block_total(partial, tid, mine, counter, block_size)

    return kernel


@cuda.jit(device=True)
def block_total(partial, tid, mine, counter, block_size):
    """Sum the threads' counts in shared memory; one atomic per block."""
    partial[tid] = mine
    cuda.syncthreads()
    s = block_size >> 1
    while s > 0:
        if tid < s:
            partial[tid] += partial[tid + s]
        cuda.syncthreads()
        s >>= 1
    if tid == 0:
        cuda.atomic.add(counter, 0, partial[0])


@kernel_jit
def fill_zero(arr):
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < arr.size:
        arr[i] = 0
        i += step
