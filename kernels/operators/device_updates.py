"""Batch edge updates applied by CUDA kernels to a :class:`~kernels.graph.device.DeviceMirror`'s
pages, then replayed on the host structure and checked, page for page.

The device writes exactly the words the host path (:mod:`kernels.graph.slotted.batch_host`)
writes: both run the functions of :mod:`kernels.graph.slotted.batch_core`, here compiled as
device functions. The rules (what is refused, in which order) are
:mod:`kernels.graph.slotted.batch_rules`'; docs/updates.md describes the design.

Batches of at most ``COMPACT_MAX_ENTRIES`` adjacency entries take the compact path
(:meth:`DeviceUpdater._apply_compact`): grouped by source on the host (compiled; threaded from 8,192 entries), one
upload, then one cooperative launch whose phases (``fused_c``, grid syncs between them) are
sized by the batch's touched vertices and units, and one read-back (``COMPACT_FUSED``; the split
form: six launches, seven with weight changes, one read-back before writing and one after); the
passes over the whole graph are the index shift and, after writing, the mirror's vertex
directory: patched by the fused launch (the pages written, and a look at every column for the
large lists), rebuilt by the split launches (every id and page: 37-133 us on the graphs of
docs/benchmarks.md).
Larger batches take the full-graph path (:meth:`DeviceUpdater._apply_full`), no per-edge host
work and one read-back before anything is written:

1. ``expand``: one warp per adjacency entry (an undirected edge gives two): the endpoints are
   located (binary search of the index, then of the page's slots: a removed id is absent), the
   entry's old list position found, a key made, the entry counted for its source (atomics); an
   entry on a list longer than ``FULL_LONG_LIST`` goes into a table of pairs instead, and
   ``long_scan`` reads each such list once for all the batch's entries on it;
2. a prefix sum of the per-source counts (deletions, insertions, weight changes side by side)
   and a scatter group the entries by source; each source's group is sorted by its key (one
   thread per source, shell sort: groups are small on random batches);
3. ``check``: duplicates are neighbours; absent deletions, present insertions and invalid
   weight changes are found; the smallest failing batch position per rule by atomic min;
4. ``plan``: touched units, pages each becomes (``pack``), five prefix sums over the index
   columns (new column, output page, page opened, page freed, scratch page);
5. one small read-back: the failures and the totals. A refusal stops here, nothing written;
6. old pages of touched units copied to scratch (one block per page), output pages described
   (``pack`` again, writing), physical pages chosen (the unit's own, then the free stack's
   top, then new pages past the high-water mark), pages written (one warp per page),
   pages no longer needed zeroed, the index rewritten into a second buffer, weights changed.

Kernels are compiled once per weight dtype (numba's lazy dispatch; sizes are arguments) and
go through :func:`kernels.cuda.jit.jit`, so the disk cache serves them to later processes.
"""

from __future__ import annotations

import functools
import time
from collections import deque
from dataclasses import dataclass
from itertools import compress
from operator import is_not

import numpy as np

from kernels.cuda.fast_launch import FastKernel, LaunchOwner
from kernels.cuda.warp import WARP as WARP_LANES
from kernels.graph.slotted import batch_host, batch_rules
from kernels.graph.slotted.batch_core import DESC_ROWS
from kernels.measure.targets import simulator_enabled

NO_FAILURE = batch_rules.NO_FAILURE
#: ``unit_key`` of an id without a slot (never a page number or a large list's handle)
ABSENT = -(1 << 62)
#: ``info``: five failure slots, the totals (new page count, pages out, opened, freed, scratch), the
#: fused launch's verdict (0 written, 1 refused, 2 a buffer too small: the split launches finish),
#: then its ``globaltimer`` stamps: block 0 at its start and after each grid sync, and the last
#: block's end (an atomic max)
VERDICT = 10
FUSED_PHASES = ("front", "long lists", "sort", "check", "scan", "copy", "write", "directory clear", "end")
STAMPS = VERDICT + 1
END = len(FUSED_PHASES)
LONG_ENTRIES = STAMPS + 1 + len(FUSED_PHASES)      # entries left to ``expand_long``
INFO_WORDS = LONG_ENTRIES + 1
#: in the fused launch, an entry whose source list is longer than this is not searched by its warp
#: in the front phase but by the grid after it (``expand_long``)
LONG_LIST = 1024
#: ``long_list``'s words for each such entry (the full path's ``long_scan``: each such source):
#: the entry (the source), its large list's first column or -1 for a list within a page, the pool
#: word of its first entry (a list within a page) or 0, the list's length, and its first
#: page-chunk's number among all deferred entries' chunks
LONG_WORDS = 5
#: ``long_count[0]`` packs the deferred entries (above this bit) and their page-chunks (below), so
#: one atomic add gives an entry both its place and a contiguous run of chunk numbers, in order
LONG_SHIFT = 40
#: the warps ``expand_long`` divides the chunks among (0: the grid's own); a test sets more than
#: the simulator's one warp, so that the ranges and their entry search are exercised there
LONG_SPLIT = 0
#: in the full-graph path, an entry whose source list is longer than this is not searched by its
#: warp in ``expand``: its pair goes into a table and ``long_scan`` reads each such list once for
#: all the batch's entries on it (docs/updates.md; 1024, 128, 32 and 8 measured side by side on an
#: H200: the same ``expand`` time, the least ``long_scan`` time at 1024)
FULL_LONG_LIST = 1024
#: the full path's ``expand`` finds an entry's endpoints and list through the mirror's vertex
#: directory (two reads) instead of ``locate`` (a binary search of the index, then of the page's
#: slots: about 26 dependent reads; ``False``, the former way, for a side-by-side run). H200,
#: R-MAT 20, one process: ``expand`` 4.88 -> 1.11 ms of a 10^6-edge batch, 0.60 -> 0.21 ms of
#: 10^5 (docs/updates.md)
EXPAND_BY_DIRECTORY = True
#: the full path writes a page a warp (``True``) or a page a block (``False``, the former way,
#: for a side-by-side run): a page's vertices are written one after another, so a block's lanes
#: mostly waited
WRITE_BY_WARP = True
#: the full path sorts a source's group of at most this many entries by one thread
#: (``sort_small_groups``) and a larger one by a block (``sort_big_groups``); a huge value keeps
#: every group on a thread, the former way, for a side-by-side run
SORT_THREAD_MAX = 32
#: the compact path's front phase finds the entries' endpoints and lists, and the touched sources'
#: units, through the mirror's vertex directory (``False``: ``locate``, the former way, for a
#: side-by-side run; a directory too short for the batch's ids is not used either way)
FRONT_BY_DIRECTORY = True
#: the fused compact kernel scans its per-unit columns with the whole grid (``False``: one block,
#: the former way, for a side-by-side run; the split launches' scan is one block either way)
SCAN_BY_GRID = True
#: the fused compact launch brings the vertex directory up to date by patching the entries the batch
#: changed (``dir_patch``) where it was current at the batch's start, instead of rebuilding it
#: (``False``: the rebuild, the former way, for a side-by-side run)
DIRECTORY_PATCH = True
#: the fused kernel's ``refresh`` argument: what it does to the vertex directory after writing
REFRESH_NONE, REFRESH_REBUILD, REFRESH_PATCH = 0, 1, 2
#: resident blocks a multiprocessor can hold, at most (32 on every CUDA architecture; fewer on some):
#: the fused grid scan's block sums are sized by it
MAX_BLOCKS_PER_SM = 32
#: the compact path as one cooperative launch (``False``: the split launches, for a side-by-side
#: comparison; the simulator runs the cooperative kernel as one block)
COMPACT_FUSED = True
# The fused launch's copy and write phases in their warp forms (kernels.operators.warp_pages:
# reads kept in flight instead of one dependent chain a page), a bit each: a kernel argument,
# so that a diagnostic can compare them in one process (0: batch_core's forms)
PASS_COPY, PASS_DESCRIBE, PASS_WRITE = 1, 2, 4
WARP_PASSES = PASS_COPY | PASS_DESCRIBE | PASS_WRITE
#: the most blocks of the fused launch (None: every block the device keeps resident with it); a grid
#: sync costs more the more blocks wait at it (benchmarks/diag/fused_batch.py measures both)
FUSED_MAX_BLOCKS = None
#: a register cap for the fused kernel (None: the compiler's choice, 136 on an H200: one block of 256
#: a multiprocessor); 128 keeps two resident (benchmarks/diag/fused_batch.py: the phases 10-30 % faster)
FUSED_MAX_REGISTERS = 128
#: written pages read back with the fused launch's verdict (more: a second read-back). 8,192: a
#: mixed 10^3-edge batch on R-MAT 22 writes about 5,000 (hubs' large lists rewritten); side by side
#: in one process on an H200 it took 1.147 / 1.139 ms with 4,096 and 1.126 / 1.096 ms with 8,192
#: (mixed / inverse, medians of 15; benchmarks/results/updates/host-grouping/5-final/); the larger
#: read costs every batch 32 KB more of one copy
FUSED_PAGES_READ = 8192
#: the fused launch's scratch and description buffers: what the largest batch so far needed, times this
ROOM_GROWTH = 1.5
HISTORY = 64                     # batch results an updater keeps (a live replica applies many)
SORT_GAPS = (1, 4, 13, 40, 121, 364, 1093, 3280, 9841, 29524)
BLOCK = {"cuda": 256, "sim": 16}
PAGE_BLOCK = {"cuda": 128, "sim": 8}
#: kernels with a warp per entry (the list search): one warp per block on the simulator, whose
#: ballot exchanges through the block
WARP_BLOCK = {"cuda": 256, "sim": 32}
SCAN_BLOCK = {"cuda": 1024, "sim": 16}
#: the most adjacency entries (an undirected edge gives two) the compact path can take
COMPACT_LIMIT_ENTRIES = 1 << 15
#: batches of at most this many entries take the compact path (grouped on the host, work sized by
#: the batch); larger ones the full-graph path. Measured side by side on an H200 (one process each,
#: benchmarks/diag/device_update_phases.py; docs/updates.md) once the host grouping ran threaded
#: (2026-11-29): compact over full 0.64 / 0.78 / 1.12 / 0.79 at 10,000 / 20,000 / 30,000 / 40,000
#: edges on R-MAT 20 (inserts and deletes), 0.96 / 1.10 / 1.19 at 20,000 / 30,000 / 40,000 on the
#: Delaunay graph, 0.93 / 1.11 / 1.35 at 15,000 / 20,000 / 30,000 for R-MAT 20's mixed batches (a
#: hub's deletions gather in one group); so compact up to 15,000 edges (10,000 before, with the
#: single-threaded grouping; 2^12 entries when the front searched by ``locate``). Counted in
#: adjacency entries, the unit both paths' work grows with; measured on undirected batches (two
#: entries an edge): directed batches of 15,000-30,000 edges were not measured
COMPACT_MAX_ENTRIES = 30_000
#: the compact path's host grouping takes a thread (numba's) for every this many adjacency entries,
#: up to numba's thread count; under two such chunks it runs its serial passes (a parallel region
#: costs tens of microseconds to open, a 1,000-edge batch's whole grouping 50-70 µs on an H200 host)
GROUP_CHUNK_ENTRIES = 4096

_ZERO = np.zeros(1, dtype=np.int64)
#: the fused launch's uploaded buffer starts with the batch's sizes (what changes every batch is
#: read by the kernel, not passed: its other arguments stay the same objects from batch to batch,
#: so a launch rewrites only the two index buffers' words, ``FastKernel.launch_known``):
#: touched sources, entries, pages, ids + 1, the free stack's last index, free pages, pages in use,
#: free pages uploaded. Then the touched sources, the entries' sources and targets, the group starts,
#: the tags, the five failure slots, the long-list count, the limits and the free stack's top.
HEADER = ("t", "M", "n_pages", "n1", "free_last", "n_free", "high", "free_up")
HEADER_WORDS = len(HEADER)
LIMIT_WORDS = 6


class _CompactBatch:
    """One compact batch's sizes, host arrays and device buffers (the workspace's, reused)."""


class DeviceMismatchError(RuntimeError):
    """The device pages and the host pages differ after a batch (a bug, never a user error)."""


@dataclass
class DeviceBatchResult:
    """A batch applied on the device: the device's report, the host replay's, the check."""

    report: batch_rules.BatchReport          # path "gpu": device time, pages written
    host: batch_rules.BatchReport            # the host replay
    verified: bool
    check_seconds: float

    def as_dict(self) -> dict:
        out = self.report.as_dict()
        out.update(host_replay_seconds=self.host.seconds, verified=self.verified,
                   check_seconds=self.check_seconds)
        return out


cuda = None          # numba.cuda and its int64, bound on first use (after the simulator switch);
int64 = None         # module globals, so that the simulator can stand in its own ``cuda`` module


