"""``gpu-oriented``'s preprocessing on the device: from the undirected CSR already on the GPU
to the arrays the counting kernel reads - the same arrays, in the same order, as the host's
:mod:`.orientation` (``orient`` + ``schedule``), element for element.

Every step is order-preserving without any intra-warp cooperation, so the CUDA simulator
runs the very same code. The trick is to do each per-row filter *per entry*: a flag per CSR
entry, an exclusive scan over all entries (:mod:`kernels.operators.scan`), and a scatter
to the scanned position. Rows are concatenated in order and each row is sorted, so a global
stable compaction keeps every out-list sorted by id, and no thread ever walks a hub's row.

1. ``rows[e]``: the row of each CSR entry (one group of threads per row writes it).
2. ``keep(e)`` = ``(deg b, b) > (deg v, v)`` for entry ``v → b``; scan → ``skeep``;
   ``out_ptr[v] = skeep[indptr[v]]``, ``out_idx[skeep[e]] = b`` where kept. ``m`` is known
   (each undirected edge is kept once), so nothing is read back.
3. Partner flags per entry, both kinds in one int64 scan (out-partners in the low 32 bits,
   in-partners in the high ones): entry ``v → b`` kept with ``0 < d⁺b ≤ d⁺v`` makes ``b`` an
   out-partner of ``v``; entry ``v – a`` not kept (so ``a → v``) with ``d⁺v > d⁺a`` makes
   ``a`` an in-partner of ``v``. Row ``v`` of the undirected CSR is sorted, so its
   in-partners come out in increasing id, as the host's serial scatter by target writes
   them. ``part_ptr`` = a scan over vertices of the two counts; a scatter writes
   ``part_idx`` (out-partners first, then in-partners) and ``owner`` (who owns each entry).
4. ``W`` = exclusive scan over partner entries of ``d⁺(partner)``; ``work(v)`` is a
   difference of ``W``, and so is every chunk's work.
5. Light owners: key ``63 − ⌊log₂ work⌋`` for the light ones, a stable counting sort
   (:mod:`kernels.operators.bin_sort`) → ``light`` in the host's order.
6. Heavy owners' chunks: partner entry ``i`` of heavy owner ``o`` starts a chunk when it is
   the first of ``o``'s or ``⌊(W[i] − W[start])/L⌋`` differs from its predecessor's
   (``L = HEAVY_PROBES_PER_LANE × block_size``); a scan numbers the chunks (owner id order,
   then partner order); a scatter writes each chunk's owner, ``lo`` and ``hi``; a stable
   counting sort by ``63 − ⌊log₂ chunk work⌋`` gives the heavy rounds' order.

**Read back to the host: once**, two int64 counters after step 6's scan - the number of
chunks (to allocate the chunk arrays; it is also the kernel's ``n_heavy``) and the number
of light owners (the kernel's ``n_light``). Scratch lives in a :class:`Workspace`, so a
repeated run allocates nothing new. Limits: fewer than 2³¹ CSR entries (the packed scan);
the caller checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import cuda, int32, int64

from kernels.algorithms.triangles import orientation
from kernels.cuda.jit import jit as kernel_jit
from kernels.operators.bin_sort import stable_bin_sort
from kernels.operators.launch import Workspace, for_target, grid_for, on_simulator
from kernels.operators.scan import exclusive_scan

LOW = 0xFFFFFFFF
HIGH_ONE = 1 << 32
BINS = 64                       # ⌊log₂ work⌋ ≤ 62 for int64 work
NO_WORK, HEAVY = -1, -2         # vertex keys that are not light bins
MAX_ENTRIES = 1 << 31           # the packed partner scan keeps each count in 32 bits
ROW_GROUP = {"cuda": 32, "sim": 4}
BLOCK = {"cuda": 256, "sim": 16}


SIM_SCAN_SHAPE = (16, 16)       # longer scan chunks on the simulator: fewer simulated barriers



def _scan(load, args, n: int, out, total, ws: Workspace) -> None:
    exclusive_scan(load, args, n, out, total, ws, shape=SIM_SCAN_SHAPE if on_simulator() else None)


# ---- device functions --------------------------------------------------------------------

@cuda.jit(device=True)
def floor_log2(w):
    """⌊log₂ w⌋ for w ≥ 1 (a loop: the simulator's clz is 32-bit only)."""
    b = 0
    x = int64(w)
    while x > 1:
        x >>= 1
        b += 1
    return b


@cuda.jit(device=True)
def above(indptr, b, v):
    """Whether ``(deg b, b) > (deg v, v)``: the orientation's order."""
    db = indptr[b + 1] - indptr[b]
    dv = indptr[v + 1] - indptr[v]
    return db > dv or (db == dv and b > v)


@cuda.jit(device=True)
def keep_load(e, args):
    """Scan load over CSR entries: 1 when entry ``e`` is an out-edge. ``args = (indptr, indices, rows)``."""
    return int64(1) if above(args[0], args[1][e], args[2][e]) else int64(0)


@cuda.jit(device=True)
def partner_load(e, args):
    """Scan load over CSR entries: 1 for an out-partner, 2³² for an in-partner, else 0.
    ``args = (indices, rows, skeep, out_ptr)``."""
    indices, rows, skeep, out_ptr = args[0], args[1], args[2], args[3]
    v = rows[e]
    x = indices[e]
    dv = out_ptr[v + 1] - out_ptr[v]
    dx = out_ptr[x + 1] - out_ptr[x]
    if skeep[e + 1] - skeep[e] == 1:        # v → x: x partners v when 0 < d⁺x ≤ d⁺v
        return int64(1) if 0 < dx <= dv else int64(0)
    return int64(HIGH_ONE) if dv > dx else int64(0)  # x → v, owned by the target v


@cuda.jit(device=True)
def owned_load(v, args):
    """Scan load over vertices: partners of ``v`` (both kinds). ``args = (indptr, spart)``."""
    d = args[1][args[0][v + 1]] - args[1][args[0][v]]
    return (d & LOW) + (d >> 32)


@cuda.jit(device=True)
def work_load(i, args):
    """Scan load over partner entries: ``d⁺`` of the partner. ``args = (out_ptr, part_idx, part_ptr, n)``."""
    if i >= args[2][args[3]]:
        return int64(0)
    p = args[1][i]
    return int64(args[0][p + 1] - args[0][p])


@cuda.jit(device=True)
def chunk_start(i, owner, part_ptr, w, key, total, limit):
    """Whether partner entry ``i`` starts a chunk of a heavy owner."""
    if i >= total:
        return False
    o = owner[i]
    if key[o] != HEAVY:
        return False
    s = part_ptr[o]
    if i == s:
        return True
    base = w[s]
    return (w[i] - base) // limit != (w[i - 1] - base) // limit


@cuda.jit(device=True)
def chunk_load(i, args):
    """Scan load over partner entries. ``args = (owner, part_ptr, W, key, n, limit)``."""
    part_ptr = args[1]
    return int64(1) if chunk_start(i, args[0], part_ptr, args[2], args[3], part_ptr[args[4]], args[5]) else int64(0)


# ---- kernels -----------------------------------------------------------------------------

@kernel_jit
def rows_kernel(indptr, n, group, rows):
    lane = cuda.grid(1) % group
    for v in range(cuda.grid(1) // group, n, cuda.gridsize(1) // group):
        for e in range(indptr[v] + lane, indptr[v + 1], group):
            rows[e] = v


@kernel_jit
def out_lists_kernel(indptr, indices, n, nnz, skeep, out_ptr, out_idx):
    for e in range(cuda.grid(1), nnz, cuda.gridsize(1)):
        if skeep[e + 1] - skeep[e] == 1:
            out_idx[skeep[e]] = indices[e]
    for v in range(cuda.grid(1), n + 1, cuda.gridsize(1)):
        out_ptr[v] = skeep[indptr[v]]


@kernel_jit
def partners_kernel(indptr, indices, rows, nnz, spart, part_ptr, part_idx, owner):
    for e in range(cuda.grid(1), nnz, cuda.gridsize(1)):
        kind = spart[e + 1] - spart[e]
        if kind == 0:
            continue
        v = rows[e]
        start = spart[indptr[v]]
        if kind == 1:
            pos = part_ptr[v] + ((spart[e] & LOW) - (start & LOW))
        else:
            pos = part_ptr[v] + ((spart[indptr[v + 1]] & LOW) - (start & LOW)) + ((spart[e] >> 32) - (start >> 32))
        part_idx[pos] = indices[e]
        owner[pos] = v


@kernel_jit
def keys_kernel(out_ptr, part_ptr, w, n, light_slots, light_work, work, key):
    for v in range(cuda.grid(1), n, cuda.gridsize(1)):
        wv = w[part_ptr[v + 1]] - w[part_ptr[v]]
        work[v] = wv
        if wv == 0:
            key[v] = NO_WORK
            continue
        d = max(out_ptr[v + 1] - out_ptr[v], 1)
        size = int64(1)
        while size < 2 * d:            # orientation.table_size: smallest power of two ≥ 2 d⁺
            size <<= 1
        if size <= light_slots and wv <= light_work:
            key[v] = int32(BINS - 1 - floor_log2(wv))
        else:
            key[v] = HEAVY


@kernel_jit
def chunks_kernel(owner, part_ptr, w, key, n, limit, m, schunk, vertex, lo, hi):
    total = part_ptr[n]
    for i in range(cuda.grid(1), min(m, total), cuda.gridsize(1)):
        o = owner[i]
        if key[o] != HEAVY:
            continue
        starts = chunk_start(i, owner, part_ptr, w, key, total, limit)
        c = schunk[i] - 1 + (1 if starts else 0)   # the chunk entry i belongs to
        if starts:
            vertex[c] = o
            lo[c] = i
        if i + 1 == part_ptr[o + 1] or chunk_start(i + 1, owner, part_ptr, w, key, total, limit):
            hi[c] = i + 1


@kernel_jit
def chunk_keys_kernel(lo, hi, w, count, key):
    for c in range(cuda.grid(1), count, cuda.gridsize(1)):
        key[c] = int32(BINS - 1 - floor_log2(max(w[hi[c]] - w[lo[c]], 1)))


@kernel_jit
def gather_chunks_kernel(order, count, vertex, lo, hi, out_vertex, out_lo, out_hi):
    for k in range(cuda.grid(1), count, cuda.gridsize(1)):
        c = order[k]
        out_vertex[k] = vertex[c]
        out_lo[k] = lo[c]
        out_hi[k] = hi[c]


# ---- the pipeline ------------------------------------------------------------------------

@dataclass
class DeviceOriented:
    """What the counting kernel reads (device arrays; each at least one element long), plus
    the two counts read back."""
    out_ptr: object
    out_idx: object
    part_ptr: object
    part_idx: object
    work: object
    light: object           # the first n_light entries are the light owners
    heavy_vertex: object    # the first n_heavy entries of these three are the heavy rounds
    heavy_lo: object
    heavy_hi: object
    w: object               # W: the work prefix over partner entries (probes in w[m])
    n_light: int
    n_heavy: int
    m: int

    def to_host(self) -> dict[str, np.ndarray]:
        """Copies of the arrays, cut to their lengths (for tests and statistics; not timed)."""
        out_ptr = self.out_ptr.copy_to_host()
        part_ptr = self.part_ptr.copy_to_host()
        return {"out_ptr": out_ptr, "out_idx": self.out_idx.copy_to_host()[:self.m],
                "part_ptr": part_ptr, "part_idx": self.part_idx.copy_to_host()[:int(part_ptr[-1])],
                "work": self.work.copy_to_host()[:len(out_ptr) - 1], "light": self.light.copy_to_host()[:self.n_light],
                "heavy_vertex": self.heavy_vertex.copy_to_host()[:self.n_heavy],
                "heavy_lo": self.heavy_lo.copy_to_host()[:self.n_heavy],
                "heavy_hi": self.heavy_hi.copy_to_host()[:self.n_heavy]}

    def probes(self) -> int:
        return int(self.w[self.m:self.m + 1].copy_to_host()[0])


def check_size(nnz: int) -> bool:
    """Whether the device preprocessing takes a CSR of ``nnz`` entries (see the module's docstring)."""
    return int(nnz) < MAX_ENTRIES


def orient_on_device(d_indptr, d_indices, n: int, nnz: int, block_size: int, group_size: int,
                     light_table_slots: int, ws: Workspace) -> DeviceOriented:
    """Run steps 1-6 on the device CSR (``d_indptr`` int64 ``n + 1``, ``d_indices`` int32
    ``nnz``, a simple undirected graph). The schedule's limits are read from
    :mod:`.orientation` at each call (tests shrink them)."""
    n, nnz = int(n), int(nnz)
    m = nnz // 2
    block = for_target(BLOCK)
    group = for_target(ROW_GROUP)
    entries = grid_for(nnz, block)
    vertices = grid_for(n + 1, block)

    def buf(name, dtype, size):
        # a workspace buffer (reused by the next run), cut to its length (at least 1)
        return ws.get(name, dtype, size)[:max(int(size), 1)]

    rows = buf("tri.rows", np.int32, nnz)
    rows_kernel[grid_for(n * group, block), block](d_indptr, n, group, rows)

    skeep = buf("tri.skeep", np.int64, nnz + 1)   # W reuses it later (m + 1 ≤ nnz + 1)
    _scan(keep_load, (d_indptr, d_indices, rows), nnz, skeep, skeep[nnz:nnz + 1], ws)
    out_ptr = buf("tri.out_ptr", np.int64, n + 1)
    out_idx = buf("tri.out_idx", np.int32, m)
    out_lists_kernel[max(entries, vertices), block](d_indptr, d_indices, n, nnz, skeep, out_ptr, out_idx)

    spart = buf("tri.spart", np.int64, nnz + 1)   # the chunk scan reuses it later
    _scan(partner_load, (d_indices, rows, skeep, out_ptr), nnz, spart, spart[nnz:nnz + 1], ws)
    part_ptr = buf("tri.part_ptr", np.int64, n + 1)
    _scan(owned_load, (d_indptr, spart), n, part_ptr, part_ptr[n:n + 1], ws)
    part_idx = buf("tri.part_idx", np.int32, m)
    owner = buf("tri.owner", np.int32, m)
    partners_kernel[entries, block](d_indptr, d_indices, rows, nnz, spart, part_ptr, part_idx, owner)

    w = skeep                                         # the work prefix over partner entries
    _scan(work_load, (out_ptr, part_idx, part_ptr, n), m, w, w[m:m + 1], ws)
    work = buf("tri.work", np.int64, n)
    key = buf("tri.key", np.int32, n)
    light_work = orientation.LIGHT_PROBES_PER_LANE * group_size
    keys_kernel[vertices, block](out_ptr, part_ptr, w, n, light_table_slots, light_work, work, key)
    counters = buf("tri.counters", np.int64, 2)
    light = buf("tri.light", np.int32, n)
    stable_bin_sort(key, n, BINS, light, counters[1:2], ws, name="tri.light_sort")

    limit = orientation.HEAVY_PROBES_PER_LANE * block_size
    schunk = spart
    _scan(chunk_load, (owner, part_ptr, w, key, n, limit), m, schunk, counters[0:1], ws)
    n_heavy, n_light = (int(x) for x in counters.copy_to_host()[:2])   # the one read-back

    vertex = buf("tri.chunk_vertex", np.int32, n_heavy)
    lo = buf("tri.chunk_lo", np.int64, n_heavy)
    hi = buf("tri.chunk_hi", np.int64, n_heavy)
    chunks_kernel[grid_for(m, block), block](owner, part_ptr, w, key, n, limit, m, schunk, vertex, lo, hi)
    chunk_key = buf("tri.chunk_key", np.int32, n_heavy)
    chunk_keys_kernel[grid_for(n_heavy, block), block](lo, hi, w, n_heavy, chunk_key)
    order = buf("tri.chunk_order", np.int32, n_heavy)
    stable_bin_sort(chunk_key, n_heavy, BINS, order, buf("tri.chunk_total", np.int64, 1), ws,
                    name="tri.chunk_sort")
    heavy_vertex = buf("tri.heavy_vertex", np.int32, n_heavy)
    heavy_lo = buf("tri.heavy_lo", np.int64, n_heavy)
    heavy_hi = buf("tri.heavy_hi", np.int64, n_heavy)
    gather_chunks_kernel[grid_for(n_heavy, block), block](order, n_heavy, vertex, lo, hi,
                                                          heavy_vertex, heavy_lo, heavy_hi)
    return DeviceOriented(out_ptr, out_idx, part_ptr, part_idx, work, light, heavy_vertex, heavy_lo, heavy_hi, w,
                          n_light, n_heavy, m)
