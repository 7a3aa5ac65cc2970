"""``gpu-oriented``: degree orientation + shared-memory hash tables, owner-centric, balanced.

On the oriented graph (see :mod:`.orientation`) each triangle ``a → b → c`` with ``a → c``
is found once, from its edge ``a → b``, as a ``c`` in ``N⁺(a) ∩ N⁺(b)``. The edge's *owner*
(the end with more out-neighbours) has its out-list in a hash table in shared memory (open
addressing, multiplicative hash, linear probing, built with ``atomicCAS``, load ≤ ½ and
≤ ¼ when there is room); the *partner*'s out-list is streamed from global memory -
coalesced, ``group_size`` consecutive entries at a time by a group of ``group_size`` threads -
and each entry probed in shared memory: ``min(d⁺a, d⁺b)`` probes per edge, one streamed
global read and one or two shared reads each, no dependent global loads (a binary search
into global lists would make ``log d`` of them).

Load balance on skewed graphs: owners are sorted by ``⌊log₂ work⌋`` (heaviest first) and
processed in *rounds*. In a *light* round each group of the block takes one owner whole
(``block_size / group_size`` owners of similar cost side by side, each with its own slice of
the table); in a *heavy* round the whole block takes one chunk of one owner's partners, its
groups splitting the chunk. An owner whose table would not fit even the whole block's table
(``d⁺ > table/2``, possible only when ``√(2m)`` is that large) is searched by binary search
in its sorted out-list in global memory instead: slower, still correct. Blocks stride over
the rounds (the heavy ones first); every barrier is reached by the whole block in every round.

Sums: each thread counts in a register; a block sums in shared memory and makes one
``atomicAdd``. Per-vertex counts add each triangle at its three corners by atomics.

The simulator runs this very code (shared memory, ``syncthreads``, atomics: no shuffles).
"""

from __future__ import annotations

import time
from functools import cache

import numpy as np
from numba import cuda, int32, int64, types, uint32, uint64

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
from kernels.algorithms.triangles.orientation import oriented_graph, schedule
from kernels.cuda.occupancy import blocks_per_sm
from kernels.cuda.simulator import ORIENTED_TRIANGLE_BLOCKS
from kernels.operators.sorted_search import lower_bound

EMPTY = np.int32(-1)
HASH_MULTIPLIER = 2654435761  # Knuth's multiplicative constant, ⌊2³² / golden ratio⌋
TABLE_SLOTS_PER_THREAD = 16
TABLE_SLOTS_MIN = 1024
TABLE_SLOTS_MAX = 8192        # 32 KiB of int32 keys
# Two slots per probe step and two list entries per lane and step: fewer trips round the
# divergent probe loop (a warp loops while any lane still collides) and two loads in flight
# per lane. Measured side by side on an H100 (benchmarks/diag/triangles_probe_variants.py):
# R-MAT 22 44.3 ms with neither, 39.3 ms with both (regs <= 32, group 32).
PROBE_PAIR = True             # probe two table slots per step (see contains)
ITEMS_PER_STEP = 2            # entries of a partner's list a lane takes per step (1 or 2)


#: the main kernel's argument types (compiled with them in the compile stage)
ORIENTED_ARGS = (ARRAY_I64, ARRAY_I32, ARRAY_I64, ARRAY_I32, ARRAY_I32, ARRAY_I64, ARRAY_I64, types.int64, ARRAY_I32,
                 types.int64, ARRAY_I64)


def table_slots(block_size: int) -> int:
    """Hash-table slots per block (a power of two): proportional to the threads, bounded."""
    return min(max(TABLE_SLOTS_PER_THREAD * block_size, TABLE_SLOTS_MIN), TABLE_SLOTS_MAX)


def resident_blocks_per_sm(block_size: int, table_size: int, registers: int | None) -> int:
    """Blocks of this kernel an SM holds at once (threads, shared memory, registers)."""
    return blocks_per_sm(block_size, table_size * 4 + block_size * 8, registers)


