"""``gpu-adaptive``: row-binned CSR SpMV for skewed row lengths, all in one kernel launch.

A power-law matrix mixes millions of rows of a few entries with rows of a million. No single
"threads per row" suits both, so rows are sorted into three kinds by their length ``L``, each
handled the way that keeps every lane busy and every load coalesced:

* **short rows** (``L <= short_row``, most rows), in their natural order (no row list), one of
  two ways (``short_mode``):

  - ``group``: ``threads_per_row`` lanes (1-32, a power of two; default 4) share a row, as in
    ``gpu-tunable``: a block takes ``block / threads_per_row`` consecutive rows, lane ``i`` of
    a row's group reads entries ``start + i``, ``start + i + T``, ... (the group's loads are
    consecutive addresses), four loads in flight per lane, then a shuffle reduction inside
    the group (a group never straddles a warp). The rows of the other kinds count as done
    here. Cheap per entry: two row-pointer loads and ``log2 T`` shuffles per row.
  - ``stream``: a warp takes 32 *consecutive* rows and walks the concatenated entries of its
    rows 32 at a time — merge-path inside a warp: each lane finds the row of its entry by a
    binary search over the warp's row offsets, the products are summed per row by a
    segmented scan with shuffles, and each row's piece is handed to the lane that owns the
    row. Every lane is busy and every entry load coalesced however short the rows, at ~16
    shuffles a round.
  - ``auto`` (default, :func:`choose_short_mode`): ``stream`` when the short rows' gathers
    are scattered (random columns: the L2 bounds the product and stream mode was the fastest
    on every such matrix measured), ``group`` when they are local (stencils: 1.5-2x faster
    there). Decided on the host from a sample of rows, before the kernel is compiled.
* **vector rows** (``short_row < L <= long_row``): one warp per row, from a row list sorted
  by decreasing length (the longest start first); four loads in flight per lane, then a
  shuffle reduction.
* **long rows** (``L > long_row``): split into ``ceil(L / long_row)`` equal chunks, one block
  per chunk (four loads in flight per thread, a block reduction). Each chunk writes its
  partial sum to a scratch slot; the last chunk of a row to finish (an atomic ticket after a
  ``threadfence``) adds the row's partials in chunk order and writes ``y`` — so a hub row is
  spread over many SMs, ``y`` needs no zeroing pass, and the result is deterministic.

All three run in **one launch**: the grid's first blocks are the long-row chunks (the biggest
pieces start first), then the vector rows, then the short rows (small uniform pieces, a short
tail). One launch means no idle gap and no tail between per-bin kernels.

**Preprocessing** (:func:`row_bins`): vectorised NumPy over the row lengths, once per matrix
and ``(short_row, long_row)``; it runs in the upload stage (its arrays go to the device there)
and is cached for the next run of the same matrix; the run's notices give its time. Its
device data: the vector-row list (int32 per vector row) and the chunk tables (a few bytes per
chunk); short rows need none.

**Loads** (``loads``): the matrix entries are read with ``ld.global.cs`` (evict-first, see
:mod:`gpu_loads`) so that they do not push ``x`` out of the L2 — except, with ``auto``, in
group-mode short rows, whose lines are reused from L1 between a group's load instructions.

The kernel is specialised on ``(block, short_row, value type, row-pointer width, hardware
shuffles, short_mode, threads_per_row, loads)`` and cached. Shuffles come from
:mod:`kernels.cuda.warp`: ``cuda.shfl_*_sync`` on a GPU; under the CUDA simulator (which has
none) the project's one emulation, an exchange through shared memory with the same semantics
and a ``syncthreads``. The emulation needs every thread of a block to make the same shuffle
calls: the group reduction is unconditional, and under the simulator a block's warps run the
same number of stream rounds (the block's maximum; the extra rounds add nothing); on a GPU each
warp stops when its rows are done.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numba
import numpy as np
from numba import cuda

from kernels.algorithms.spmv.gpu_common import DeviceSpmvExecution, blocks_for, to_device, typed_zero
from kernels.algorithms.spmv.gpu_loads import make_entry_load
from kernels.cuda.device import NOMINAL
from kernels.cuda.jit import jit as kernel_jit
from kernels.cuda.warp import WARP, exchange_slots, make_shuffles
from kernels.measure.targets import simulator_enabled

# ---- host preprocessing ------------------------------------------------------------------

@dataclass(frozen=True)
class RowBins:
    """Which rows go where (see the module docstring)."""

    short_row: int
    long_row: int
    n_short: int             # rows with at most short_row entries (no list: natural order)
    vec_rows: np.ndarray     # int32, rows with short_row < L <= long_row, longest first
    long_rows: np.ndarray    # int32, rows with L > long_row, longest first
    long_first: np.ndarray   # int64, first chunk of each long row; one more entry: the chunk count
    chunk_slot: np.ndarray   # int32, the long row (index into long_rows) of each chunk
    chunk_span: np.ndarray   # int64, entries [lo, hi) of chunk k at [2k, 2k + 1]
    seconds: float           # host time spent binning

    @property
    def n_chunks(self) -> int:
        return int(len(self.chunk_slot))

    @property
    def nbytes(self) -> int:
        """Device bytes of the row list and chunk tables (the tickets included)."""
        return int(self.vec_rows.nbytes + self.long_rows.nbytes + self.long_first.nbytes
                   + self.chunk_slot.nbytes + self.chunk_span.nbytes + 4 * len(self.long_rows))


def chunk_bounds(start, length, c, n):
    """Entries ``[lo, hi)`` of chunk ``c`` of the ``n`` chunks of a row: equal pieces, an exact
    cover of ``[start, start + length)`` (NumPy arrays or scalars)."""
    return start + length * c // n, start + length * (c + 1) // n


def row_bins(indptr: np.ndarray, short_row: int, long_row: int) -> RowBins:
    """Bin rows by length: vectorised NumPy, O(n_rows) plus a sort of the non-short rows."""
    if short_row > long_row:
        raise ValueError(f"short_row ({short_row}) must not exceed long_row ({long_row})")
    t0 = time.perf_counter()
    indptr = np.asarray(indptr, dtype=np.int64)
    lengths = np.diff(indptr)
    is_long = lengths > long_row
    is_vec = (lengths > short_row) & ~is_long

    def longest_first(mask):
        rows = np.flatnonzero(mask)
        return rows[np.argsort(-lengths[rows], kind="stable")].astype(np.int32)

    vec_rows = longest_first(is_vec)
    long_rows = longest_first(is_long)
    chunks = -(-lengths[long_rows] // long_row)
    long_first = np.zeros(len(long_rows) + 1, dtype=np.int64)
    np.cumsum(chunks, out=long_first[1:])
    chunk_slot = np.repeat(np.arange(len(long_rows), dtype=np.int32), chunks)
    chunk_span = np.empty(2 * len(chunk_slot), dtype=np.int64)
    chunk_span[0::2], chunk_span[1::2] = chunk_bounds(
        indptr[long_rows][chunk_slot], lengths[long_rows][chunk_slot],
        np.arange(len(chunk_slot), dtype=np.int64) - long_first[chunk_slot], chunks[chunk_slot])
    n_short = int(len(lengths) - len(vec_rows) - len(long_rows))
    return RowBins(short_row, long_row, n_short, vec_rows, long_rows, long_first, chunk_slot, chunk_span,
                   time.perf_counter() - t0)


class _BinCache:
    """The bins of the most recent matrix (one entry: a sweep reuses it, memory stays bounded)."""

    key = None
    bins: RowBins | None = None

    @classmethod
    def get(cls, graph, short_row: int, long_row: int) -> tuple[RowBins, bool]:
        key = (graph.fingerprint, graph.n_rows, graph.nnz, short_row, long_row)
        if cls.key == key and cls.bins is not None:
            return cls.bins, True
        cls.key, cls.bins = key, row_bins(graph.indptr, short_row, long_row)
        return cls.bins, False


# ---- short_mode=auto: are the short rows' gathers scattered? --------------------------------

LINE_BYTES = 128        # one L1 line; a warp's gathers that fall in one line cost one request
SPREAD_WINDOWS = 64     # sample windows of WARP consecutive rows, spread evenly over the matrix
STREAM_SPREAD = 0.5     # above this many distinct lines per gathered entry, stream mode
#: the nominal GPU's L2 (an H100's, 50 MB): a product whose matrix and vectors fit in it evicts
#: nothing, so stream mode's reason to exist (keep x in the L2 while the matrix streams past) is
#: gone; a fixed figure, so that auto depends on the input only
L2_BYTES = NOMINAL.l2_bytes


def gather_spread(indptr: np.ndarray, indices: np.ndarray, short_row: int, itemsize: int) -> float:
    """Distinct ``LINE_BYTES`` lines of ``x`` per entry gathered by the short rows of 64 sample
    windows of 32 consecutive rows (what a warp covers): about 1 for random columns (every
    gather its own line), 0.03-0.07 for 7- and 27-point stencils (neighbouring rows share
    their lines). NaN when the windows hold no short-row entry."""
    n_rows = len(indptr) - 1
    per_line = max(1, LINE_BYTES // itemsize)
    lines = entries = 0
    for r0 in np.unique(np.linspace(0, max(n_rows - WARP, 0), SPREAD_WINDOWS).astype(np.int64)):
        r1 = min(r0 + WARP, n_rows)
        starts = np.asarray(indptr[r0:r1], dtype=np.int64)
        ends = np.asarray(indptr[r0 + 1:r1 + 1], dtype=np.int64)
        short = (ends - starts) <= short_row
        columns = [indices[a:b] for a, b in zip(starts[short], ends[short], strict=True)]
        if columns:
            found = np.concatenate(columns)
            lines += len(np.unique(found // per_line))
            entries += len(found)
    return lines / entries if entries else float("nan")


def choose_short_mode(indptr: np.ndarray, indices: np.ndarray, short_row: int, itemsize: int,
                      touched_bytes: int | None = None) -> tuple[str, float]:
    """``short_mode=auto``: ``stream`` when the short rows' gathers are scattered (more than
    ``STREAM_SPREAD`` distinct lines per entry: the L2 bounds the product, and a warp walking
    32 rows' entries with streaming loads was the fastest way on every random-column matrix
    of 10^8 entries measured), ``group`` when they are local (stencil-like: ``x`` is reused
    from L1 and the sub-warp groups do less work per entry), and ``group`` too when the
    product's bytes (``touched_bytes``: matrix, x and y) fit in the L2: then nothing is
    evicted, and on the H100 group mode beat stream mode on every such matrix measured but
    one (scattered ones included: hep-th 3.9 against 9.3 µs, ca-HepTh 4.7 against 8.3 µs, a
    200 k-row power-law matrix 38 against 46 µs; as-caida 7.0 against 6.4). Returns the mode
    and the measured spread."""
    spread = gather_spread(indptr, indices, short_row, itemsize)
    if touched_bytes is not None and touched_bytes <= L2_BYTES:
        return "group", spread
    return ("stream" if spread > STREAM_SPREAD else "group"), spread


# ---- the kernel --------------------------------------------------------------------------

SHORT_MODES = ("group", "stream")
LOAD_CHOICES = ("auto", "stream", "plain")


def short_rows_per_piece(block: int, short_mode: str, threads_per_row: int) -> int:
    """Consecutive rows one block takes at a time in the short-row part."""
    return block // threads_per_row if short_mode == "group" else block


@functools.cache  # an lru_cache without bound: one compiled kernel per tuple
def adaptive_kernel(block: int, short_row: int, value_type: str, index_type: str, hardware: bool,
                    short_mode: str = "group", threads_per_row: int = 4, loads: str = "auto",
                    max_registers: int | None = None):
    """The one-launch kernel specialised on its shape (compiled once per argument tuple).
    ``loads`` says which matrix loads stream (see the module docstring); ``max_registers`` caps
    the registers per thread (None: the compiler's choice; used by ``benchmarks/diag``)."""
    if short_mode not in SHORT_MODES:
        raise ValueError(f"short_mode must be one of {SHORT_MODES}")
    tpr = threads_per_row
    if tpr < 1 or tpr > WARP or tpr & (tpr - 1):
        raise ValueError(f"threads_per_row ({tpr}) must be a power of two from 1 to {WARP}")
    grouped = short_mode == "group"
    group_rows_per_piece = block // tpr
    warps = block // WARP
    if block % WARP:
        raise ValueError(f"block ({block}) must be a multiple of {WARP}")
    shuffles = make_shuffles(block, hardware)
    shfl_down, shfl_up, shfl_idx, reset_shuffles = shuffles.down, shuffles.up, shuffles.idx, shuffles.reset
    if loads not in LOAD_CHOICES:
        raise ValueError(f"loads must be one of {LOAD_CHOICES}")
    # streaming loads (ld.global.cs) for the matrix entries, except where "auto" keeps plain
    # loads: group-mode short rows, whose lines are reused from L1 between the group's loads
    stream_load = make_entry_load(loads != "plain", hardware)
    group_load = make_entry_load(loads == "stream", hardware)
    uniform_rounds = not hardware       # the emulated shuffles synchronise the whole block
    slots = exchange_slots(block, hardware)
    offset_slots = 1 if grouped else slots  # the stream rows' integer exchange
    zero = typed_zero(value_type)
    value_nb = getattr(numba, value_type)
    start_zero = np.int32(0) if index_type == "int32" else np.int64(0)
    int32, int64 = numba.int32, numba.int64

    @cuda.jit(device=True)
    def warp_sum(exchange, t, value):
        """Sum over the warp, in lane 0."""
        offset = WARP // 2
        while offset > 0:
            value += shfl_down(exchange, t, value, offset)
            offset //= 2
        return value

    @cuda.jit(device=True)
    def block_sum(exchange, warp_sums, t, value):
        """Sum over the block, in thread 0 (every thread must call it)."""
        value = warp_sum(exchange, t, value)
        if t % WARP == 0:
            warp_sums[t // WARP] = value
        cuda.syncthreads()
        lane = t % WARP
        value = warp_sums[lane] if lane < warps else zero
        value = warp_sum(exchange, t, value)  # every warp folds the warp sums; thread 0's is used
        cuda.syncthreads()                    # warp_sums is written again by the next call
        return value

    def make_dot(load):
        """``(term, leftovers, row_dot)`` reading the matrix entries with ``load``."""

        @cuda.jit(device=True)
        def leftovers(j, end, stride, indices, values, x, a0, a1, a2):
            """Add the last 0-3 entries ``j, j + stride, j + 2 stride`` (those before ``end``) to
            the three accumulators. Every load is issued before any is used: a load and its use
            in one branch each would wait for the loads one at a time."""
            c0 = int32(0)
            c1 = int32(0)
            c2 = int32(0)
            v0 = zero
            v1 = zero
            v2 = zero
            if j < end:
                c0 = load(indices, j)
                v0 = load(values, j)
            if j + stride < end:
                c1 = load(indices, j + stride)
                v1 = load(values, j + stride)
            if j + 2 * stride < end:
                c2 = load(indices, j + 2 * stride)
                v2 = load(values, j + 2 * stride)
            g0 = zero
            g1 = zero
            g2 = zero
            if j < end:
                g0 = x[c0]
            if j + stride < end:
                g1 = x[c1]
            if j + 2 * stride < end:
                g2 = x[c2]
            return a0 + v0 * g0, a1 + v1 * g1, a2 + v2 * g2

        @cuda.jit(device=True)
        def term(j, indices, values, x):
            """``values[j] * x[indices[j]]``, the entry read with ``load``."""
            return load(values, j) * x[load(indices, j)]

        @cuda.jit(device=True)
        def row_dot(j, end, stride, indices, values, x):
            """This lane's share of a row: entries ``j, j + stride, ...`` before ``end``, four
            independent loads in flight, then the 0-3 leftovers loaded before any is used."""
            a0 = zero
            a1 = zero
            a2 = zero
            a3 = zero
            while j + 3 * stride < end:
                a0 += term(j, indices, values, x)
                a1 += term(j + stride, indices, values, x)
                a2 += term(j + 2 * stride, indices, values, x)
                a3 += term(j + 3 * stride, indices, values, x)
                j += 4 * stride
            a0, a1, a2 = leftovers(j, end, stride, indices, values, x, a0, a1, a2)
            return (a0 + a1) + (a2 + a3)

        return term, leftovers, row_dot

    term, leftovers, row_dot = make_dot(stream_load)
    group_row_dot = make_dot(group_load)[2]

    @cuda.jit(device=True)
    def long_row_chunk(k, t, indices, values, x, y, chunk_slot, chunk_span, long_rows, long_first, tickets,
                       partials, ex_f, warp_sums, flag):
        lo = chunk_span[2 * k]
        hi = chunk_span[2 * k + 1]
        a0 = zero
        a1 = zero
        a2 = zero
        a3 = zero
        j = lo + t
        while j + 3 * block < hi:  # four independent loads in flight per thread
            a0 += term(j, indices, values, x)
            a1 += term(j + block, indices, values, x)
            a2 += term(j + 2 * block, indices, values, x)
            a3 += term(j + 3 * block, indices, values, x)
            j += 4 * block
        a0, a1, a2 = leftovers(j, hi, block, indices, values, x, a0, a1, a2)
        total = block_sum(ex_f, warp_sums, t, (a0 + a1) + (a2 + a3))
        slot = chunk_slot[k]
        first = long_first[slot]
        n = long_first[slot + 1] - first
        if t == 0:
            partials[k] = total
            cuda.threadfence()  # the partial is visible device-wide before the ticket is taken
            ticket = cuda.atomic.add(tickets, slot, 1)
            flag[0] = 1 if ticket == n - 1 else 0
        cuda.syncthreads()
        if flag[0] == 1:  # this block finished the row's last chunk: add the partials in order
            acc = zero
            for i in range(first + t, first + n, block):
                acc += cuda.atomic.add(partials, i, zero)  # an atomic read: from L2, never a stale L1 line
            total = block_sum(ex_f, warp_sums, t, acc)
            if t == 0:
                y[long_rows[slot]] = total
                tickets[slot] = 0  # every ticket of this launch is taken: ready for the next launch
        cuda.syncthreads()  # flag is reused by the block's next chunk

    @cuda.jit(device=True)
    def vector_row(vb, t, indptr, indices, values, x, y, vec_rows, n_vec, ex_f):
        lane = t % WARP
        v = vb * warps + t // WARP
        row = 0
        acc = zero
        if v < n_vec:
            row = vec_rows[v]
            acc = row_dot(int64(indptr[row]) + lane, int64(indptr[row + 1]), WARP, indices, values, x)
        total = warp_sum(ex_f, t, acc)  # every warp, with or without a row
        if lane == 0 and v < n_vec:
            y[row] = total

    @cuda.jit(device=True)
    def group_rows(gb, t, indptr, indices, values, x, y, n_rows, ex_f):
        """Rows ``gb * group_rows_per_piece ..``: ``tpr`` lanes a row (natural order); rows
        longer than ``short_row`` belong to the vector or long-row pieces and are skipped."""
        lane = t % tpr
        row = int64(gb) * group_rows_per_piece + t // tpr
        acc = zero
        own = False
        if row < n_rows:
            start = int64(indptr[row])
            end = int64(indptr[row + 1])
            if end - start <= short_row:
                own = True
                acc = group_row_dot(start + lane, end, tpr, indices, values, x)
        offset = tpr // 2  # unconditional: the emulated shuffles synchronise the block
        while offset > 0:
            acc += shfl_down(ex_f, t, acc, offset)  # lanes of one group: tpr divides the warp
            offset //= 2
        if own and lane == 0:
            y[row] = acc

    @cuda.jit(device=True)
    def row_of(ex_i, t, off, q):
        """The last lane whose row offset is <= q (its row holds entry q), and that offset."""
        j = 0
        o_j = 0
        step = WARP // 2
        while step > 0:
            o = shfl_idx(ex_i, t, off, j + step)
            if o <= q:
                j += step
                o_j = o
            step //= 2
        return j, o_j

    @cuda.jit(device=True)
    def piece_for_owner(ex_f, t, lane, product, head, base, off, length):
        """Segmented scan of the 32 products of the entries ``base ..`` (a row's run starts at
        lane ``head``), then lane i receives the sum of row i's entries among them (0 if none)."""
        seg = product
        d = 1
        while d < WARP:
            got = shfl_up(ex_f, t, seg, d)
            if lane - d >= head:
                seg += got
            d *= 2
        last = off + length - 1 - base   # the lane holding row `lane`'s last entry here
        if last > WARP - 1:
            last = WARP - 1
        got = shfl_idx(ex_f, t, seg, last if last >= 0 else 0)
        if length > 0 and off < base + WARP and last >= 0:
            return got
        return zero

    @cuda.jit(device=True)
    def fetch(ex_i, t, start, j, o_j, q, total, indices, values):
        """Column and value of the warp's entry ``q`` (row ``j``, whose run begins at ``o_j``),
        or ``(0, 0)`` past the end."""
        s_j = shfl_idx(ex_i, t, start, j)
        column = int32(0)
        value = zero
        if q < total:
            k = s_j + (q - o_j)
            column = stream_load(indices, k)
            value = stream_load(values, k)
        return column, value

    @cuda.jit(device=True)
    def stream_rows(sb, t, indptr, indices, values, x, y, n_rows, ex_f, ex_i, rounds_of):
        lane = t % WARP
        warp = t // WARP
        r = (int64(sb) * warps + warp) * WARP + lane
        start = start_zero
        length = int32(0)
        own = False
        if r < n_rows:
            start = indptr[r]
            full = indptr[r + 1] - start
            if full <= short_row:  # longer rows belong to the vector or long-row pieces
                length = int32(full)
                own = True
        inc = length               # inclusive prefix sum of the lengths over the warp
        d = 1
        while d < WARP:
            got = shfl_up(ex_i, t, inc, d)
            if lane >= d:
                inc = int32(inc + got)
            d *= 2
        off = int32(inc - length)  # this lane's row starts at entry `off` of the warp's run
        total = shfl_idx(ex_i, t, inc, WARP - 1)
        rounds = (total + WARP - 1) // WARP
        if uniform_rounds:
            rounds_of[warp] = rounds
            cuda.syncthreads()
            for w in range(warps):
                rounds = max(rounds, rounds_of[w])
            cuda.syncthreads()
        # Round i sums the warp's entries 32 i .. 32 i + 31, one per lane. The column and value
        # of the next round's entry are loaded before this round's gather and scan, so every
        # warp keeps a load in flight (a second run per round would double the registers).
        base = 0
        j, o_j = row_of(ex_i, t, off, lane)
        column, value = fetch(ex_i, t, start, j, o_j, lane, total, indices, values)
        acc = zero
        for _ in range(rounds):
            q = base + WARP + lane
            next_j, next_o_j = row_of(ex_i, t, off, q)
            next_column, next_value = fetch(ex_i, t, start, next_j, next_o_j, q, total, indices, values)
            product = zero
            if base + lane < total:
                product = value * x[column]
            acc += piece_for_owner(ex_f, t, lane, product, max(o_j - base, 0), base, off, length)
            o_j, column, value = next_o_j, next_column, next_value
            base += WARP
        if own:
            y[r] = acc

    def spmv_adaptive(indptr, indices, values, x, y, n_rows, chunk_slot, chunk_span, long_rows, long_first,
                      tickets, partials, n_chunks, vec_rows, n_vec, n_vec_blocks, n_short_blocks):
        ex_f = cuda.shared.array(slots, value_nb)
        ex_i = cuda.shared.array(offset_slots, numba.int64)
        warp_sums = cuda.shared.array(warps, value_nb)
        small = cuda.shared.array(warps, numba.int32)  # last-chunk flag; per-warp rounds (simulator)
        t = cuda.threadIdx.x
        if not hardware:  # the emulated shuffles start on the first half
            reset_shuffles(ex_f, t)
            if not grouped:
                reset_shuffles(ex_i, t)
        vec_begin = n_chunks
        short_begin = n_chunks + n_vec_blocks
        # pieces in order: long-row chunks, vector rows, short rows (block-uniform branches)
        for vb in range(cuda.blockIdx.x, short_begin + n_short_blocks, cuda.gridDim.x):
            if vb < vec_begin:
                long_row_chunk(vb, t, indices, values, x, y, chunk_slot, chunk_span, long_rows, long_first,
                               tickets, partials, ex_f, warp_sums, small)
            elif vb < short_begin:
                vector_row(vb - vec_begin, t, indptr, indices, values, x, y, vec_rows, n_vec, ex_f)
            elif grouped:  # a compile-time constant: the other path is not compiled
                group_rows(vb - short_begin, t, indptr, indices, values, x, y, n_rows, ex_f)
            else:
                stream_rows(vb - short_begin, t, indptr, indices, values, x, y, n_rows, ex_f, ex_i, small)

    v, ix = value_type, index_type
    sig = (f"void({ix}[::1], int32[::1], {v}[::1], {v}[::1], {v}[::1], int64, int32[::1], int64[::1], "
           f"int32[::1], int64[::1], int32[::1], {v}[::1], int64, int32[::1], int64, int64, int64)")
    options = {} if max_registers is None else {"max_registers": max_registers}  # the simulator has no such option
    return kernel_jit(sig, **options)(spmv_adaptive)


# ---- the execution -----------------------------------------------------------------------

class AdaptiveExecution(DeviceSpmvExecution):
    def compile(self) -> None:
        p = self.params
        self.short_mode = p["short_mode"]
        if self.short_mode == "auto":  # the kernel is specialised on the mode: choose before compiling
            self.short_mode, spread = choose_short_mode(self.graph.indptr, self.graph.indices, p["short_row"],
                                                        self.dtype.itemsize, self.device_bytes)
            if self.device_bytes <= L2_BYTES:
                why = (f"the product touches {self.device_bytes / 1e6:.1f} MB, which fits in a {L2_BYTES / 1e6:.0f} MB "
                       "L2: nothing to keep from eviction")
            elif math.isnan(spread):
                why = "no short rows in the sampled windows"
            else:
                why = (f"the short rows' gathers touch {spread:.2f} distinct {LINE_BYTES}-byte lines of x per entry "
                       f"(sampled; stream above {STREAM_SPREAD})")
            self.problem.notices.append(f"short_mode=auto chose {self.short_mode}: {why}")
        self.kernel = adaptive_kernel(p["block"], p["short_row"], self.value_type, self.index_type,
                                      not simulator_enabled(), self.short_mode, p["threads_per_row"], p["loads"])

    def upload_extra(self) -> None:
        p = self.params
        bins, reused = _BinCache.get(self.graph, p["short_row"], p["long_row"])
        self.bins = bins
        self.d_vec_rows = to_device(bins.vec_rows)
        self.d_long_rows = to_device(bins.long_rows)
        self.d_long_first = to_device(bins.long_first)
        self.d_chunk_slot = to_device(bins.chunk_slot)
        self.d_chunk_span = to_device(bins.chunk_span)
        self.d_tickets = to_device(np.zeros(len(bins.long_rows), dtype=np.int32))  # kept at 0 by the kernel
        self.d_partials = cuda.device_array(max(bins.n_chunks, 1), dtype=self.dtype)
        self.device_bytes += bins.nbytes + bins.n_chunks * self.dtype.itemsize
        warps = p["block"] // WARP
        self.n_vec_blocks = -(-len(bins.vec_rows) // warps)
        per_piece = short_rows_per_piece(p["block"], self.short_mode, p["threads_per_row"])
        self.n_short_blocks = -(-self.n_rows // per_piece)
        how = (f"threads_per_row={p['threads_per_row']}" if self.short_mode == "group"
               else "32 rows a warp, segmented scan")
        when = "reused from the previous run of this matrix" if reused else "in the host->device stage"
        self.problem.notices.append(
            f"preprocessing: rows binned on the host in {bins.seconds:.3f} s ({when}; once per matrix and "
            f"thresholds): {bins.n_short:,} short rows (<= {bins.short_row} entries, natural order, {how}), "
            f"{len(bins.vec_rows):,} vector rows (a warp each), {len(bins.long_rows):,} long rows "
            f"(> {bins.long_row} entries) in {bins.n_chunks:,} chunks; the row list and chunk tables add "
            f"{bins.nbytes + bins.n_chunks * self.dtype.itemsize:,} bytes per product, not counted in the "
            "bandwidth figure")

    def launch(self) -> None:
        if self.n_rows == 0:
            return
        block = self.params["block"]
        pieces = self.bins.n_chunks + self.n_vec_blocks + self.n_short_blocks
        self.kernel[blocks_for(pieces, self.target, block), block, self.stream](
            self.d_indptr, self.d_indices, self.d_values, self.d_x, self.d_y, self.n_rows,
            self.d_chunk_slot, self.d_chunk_span, self.d_long_rows, self.d_long_first, self.d_tickets,
            self.d_partials,
            self.bins.n_chunks, self.d_vec_rows, len(self.bins.vec_rows), self.n_vec_blocks, self.n_short_blocks)

    def release(self) -> None:
        super().release()
        self.d_vec_rows = self.d_long_rows = self.d_long_first = self.d_chunk_slot = self.d_chunk_span = None
        self.d_tickets = self.d_partials = None


def make(problem, params, target):
    return AdaptiveExecution(problem, params, target)


def ptx_kernels(variant):
    """The PTX check's kernels (:mod:`kernels.run.ptx_check`), with the hardware shuffles: both
    short-row modes, both kinds of loads, both value types."""
    shapes = [(128, "group", 4, "auto", "float64", "int32"), (128, "stream", 4, "auto", "float64", "int32"),
              (256, "group", 8, "plain", "float32", "int64"), (64, "stream", 2, "stream", "float32", "int32")]
    return [(f"spmv gpu-adaptive[block={b} {mode} threads_per_row={t} loads={loads} {v} {i}]",
             adaptive_kernel(b, 64, v, i, True, mode, t, loads), None) for b, mode, t, loads, v, i in shapes]
