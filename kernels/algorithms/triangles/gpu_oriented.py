"""``gpu-oriented``: degree orientation + shared-memory hash tables, vertex-centric, balanced.

On the oriented graph (see :mod:`.orientation`) each triangle ``a → b → c`` with ``a → c``
is found once: at first corner ``a``, for each ``b ∈ N⁺(a)``, each ``c ∈ N⁺(b)`` that is in
``N⁺(a)``. The kernel puts ``N⁺(a)`` in a hash table in shared memory (open addressing,
multiplicative hash, linear probing, load ≤ ½, ≤ ¼ when there is room), then streams the
lists ``N⁺(b)`` from global memory - coalesced, ``group_size`` consecutive entries at a time
by a group of ``group_size`` threads - and probes each entry in shared memory: one global
read and one or two shared reads per probe, no dependent global loads (a binary search
into global lists would make ``log d`` of them).

Load balance on skewed graphs: the vertices that can be a first corner are sorted by
``⌊log₂ work⌋`` (heaviest first), then processed in *rounds*. In a *light* round each group
of a block takes one vertex (``block_size / group_size`` vertices of similar cost side by
side, each with its own slice of the table); in a *heavy* round the whole block takes one
vertex whose table is too big for a group's slice, its groups splitting ``N⁺(a)``. A vertex
whose table would not fit even the whole block's share (``d⁺ > table/2``, possible only when
``√(2m)`` is that large) is searched by binary search in global memory instead: slower,
still correct. Blocks stride over the rounds (the heavy ones first); every barrier is
reached by the whole block in every round.

Sums: each thread counts in a register; a block sums in shared memory and makes one
``atomicAdd``. Per-vertex counts add each triangle at its three corners by atomics.

The simulator runs this very code (shared memory, ``syncthreads``, atomics: no shuffles).
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import cuda, int32, int64, types

from kernels.algorithms.registry import Problem
from kernels.algorithms.triangles.gpu_common import (
    ARRAY_I32,
    ARRAY_I64,
    CountingExecution,
    kernel_jit,
    multiprocessors,
    precompile,
    simulated,
)
from kernels.algorithms.triangles.orientation import OrientedGraph, orient, schedule

EMPTY = np.int32(-1)
HASH_MULTIPLIER = 2654435761  # Knuth's multiplicative constant, ⌊2³² / golden ratio⌋
TABLE_SLOTS_PER_THREAD = 16
TABLE_SLOTS_MIN = 1024
TABLE_SLOTS_MAX = 8192        # 32 KiB of int32 keys: room for 6 blocks per SM on an H100
THREADS_PER_SM = 2048
SHARED_BYTES_PER_SM = 227 * 1024
MAX_BLOCKS_PER_SM = 32


def table_slots(block_size: int) -> int:
    """Hash-table slots per block (a power of two): proportional to the threads, bounded."""
    return min(max(TABLE_SLOTS_PER_THREAD * block_size, TABLE_SLOTS_MIN), TABLE_SLOTS_MAX)


def resident_blocks_per_sm(block_size: int, table_size: int) -> int:
    shared_bytes = table_size * 4 + block_size * 8
    return max(1, min(THREADS_PER_SM // block_size, MAX_BLOCKS_PER_SM, SHARED_BYTES_PER_SM // shared_bytes))


@cache
def oriented_kernel(block_size: int, group_size: int, per_vertex: bool, table_size: int):
    """The kernel for these launch constants; ``table_size`` slots of shared memory per block,
    of which each of the ``block_size / group_size`` groups gets an equal share in light rounds."""
    groups_per_block = block_size // group_size
    light_size = table_size // groups_per_block

    @cuda.jit(device=True)
    def home_slot(key, bits):
        # the top ``bits`` of the low 32 bits of key * multiplier
        return ((int64(key) * HASH_MULTIPLIER) & 0xFFFFFFFF) >> (32 - bits)

    @kernel_jit(block_size)
    def oriented(out_ptr, out_idx, heavy, n_heavy, light, n_light, acc):
        table = cuda.shared.array(table_size, int32)
        sums = cuda.shared.array(block_size, int64)
        tid = cuda.threadIdx.x
        rounds = n_heavy + (n_light + groups_per_block - 1) // groups_per_block
        for s in range(tid, table_size, block_size):
            table[s] = EMPTY
        cuda.syncthreads()
        mine = 0
        for r in range(cuda.blockIdx.x, rounds, cuda.gridDim.x):
            # -- who takes which vertex this round
            if r < n_heavy:
                a = heavy[r]
                team = block_size
                lane_in_team = tid
                base = 0
                room = table_size
            else:
                slot = tid // group_size
                position = (r - n_heavy) * groups_per_block + slot
                a = light[position] if position < n_light else -1
                team = group_size
                lane_in_team = tid - slot * group_size
                base = slot * light_size
                room = light_size
            start = 0
            end = 0
            size = 0
            bits = 0
            # -- build: N+(a) into the table (size 0: too big, search global memory instead)
            if a >= 0:
                start = out_ptr[a]
                end = out_ptr[a + 1]
                size = 1
                while size < 2 * (end - start):
                    size <<= 1
                    bits += 1
                if size * 2 <= room:
                    size <<= 1
                    bits += 1
                if size > room:
                    size = 0
                for e in range(start + lane_in_team, end if size else start, team):
                    key = out_idx[e]
                    s = home_slot(key, bits)
                    while cuda.atomic.cas(table, base + s, EMPTY, key) != EMPTY:
                        s = (s + 1) & (size - 1)
            cuda.syncthreads()
            # -- probe: every c of N+(b), b in N+(a), against N+(a)
            if a >= 0:
                groups = team // group_size
                group = lane_in_team // group_size
                lane = lane_in_team - group * group_size
                here = 0
                for be in range(start + group, end, groups):
                    b = out_idx[be]
                    found = 0
                    for ce in range(out_ptr[b] + lane, out_ptr[b + 1], group_size):
                        c = out_idx[ce]
                        hit = False
                        if size:
                            s = home_slot(c, bits)
                            while True:
                                k = table[base + s]
                                if k == c:
                                    hit = True
                                    break
                                if k == EMPTY:
                                    break
                                s = (s + 1) & (size - 1)
                        else:
                            lo = start
                            hi = end
                            while lo < hi:
                                mid = (lo + hi) >> 1
                                if out_idx[mid] < c:
                                    lo = mid + 1
                                else:
                                    hi = mid
                            hit = lo < end and out_idx[lo] == c
                        if hit:
                            found += 1
                            if per_vertex:
                                cuda.atomic.add(acc, 1 + c, 1)
                    if per_vertex and found:
                        cuda.atomic.add(acc, 1 + b, found)
                    here += found
                if per_vertex and here:
                    cuda.atomic.add(acc, 1 + a, here)
                mine += here
            cuda.syncthreads()
            # -- clear what this round used, before the next round builds
            if a >= 0 and size:
                for s in range(lane_in_team, size, team):
                    table[base + s] = EMPTY
            cuda.syncthreads()
        # -- one atomicAdd per block
        sums[tid] = mine
        cuda.syncthreads()
        stride = block_size // 2
        while stride > 0:
            if tid < stride:
                sums[tid] += sums[tid + stride]
            cuda.syncthreads()
            stride //= 2
        if tid == 0 and sums[0]:
            cuda.atomic.add(acc, 0, sums[0])

    return oriented


def oriented_graph(problem: Problem) -> tuple[OrientedGraph, bool]:
    """The input's oriented graph, built once per input (cached with the prepared input)."""
    derived = problem.data["derived"]
    cached = "oriented" in derived
    if not cached:
        g = problem.graph
        derived["oriented"] = orient(g.indptr, g.indices)
    return derived["oriented"], cached