@cache
def oriented_kernel(block_size: int, group_size: int, per_vertex: bool, table_size: int, max_registers: int = 0):
    """The kernel for these launch constants; ``table_size`` slots of shared memory per block,
    of which each of the ``block_size / group_size`` groups gets an equal share in light rounds."""
    groups_per_block = block_size // group_size
    light_size = table_size // groups_per_block

    @cuda.jit(device=True)
    def home_slot(key, shift):
        # the top 32 - shift bits of the low 32 bits of key * multiplier; 32-bit arithmetic
        # (a 64-bit product masked to 32 bits: the compiler narrows it, the simulator's NumPy
        # does not warn about a wrapping uint32 product)
        return uint32(((uint64(uint32(key)) * uint64(HASH_MULTIPLIER)) & 0xFFFFFFFF) >> (shift & 31))

    @cuda.jit(device=True)
    def contains(table, base, c, shift, mask, size, out_idx, start, end):
        """Is ``c`` in the owner's out-list: its hash table (linear probing), or, when the
        table did not fit (``size`` 0), a binary search in the sorted list in global memory."""
        if size:
            s = home_slot(c, shift)
            if PROBE_PAIR:
                # two slots per step: a search ends at the first empty slot of the key's probe
                # path, so an empty slot among the two ends it (and the key cannot lie after it)
                while True:
                    k0 = table[base + s]
                    k1 = table[base + ((s + uint32(1)) & mask)]
                    if k0 == c or k1 == c:
                        return True
                    if k0 == EMPTY or k1 == EMPTY:
                        return False
                    s = uint32((s + uint32(2)) & mask)
            while True:
                k = table[base + s]
                if k == c:
                    return True
                if k == EMPTY:
                    return False
                s = uint32((s + uint32(1)) & mask)
        lo = lower_bound(out_idx, start, end, c)
        return lo < end and out_idx[lo] == c

    # Types, for the instruction count (Nsight Compute on R-MAT 20: the kernel issues at 65 % of
    # the schedulers' peak, so instructions are the cost): numba computes in int64 and wraps
    # negative indices around, which doubles the arithmetic of the probe loop and adds a
    # select to each index. Hence uint32 slots, masks and shifts, unsigned indices into the
    # lists and the table (no wrap-around code), int32 per-round constants (fewer registers
    # under the register cap: no spills in the partner loop).
    @kernel_jit(block_size, max_registers)
    def oriented(out_ptr, out_idx, part_ptr, part_idx, heavy_vertex, heavy_lo, heavy_hi, n_heavy, light, n_light,
                 acc):
        table = cuda.shared.array(table_size, int32)
        sums = cuda.shared.array(block_size, int64)
        tid = int32(cuda.threadIdx.x)
        rounds = n_heavy + (n_light + groups_per_block - 1) // groups_per_block
        for s in range(tid, table_size, block_size):
            table[s] = EMPTY
        cuda.syncthreads()
        mine = int64(0)
        for r in range(cuda.blockIdx.x, rounds, cuda.gridDim.x):
            # -- who takes which owner (and which of its partners) this round
            if r < n_heavy:
                a = heavy_vertex[r]
                first = heavy_lo[r]
                last = heavy_hi[r]
                team = int32(block_size)
                lane_in_team = tid
                base = uint32(0)
                room = int32(table_size)
            else:
                slot = int32(tid // group_size)
                position = (r - n_heavy) * groups_per_block + slot
                a = light[position] if position < n_light else int32(-1)
                first = int64(0)
                last = int64(0)
                if a >= 0:
                    first = part_ptr[uint32(a)]
                    last = part_ptr[uint32(a) + 1]
                team = int32(group_size)
                lane_in_team = int32(tid - slot * group_size)
                base = uint32(slot * light_size)
                room = int32(light_size)
            start = int64(0)
            end = int64(0)
            size = int32(0)
            bits = int32(0)
            # -- build: N+(a) into the table (size 0: too big, search global memory instead)
            if a >= 0:
                start = out_ptr[uint32(a)]
                end = out_ptr[uint32(a) + 1]
                size = int32(1)
                while size < 2 * (end - start):
                    size = int32(size << 1)
                    bits = int32(bits + 1)
                if size * 2 <= room:
                    size = int32(size << 1)
                    bits = int32(bits + 1)
                if size > room:
                    size = int32(0)
                mask = uint32(size - 1)
                shift = uint32(32 - bits)
                for e in range(start + lane_in_team, end if size else start, team):
                    key = out_idx[e]
                    s = home_slot(key, shift)
                    while cuda.atomic.cas(table, base + s, EMPTY, key) != EMPTY:
                        s = uint32((s + uint32(1)) & mask)
            cuda.syncthreads()
            # -- probe: every c of N+(p), p a partner of a, against N+(a)
            if a >= 0:
                mask = uint32(size - 1)
                shift = uint32(32 - bits)
                groups = int32(team // group_size)
                group = int32(lane_in_team // group_size)
                lane = int32(lane_in_team - group * group_size)
                here = int32(0)
                for pe in range(first + group, last, groups):
                    p = uint32(part_idx[pe])
                    found = int32(0)
                    ce = uint64(out_ptr[p] + lane)
                    ce_end = uint64(out_ptr[p + 1])
                    while ce < ce_end:
                        # ITEMS_PER_STEP entries per lane and step: their loads in flight together
                        c = out_idx[ce]
                        c2 = int32(-2)
                        if ITEMS_PER_STEP == 2 and ce + uint64(group_size) < ce_end:
                            c2 = out_idx[ce + uint64(group_size)]
                        if contains(table, base, c, shift, mask, size, out_idx, start, end):
                            found = int32(found + 1)
                            if per_vertex:
                                cuda.atomic.add(acc, 1 + c, 1)
                        if ITEMS_PER_STEP == 2 and c2 != -2 and contains(table, base, c2, shift, mask, size,
                                                                         out_idx, start, end):
                            found = int32(found + 1)
                            if per_vertex:
                                cuda.atomic.add(acc, 1 + c2, 1)
                        ce += uint64(group_size * ITEMS_PER_STEP)
                    if per_vertex and found:
                        cuda.atomic.add(acc, 1 + p, found)
                    here = int32(here + found)
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


PREPROCESS_REPEAT = 3  # timed device preprocessing runs on a GPU (after one warm-up); one on the simulator


class OrientedExecution(CountingExecution):
    """``preprocess=host``: orientation and schedule built on the host (numba, cached per
    input) and uploaded. ``preprocess=gpu``: the undirected CSR is uploaded and
    :mod:`.device_orientation` builds the same arrays on the device in ``preprocess()``,
    timed with CUDA events (perf_counter on the simulator) over a few runs."""

    def __init__(self, problem: Problem, params: dict):
        super().__init__(problem, params)
        self.block_size = int(params["block_size"])
        self.group_size = int(params["group_size"])
        self.mode = params.get("preprocess", "host")
        self.table_size = table_slots(self.block_size)
        self.light_slots = self.table_size // (self.block_size // self.group_size)
        self.registers = None
        self.grid = 0
        self.stats["preprocess"] = self.mode
        if self.mode == "gpu":
            from kernels.algorithms.triangles.device_orientation import MAX_ENTRIES, check_size
            from kernels.errors import ResourceLimitError

            if not check_size(problem.graph.nnz):
                raise ResourceLimitError(f"gpu-oriented: preprocess=gpu takes fewer than {MAX_ENTRIES} adjacency "
                                         f"entries, '{problem.graph.name}' has {problem.graph.nnz}; "
                                         "use --param preprocess=host")
            self.stats["table_slots"] = int(self.table_size)
            return
        self.oriented, cached = oriented_graph(problem)
        t0 = time.perf_counter()
        sched = schedule(self.oriented, self.block_size, self.group_size, self.light_slots)
        schedule_s = time.perf_counter() - t0
        self.n_heavy, self.n_light = len(sched.heavy_vertex), len(sched.light)
        self.schedule = sched
        self.stats.update({
            "preprocess_s": round(self.oriented.seconds + schedule_s, 6),
            "preprocess_timing": "perf_counter (host, numba parallel)",
            "orientation_s": round(self.oriented.seconds, 6),
            "orientation_cached": cached,
            "schedule_s": round(schedule_s, 6),
            "max_out_degree": self.oriented.max_out_degree,
            "probes": self.oriented.total_work,
            "heavy_rounds": int(len(sched.heavy_vertex)),
            "heavy_owners": int(len(np.unique(sched.heavy_vertex))) if len(sched.heavy_vertex) else 0,
            "light_owners": int(len(sched.light)),
            "rounds": int(sched.rounds),
            "table_slots": int(self.table_size),
        })

    def host_arrays(self):
        if self.mode == "gpu":
            g = self.problem.graph
            return {"indptr": g.indptr, "indices": g.indices}
        og, sched = self.oriented, self.schedule
        return {"out_ptr": og.out_ptr, "out_idx": og.out_idx, "part_ptr": og.part_ptr, "part_idx": og.part_idx,
                "heavy_vertex": sched.heavy_vertex, "heavy_lo": sched.heavy_lo, "heavy_hi": sched.heavy_hi,
                "light": sched.light}

    def compile(self) -> None:
        self.kernel = oriented_kernel(self.block_size, self.group_size, self.per_vertex, self.table_size,
                                      int(self.params.get("max_registers", 0)))
        self.registers = precompile(self.kernel, *ORIENTED_ARGS)
        self.compile_accumulator_reset()
        if self.mode == "gpu" and not simulated():
            self._orient_on_device(*_tiny_csr())  # numba compiles the preprocessing kernels at their first launch
        if self.mode == "host":
            self._set_grid(self.schedule.rounds)
        self.stats["registers_per_thread"] = self.registers

    def _set_grid(self, rounds: int) -> None:
        if simulated():
            blocks = ORIENTED_TRIANGLE_BLOCKS  # the simulator runs one Python thread per CUDA thread
        else:  # one wave of resident blocks, each striding over the rounds
            blocks = multiprocessors() * resident_blocks_per_sm(self.block_size, self.table_size, self.registers)
        self.grid = min(rounds, blocks)
        self.stats["grid"] = int(self.grid)

    def _orient_on_device(self, d_indptr, d_indices, n: int, nnz: int):
        from kernels.algorithms.triangles.device_orientation import orient_on_device

        if getattr(self, "workspace", None) is None:
            from kernels.operators.launch import Workspace

            self.workspace = Workspace()
        return orient_on_device(d_indptr, d_indices, n, nnz, self.block_size, self.group_size, self.light_slots,
                                self.workspace)

    def preprocess(self) -> None:
        if self.mode != "gpu":
            return
        from kernels.measure.timing import time_kernel_cuda, time_kernel_simulator

        g = self.problem.graph
        box = {}

        def run() -> None:
            box["oriented"] = self._orient_on_device(self.device["indptr"], self.device["indices"], g.n_rows, g.nnz)

        if simulated():
            timing = time_kernel_simulator(run, cuda.synchronize, 1, 0)
            method = "perf_counter (CUDA simulator: not GPU time)"
        else:
            timing, _ = time_kernel_cuda(run, PREPROCESS_REPEAT, 1)
            method = "cuda events"
        dev = self.oriented_device = box["oriented"]
        self.n_heavy, self.n_light = dev.n_heavy, dev.n_light
        groups = self.block_size // self.group_size
        rounds = self.n_heavy + -(-self.n_light // groups)
        self._set_grid(rounds)
        self.device.update({"out_ptr": dev.out_ptr, "out_idx": dev.out_idx, "part_ptr": dev.part_ptr,
                            "part_idx": dev.part_idx, "heavy_vertex": dev.heavy_vertex, "heavy_lo": dev.heavy_lo,
                            "heavy_hi": dev.heavy_hi, "light": dev.light})
        self.device_bytes += int(sum(a.nbytes for k, a in self.device.items() if k not in ("indptr", "indices")))
        # statistics, read after the timed runs (not part of the preprocessing time)
        out_ptr = dev.out_ptr.copy_to_host()
        heavy_vertex = dev.heavy_vertex.copy_to_host()[:self.n_heavy]
        self.stats.update({
            "preprocess_s": round(timing.median_s, 6),
            "preprocess_min_s": round(timing.min_s, 6),
            "preprocess_samples": len(timing.samples) * timing.launches_per_sample,
            "preprocess_timing": method,
            "preprocess_readbacks": 1,
            "max_out_degree": int(np.diff(out_ptr).max()) if len(out_ptr) > 1 else 0,
            "probes": dev.probes(),
            "heavy_rounds": int(self.n_heavy),
            "heavy_owners": int(len(np.unique(heavy_vertex))),
            "light_owners": int(self.n_light),
            "rounds": int(rounds),
        })

    def launch(self) -> None:
        self.reset_accumulator()
        if self.grid:
            d = self.device
            self.kernel[self.grid, self.block_size, self.stream](
                d["out_ptr"], d["out_idx"], d["part_ptr"], d["part_idx"], d["heavy_vertex"], d["heavy_lo"],
                d["heavy_hi"], self.n_heavy, d["light"], self.n_light, self.d_acc)

    def release(self) -> None:
        super().release()
        if getattr(self, "workspace", None) is not None:
            self.workspace.release()


def _tiny_csr():
    """A triangle with a pendant vertex, on the device, for compiling the preprocessing kernels."""
    indptr = np.array([0, 2, 4, 7, 8], dtype=np.int64)
    indices = np.array([1, 2, 0, 2, 0, 1, 3, 2], dtype=np.int32)
    return cuda.to_device(indptr), cuda.to_device(indices), 4, 8


def make_oriented(problem: Problem, params: dict, target: str) -> OrientedExecution:
    return OrientedExecution(problem, params)


def ptx_kernels(variant):
    """The PTX check's kernels (:mod:`kernels.run.ptx_check`): the counting kernel (total and per
    vertex, with and without a register cap), the accumulator's reset, and the device
    preprocessing (``preprocess=gpu``: orientation, work bins, chunks) for the argument types
    ``orient_on_device`` passes (int64 row pointers, int32 columns)."""
    from kernels.algorithms.triangles import device_orientation as dev
    from kernels.algorithms.triangles.gpu_common import zero_kernel
    from kernels.operators import bin_sort, scan

    out = [(f"triangles gpu-oriented[block={b} group={g}{' per vertex' if pv else ''} registers={r}]",
            oriented_kernel(b, g, pv, table_slots(b), r), ORIENTED_ARGS)
           for b, g, pv, r in ((256, 8, False, 32), (256, 4, True, 0), (128, 32, False, 64))]
    out.append(("triangles accumulator reset", zero_kernel(), (ARRAY_I64,)))
    i32, i64, n = ARRAY_I32, ARRAY_I64, types.int64
    block, ipt = scan.FIRST_LEVEL["cuda"]
    scans = [("keep", dev.keep_load, (i64, i32, i32)), ("partner", dev.partner_load, (i32, i32, i64, i64)),
             ("owned", dev.owned_load, (i64, i64)), ("work", dev.work_load, (i64, i32, i64, n)),
             ("chunk", dev.chunk_load, (i32, i64, i64, i32, n, n))]
    out += [(f"triangles scan[{name}]", scan.scan_pass(load, block, ipt), (types.Tuple(args), n, i64, i64, i64))
            for name, load, args in scans]
    out += [("triangles rows", dev.rows_kernel, (i64, n, n, i32)),
            ("triangles out lists", dev.out_lists_kernel, (i64, i32, n, n, i64, i64, i32)),
            ("triangles partners", dev.partners_kernel, (i64, i32, i32, n, i64, i64, i32, i32)),
            ("triangles keys", dev.keys_kernel, (i64, i64, i64, n, n, n, i64, i32)),
            ("triangles chunks", dev.chunks_kernel, (i32, i64, i64, i32, n, n, n, i64, i32, i64, i64)),
            ("triangles chunk keys", dev.chunk_keys_kernel, (i64, i64, i64, n, i32)),
            ("triangles gather chunks", dev.gather_chunks_kernel, (i32, n, i32, i64, i64, i32, i64, i64)),
            ("bin sort histogram", bin_sort.histogram_kernel(dev.BINS), (i32, n, n, n, i64)),
            ("bin sort scatter", bin_sort.scatter_kernel(dev.BINS), (i32, n, n, n, i64, i32))]
    return out