@functools.cache
def _kernels():
    """The device functions and kernels (built on first use: numba.cuda after the simulator switch)."""
    global cuda, int64
    from numba import cuda as numba_cuda
    from numba import int64 as numba_int64

    cuda, int64 = numba_cuda, numba_int64

    from kernels.cuda.fast_launch import fast
    from kernels.cuda.jit import jit as kernel_jit
    from kernels.graph.slotted import batch_core

    core = batch_core.build(cuda.jit(device=True))
    locate, degree, pack, write_page = core.locate, core.degree, core.pack, core.write_page
    deleted, contains, entry_word = core.deleted, core.contains, core.entry_word
    physical_page = core.physical_page

    from kernels.cuda.warp import WARP, exchange_size, lowest_lane, warp_ops, warp_sync
    from kernels.operators.device_clock import globaltimer
    from kernels.operators.sorted_search import lower_bound

    hardware = not simulator_enabled()
    ballot = warp_ops(hardware)[0]
    sync = warp_sync(hardware)
    ex_size = exchange_size(hardware)
    from kernels.operators import warp_pages

    warp_passes = warp_pages.build(core, sync, int64, WARP)
    # names of their own: a kernel cannot look an attribute up on a namespace object
    warp_copy_words, warp_describe = warp_passes.copy_words, warp_passes.describe
    warp_write_page, warp_unit_columns = warp_passes.write_page, warp_passes.unit_columns
    vx_rows = warp_pages.VX_ROWS             # a closure constant: a shared array's shape must be one

    def find_warp(pool, pagemap, lcount, P, c, s, v, lane, ex):
        """``find`` by the 32 lanes of a warp together: lane i reads entries i, i + 32, ...
        (neighbouring words, one transaction), a ballot says whether any lane matched. A list is
        unsorted (survivors keep their order, insertions are appended), so the search is a scan;
        one thread scanning a hub's list of 10^4-10^5 entries alone took milliseconds."""
        d = degree(pool, pagemap, P, c, s)
        for j0 in range(0, d, WARP):
            j = j0 + lane
            hit = False
            if j < d:
                hit = pool[entry_word(pool, pagemap, lcount, P, c, s, j)] == v
            mask = ballot(ex, lane, hit)
            if mask != 0:
                return j0 + lowest_lane(mask)
        return -1

    find_warp = cuda.jit(device=True)(find_warp)

    def zero(arr, n):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            arr[i] = 0

    def pair_slot(x, w, hmask):
        """The first slot of source ``x``'s entry ``w`` in the full path's table of long-list
        pairs: two products that cannot overflow (ids < 2^31), mixed by shifts."""
        h = int64(x) * 40503 + int64(w) * int64(0x85EBCA6B)
        h ^= h >> 29
        h ^= h >> 13
        return h & hmask

    pair_slot = cuda.jit(device=True)(pair_slot)

    def pair_find(htab, hmask, x, w, n1):
        """The slot holding the pair (x, w) (linear probing), or -1 when it is not there."""
        key = int64(x) * n1 + w + 1
        h = pair_slot(x, w, hmask)
        while True:
            k = htab[h]
            if k == key:
                return h
            if k == 0:
                return int64(-1)
            h = (h + 1) & hmask

    pair_find = cuda.jit(device=True)(pair_find)

    def dir_word(index, P, handle, j):
        """Word of entry ``j`` of the list whose directory handle is ``handle`` (the word of its
        first entry, or ``-(first column + 1)`` for a large list: kernels/graph/directory.py)."""
        if handle >= 0:
            return handle + j
        per = P - 6
        return int64(index[3, -handle - 1 + j // per]) * P + 4 + j % per

    dir_word = cuda.jit(device=True)(dir_word)

    def find_dir(pool, index, P, handle, d, v, lane, ex):
        """``find_warp`` on a list given by its directory handle and degree."""
        for j0 in range(0, d, WARP):
            j = j0 + lane
            hit = False
            if j < d:
                hit = pool[dir_word(index, P, handle, j)] == v
            mask = ballot(ex, lane, hit)
            if mask != 0:
                return j0 + lowest_lane(mask)
        return -1

    find_dir = cuda.jit(device=True)(find_dir)

    def long_range(long_list, entries, total, w, split):
        """Range ``w`` of ``split`` of the page-chunk sequence that ``long_list``'s runs number
        (``expand_long``, ``long_scan``): its first and past-last chunk, and the run holding its
        first chunk (the last run starting at or before it; a binary search of the runs' starts).
        An empty range has ``q0 >= q1``."""
        q0 = w * ((total + split - 1) // split)
        q1 = min(total, q0 + (total + split - 1) // split)
        lo = int64(0)
        hi = entries - 1
        while q0 < q1 and lo < hi:
            mid = (lo + hi + 1) >> 1
            if long_list[mid * LONG_WORDS + 4] <= q0:
                lo = mid
            else:
                hi = mid - 1
        return q0, q1, lo

    long_range = cuda.jit(device=True)(long_range)

    def long_chunk(long_list, index, P, q, i):
        """Chunk ``q`` of the sequence ``long_list``'s runs number (``long_scan``,
        ``expand_long``), found from run ``i`` (at or before it) forward: (its run, the first and
        past-last list positions it covers, the pool word of position 0 of its page). A run is a
        large list's pages (``long_list[at + 1]`` its first column), or one chunk for a list
        within a page (``long_list[at + 2]`` the word of its first entry)."""
        per_page = P - 6
        while True:
            at = i * LONG_WORDS
            a = long_list[at + 1]
            d = long_list[at + 3]
            r = q - long_list[at + 4]
            if r < ((d + per_page - 1) // per_page if a >= 0 else 1):
                break
            i += 1                               # past this run: the next one's
        if a >= 0:
            first = r * per_page
            return i, first, min(d, first + per_page), int64(index[3, a + r]) * P + 4 - first
        return i, int64(0), d, long_list[at + 2]

    long_chunk = cuda.jit(device=True)(long_chunk)

    def list_handle(pool, index, P, a, s):
        """The directory's handle (kernels/graph/directory.py) of the list that ``locate`` found
        at (column ``a``, slot ``s``): ``-(a + 1)`` for a large list, else its first entry's word."""
        if index[2, a] > 0:
            return -(int64(a) + 1)
        base = int64(index[3, a]) * P
        return base + pool[base + P - 2 - 2 * s] + 1

    list_handle = cuda.jit(device=True)(list_handle)

    def unit_key(loc, n_ids, P, x):
        """Which unit holds vertex ``x``, from the directory alone: an ordinary list's physical page,
        a large list's handle (negative); ``ABSENT`` for an id without a slot. Two vertices share a
        unit exactly when their keys are equal."""
        h = loc[x] if x >= 0 and x < n_ids else int64(0)
        if h > 0:
            return h // P
        return h if h < 0 else int64(ABSENT)

    unit_key = cuda.jit(device=True)(unit_key)

    def expand(U, V, edge_off, entry_off, directed, pool, index, n_pages, P, n1, n_ids,
               esrc, edst, etag, epos, ekey, cnt, fail, long_cut, long_list, long_count, htab, hmask,
               by_directory, loc, dgr):
        """One warp per entry (``find_warp``); lane 0 writes. An entry whose source list is
        longer than ``long_cut`` is not searched here: its pair (source, target) goes into the
        table ``htab`` (keys in ``[0, hmask]``, positions + 1 after them; the key is
        ``source * n1 + target + 1``, 0 an empty slot) and its position is left pending (-2);
        the source's first such entry (a claim counter after the per-part counts in ``cnt``)
        lists the source in ``long_list`` for ``long_scan``, which reads each long list once for
        all the batch's entries on it. (Searched an entry at a time, R-MAT 20's hubs of
        10^4-10^5 entries made this kernel 1.8 ms of a 10^5-edge batch on an H200, 5.5 ms of
        10^6: every entry reading its source's whole list.) With ``by_directory`` the endpoints
        and the source's list come from the mirror's vertex directory (``loc``, ``dgr``: a
        handle and a degree per id, 0 for an id without a slot) instead of ``locate``."""
        ex = cuda.shared.array(ex_size, int64)
        lane = cuda.threadIdx.x % WARP
        total = entry_off[3]
        claims = 3 * n_ids + 1
        for e in range(cuda.grid(1) // WARP, total, cuda.gridsize(1) // WARP):
            p = 0 if e < entry_off[1] else (1 if e < entry_off[2] else 2)
            local = e - entry_off[p]
            t = local if directed else local // 2
            dirn = 0 if directed else local % 2
            g = edge_off[p] + t
            u = U[g]
            v = V[g]
            if lane == 0:
                esrc[e] = -1
            if dirn == 1:
                if u == v:
                    continue
                u, v = v, u
            handle = int64(0)
            if by_directory:
                handle = loc[u] if u >= 0 and u < n_ids else int64(0)
                there = v >= 0 and v < n_ids and loc[v] != 0
                if handle == 0 or not there:
                    if dirn == 0 and lane == 0:
                        cuda.atomic.min(fail, 0, int64(g))
                    continue
                d = int64(dgr[u])
            else:
                a, s = locate(pool, index, n_pages, P, u)
                b, _ = locate(pool, index, n_pages, P, v)
                if a < 0 or b < 0:
                    if dirn == 0 and lane == 0:
                        cuda.atomic.min(fail, 0, int64(g))
                    continue
                d = degree(pool, index[3], P, a, s)
                handle = list_handle(pool, index, P, a, s)
            a = -handle - 1 if handle < 0 else int64(-1)       # a large list's first column
            if long_cut > 0 and d > long_cut:
                if lane == 0:
                    if cuda.atomic.add(cnt, claims + u, 1) == 0:
                        # long_list: the source, its large list's first column (-1 within a page),
                        # the word of its first entry (within a page), its length, its first chunk
                        first = handle if handle >= 0 else int64(0)
                        # a large list: a chunk a page (P - 6 entries); one within a page: one chunk
                        chunks = (d + P - 7) // (P - 6) if a >= 0 else 1
                        old = cuda.atomic.add(long_count, 0, (int64(1) << LONG_SHIFT) + chunks)
                        at = (old >> LONG_SHIFT) * LONG_WORDS
                        long_list[at] = u
                        long_list[at + 1] = a
                        long_list[at + 2] = first
                        long_list[at + 3] = d
                        long_list[at + 4] = old & ((int64(1) << LONG_SHIFT) - 1)
                    key = int64(u) * n1 + v + 1
                    h = pair_slot(u, v, hmask)
                    while True:
                        seen = cuda.atomic.cas(htab, h, int64(0), key)
                        if seen == 0 or seen == key:
                            break
                        h = (h + 1) & hmask
                    esrc[e] = u
                    edst[e] = v
                    etag[e] = g
                    epos[e] = -2
                    ekey[e] = int64(v)
                    cuda.atomic.add(cnt, p * n_ids + u, 1)
                continue
            pos = find_dir(pool, index, P, handle, d, v, lane, ex)
            if lane == 0:
                esrc[e] = u
                edst[e] = v
                etag[e] = g
                epos[e] = pos
                ekey[e] = (int64(pos) + 1) * n1 + v if p == 0 else int64(v)
                cuda.atomic.add(cnt, p * n_ids + u, 1)

    def long_scan(pool, index, P, n1, long_list, long_count, htab, hmask):
        """Each long list of the batch read once, by the whole grid a page at a time: the lists'
        pages numbered in one sequence (``expand_long``'s scheme, a run per source), each warp
        a contiguous range of it, its lanes reading neighbouring entries; an entry the batch
        names (its pair in ``htab``) gets its position (+ 1) written beside the pair's key. A
        list holds an id once, so each pair is written by one lane at most."""
        lane = cuda.threadIdx.x % WARP
        packed = long_count[0]
        entries = packed >> LONG_SHIFT
        total = packed & ((int64(1) << LONG_SHIFT) - 1)
        warps = cuda.gridsize(1) // WARP
        split = max(warps, LONG_SPLIT)
        hsize = hmask + 1
        for w in range(cuda.grid(1) // WARP, split, warps):
            q0, q1, i = long_range(long_list, entries, total, w, split)
            for q in range(q0, q1):
                i, first, last, word = long_chunk(long_list, index, P, q, i)
                x = long_list[i * LONG_WORDS]
                for j in range(first + lane, last, WARP):
                    h = pair_find(htab, hmask, x, pool[word + j], n1)
                    if h >= 0:
                        htab[hsize + h] = j + 1

    def scatter(esrc, ekey, entry_off, n_ids, S, cnt, perm, skey, edst, epos, n1, htab, hmask):
        """Entries grouped by (part, source); an entry ``expand`` left pending (-2: a long
        list) takes the position ``long_scan`` found (-1 when none) and its key here."""
        hsize = hmask + 1
        for e in range(cuda.grid(1), entry_off[3], cuda.gridsize(1)):
            x = esrc[e]
            if x < 0:
                continue
            p = 0 if e < entry_off[1] else (1 if e < entry_off[2] else 2)
            key = p * n_ids + x
            slot = S[key] + cuda.atomic.add(cnt, key, -1) - 1
            perm[slot] = e
            if epos[e] == -2:
                v = edst[e]
                pos = htab[hsize + pair_find(htab, hmask, x, v, n1)] - 1
                epos[e] = pos
                skey[slot] = (pos + 1) * n1 + v if p == 0 else int64(v)
            else:
                skey[slot] = ekey[e]

    def shell_sort(skey, perm, a, n, gaps):
        """Shell sort of ``skey[a:a + n]`` (``perm`` beside it) by (key, entry), by one thread."""
        gi = 0
        while gi + 1 < gaps.shape[0] and gaps[gi + 1] < n:
            gi += 1
        while gi >= 0:
            h = gaps[gi]
            for j in range(h, n):
                k = skey[a + j]
                e = perm[a + j]
                m = j
                while m >= h and (skey[a + m - h] > k or (skey[a + m - h] == k and perm[a + m - h] > e)):
                    skey[a + m] = skey[a + m - h]
                    perm[a + m] = perm[a + m - h]
                    m -= h
                skey[a + m] = k
                perm[a + m] = e
            gi -= 1

    shell_sort = cuda.jit(device=True)(shell_sort)

    def sort_groups(S, groups, skey, perm, gaps):
        """Shell sort of each group by (key, entry): one thread per group."""
        for i in range(cuda.grid(1), groups, cuda.gridsize(1)):
            a = S[i]
            n = S[i + 1] - a
            if n >= 2:
                shell_sort(skey, perm, a, n, gaps)

    def sort_small_groups(S, groups, skey, perm, gaps, thread_max, big, big_count):
        """``sort_groups`` for groups of at most ``thread_max`` entries; a larger group is listed in
        ``big`` for ``sort_big_groups``. (A thread's sort of n entries takes about n^1.3 dependent
        steps: R-MAT 20's hubs gather groups of 10^3-10^4 entries in a mixed batch of 10^6-10^7
        edges, whose deletions are drawn from the stored edges.)"""
        for i in range(cuda.grid(1), groups, cuda.gridsize(1)):
            a = S[i]
            n = S[i + 1] - a
            if n > thread_max:
                big[cuda.atomic.add(big_count, 0, 1)] = i
            elif n >= 2:
                shell_sort(skey, perm, a, n, gaps)

    def order_pair(skey, perm, lo, hi):
        """The smaller (key, entry) of places ``lo`` < ``hi`` put at ``lo``."""
        k = skey[hi]
        e = perm[hi]
        if skey[lo] > k or (skey[lo] == k and perm[lo] > e):
            skey[hi] = skey[lo]
            perm[hi] = perm[lo]
            skey[lo] = k
            perm[lo] = e

    order_pair = cuda.jit(device=True)(order_pair)

    def sort_big_groups(S, skey, perm, big, big_count):
        """Each group ``sort_small_groups`` listed, sorted by a block: a bitonic network over the
        group rounded up to a power of two, in the form whose every comparison puts the smaller
        at the lower place (a merge's first step pairs mirror places, i and 2j - 1 - i; the rest
        i and i + j), so the places past the group's end stand for +inf and never move: a pair
        reaching past the end is skipped. Steps are separated by block barriers."""
        tid = cuda.threadIdx.x
        nt = cuda.blockDim.x
        for b in range(cuda.blockIdx.x, big_count[0], cuda.gridDim.x):
            g = big[b]
            a = S[g]
            n = S[g + 1] - a
            size = int64(1)
            while size < n:
                size *= 2
            half = size // 2
            k = int64(2)
            while k <= size:
                j = k // 2
                flip = True
                while j > 0:
                    for t in range(tid, half, nt):
                        blk = t // j
                        off = t - blk * j
                        lo = blk * 2 * j + off
                        hi = blk * 2 * j + 2 * j - 1 - off if flip else lo + j
                        if hi < n:
                            order_pair(skey, perm, a + lo, a + hi)
                    cuda.syncthreads()
                    flip = False
                    j //= 2
                k *= 2

    def gather(perm, S, groups, esrc, etag, epos, W, weighted, ssrc, stag, spos, sw):
        for k in range(cuda.grid(1), S[groups], cuda.gridsize(1)):
            e = perm[k]
            ssrc[k] = esrc[e]
            stag[k] = etag[e]
            spos[k] = epos[e]
            if weighted:
                sw[k] = W[etag[e]]

    def check(S, n_ids, n1, ssrc, skey, stag, spos, fail):
        total = S[3 * n_ids]
        for k in range(cuda.grid(1), total, cuda.gridsize(1)):
            p = 0 if k < S[n_ids] else (1 if k < S[2 * n_ids] else 2)
            x = ssrc[k]
            if k + 1 < total and ssrc[k + 1] == x and skey[k + 1] == skey[k]:
                q = 0 if k + 1 < S[n_ids] else (1 if k + 1 < S[2 * n_ids] else 2)
                if q == p:
                    cuda.atomic.min(fail, 1, min(stag[k], stag[k + 1]))
            if p == 0:
                if skey[k] // n1 - 1 < 0:
                    cuda.atomic.min(fail, 2, stag[k])
            elif p == 1:
                pos = spos[k]
                if pos >= 0 and not deleted(skey, S[x], S[x + 1] - S[x], n1, pos):
                    cuda.atomic.min(fail, 3, stag[k])
            else:
                pos = spos[k]
                if (pos < 0 or deleted(skey, S[x], S[x + 1] - S[x], n1, pos)
                        or contains(skey, S[n_ids + x], S[n_ids + x + 1] - S[n_ids + x], skey[k])):
                    cuda.atomic.min(fail, 4, stag[k])

    def mark_touched(S, n_ids, pool, index, n_pages, P, touched):
        for x in range(cuda.grid(1), n_ids, cuda.gridsize(1)):
            if S[x + 1] - S[x] + S[n_ids + x + 1] - S[n_ids + x] > 0:
                c, _ = locate(pool, index, n_pages, P, x)
                touched[c] = 1

    def count_pages(pool, index, n_pages, P, touched, dstart, istart, k_out, desc, newoff):
        for c in range(cuda.grid(1), n_pages, cuda.gridsize(1)):
            k_out[c] = 0
            if touched[c]:
                k_out[c] = pack(pool, index[3], index[2], P, c, dstart, istart, False, 0, desc, newoff)

    def column_sums_load(i, args):
        """The per-column values the host's column_sums adds up (see batch_host), two to a word
        so that three scans do the work of five: ``which`` 0 = new columns | output pages << 32,
        1 = pages opened | pages freed << 32, 2 = scratch pages (each total < 2**31)."""
        index, touched, k_out, n_pages, which = args
        if i >= n_pages:
            return int64(0)
        c0 = i - max(index[1, i], 0)
        m = index[2, c0] if index[2, c0] > 0 else 1
        if not touched[c0]:
            return int64(1) if which == 0 else int64(0)
        if which == 2:
            return int64(1)
        if i != c0:
            return int64(0)
        k = int64(k_out[c0])
        if which == 0:
            return k + (k << 32)
        return int64(max(0, k - m)) + (int64(max(0, m - k)) << 32)

    def unpack_sums(packed, n, sums):
        """The three packed scans as the five rows the other kernels read."""
        low = int64(0xFFFFFFFF)
        for c in range(cuda.grid(1), n, cuda.gridsize(1)):
            a = packed[0, c]
            b = packed[1, c]
            sums[0, c] = a & low
            sums[1, c] = a >> 32
            sums[2, c] = b & low
            sums[3, c] = b >> 32
            sums[4, c] = packed[2, c]

    def totals(fail, sums, n_pages, long_count, out):
        if cuda.grid(1) == 0:
            for c in range(5):
                out[c] = fail[c]
                out[5 + c] = sums[c, n_pages]
            out[10] = long_count[0] >> LONG_SHIFT          # the long lists read once (long_scan)

    def copy_old(index, n_pages, P, touched, sums, pool, wpool, weighted, scrmap, scratch, wscratch):
        for c in range(cuda.blockIdx.x, n_pages, cuda.gridDim.x):
            c0 = c - max(index[1, c], 0)
            if not touched[c0]:
                if cuda.threadIdx.x == 0:
                    scrmap[c] = -1
                continue
            j = sums[4, c]
            if cuda.threadIdx.x == 0:
                scrmap[c] = j
            src = int64(index[3, c]) * P
            for w in range(cuda.threadIdx.x, P, cuda.blockDim.x):
                scratch[j * P + w] = pool[src + w]
                if weighted:
                    wscratch[j * P + w] = wpool[src + w]

    def describe(scratch, scrmap, index, n_pages, P, touched, dstart, istart, sums, desc, newoff):
        for c in range(cuda.grid(1), n_pages, cuda.gridsize(1)):
            if touched[c]:
                pack(scratch, scrmap, index[2], P, c, dstart, istart, True, sums[1, c], desc, newoff)

    def choose_pages(desc, n_q, index, sums, free, n_free, high, phys_out):
        for q in range(cuda.grid(1), n_q, cuda.gridsize(1)):
            phys_out[q] = physical_page(desc, q, index, sums, free, n_free, high)

    def write_pages(desc, n_q, phys_out, scratch, wscratch, scrmap, index, P, dstart, dkey, n1,
                    istart, itgt, iw, newoff, weighted, pool, wpool, by_warp):
        """An output page a warp (``by_warp``) or a block: ``write_page`` writes a page's
        vertices one after another, lanes over each one's entries."""
        if by_warp:
            first, step = cuda.grid(1) // WARP, cuda.gridsize(1) // WARP
            lane, lanes = cuda.threadIdx.x % WARP, WARP
        else:
            first, step = cuda.blockIdx.x, cuda.gridDim.x
            lane, lanes = cuda.threadIdx.x, cuda.blockDim.x
        for q in range(first, n_q, step):
            write_page(q, desc, phys_out[q], scratch, wscratch, scrmap, index[2], P, dstart, dkey, n1,
                       istart, itgt, iw, newoff, weighted, pool, wpool, lane, lanes)

    def free_pages(index, n_pages, P, touched, k_out, pool, wpool, weighted):
        for c in range(cuda.blockIdx.x, n_pages, cuda.gridDim.x):
            c0 = c - max(index[1, c], 0)
            if touched[c0] and c - c0 >= k_out[c0]:
                base = int64(index[3, c]) * P
                for w in range(cuda.threadIdx.x, P, cuda.blockDim.x):
                    pool[base + w] = 0
                    if weighted:
                        wpool[base + w] = 0

    def rewrite_index(index, n_pages, P, touched, k_out, sums, desc, phys_out, scratch, scrmap, new_index):
        for c in range(cuda.grid(1), n_pages, cuda.gridsize(1)):
            c0 = c - max(index[1, c], 0)
            if not touched[c0]:
                for row in range(4):
                    new_index[row, sums[0, c]] = index[row, c]
            elif c == c0:
                for r in range(k_out[c]):
                    q = sums[1, c] + r
                    col = sums[0, c] + r
                    new_index[0, col] = scratch[int64(scrmap[c]) * P + P - 1 - 2 * desc[1, q]]
                    new_index[1, col] = desc[3, q]
                    new_index[2, col] = desc[4, q]
                    new_index[3, col] = phys_out[q]

    def gather_pages(pool, pages, n, P, out):
        """Block k copies physical page pages[k] to slot k of ``out`` (for the check's read-back)."""
        for k in range(cuda.blockIdx.x, n, cuda.gridDim.x):
            src = int64(pages[k]) * P
            for w in range(cuda.threadIdx.x, P, cuda.blockDim.x):
                out[int64(k) * P + w] = pool[src + w]

    def reweigh_with(ex, S, n_ids, ssrc, skey, sw, pool, index, n_pages, P, wpool, pages, at):
        """One warp per weight change (``find_warp``); lane 0 writes the weight, and the page it
        wrote to ``pages[at + ...]``."""
        lane = cuda.threadIdx.x % WARP
        first = S[2 * n_ids]
        for k in range(first + cuda.grid(1) // WARP, S[3 * n_ids], cuda.gridsize(1) // WARP):
            c, s = locate(pool, index, n_pages, P, ssrc[k])
            j = find_warp(pool, index[3], index[2], P, c, s, skey[k], lane, ex)
            if lane == 0:
                word = entry_word(pool, index[3], index[2], P, c, s, j)
                wpool[word] = sw[k]
                pages[at + k - first] = word // P

    reweigh_with = cuda.jit(device=True)(reweigh_with)

    def reweigh(S, n_ids, ssrc, skey, sw, pool, index, n_pages, P, wpool, pages):
        ex = cuda.shared.array(ex_size, int64)
        reweigh_with(ex, S, n_ids, ssrc, skey, sw, pool, index, n_pages, P, wpool, pages, 0)

    # ---- the compact path: work sized by the batch's touched vertices and units ----------
    # The host groups the batch's entries by (part, source rank) before the upload;
    # ``T`` holds the touched sources (ascending ids), ``S`` the 3t + 1 group starts (deletions,
    # insertions, weight changes of rank r at groups r, t + r, 2t + r). The shared functions read
    # ``dstart[x]``/``istart[x]`` by vertex id: ``dfull``/``ifull`` are filled, for the vertices
    # of the touched units only, with the prefix sums those ids would have (``S`` at the rank).

    def expand_c(src, dst, tag, S, t, pool, index, n_pages, P, n1, epos, skey, perm, fail, ex, long_cut,
                 long_list, long_count, by_directory, loc, dgr):
        """One warp per entry (``find_dir``); lane 0 writes. With ``by_directory`` the endpoints and
        the source's list come from the mirror's vertex directory (``loc``, ``dgr``: two reads),
        else from ``locate`` (two binary searches, about 20 dependent reads each). With
        ``long_cut`` > 0, an entry whose source list is longer is left to ``expand_long``:
        appended to ``long_list`` (``LONG_WORDS`` each, ``long_scan``'s layout) with its place and
        chunk numbers from one packed atomic add on ``long_count[0]``, and its result written as
        "not found" (the one lane that finds it overwrites that): one warp scanning a hub's list of
        10^4-10^5 entries held a whole R-MAT batch's front phase for 0.5-0.9 ms."""
        lane = cuda.threadIdx.x % WARP
        total = S[3 * t]
        n_ids = n1 - 1
        for k in range(cuda.grid(1) // WARP, total, cuda.gridsize(1) // WARP):
            u = src[k]
            v = dst[k]
            if by_directory:
                handle = loc[u] if u >= 0 and u < n_ids else int64(0)
                found = handle != 0 and v >= 0 and v < n_ids and loc[v] != 0
            else:
                a, s = locate(pool, index, n_pages, P, u)
                b, _ = locate(pool, index, n_pages, P, v)
                found = a >= 0 and b >= 0
            if not found:
                if lane == 0:
                    perm[k] = k
                    cuda.atomic.min(fail, 0, tag[k])   # both entries of an edge carry its tag
                    epos[k] = -1
                    skey[k] = int64(0x7FFFFFFFFFFFFFFF)
                continue
            if by_directory:
                d = int64(dgr[u])
            else:
                d = degree(pool, index[3], P, a, s)
                handle = list_handle(pool, index, P, a, s)
            if long_cut > 0 and d > long_cut:
                if lane == 0:
                    # a large list: a chunk a page (P - 6 entries); one within a page: one chunk
                    chunks = (d + P - 7) // (P - 6) if handle < 0 else 1
                    old = cuda.atomic.add(long_count, 0, (int64(1) << LONG_SHIFT) + chunks)
                    at = (old >> LONG_SHIFT) * LONG_WORDS
                    long_list[at] = k
                    long_list[at + 1] = -handle - 1 if handle < 0 else int64(-1)
                    long_list[at + 2] = handle if handle >= 0 else int64(0)
                    long_list[at + 3] = d
                    long_list[at + 4] = old & ((int64(1) << LONG_SHIFT) - 1)
                    perm[k] = k
                    epos[k] = -1
                    skey[k] = int64(v)          # (pos + 1) * n1 + v at pos -1; v for an insertion
                continue
            pos = find_dir(pool, index, P, handle, d, v, lane, ex)
            if lane == 0:
                perm[k] = k
                epos[k] = pos
                skey[k] = (int64(pos) + 1) * n1 + v if k < S[t] else int64(v)

    def expand_long(dst, S, t, pool, index, P, n1, epos, skey, long_list, long_count):
        """The entries ``expand_c`` left, searched by the whole grid a page at a time: their lists'
        pages are numbered in one sequence (each entry's run contiguous, in ``long_list`` order),
        each warp takes a contiguous range of it (one search for its first entry, then forward),
        and a page is one index read and its entries read by the lanes, coalesced. A list holds
        an id once: the one lane that matches writes. (A block per entry, 256 positions a round
        and a block-wide vote after each, took 94-127 µs of an R-MAT 20 batch of 10^3 edges on an
        H200; chunks of 2,048 positions a warp, each position's page looked up, 162 µs.)"""
        lane = cuda.threadIdx.x % WARP
        packed = long_count[0]
        entries = packed >> LONG_SHIFT
        total = packed & ((int64(1) << LONG_SHIFT) - 1)
        warps = cuda.gridsize(1) // WARP
        split = max(warps, LONG_SPLIT)
        for w in range(cuda.grid(1) // WARP, split, warps):
            q0, q1, i = long_range(long_list, entries, total, w, split)
            for q in range(q0, q1):
                i, first, last, word = long_chunk(long_list, index, P, q, i)
                k = long_list[i * LONG_WORDS]
                v = dst[k]
                for j in range(first + lane, last, WARP):
                    if pool[word + j] == v:
                        epos[k] = j
                        skey[k] = (int64(j) + 1) * n1 + v if k < S[t] else int64(v)

    def check_c(S, t, n1, T, perm, tag, epos, W, weighted, skey, ssrc, stag, spos, sw, fail):
        total = S[3 * t]
        for k in range(cuda.grid(1), total, cuda.gridsize(1)):
            p = 0 if k < S[t] else (1 if k < S[2 * t] else 2)
            lo = 0
            hi = 3 * t - 1
            while lo < hi:                              # the group holding k
                mid = (lo + hi + 1) >> 1
                if S[mid] <= k:
                    lo = mid
                else:
                    hi = mid - 1
            grp = lo
            r = grp - p * t
            e = perm[k]
            ssrc[k] = T[r]
            stag[k] = tag[e]
            pos = epos[e]
            spos[k] = pos
            if weighted:
                sw[k] = W[e]
            if k + 1 < S[grp + 1] and skey[k + 1] == skey[k]:
                cuda.atomic.min(fail, 1, min(tag[e], tag[perm[k + 1]]))
            if p == 0:
                if skey[k] // n1 - 1 < 0:
                    cuda.atomic.min(fail, 2, tag[e])
            elif p == 1:
                if pos >= 0 and not deleted(skey, S[r], S[r + 1] - S[r], n1, pos):
                    cuda.atomic.min(fail, 3, tag[e])
            else:
                if (pos < 0 or deleted(skey, S[r], S[r + 1] - S[r], n1, pos)
                        or contains(skey, S[t + r], S[t + r + 1] - S[t + r], skey[k])):
                    cuda.atomic.min(fail, 4, tag[e])

    def unit_of(pool, index, n_pages, P, x, by_directory, loc, n_ids):
        """``x``'s unit: its key (``unit_key``; ``locate``'s column without the directory) and
        whether ``x`` has a slot."""
        if by_directory:
            key = unit_key(loc, n_ids, P, x)
            return key, key != ABSENT
        c, _ = locate(pool, index, n_pages, P, x)
        return c, c >= 0

    unit_of = cuda.jit(device=True)(unit_of)

    def units_c(T, t, S, pool, index, n_pages, P, dfull, ifull, cpos, utouched, um, vals,
                desc_dummy, newoff, lane, by_directory, loc, n_ids):
        """Per touched source r, a warp; the first source of each unit (its head) finds the unit's
        first column (one ``locate``, or the directory's handle of a large list) and writes it for
        the unit's sources, decides whether the unit is touched, fills dfull/ifull for the unit's
        vertices (the lanes take its slots: a rank search each, which one thread did one after
        another in 0.3-0.5 ms a batch) and counts the unit's pages out (``vals``: pages out, opened,
        freed, old pages; lane 0, after a warp sync). Which sources share a unit is read from the
        directory's handles with ``by_directory`` (a read each), else from ``locate`` (about 20
        dependent reads each, two to three a source)."""
        for r in range(cuda.grid(1) // WARP, t, cuda.gridsize(1) // WARP):
            key, there = unit_of(pool, index, n_pages, P, T[r], by_directory, loc, n_ids)
            if lane == 0:
                for row in range(4):
                    vals[row, r] = 0
            if not there:
                if lane == 0:
                    cpos[r] = -1
                    utouched[r] = 0
                continue
            if r > 0:
                prev, _ = unit_of(pool, index, n_pages, P, T[r - 1], by_directory, loc, n_ids)
                if prev == key:
                    continue                            # the head writes the run's column and flags
            if not by_directory:
                c = key
            elif key < 0:
                c = -key - 1                            # a large list's handle: its first column
            else:
                c, _ = locate(pool, index, n_pages, P, T[r])
            m = index[2, c] if index[2, c] > 0 else 1
            end = r
            touched = 0
            while end < t:
                key2, _ = unit_of(pool, index, n_pages, P, T[end], by_directory, loc, n_ids)
                if key2 != key:
                    break
                if S[end + 1] - S[end] + S[t + end + 1] - S[t + end] > 0:
                    touched = 1
                end += 1
            for r2 in range(r + lane, end, WARP):
                cpos[r2] = c
                utouched[r2] = touched
                um[r2] = m
            if touched == 0:
                continue
            base = int64(index[3, c]) * P
            n = pool[base]
            for s in range(lane, n, WARP):
                x = pool[base + P - 1 - 2 * s]
                for y in range(x, x + 2):
                    q = lower_bound(T, 0, t, y)          # the rank of y among the touched sources
                    dfull[y] = S[q]
                    ifull[y] = S[t + q]
            sync()                                      # the lanes' dfull/ifull before pack reads them
            if lane == 0:
                kk = pack(pool, index[3], index[2], P, c, dfull, ifull, False, 0, desc_dummy, newoff)
                vals[0, r] = kk
                vals[1, r] = max(0, kk - m)
                vals[2, r] = max(0, m - kk)
                vals[3, r] = m

    expand_c = cuda.jit(device=True)(expand_c)
    expand_long = cuda.jit(device=True)(expand_long)
    units_c = cuda.jit(device=True)(units_c)

    def front_c(src, dst, tag, S, t, pool, index, n_pages, P, n1, epos, skey, perm, fail,
                T, dfull, ifull, cpos, utouched, um, vals, desc_dummy, newoff, by_directory, loc, dgr):
        """The entries (``expand_c``) and the touched units (``units_c``), a warp each:
        independent, one launch."""
        ex = cuda.shared.array(ex_size, int64)
        expand_c(src, dst, tag, S, t, pool, index, n_pages, P, n1, epos, skey, perm, fail, ex, 0, perm, perm,
                 by_directory, loc, dgr)
        units_c(T, t, S, pool, index, n_pages, P, dfull, ifull, cpos, utouched, um, vals, desc_dummy, newoff,
                cuda.threadIdx.x % WARP, by_directory, loc, n1 - 1)

    def last_at_most(pre, row, n, key):
        """The largest r < n with pre[row, r] <= key (pre[row] ascending, pre[row, 0] = 0): the
        unit holding item ``key`` of a per-unit prefix sum (units adding nothing come before)."""
        lo = 0
        hi = n - 1
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            if pre[row, mid] <= key:
                lo = mid
            else:
                hi = mid - 1
        return lo

    last_at_most = cuda.jit(device=True)(last_at_most)

    def copy_by(worker, workers, lane, lanes, t, n_scr, cpos, vals, pre, index, P, pool, wpool, weighted, scratch,
                wscratch, scrmap, dfull, ifull, desc, newoff, free_top, n_top, free_last, n_free, high, phys_out,
                new_index, passes, vx, vb):
        """A worker (a block, or a warp of the fused launch: ``lanes`` threads) per scratch page:
        the touched units' old pages copied to scratch; the worker of a unit's first page also
        describes the unit (its lane 0, ``describe_unit``). ``passes`` (the fused launch's
        ``WARP_PASSES`` bits, 0 elsewhere): the warp forms of :mod:`.warp_pages`."""
        for j in range(worker, n_scr, workers):
            r = last_at_most(pre, 3, t, j)
            col = cpos[r] + j - pre[3, r]
            if lane == 0:
                scrmap[col] = j
            if j == pre[3, r]:
                if passes & PASS_DESCRIBE:
                    warp_describe(r, cpos, vals, pre, index, P, pool, dfull, ifull, desc, newoff, free_top,
                                         n_top, free_last, n_free, high, phys_out, new_index, lane, vx, vb)
                elif lane == 0:
                    describe_unit(r, cpos, vals, pre, index, P, pool, dfull, ifull, desc, newoff, free_top,
                                  n_top, free_last, n_free, high, phys_out, new_index)
            src = int64(index[3, col]) * P
            dst = int64(j) * P
            if passes & PASS_COPY:
                warp_copy_words(scratch, dst, pool, src, P, lane, lanes)
                if weighted:
                    warp_copy_words(wscratch, dst, wpool, src, P, lane, lanes)
                continue
            for w in range(lane, P, lanes):
                scratch[dst + w] = pool[src + w]
                if weighted:
                    wscratch[dst + w] = wpool[src + w]

    def copy_c(t, n_scr, cpos, vals, pre, index, P, pool, wpool, weighted, scratch, wscratch, scrmap,
               dfull, ifull, desc, newoff, free_top, n_top, free_last, n_free, high, phys_out, new_index):
        """A block per scratch page (``copy_by``)."""
        vx = cuda.shared.array((1, 1), int64)
        copy_by(cuda.blockIdx.x, cuda.gridDim.x, cuda.threadIdx.x, cuda.blockDim.x, t, n_scr, cpos, vals, pre,
                index, P, pool, wpool, weighted, scratch, wscratch, scrmap, dfull, ifull, desc, newoff, free_top,
                n_top, free_last, n_free, high, phys_out, new_index, 0, vx, 0)

    def describe_unit(r, cpos, vals, pre, index, P, pool, dfull, ifull, desc, newoff, free_top, n_top,
                      free_last, n_free, high, phys_out, new_index):
        """Touched unit r's output pages described (``pack`` on its old pages, still in the pool:
        nothing is written before ``write_c``), then their physical pages and index columns
        (``unit_columns``), by one thread."""
        pack(pool, index[3], index[2], P, cpos[r], dfull, ifull, True, pre[0, r], desc, newoff)
        warp_unit_columns(r, cpos, vals, pre, index, P, pool, desc, free_top, n_top, free_last, n_free, high,
                          phys_out, new_index, 0, 1)

    describe_unit = cuda.jit(device=True)(describe_unit)
    copy_by = cuda.jit(device=True)(copy_by)

    def write_by(worker, workers, lane, lanes, n_q, n_freed, t, cpos, vals, pre, desc, phys_out, scratch,
                 wscratch, scrmap, index, P, dfull, skey, n1, ifull, sw, newoff, weighted, pool, wpool, n_pages,
                 utouched, um, new_index, passes, vx, vb):
        """A worker (a block, or a warp of the fused launch: ``lanes`` threads) per output page
        (written), per page no longer needed (zeroed) and per ``lanes`` columns of the index (the
        untouched units' columns shifted). ``passes``: as ``copy_by``'s."""
        n_col_chunks = (n_pages + lanes - 1) // lanes
        for b in range(worker, n_q + n_freed + n_col_chunks, workers):
            if b >= n_q + n_freed:
                c = (b - n_q - n_freed) * lanes + lane
                if c < n_pages:
                    shift_column(c, index, cpos, t, utouched, um, pre, new_index)
                continue
            if b < n_q and passes & PASS_WRITE:
                warp_write_page(b, desc, phys_out[b], scratch, wscratch, scrmap, index[2], P, dfull, skey,
                                       n1, ifull, skey, sw, newoff, weighted, pool, wpool, lane, vx, vb)
                continue
            if b < n_q:
                write_page(b, desc, phys_out[b], scratch, wscratch, scrmap, index[2], P, dfull, skey, n1,
                           ifull, skey, sw, newoff, weighted, pool, wpool, lane, lanes)
                continue
            f = b - n_q
            r = last_at_most(pre, 2, t, f)
            col = cpos[r] + vals[0, r] + f - pre[2, r]
            base = int64(index[3, col]) * P
            for w in range(lane, P, lanes):
                pool[base + w] = 0
                if weighted:
                    wpool[base + w] = 0

    def write_c(n_q, n_freed, t, cpos, vals, pre, desc, phys_out, scratch, wscratch, scrmap, index, P,
                dfull, skey, n1, ifull, sw, newoff, weighted, pool, wpool, n_pages, utouched, um, new_index):
        """A block per output page, freed page and ``blockDim`` index columns (``write_by``)."""
        vx = cuda.shared.array((1, 1), int64)
        write_by(cuda.blockIdx.x, cuda.gridDim.x, cuda.threadIdx.x, cuda.blockDim.x, n_q, n_freed, t, cpos, vals,
                 pre, desc, phys_out, scratch, wscratch, scrmap, index, P, dfull, skey, n1, ifull, sw, newoff,
                 weighted, pool, wpool, n_pages, utouched, um, new_index, 0, vx, 0)

    def shift_column(c, index, cpos, t, utouched, um, pre, new_index):
        """Column c of an untouched unit moves by the pages the touched units before it gained."""
        lo = 0
        hi = t
        while lo < hi:                                  # sources whose unit starts at or before c
            mid = (lo + hi) >> 1
            if cpos[mid] <= c:
                lo = mid + 1
            else:
                hi = mid
        j = lo - 1
        shift = int64(0)
        if j >= 0:
            if utouched[j] and c < cpos[j] + um[j]:
                return
            shift = pre[0, j + 1] - pre[3, j + 1]
        for row in range(4):
            new_index[row, c + shift] = index[row, c]

    shift_column = cuda.jit(device=True)(shift_column)
    write_by = cuda.jit(device=True)(write_by)

    # ---- the compact path in one cooperative launch ----------------------------------------
    check_dev = cuda.jit(device=True)(check_c)
    sort_dev = cuda.jit(device=True)(sort_groups)
    from kernels.graph import directory

    dir_clear, dir_fill, fill_column = directory.device_passes()

    def dir_patch(n_q, t, cpos, pre, new_index, new_pages, pool, P, loc, degree):
        """The vertex directory brought up to date where the batch changed it, instead of rebuilt
        (``dir_clear``, ``dir_fill``: every id and every column, 0.2 ms of a 10^3-edge batch on
        R-MAT 22 on an H200). A batch removes no vertex, so only two kinds of entries change: the
        vertices of the pages it wrote (their lists moved), and the large lists whose first column
        moved (a large list's handle is its column; an ordinary list's is a pool word, which moves
        only when its page is written). A thread per column finds the large lists' first pages
        (two reads a column), then a warp per written page fills its column's vertices."""
        n = loc.shape[0]
        for c in range(cuda.grid(1), new_pages, cuda.gridsize(1)):
            if new_index[2, c] > 0 and new_index[1, c] == 0:
                base = int64(new_index[3, c]) * P
                v = int64(pool[base + P - 1])
                if v >= 0 and v < n:
                    loc[v] = -(c + 1)
                    degree[v] = pool[base + 3]
        lane = cuda.threadIdx.x % WARP
        for q in range(cuda.grid(1) // WARP, n_q, cuda.gridsize(1) // WARP):
            r = last_at_most(pre, 0, t, q)                 # the unit that wrote output page q
            fill_column(pool, new_index, cpos[r] - pre[3, r] + q, P, loc, degree, lane)

    dir_patch = cuda.jit(device=True)(dir_patch)

    def verdict(info, n_free, high, limits, n_reweight):
        """After the scan: 1 where the batch is refused, 2 where a total exceeds a buffer made
        before the launch (``limits``: pool pages, scratch pages, described pages, written-page
        slots, index columns, free pages uploaded), else 0."""
        for c in range(5):
            if info[c] != NO_FAILURE:
                return int64(1)
        n_q = info[6]
        n_open = info[7]
        n_scr = info[9]
        if (high + max(int64(0), n_open - n_free) > limits[0] or n_scr > limits[1] or n_q > limits[2]
                or n_q + n_reweight > limits[3] or info[5] > limits[4] or min(n_free, n_open) > limits[5]):
            return int64(2)
        return int64(0)

    verdict = cuda.jit(device=True)(verdict)

    def fused_c(block):
        """The compact path's launches as phases of one cooperative kernel, a grid sync between
        them (``front_c``, ``sort_groups``, ``check_c``, the column scan by the grid (block 0 with
        ``SCAN_BY_GRID`` off), then, unless ``verdict`` says otherwise, ``copy_c``, ``write_c``, the
        weight changes and the vertex directory's patch or rebuild): one planned launch instead of
        eight, and no read-back in the middle. ``info[VERDICT]`` says what happened; nothing is
        written unless it is 0."""
        scan = cuda.jit(device=True)(_scan_body(block))
        scan_grid = cuda.jit(device=True)(_scan_grid(block))

        def kernel(longs, pool, index, P, epos, skey, perm, dfull, ifull, cpos, utouched, um, vals, desc_dummy,
                   newoff, gaps, W, weighted, ssrc, stag, spos, sw, pre, info, wpool, scratch, wscratch, scrmap,
                   desc, out, new_index, loc, degree, refresh, long_list, by_directory, by_grid, partial, passes):
            # the batch's sizes and parts from the uploaded buffer (HEADER, then the parts in order)
            t = longs[0]
            M = longs[1]
            n_pages = longs[2]
            n1 = longs[3]
            free_last = longs[4]
            n_free = longs[5]
            high = longs[6]
            free_up = longs[7]
            at = HEADER_WORDS
            T = longs[at:at + t]
            at += t
            src = longs[at:at + M]
            at += M
            dst = longs[at:at + M]
            at += M
            S = longs[at:at + 3 * t + 1]
            at += 3 * t + 1
            tag = longs[at:at + M]
            at += M
            fail = longs[at:at + 5]
            long_count = longs[at + 5:at + 6]           # LONG_SHIFT-packed
            limits = longs[at + 6:at + 6 + LIMIT_WORDS]
            free_top = longs[at + 6 + LIMIT_WORDS:at + 6 + LIMIT_WORDS + free_up]
            grid = cuda.cg.this_grid()
            ex = cuda.shared.array(ex_size, int64)
            sh = cuda.shared.array((4, block), int64)
            vx = cuda.shared.array((vx_rows, block), int64)      # the warp passes' facts
            vb = cuda.threadIdx.x - cuda.threadIdx.x % WARP                  # this warp's columns of vx
            first = cuda.blockIdx.x == 0 and cuda.threadIdx.x == 0
            if first:
                info[STAMPS] = globaltimer()
                info[STAMPS + END] = 0
            expand_c(src, dst, tag, S, t, pool, index, n_pages, P, n1, epos, skey, perm, fail, ex, LONG_LIST,
                     long_list, long_count, by_directory, loc, degree)
            units_c(T, t, S, pool, index, n_pages, P, dfull, ifull, cpos, utouched, um, vals, desc_dummy, newoff,
                    cuda.threadIdx.x % WARP, by_directory, loc, n1 - 1)
            grid.sync()
            if first:
                info[STAMPS + 1] = globaltimer()
            if long_count[0] > 0:                        # read after the sync: every thread alike
                expand_long(dst, S, t, pool, index, P, n1, epos, skey, long_list, long_count)
                grid.sync()
            if first:
                info[STAMPS + 2] = globaltimer()
                info[LONG_ENTRIES] = long_count[0] >> LONG_SHIFT
            sort_dev(S, 3 * t, skey, perm, gaps)
            grid.sync()
            if first:
                info[STAMPS + 3] = globaltimer()
            check_dev(S, t, n1, T, perm, tag, epos, W, weighted, skey, ssrc, stag, spos, sw, fail)
            grid.sync()
            if first:
                info[STAMPS + 4] = globaltimer()
            n_reweight = S[3 * t] - S[2 * t]
            if by_grid != 0:
                # every thread of the grid calls it (a grid sync inside); the last block wrote the totals
                last = scan_grid(grid, sh, vals, t, pre, fail, n_pages, info, partial)
                if last and cuda.threadIdx.x == 0:
                    info[VERDICT] = verdict(info, n_free, high, limits, n_reweight)
            elif cuda.blockIdx.x == 0:
                scan(sh, vals, t, pre, fail, n_pages, info)
                if cuda.threadIdx.x == 0:
                    info[VERDICT] = verdict(info, n_free, high, limits, n_reweight)
            grid.sync()
            if first:
                info[STAMPS + 5] = globaltimer()
            if info[VERDICT] != 0:
                return                                   # every thread alike: no grid sync follows
            new_pages = info[5]
            n_q = info[6]
            n_top = min(n_free, info[7])
            # a warp per page (a block per page leaves the serial parts -- a unit's description,
            # a page's slots -- to a few hundred resident blocks: 3-4x slower at 10^3 edges)
            warp = cuda.grid(1) // WARP
            warps = cuda.gridsize(1) // WARP
            lane = cuda.threadIdx.x % WARP
            copy_by(warp, warps, lane, WARP, t, info[9], cpos, vals, pre, index, P, pool, wpool, weighted, scratch,
                    wscratch, scrmap, dfull, ifull, desc, newoff, free_top, n_top, free_last, n_free, high, out,
                    new_index, passes, vx, vb)
            grid.sync()
            if first:
                info[STAMPS + 6] = globaltimer()
            write_by(warp, warps, lane, WARP, n_q, info[8], t, cpos, vals, pre, desc, out, scratch, wscratch, scrmap,
                     index, P, dfull, skey, n1, ifull, sw, newoff, weighted, pool, wpool, n_pages, utouched, um,
                     new_index, passes, vx, vb)
            grid.sync()
            if first:
                info[STAMPS + 7] = globaltimer()
            if n_reweight > 0:
                reweigh_with(ex, S, t, ssrc, skey, sw, pool, new_index, new_pages, P, wpool, out, n_q)
            if refresh == REFRESH_REBUILD:
                dir_clear(loc, degree)
                grid.sync()
                if first:
                    info[STAMPS + 8] = globaltimer()
                dir_fill(pool, new_index, new_pages, P, loc, degree)
            elif refresh == REFRESH_PATCH:
                if first:
                    info[STAMPS + 8] = globaltimer()     # no clearing: "directory clear" reads ~0
                dir_patch(n_q, t, cpos, pre, new_index, new_pages, pool, P, loc, degree)
            cuda.syncthreads()
            if cuda.threadIdx.x == 0:
                cuda.atomic.max(info, STAMPS + END, globaltimer())   # the last block's end

        return kernel

    class Kernels:
        pass

    ns = Kernels()
    for fn in (zero, expand, long_scan, scatter, sort_groups, sort_small_groups, sort_big_groups, gather, check,
               mark_touched, count_pages, totals, copy_old, describe, choose_pages, write_pages, free_pages,
               rewrite_index, reweigh, gather_pages, unpack_sums, front_c, check_c, copy_c, write_c):
        setattr(ns, fn.__name__, fast(kernel_jit(fn)))
    ns.scan_columns = functools.cache(lambda block: fast(kernel_jit(_scan_columns(block))))
    ns.fused_c = functools.cache(
        lambda block, max_registers=None: fast(kernel_jit(fused_c(block)) if not max_registers or not hardware
                                               else kernel_jit(max_registers=int(max_registers))(fused_c(block))))
    ns.column_sums_load = cuda.jit(device=True)(column_sums_load)
    ns.cuda = cuda
    return ns


def _scan_columns(block: int):
    """The column scan (:func:`_scan_body`) as a kernel of one block."""
    body = cuda.jit(device=True)(_scan_body(block))

    def kernel(vals, t, pre, fail, n_pages, info):
        sh = cuda.shared.array((4, block), int64)
        body(sh, vals, t, pre, fail, n_pages, info)

    return kernel


def _scan_range(block: int):
    """One block scans the four rows of ``vals[:, lo:hi]`` into ``pre[:, lo:hi]`` (exclusive),
    starting from the carries ``c0..c3``, and returns the carries after ``hi``: ``block`` items a
    step, a Hillis-Steele scan per row (``sh``: the block's shared int64[4, block])."""

    def scan_range(sh, vals, lo, hi, pre, c0, c1, c2, c3):
        i = cuda.threadIdx.x
        for start in range(lo, hi, block):
            k = start + i
            for row in range(4):
                sh[row, i] = vals[row, k] if k < hi else int64(0)
            cuda.syncthreads()
            step = 1
            while step < block:
                x0 = sh[0, i - step] if i >= step else int64(0)
                x1 = sh[1, i - step] if i >= step else int64(0)
                x2 = sh[2, i - step] if i >= step else int64(0)
                x3 = sh[3, i - step] if i >= step else int64(0)
                cuda.syncthreads()
                sh[0, i] += x0
                sh[1, i] += x1
                sh[2, i] += x2
                sh[3, i] += x3
                cuda.syncthreads()
                step *= 2
            if k < hi:
                pre[0, k] = c0 + sh[0, i] - vals[0, k]
                pre[1, k] = c1 + sh[1, i] - vals[1, k]
                pre[2, k] = c2 + sh[2, i] - vals[2, k]
                pre[3, k] = c3 + sh[3, i] - vals[3, k]
            c0 += sh[0, block - 1]
            c1 += sh[1, block - 1]
            c2 += sh[2, block - 1]
            c3 += sh[3, block - 1]
            cuda.syncthreads()
        return c0, c1, c2, c3

    return scan_range


def _scan_totals(pre, t, fail, n_pages, info, c0, c1, c2, c3):
    """The scan's totals after ``pre[:, t]``, and the failures and totals in ``info`` (the
    batch's one read-back before writing)."""
    pre[0, t] = c0
    pre[1, t] = c1
    pre[2, t] = c2
    pre[3, t] = c3
    for c in range(5):
        info[c] = fail[c]
    info[5] = n_pages + c0 - c3
    info[6] = c0
    info[7] = c1
    info[8] = c2
    info[9] = c3


def _scan_body(block: int):
    """One block scans the four rows of ``vals[:, :t]`` (pages out, opened, freed, old pages of
    each touched unit, 0 elsewhere) into ``pre[:, :t + 1]``, then writes the failures and the
    totals to ``info`` (``sh``: the block's shared int64[4, block])."""
    scan_range = cuda.jit(device=True)(_scan_range(block))
    totals = cuda.jit(device=True)(_scan_totals)

    def scan(sh, vals, t, pre, fail, n_pages, info):
        z = int64(0)
        c0, c1, c2, c3 = scan_range(sh, vals, 0, t, pre, z, z, z, z)
        if cuda.threadIdx.x == 0:
            totals(pre, t, fail, n_pages, info, c0, c1, c2, c3)

    return scan


def _block_sums(block: int):
    """The four sums of ``src[:, lo:hi]`` (a row each), every thread of the block given them:
    strided partial sums, then a tree in shared memory (``block`` a power of two)."""

    def block_sums(sh, src, lo, hi):
        i = cuda.threadIdx.x
        s0 = int64(0)
        s1 = int64(0)
        s2 = int64(0)
        s3 = int64(0)
        for k in range(lo + i, hi, block):
            s0 += src[0, k]
            s1 += src[1, k]
            s2 += src[2, k]
            s3 += src[3, k]
        sh[0, i] = s0
        sh[1, i] = s1
        sh[2, i] = s2
        sh[3, i] = s3
        cuda.syncthreads()
        step = block // 2
        while step > 0:
            if i < step:
                for row in range(4):
                    sh[row, i] += sh[row, i + step]
            cuda.syncthreads()
            step //= 2
        out = (sh[0, 0], sh[1, 0], sh[2, 0], sh[3, 0])
        cuda.syncthreads()                      # everyone has read before sh is used again
        return out

    return block_sums


def _scan_grid(block: int):
    """``_scan_body`` by the whole cooperative grid: each block sums its contiguous share of the
    ``t`` columns into ``partial[:, block]``, a grid sync, then each block adds the partials
    before its own (every block reads them: no second sync) and scans its share from there. The
    last block writes the totals and returns True (one block scanning 10^5 units took 1.2 ms of a
    fused batch on an H200). Called by every thread of the grid."""
    scan_range = cuda.jit(device=True)(_scan_range(block))
    sums = cuda.jit(device=True)(_block_sums(block))
    totals = cuda.jit(device=True)(_scan_totals)

    def scan_grid(grid, sh, vals, t, pre, fail, n_pages, info, partial):
        b = cuda.blockIdx.x
        nb = cuda.gridDim.x
        share = (t + nb - 1) // nb
        lo = min(t, b * share)
        hi = min(t, lo + share)
        s0, s1, s2, s3 = sums(sh, vals, lo, hi)
        if cuda.threadIdx.x == 0:
            partial[0, b] = s0
            partial[1, b] = s1
            partial[2, b] = s2
            partial[3, b] = s3
        grid.sync()
        c0, c1, c2, c3 = sums(sh, partial, 0, b)
        c0, c1, c2, c3 = scan_range(sh, vals, lo, hi, pre, c0, c1, c2, c3)
        last = b == nb - 1
        if last and cuda.threadIdx.x == 0:
            totals(pre, t, fail, n_pages, info, c0, c1, c2, c3)
        return last

    return scan_grid


@functools.cache
def _host_grouping():
    """(``group_into``, ``group_into_chunks``): the compact path's host grouping, serial and on
    numba's threads (:mod:`kernels.operators.batch_grouping`, imported on first use)."""
    from kernels.operators.batch_grouping import group_into, group_into_chunks

    return group_into, group_into_chunks


def fused_phases(info: np.ndarray, refreshed: bool) -> dict:
    """A written fused launch's phases from its stamps, in microseconds: each from the grid sync
    before it to the one after it, as block 0 saw them (``end``: from the last sync to the last
    block's end; the weight changes and the directory's second pass run there)."""
    stamps = [int(x) for x in info[STAMPS:STAMPS + 1 + len(FUSED_PHASES)]]
    out = {}
    last = stamps[0]
    for i, name in enumerate(FUSED_PHASES, start=1):
        if name == "directory clear" and not refreshed:
            continue
        out[name] = (stamps[i] - last) / 1e3
        last = stamps[i]
    out["total"] = (stamps[-1] - stamps[0]) / 1e3
    out["long entries"] = int(info[LONG_ENTRIES])
    return out


def pair_table_slots(entries: int) -> int:
    """Slots of the full path's table of long-list pairs for a batch of ``entries`` adjacency
    entries: a power of two (the probe wraps by a mask) at least twice the entries, so that the
    table is at most half full and a probe for an absent pair ends after about 2.5 slots."""
    return 1 << max(6, (2 * max(1, int(entries)) - 1).bit_length())


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique`` of a small integer array: a sort and a comparison (NumPy 2's ``unique``
    hashes, 0.1-0.3 ms for a few thousand pages on an H100 host)."""
    out = np.sort(values)
    if len(out) < 2:
        return out
    keep = np.empty(len(out), dtype=bool)
    keep[0] = True
    np.not_equal(out[1:], out[:-1], out=keep[1:])
    return out[keep]


class DeviceUpdater:
    """Applies batches to a mirror's device pages; the host structure follows by replay."""

    def __init__(self, mirror):
        from kernels.operators.launch import Workspace, for_target, grid_for, on_simulator

        self._shape, self._grid = for_target, grid_for      # launch shapes: the simulator's or a GPU's
        self._simulated = on_simulator()
        self.mirror = mirror
        self.graph = mirror.graph
        self.workspace = Workspace()
        self._spare_index = None
        #: the fused launch's scratch pages and described pages, grown from what batches needed
        self.compact_room = {"scratch": 1024, "described": 2048}
        #: how the last batch ran: "fused" (one launch), "fused, then split" (a buffer was too
        #: small), "split" (``COMPACT_FUSED`` off) or "full" (the full-graph path)
        self.last_flow = ""
        self.last_long_lists = 0         # the full path's last batch: long lists read once (long_scan)
        self._fused_info = None                             # the last written fused launch's read-back
        self._fused_last = None                             # (kernel, arguments) of the last fused launch
        self._partial_width = None                          # the grid scan's block sums (``_partial``)
        self._scratch = None                                # the host grouping's (``_grouping_scratch``)
        self._launch_token = LaunchOwner()                  # what the planned launches know this updater by
        #: the fused kernel's resident-block limit (what a cooperative launch may hold), per kernel
        self.fused_grid_limits: dict = {}
        self.history: deque[DeviceBatchResult] = deque(maxlen=HISTORY)   # the latest batches only

    def apply(self, insert=None, delete=None, reweight=None, *, verify: bool = True,
              mark_synced: bool = True) -> DeviceBatchResult:
        """Apply one batch on the device, replay it on the host, check both (``verify``).
        ``mark_synced=False`` leaves the host's dirty flags of the written pages set (for a
        caller recording the batch as a page delta, which reads them; it marks them synced)."""
        g, mirror = self.graph, self.mirror
        if mirror.pool is None:
            mirror.upload_full()
        elif len(g.dirty_physical_pages()) or g.index_dirty:
            mirror.sync()                    # the device must hold the host's state first
        batch = batch_rules.prepare(g, insert, delete, reweight)
        t0 = time.perf_counter()
        device_pages = self._apply_on_device(batch)
        t1 = time.perf_counter()
        host = batch_host.apply(g, batch)
        clock = ("perf_counter, CUDA simulator" if self._simulated else
                 "perf_counter around the device work and cuda.synchronize() (batch upload included)")
        report = batch_rules.BatchReport("gpu", batch.size, host.entries_deleted, host.entries_inserted,
                                         host.weights_changed, device_pages, host.pages_opened,
                                         host.pages_freed, seconds=t1 - t0, clock=clock)
        t2 = time.perf_counter()
        if verify:
            problems = self.differences(device_pages, host.pages_touched)
            if problems:
                raise DeviceMismatchError("device and host pages differ after a batch: " + "; ".join(problems[:5]))
        if mark_synced:
            g.mark_synced()                  # the device holds what the host just wrote
        result = DeviceBatchResult(report, host, verify, time.perf_counter() - t2)
        self.history.append(result)
        return result

    def differences(self, device_pages: np.ndarray, host_pages: np.ndarray) -> list[str]:
        """What differs between device and host in the pages either side wrote, and the index."""
        g, mirror = self.graph, self.mirror
        problems = []
        if not np.array_equal(np.unique(device_pages), np.unique(host_pages)):
            problems.append(f"pages written: device {np.unique(device_pages)[:10].tolist()} host "
                            f"{np.unique(host_pages)[:10].tolist()}")
        pool, wpool, index = g.host_arrays()
        d_index = mirror.index.copy_to_host()[:, :mirror.num_pages]
        if mirror.num_pages != index.shape[1] or not np.array_equal(d_index, index):
            problems.append("index")
        P = g.page_size
        pages = np.unique(np.concatenate([device_pages, host_pages])).astype(np.int64)
        pages = pages[pages < g.physical_pages_used]
        if len(pages):
            for name, device, host in (("", mirror.pool, pool), ("weights of ", mirror.weights, wpool)):
                if host is None:
                    continue
                got = self._read_pages(device, pages)
                for p in pages[np.any(got != host.reshape(-1, P)[pages], axis=1)][:10]:
                    problems.append(f"{name}physical page {int(p)}")
        return problems

    def _read_pages(self, device, pages: np.ndarray) -> np.ndarray:
        """The listed physical pages of a device pool, gathered on the device, one copy back."""
        k, P = _kernels(), self.graph.page_size
        block = self._shape(PAGE_BLOCK)
        d_pages = k.cuda.to_device(pages.astype(np.int64))
        out = self.workspace.get(f"check.{device.dtype}", device.dtype, len(pages) * P)
        k.gather_pages[self._grid(len(pages) * block, block), block](device, d_pages, len(pages), P, out)
        return out[:len(pages) * P].copy_to_host().reshape(len(pages), P)

    # ---- the device work -------------------------------------------------------------
    def _apply_on_device(self, batch: batch_rules.Batch) -> np.ndarray:
        self.last_flow, self._fused_info = "", None          # this batch's, not an earlier one's
        self.last_long_lists = 0
        entries = batch.size if batch.directed else 2 * batch.size
        # lists moved and index columns shifted: the traversal kernels' directory follows (its
        # time is the batch's: kernels.graph.directory). Weight changes move no list: skipped
        moved = bool(len(batch.insert_u) or len(batch.delete_u))
        if entries <= COMPACT_MAX_ENTRIES:
            return self._apply_compact(batch, refresh_directory=moved)   # queued before its one wait
        self.last_flow = "full"
        pages = self._apply_full(batch)
        if moved:
            self.mirror.refresh_directory()
            cuda.synchronize()
        return pages

    @staticmethod
    def _group_on_host(batch: batch_rules.Batch, weighted: bool, wdtype, out=None, w_out=None, scratch=None,
                       chunks=None):
        """The batch's adjacency entries grouped by (part, source) on the host, before the
        upload: compiled passes (:func:`_host_grouping`) writing, from ``out[HEADER_WORDS]``
        on, the touched sources ascending (t), the entries' sources and targets in group order
        (M each; a self-loop's mirror entry is dropped), the 3t + 1 group starts and the tags;
        the weights into ``w_out``. Returns (t, M). Without ``out``: (T, S, src, dst, tag, w) as
        arrays of their own (``w`` None when unweighted), for the tests and diagnostics.
        ``chunks``: threads of the grouping (default: one per ``GROUP_CHUNK_ENTRIES`` entries, at
        most numba's thread count; one runs the serial passes)."""
        ids = [np.ascontiguousarray(a, dtype=np.int32) for a in (batch.delete_u, batch.delete_v, batch.insert_u,
                                                                  batch.insert_v, batch.reweight_u, batch.reweight_v)]
        edges = len(ids[0]) + len(ids[2]) + len(ids[4])
        if edges >= 1 << 30:                 # a tag has 30 bits in the grouping's packed words
            raise ValueError(f"a compact batch holds fewer than 2^30 edges, not {edges}")
        entries = edges if batch.directed else 2 * edges
        if weighted:
            iw = np.ascontiguousarray(batch.insert_w, dtype=wdtype)
            rw = np.ascontiguousarray(batch.reweight_w, dtype=wdtype)
        else:
            iw = rw = np.zeros(0, dtype=np.float64)
        alone = out is None
        if alone:
            out = np.empty(HEADER_WORDS + 8 * entries + 1, dtype=np.int64)
            w_out = np.empty(entries, dtype=wdtype) if weighted else None
        if scratch is None or len(scratch) < 4 * entries:
            scratch = np.empty(4 * entries, dtype=np.int64)
        if chunks is None:
            from numba import get_num_threads

            chunks = min(get_num_threads(), entries // GROUP_CHUNK_ENTRIES)
        serial, parallel = _host_grouping()
        common = (out, HEADER_WORDS, *ids, iw, rw, w_out if weighted else iw, scratch, bool(batch.directed),
                  bool(weighted))
        t, M = parallel(*common, int(chunks)) if chunks > 1 else serial(*common)
        if not alone:
            return t, M
        at = HEADER_WORDS
        T = out[at:at + t].astype(np.int32)
        src, dst = out[at + t:at + t + M].astype(np.int32), out[at + t + M:at + t + 2 * M].astype(np.int32)
        S = out[at + t + 2 * M:at + 4 * t + 2 * M + 1].copy()
        tag = out[at + 4 * t + 2 * M + 1:at + 4 * t + 3 * M + 1].copy()
        return T, S, src, dst, tag, (w_out[:M].copy() if weighted else None)

    def _grouping_scratch(self, entries: int) -> np.ndarray:
        """The host grouping's scratch (int64, four words an entry), kept and grown."""
        scratch = self._scratch
        if scratch is None or len(scratch) < 4 * entries:
            scratch = self._scratch = np.empty(int(4 * entries * 1.25) + 64, dtype=np.int64)
        return scratch

    def _apply_compact(self, batch: batch_rules.Batch, *, refresh_directory: bool = True) -> np.ndarray:
        """A batch whose work is sized by its touched vertices and units (see the module): the only
        passes over the whole graph are the index shift (a copy of columns) and the vertex
        directory's rebuild (``refresh_directory``).

        With ``COMPACT_FUSED`` (the default) the whole batch is one cooperative launch
        (``fused_c``) and one wait: its read-back says whether the batch was written, refused
        (nothing written), or found a buffer made before the launch too small (nothing written:
        the split launches below finish it from the same front results, and the buffers grow for
        later batches). Otherwise six to eight launches, with a read-back of the totals before
        writing."""
        c = self._compact_inputs(batch)
        if c is None:
            return np.zeros(0, dtype=np.int64)
        if COMPACT_FUSED:
            self.last_flow = "fused"
            pages, info = self._compact_fused(c, refresh_directory)
            if pages is not None:
                return pages
            self.last_flow = "fused, then split"
            self._split_parts(c)
        else:
            self.last_flow = "split"
            self._split_parts(c)
            info = self._compact_front(c)
        return self._compact_write(c, info, refresh_directory)

    def _compact_inputs(self, batch: batch_rules.Batch):
        """Group the batch on the host, queue its uploads, and name the device buffers both
        compact flows use; None for a batch without entries."""
        k = _kernels()
        g, mirror, ws = self.graph, self.mirror, self.workspace
        c = _CompactBatch()
        c.batch = batch
        c.P, c.n_ids, c.n_pages = g.page_size, g.next_vertex_id, mirror.num_pages
        c.n1 = c.n_ids + 1
        c.weighted, c.wdtype = g.weighted, g.weight_dtype
        if not self._upload_grouped(c, batch):
            return None
        t, M = c.t, c.M
        c.long_list = ws.get("c.long", np.int64, LONG_WORDS * M)
        c.wdummy = ws.get("wdummy", c.wdtype, 1)
        c.epos = ws.get("epos", np.int64, M)
        c.skey = ws.get("skey", np.int64, M)
        c.perm = ws.get("perm", np.int64, M)
        c.dfull = ws.get("dfull", np.int64, c.n_ids + 1)      # kept between batches, never cleared
        c.ifull = ws.get("ifull", np.int64, c.n_ids + 1)
        c.newoff = ws.get("newoff", np.int32, c.n_ids)
        c.cpos = ws.get("c.cpos", np.int64, t)
        c.utouched = ws.get("c.utouched", np.uint8, t)
        c.um = ws.get("c.um", np.int64, t)
        # 2-D buffers as wide as their storage (the kernels read the first t or t + 1 columns),
        # the same span objects while the storage stays (a fused launch compares by identity)
        held = ws.held_span
        vals = ws.get("c.vals", np.int64, 4 * t)
        c.vals = held("c.vals", vals, 0, (4, vals.size // 4))
        pre = ws.get("c.pre", np.int64, 4 * (t + 1))
        c.pre = held("c.pre", pre, 0, (4, pre.size // 4))
        c.desc_dummy = held("desc_dummy", ws.get("desc_dummy", np.int32, DESC_ROWS), 0, (DESC_ROWS, 1))
        c.ssrc = ws.get("ssrc", np.int32, M)
        c.stag = ws.get("stag", np.int64, M)
        c.spos = ws.get("spos", np.int64, M)
        c.sw = ws.get("sw", c.wdtype, M)
        c.info = ws.get("info", np.int64, INFO_WORDS)
        # the vertex directory, current at a batch's start (rebuilt after every sync and batch that
        # moves lists); one too short for the ids (never built) is not read
        directory = mirror.directory
        c.directory_current = bool(directory is not None and len(directory[0]) >= c.n_ids)
        c.by_directory = bool(FRONT_BY_DIRECTORY and c.directory_current)
        c.k = k
        return c

    def _upload_grouped(self, c, batch: batch_rules.Batch) -> bool:
        """The batch grouped on the host and its one upload queued (two with weights): sets
        ``c.t``, ``c.M``, ``c.n_reweight``, the free stack's top, the fused kernel's limits,
        ``c.longs`` and ``c.W``. False for a batch without entries."""
        g, ws = self.graph, self.workspace
        # grouped straight into the pinned buffer the batch is uploaded from: the sizes (HEADER),
        # the touched sources, the entries' sources and targets, the group starts, the tags, then
        # the five failure slots, the fused kernel's long-list count (0), its buffer limits and
        # the free stack's top, written below; one upload (two with weights), queued (an upload
        # costs 40-100 µs of host time on an H200 host; the batch ends waiting, so each name is
        # uploaded once a batch)
        edges = len(batch.delete_u) + len(batch.insert_u) + len(batch.reweight_u)
        bound = edges if batch.directed else 2 * edges
        free = g.free_page_stack()
        # at most: t <= M <= bound
        longs = ws.staging("c.longs", np.int64, HEADER_WORDS + 7 * bound + 1 + 6 + LIMIT_WORDS + min(len(free), bound))
        w_host = ws.staging("W", c.wdtype, bound) if c.weighted else None
        t, M = self._group_on_host(batch, c.weighted, c.wdtype, longs, w_host, self._grouping_scratch(bound))
        if M == 0:
            return False
        c.t, c.M = t, M
        at = HEADER_WORDS + 4 * t + 2 * M + 1          # the group starts' end
        c.n_reweight = int(longs[at - 1] - longs[at - 1 - t])     # S[3t] - S[2t]
        # the free stack's top: at most as many pages as the batch inserts entries can be opened
        # (the fused kernel's verdict checks it), and the split flow uploads what it takes
        c.free, c.n_free = free, len(free)
        c.free_up = min(c.n_free, M)
        # the fused kernel's buffers (the split launches size theirs from the totals read back)
        c.limits = self._compact_limits(c) if COMPACT_FUSED else np.zeros(LIMIT_WORDS, dtype=np.int64)
        longs[:HEADER_WORDS] = (t, M, c.n_pages, c.n1, c.free_up - 1, c.n_free, g.physical_pages_used, c.free_up)
        at += M                                        # past the tags
        longs[at:at + 5] = batch_rules.NO_FAILURE
        longs[at + 5] = 0
        longs[at + 6:at + 6 + LIMIT_WORDS] = c.limits
        at += 6 + LIMIT_WORDS
        longs[at:at + c.free_up] = c.free[c.n_free - c.free_up:]
        c.longs = ws.send("c.longs", longs, at + c.free_up, asynchronous=True)
        c.W = ws.send("W", w_host, M, asynchronous=True) if c.weighted else ws.get("W", c.wdtype, M)
        return True

    def _front_directory(self, c):
        """The directory arrays the front phase reads (stand-ins when it does not)."""
        if c.by_directory:
            return self.mirror.directory
        ws = self.workspace
        return ws.get("c.noloc", np.int64, 1), ws.get("c.nodegree", np.int32, 1)

    def _compact_limits(self, c) -> np.ndarray:
        """The fused kernel's buffers, sized before the launch from what earlier batches needed
        (``_compact_room``), and their limits as the kernel's verdict reads them."""
        ws, mirror, P = self.workspace, self.mirror, c.P
        room = self.compact_room
        scratch_pages = max(room["scratch"], 1)
        described = max(room["described"], scratch_pages + c.M)
        c.scratch = ws.get("scratch", np.int32, scratch_pages * P)
        c.wscratch = ws.get("wscratch", c.wdtype, scratch_pages * P if c.weighted else 1)
        scratch_pages = c.scratch.size // P
        if c.weighted:
            scratch_pages = min(scratch_pages, c.wscratch.size // P)
        desc = ws.get("desc", np.int32, DESC_ROWS * described)
        described = desc.size // DESC_ROWS
        c.desc = ws.held_span("desc", desc, 0, (DESC_ROWS, described))
        # the fused launch's read-back in one buffer: its info words, then the pages it wrote
        c.out_base = ws.get("c.pages", np.int64, INFO_WORDS + described + c.n_reweight)
        c.fused_info = ws.held_span("c.fused_info", c.out_base, 0, INFO_WORDS)
        c.out = ws.held_span("c.out", c.out_base, INFO_WORDS, c.out_base.size - INFO_WORDS)
        c.new_index = self._index_buffer(c.n_pages + c.M)
        c.scrmap = ws.get("scrmap", np.int32, c.n_pages)
        limits = np.array([mirror.capacity_pages, scratch_pages, described, c.out.size, c.new_index.shape[1],
                           c.free_up], dtype=np.int64)
        if len(limits) != LIMIT_WORDS:       # the kernel slices LIMIT_WORDS of them; the free stack follows
            raise RuntimeError(f"the fused launch's limits are {len(limits)} words, its kernel reads {LIMIT_WORDS}")
        return limits

    def _compact_fused(self, c, refresh_directory: bool):
        """One cooperative launch and one wait. Returns (pages written, info); pages is None
        where the batch was not written because a buffer was too small (info has its totals)."""
        k, ws, mirror = c.k, self.workspace, self.mirror
        block = self._shape(WARP_BLOCK)
        wpool = mirror.weights if c.weighted else c.wdummy
        # read by the front phase where current (``_front_directory``), rebuilt at the end where the
        # batch moves lists (grown first where the ids outgrew it: then it is not read, c.by_directory)
        loc, degree = mirror.directory_arrays() if refresh_directory else self._front_directory(c)
        refresh = (REFRESH_NONE if not refresh_directory else
                   REFRESH_PATCH if DIRECTORY_PATCH and c.directory_current else REFRESH_REBUILD)
        kernel = k.fused_c(block, FUSED_MAX_REGISTERS)
        c.partial = self._partial(k)                     # the grid scan's block sums; caps the grid
        # what changes every batch is in c.longs (HEADER): batch to batch these are the same
        # objects but for the two index buffers, which swap
        args = (c.longs, mirror.pool, mirror.index, c.P, c.epos, c.skey, c.perm, c.dfull, c.ifull, c.cpos,
                c.utouched, c.um, c.vals, c.desc_dummy, c.newoff, self._gaps(), c.W, int(c.weighted), c.ssrc,
                c.stag, c.spos, c.sw, c.pre, c.fused_info, wpool, c.scratch, c.wscratch, c.scrmap, c.desc, c.out,
                c.new_index, loc, degree, refresh, c.long_list, int(c.by_directory),
                int(SCAN_BY_GRID), c.partial, int(WARP_PASSES))
        grid = self._fused_grid(kernel, args, block, c)
        self._launch_fused(kernel, grid, block, args)
        head = min(c.out.size, FUSED_PAGES_READ)
        back = ws.download("c.pages", c.out_base, INFO_WORDS + head, asynchronous=True)   # the verdict, totals,
        k.cuda.synchronize()                                   # stamps and pages; the batch's one wait
        info = back[:INFO_WORDS].copy()
        pages = back[INFO_WORDS:]
        verdict = int(info[VERDICT])
        if verdict == 1:
            if refresh == REFRESH_REBUILD and not c.directory_current:
                # ``directory_arrays`` grew it for this batch (new arrays, never filled) and the
                # refused launch wrote none of it: rebuilt, so that no later batch reads it unfilled
                mirror.refresh_directory()
            raise batch_rules.refusal(self.graph, c.batch, *batch_rules.first_failure(info[:5].copy()))
        if verdict == 2:
            self._grow_room(info)
            return None, info
        self._fused_info = (info, refresh_directory)
        new_pages, n_q = int(info[5]), int(info[6])
        written = n_q + c.n_reweight
        pages = pages[:written].copy() if written <= head else ws.download("c.pages", c.out, written).copy()
        self._spare_index = mirror.index
        mirror.index = c.new_index
        mirror.num_pages = new_pages
        self._grow_room(info)
        return sorted_unique(pages), info

    def _partial(self, k):
        """The grid scan's block sums: int64[4, blocks], as wide as any fused grid on this device
        (its resident-block limit; the same span object from batch to batch)."""
        width = self._partial_width
        if width is None:
            width = self._partial_width = (1 if self._simulated else
                                           k.cuda.get_current_device().MULTIPROCESSOR_COUNT * MAX_BLOCKS_PER_SM)
        base = self.workspace.get("c.partial", np.int64, 4 * width)
        return self.workspace.held_span("c.partial", base, 0, (4, base.size // 4))

    @property
    def last_phases(self) -> dict:
        """The last written fused launch's phases, microseconds each on the GPU's clock
        (:func:`fused_phases`); empty before any."""
        return fused_phases(*self._fused_info) if self._fused_info is not None else {}

    def _launch_fused(self, kernel, grid: int, block: int, args: tuple) -> None:
        """The fused launch; planned, it rewrites only the arguments that are not the objects of
        this updater's last fused launch (``FastKernel.launch_known``: most are the same
        buffers, and comparing 35 arguments' words cost more host time than the launch)."""
        last, self._fused_last = self._fused_last, None       # unknown until this launch returns
        if not isinstance(kernel, FastKernel):
            kernel[grid, block](*args)
        elif last is not None and last[0] is kernel and len(last[1]) == len(args):
            changed = list(compress(range(len(args)), map(is_not, args, last[1])))
            kernel.launch_known(grid, block, args, changed, self._launch_token)
        else:
            kernel.launch(grid, block, 0, 0, args, owner=self._launch_token)
        self._fused_last = (kernel, args)

    def _fused_grid(self, kernel, args, block: int, c) -> int:
        """Blocks of the fused launch: every block the device keeps resident with this kernel (a
        cooperative launch refuses more), or fewer where the largest phase needs fewer."""
        if self._simulated:
            return 1                          # the simulator's grid sync is one block's syncthreads
        key = (id(kernel), c.wdtype.str if c.weighted else "", block)
        limit = self.fused_grid_limits.get(key)   # an updater's mirror lives on one device
        if limit is None:
            from kernels.cuda.fast_launch import materialized

            argtypes = tuple(kernel.typeof_pyval(a) for a in materialized(args))
            limit = self.fused_grid_limits[key] = int(kernel.compile(argtypes).max_cooperative_grid_blocks(block))
            if limit < 1:
                raise RuntimeError(f"the fused batch kernel cannot keep one block of {block} threads resident")
        work = max(c.M, c.t, c.n_pages) * WARP_LANES
        cap = min(FUSED_MAX_BLOCKS or limit, c.partial.shape[1])       # a column of block sums each
        return max(1, min(limit, cap, -(-work // block)))

    def _grow_room(self, info: np.ndarray) -> None:
        """Remember what this batch needed, with headroom, for the next fused launch's buffers."""
        room = self.compact_room
        room["scratch"] = max(room["scratch"], int(int(info[9]) * ROOM_GROWTH))
        room["described"] = max(room["described"], int(int(info[6]) * ROOM_GROWTH))

    def _split_parts(self, c) -> None:
        """The uploaded parts as spans of ``c.longs`` for the split launches (the fused kernel
        finds them itself from the header, so a fused batch makes none: 25 µs of host time on an
        H200 host). Spans (kernels.cuda.fast_launch.Span): numba's slicing cost 20-90 µs a view."""
        span, d_longs, t, M = self.workspace.span, c.longs, c.t, c.M
        at = HEADER_WORDS
        c.T, c.src, c.dst = span(d_longs, at, t), span(d_longs, at + t, M), span(d_longs, at + t + M, M)
        at += t + 2 * M
        c.d_S = span(d_longs, at, 3 * t + 1)
        at += 3 * t + 1
        c.tag = span(d_longs, at, M)
        c.fail = span(d_longs, at + M, 5)

    def _compact_front(self, c) -> np.ndarray:
        """The split flow's first launches, up to the read-back of the failures and totals."""
        k, ws = c.k, self.workspace
        block = self._shape(BLOCK)
        warp_block = self._shape(WARP_BLOCK)
        grid = self._grid
        mirror = self.mirror
        k.front_c[grid(max(c.M, c.t) * WARP_LANES, warp_block), warp_block](
            c.src, c.dst, c.tag, c.d_S, c.t, mirror.pool, mirror.index, c.n_pages, c.P, c.n1, c.epos,
            c.skey, c.perm, c.fail, c.T, c.dfull, c.ifull, c.cpos, c.utouched, c.um, c.vals,
            c.desc_dummy, c.newoff, int(c.by_directory), *self._front_directory(c))
        k.sort_groups[grid(3 * c.t, block), block](c.d_S, 3 * c.t, c.skey, c.perm, self._gaps())
        k.check_c[grid(c.M, block), block](c.d_S, c.t, c.n1, c.T, c.perm, c.tag, c.epos, c.W, int(c.weighted),
                                           c.skey, c.ssrc, c.stag, c.spos, c.sw, c.fail)
        scan_block = self._shape(SCAN_BLOCK)
        k.scan_columns(scan_block)[1, scan_block](c.vals, c.t, c.pre, c.fail, c.n_pages, c.info)
        return ws.download("info", c.info, INFO_WORDS).copy()      # the one read-back before writing

    def _compact_write(self, c, info: np.ndarray, refresh_directory: bool) -> np.ndarray:
        """The split flow's writing launches, from the totals read back (``info``); a refused
        batch raises here, before anything is written."""
        k, ws = c.k, self.workspace
        cuda = k.cuda
        g, mirror = self.graph, self.mirror
        page_block = self._shape(PAGE_BLOCK)
        warp_block = self._shape(WARP_BLOCK)
        grid = self._grid
        P, t = c.P, c.t
        failure = batch_rules.first_failure(info[:5].copy())
        if failure is not None:
            raise batch_rules.refusal(g, c.batch, *failure)
        new_pages, n_q, n_open, n_freed, n_scr = (int(x) for x in info[5:10])
        high = g.physical_pages_used
        new_high = high + max(0, n_open - c.n_free)
        if new_high > mirror.capacity_pages:
            mirror.ensure_pages(new_high)
        pool = mirror.pool
        wpool = mirror.weights if c.weighted else c.wdummy
        n_top = min(c.n_free, n_open)                           # only the stack's top is taken
        d_free = ws.upload("free", c.free[c.n_free - n_top:], dtype=np.int32, asynchronous=True)
        scrmap = ws.get("scrmap", np.int32, c.n_pages)
        scratch = ws.get("scratch", np.int32, max(n_scr, 1) * P)
        wscratch = ws.get("wscratch", c.wdtype, max(n_scr, 1) * P if c.weighted else 1)
        desc = ws.span(ws.get("desc", np.int32, DESC_ROWS * max(n_q, 1)), 0, (DESC_ROWS, max(n_q, 1)))
        out = ws.get("c.pages", np.int64, n_q + c.n_reweight)       # pages written, one read-back
        new_index = self._index_buffer(new_pages)
        k.copy_c[grid(n_scr * page_block, page_block), page_block](
            t, n_scr, c.cpos, c.vals, c.pre, mirror.index, P, pool, wpool, int(c.weighted), scratch, wscratch,
            scrmap, c.dfull, c.ifull, desc, c.newoff, d_free, n_top, n_top - 1, c.n_free, high, out, new_index)
        n_col_blocks = -(-c.n_pages // page_block)
        k.write_c[grid((n_q + n_freed + n_col_blocks) * page_block, page_block), page_block](
            n_q, n_freed, t, c.cpos, c.vals, c.pre, desc, out, scratch, wscratch, scrmap, mirror.index, P, c.dfull,
            c.skey, c.n1, c.ifull, c.sw, c.newoff, int(c.weighted), pool, wpool, c.n_pages, c.utouched, c.um,
            new_index)
        self._spare_index = mirror.index
        mirror.index = new_index
        mirror.num_pages = new_pages
        if c.n_reweight:
            k.reweigh[grid(c.n_reweight * WARP_LANES, warp_block), warp_block](
                c.d_S, t, c.ssrc, c.skey, c.sw, pool, new_index, new_pages, P,
                wpool, ws.span(out, n_q, c.n_reweight))
        if refresh_directory:
            mirror.refresh_directory()
        pages = ws.download("c.pages", out, n_q + c.n_reweight, asynchronous=True)
        cuda.synchronize()
        return sorted_unique(pages)

    def _apply_full(self, batch: batch_rules.Batch) -> np.ndarray:
        """Large batches: per-vertex and per-page arrays over the whole graph (their passes cost
        less than grouping a large batch on the host)."""
        from kernels.operators.launch import resident_grid

        k = _kernels()
        cuda = k.cuda
        g, mirror, ws = self.graph, self.mirror, self.workspace
        block = self._shape(BLOCK)
        page_block = self._shape(PAGE_BLOCK)
        warp_block = self._shape(WARP_BLOCK)
        grid = self._grid
        P = g.page_size
        n_ids = g.next_vertex_id
        n1 = n_ids + 1
        n_pages = mirror.num_pages
        weighted = g.weighted
        directed = batch.directed
        parts = ((batch.delete_u, batch.delete_v), (batch.insert_u, batch.insert_v),
                 (batch.reweight_u, batch.reweight_v))
        n_edges = [len(u) for u, _ in parts]
        edge_off = np.array([0, n_edges[0], n_edges[0] + n_edges[1]], dtype=np.int64)
        per = 1 if directed else 2
        entry_off = np.array([0, per * n_edges[0], per * (n_edges[0] + n_edges[1]),
                              per * sum(n_edges)], dtype=np.int64)
        m_edges, m_entries = sum(n_edges), int(entry_off[3])
        wdtype = g.weight_dtype
        # the parts one after another, each array in one copy through a pinned buffer
        d_U = ws.upload("U", *(u for u, _ in parts), dtype=np.int32)
        d_V = ws.upload("V", *(v for _, v in parts), dtype=np.int32)
        if weighted:
            d_W = ws.upload("W", np.zeros(n_edges[0], dtype=wdtype), batch.insert_w, batch.reweight_w, dtype=wdtype)
        else:
            d_W = ws.get("W", wdtype, m_edges)
        # offsets and the failure slots in one small copy
        # (and two counters, zero: the long lists' packed one, the groups sorted by a block)
        d_small = ws.upload("small", edge_off, entry_off, np.full(5, batch_rules.NO_FAILURE, dtype=np.int64),
                            _ZERO, _ZERO, dtype=np.int64)
        d_edge_off, d_entry_off, fail, long_count = d_small[0:3], d_small[3:7], d_small[7:12], d_small[12:13]
        big_count = d_small[13:14]
        pool = mirror.pool
        wpool = mirror.weights if weighted else ws.get("wdummy", wdtype, 1)
        index = mirror.index
        esrc = ws.get("esrc", np.int32, m_entries)
        edst = ws.get("edst", np.int32, m_entries)
        etag = ws.get("etag", np.int64, m_entries)
        epos = ws.get("epos", np.int64, m_entries)
        ekey = ws.get("ekey", np.int64, m_entries)
        groups = 3 * n_ids
        # the per-part counts of each source, then each source's long-list claim (expand)
        cnt = ws.get("cnt", np.int64, groups + 1 + n_ids)
        k.zero[grid(groups + 1 + n_ids, block), block](cnt, groups + 1 + n_ids)
        # the long lists' pairs: keys then positions, at most half full (a pair an entry at most)
        slots = pair_table_slots(m_entries)
        htab = ws.get("htab", np.int64, 2 * slots)
        k.zero[grid(2 * slots, block), block](htab, 2 * slots)
        long_list = ws.get("long", np.int64, LONG_WORDS * max(1, min(n_ids, m_entries)))
        # the vertex directory, current at a batch's start (rebuilt after every sync and batch
        # that moves lists); one too short for the ids (never built) is not used
        directory = mirror.directory
        by_directory = bool(EXPAND_BY_DIRECTORY and directory is not None and len(directory[0]) >= n_ids)
        loc, dgr = directory if by_directory else (ws.get("loc dummy", np.int64, 1), ws.get("dgr dummy", np.int32, 1))
        k.expand[grid(m_entries * WARP_LANES, warp_block), warp_block](
            d_U, d_V, d_edge_off, d_entry_off, int(directed), pool, index,
            n_pages, P, n1, n_ids, esrc, edst, etag, epos, ekey, cnt, fail,
            FULL_LONG_LIST, long_list, long_count, htab, slots - 1, int(by_directory), loc, dgr)
        k.long_scan[resident_grid(warp_block), warp_block](pool, index, P, n1, long_list, long_count, htab,
                                                           slots - 1)
        from kernels.operators.scan import scan_array

        S = ws.get("S", np.int64, groups + 1)
        scan_total = ws.get("S.total", np.int64, 1)
        scan_array(cnt, groups + 1, S, scan_total, ws)
        perm = ws.get("perm", np.int64, m_entries)
        skey = ws.get("skey", np.int64, m_entries)
        k.scatter[grid(m_entries, block), block](esrc, ekey, d_entry_off, n_ids, S, cnt, perm, skey, edst, epos,
                                                 n1, htab, slots - 1)
        gaps = self._gaps()
        # groups past SORT_THREAD_MAX entries (a hub's, in a mixed batch) listed, then sorted a block each
        thread_max = max(1, int(SORT_THREAD_MAX))
        big = ws.get("big", np.int64, m_entries // (thread_max + 1) + 1)
        k.sort_small_groups[grid(groups, block), block](S, groups, skey, perm, gaps, thread_max, big, big_count)
        k.sort_big_groups[resident_grid(block), block](S, skey, perm, big, big_count)
        ssrc = ws.get("ssrc", np.int32, m_entries)
        stag = ws.get("stag", np.int64, m_entries)
        spos = ws.get("spos", np.int64, m_entries)
        sw = ws.get("sw", wdtype, m_entries)
        # entries kept (a self-loop's mirror entry is not) are read from S[groups] on the device
        k.gather[grid(m_entries, block), block](perm, S, groups, esrc, etag, epos,
                                                d_W, int(weighted), ssrc, stag, spos, sw)
        k.check[grid(m_entries, block), block](S, n_ids, n1, ssrc, skey, stag, spos, fail)
        touched = ws.get("touched", np.uint8, n_pages)
        k.zero[grid(n_pages, block), block](touched, n_pages)
        k.mark_touched[grid(n_ids, block), block](S, n_ids, pool, index, n_pages, P, touched)
        k_out = ws.get("k_out", np.int64, n_pages)
        dstart = S[:n_ids + 1]
        istart = S[n_ids:2 * n_ids + 1]
        desc_dummy = ws.get("desc_dummy", np.int32, DESC_ROWS)[:DESC_ROWS].reshape(DESC_ROWS, 1)
        newoff = ws.get("newoff", np.int32, n_ids)
        k.count_pages[grid(n_pages, block), block](pool, index, n_pages, P, touched, dstart, istart, k_out,
                                                   desc_dummy, newoff)
        from kernels.operators.scan import exclusive_scan

        cols = n_pages + 1
        packed = ws.get("packed", np.int64, 3 * cols)[:3 * cols].reshape(3, cols)
        sums = ws.get("sums", np.int64, 5 * cols)[:5 * cols].reshape(5, cols)
        sum_total = ws.get("sums.total", np.int64, 1)
        for which in range(3):
            exclusive_scan(k.column_sums_load, (index, touched, k_out, n_pages, which), cols,
                           packed[which], sum_total, ws)
        k.unpack_sums[grid(cols, block), block](packed, cols, sums)
        info = ws.get("info", np.int64, 11)
        k.totals[1, 1](fail, sums, n_pages, long_count, info)
        info = ws.download("info", info, 11)                 # the one read-back before writing
        self.last_long_lists = int(info[10])
        failure = batch_rules.first_failure(info[:5].copy())
        if failure is not None:
            raise batch_rules.refusal(g, batch, *failure)
        new_pages, n_q, n_open, _n_freed, n_scr = (int(x) for x in info[5:10])
        n_free = len(g.free_page_stack())
        high = g.physical_pages_used
        new_high = high + max(0, n_open - n_free)
        if new_high > mirror.capacity_pages:
            mirror.ensure_pages(new_high)
        pool = mirror.pool
        wpool = mirror.weights if weighted else wpool
        scrmap = ws.get("scrmap", np.int32, n_pages)
        scratch = ws.get("scratch", np.int32, max(n_scr, 1) * P)
        wscratch = ws.get("wscratch", wdtype, max(n_scr, 1) * P if weighted else 1)
        k.copy_old[grid(n_pages * page_block, page_block), page_block](
            index, n_pages, P, touched, sums, pool, wpool, int(weighted), scrmap, scratch, wscratch)
        desc = ws.get("desc", np.int32, DESC_ROWS * max(n_q, 1))[:DESC_ROWS * max(n_q, 1)].reshape(
            DESC_ROWS, max(n_q, 1))
        k.describe[grid(n_pages, block), block](scratch, scrmap, index, n_pages, P, touched, dstart, istart,
                                                sums, desc, newoff)
        d_free = ws.upload("free", g.free_page_stack(), dtype=np.int32)
        phys_out = ws.get("phys_out", np.int64, max(n_q, 1))
        k.choose_pages[grid(n_q, block), block](desc, n_q, index, sums, d_free, n_free, high, phys_out)
        write_block = warp_block if WRITE_BY_WARP else page_block
        k.write_pages[grid(n_q * (WARP_LANES if WRITE_BY_WARP else page_block), write_block), write_block](
            desc, n_q, phys_out, scratch, wscratch, scrmap, index, P, dstart, skey, n1, istart, skey, sw,
            newoff, int(weighted), pool, wpool, int(WRITE_BY_WARP))
        k.free_pages[grid(n_pages * page_block, page_block), page_block](index, n_pages, P, touched, k_out,
                                                                         pool, wpool, int(weighted))
        new_index = self._index_buffer(new_pages)
        k.rewrite_index[grid(n_pages, block), block](index, n_pages, P, touched, k_out, sums, desc, phys_out,
                                                     scratch, scrmap, new_index)
        self._spare_index = mirror.index
        mirror.index = new_index
        mirror.num_pages = new_pages
        n_reweight = len(batch.reweight_u) * (1 if directed else 2)
        pages = [ws.download("phys_out", phys_out, n_q).copy()] if n_q else []
        if n_reweight:
            rpages = ws.get("rpages", np.int64, n_reweight)
            k.zero[grid(n_reweight, block), block](rpages, n_reweight)
            k.reweigh[grid(n_reweight * WARP_LANES, warp_block), warp_block](
                S, n_ids, ssrc, skey, sw, pool, new_index, new_pages, P,
                wpool, rpages)
            kept = self._kept_host(batch)
            pages.append(ws.download("rpages", rpages, kept).copy())
        cuda.synchronize()
        return sorted_unique(np.concatenate(pages)) if pages else np.zeros(0, dtype=np.int64)

    @staticmethod
    def _kept_host(batch) -> int:
        if batch.directed:
            return len(batch.reweight_u)
        return 2 * len(batch.reweight_u) - int(np.count_nonzero(batch.reweight_u == batch.reweight_v))

    def _gaps(self):
        """The sort's gap sequence on the device: uploaded once, the same view every batch (a
        fresh view costs a launch its planned words)."""
        gaps = getattr(self, "_gaps_view", None)
        if gaps is None:
            gaps = self.workspace.get("gaps", np.int64, len(SORT_GAPS))[:len(SORT_GAPS)]
            gaps.copy_to_device(np.array(SORT_GAPS, dtype=np.int64))
            self._gaps_view = gaps
        return gaps

    def _index_buffer(self, columns: int):
        """A device index of at least ``columns`` columns that is not the mirror's current one."""
        from numba import cuda

        spare = self._spare_index
        if spare is None or spare.shape[1] < columns or spare is self.mirror.index:
            cap = max(columns, self.mirror.index.shape[1], 1)
            spare = cuda.device_array((4, int(np.ceil(cap * 1.5))), dtype=np.int32)
        return spare