class OrientedExecution(CountingExecution):
    def __init__(self, problem: Problem, params: dict):
        super().__init__(problem, params)
        self.block_size = int(params["block_size"])
        self.group_size = int(params["group_size"])
        self.oriented, cached = oriented_graph(problem)
        groups = self.block_size // self.group_size
        self.table_size = table_slots(self.block_size)
        self.schedule = schedule(self.oriented, self.table_size // groups, groups)
        if simulated():
            blocks = 2  # the simulator runs one Python thread per CUDA thread
        else:
            blocks = multiprocessors() * resident_blocks_per_sm(self.block_size, self.table_size)
        self.grid = min(self.schedule.rounds, blocks)
        self.stats.update({
            "preprocess_s": round(self.oriented.seconds, 6),
            "preprocess_cached": cached,
            "max_out_degree": self.oriented.max_out_degree,
            "probes": self.oriented.total_work,
            "heavy_vertices": int(len(self.schedule.heavy)),
            "light_vertices": int(len(self.schedule.light)),
            "rounds": int(self.schedule.rounds),
            "table_slots": int(self.table_size),
            "grid": int(self.grid),
        })

    def host_arrays(self):
        return {"out_ptr": self.oriented.out_ptr, "out_idx": self.oriented.out_idx,
                "heavy": self.schedule.heavy, "light": self.schedule.light}

    def compile(self) -> None:
        self.kernel = oriented_kernel(self.block_size, self.group_size, self.per_vertex, self.table_size)
        precompile(self.kernel, ARRAY_I64, ARRAY_I32, ARRAY_I32, types.int64, ARRAY_I32, types.int64, ARRAY_I64)
        self.compile_accumulator_reset()

    def launch(self) -> None:
        self.reset_accumulator()
        if self.grid:
            d = self.device
            self.kernel[self.grid, self.block_size](d["out_ptr"], d["out_idx"], d["heavy"], len(self.schedule.heavy),
                                                   d["light"], len(self.schedule.light), self.d_acc)


def make_oriented(problem: Problem, params: dict, target: str) -> OrientedExecution:
    return OrientedExecution(problem, params)
