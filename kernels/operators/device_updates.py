"""Batch edge updates applied by CUDA kernels to a :class:`~kernels.graph.device.DeviceMirror`'s
pages, then replayed on the host structure and checked, page for page.

The device writes exactly the words the host path (:mod:`kernels.graph.slotted.batch_host`)
writes: both run the functions of :mod:`kernels.graph.slotted.batch_core`, here compiled as
device functions. The rules (what is refused, in which order) are
:mod:`kernels.graph.slotted.batch_rules`'; docs/updates.md describes the design.

One batch on the device, no per-edge host work and one read-back before anything is written:

1. ``expand``: one thread per adjacency entry (an undirected edge gives two): the endpoints are
   located (binary search of the index, then of the page's slots: a removed id is absent), the
   entry's old list position found, a key made, the entry counted for its source (atomics);
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
   top, then new pages past the high-water mark), pages written (one block per page),
   pages no longer needed zeroed, the index rewritten into a second buffer, weights changed.

Kernels are compiled once per weight dtype (numba's lazy dispatch; sizes are arguments) and
go through :func:`kernels.cuda.jit.jit`, so the disk cache serves them to later processes.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np

from kernels.graph.slotted import batch_host, batch_rules
from kernels.graph.slotted.batch_core import DESC_ROWS
from kernels.measure.targets import simulator_enabled

SORT_GAPS = (1, 4, 13, 40, 121, 364, 1093, 3280, 9841, 29524)
BLOCK = {"cuda": 256, "sim": 16}
PAGE_BLOCK = {"cuda": 128, "sim": 8}


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

    from kernels.cuda.jit import jit as kernel_jit
    from kernels.graph.slotted import batch_core

    core = batch_core.build(cuda.jit(device=True))
    locate, find, pack, write_page = core.locate, core.find, core.pack, core.write_page
    deleted, contains, entry_word = core.deleted, core.contains, core.entry_word

    def zero(arr, n):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            arr[i] = 0

    def expand(U, V, edge_off, entry_off, directed, pool, index, n_pages, P, n1, n_ids,
               esrc, edst, etag, epos, ekey, cnt, fail):
        total = entry_off[3]
        for e in range(cuda.grid(1), total, cuda.gridsize(1)):
            p = 0 if e < entry_off[1] else (1 if e < entry_off[2] else 2)
            local = e - entry_off[p]
            t = local if directed else local // 2
            dirn = 0 if directed else local % 2
            g = edge_off[p] + t
            u = U[g]
            v = V[g]
            esrc[e] = -1
            if dirn == 1:
                if u == v:
                    continue
                u, v = v, u
            a, s = locate(pool, index, n_pages, P, u)
            b, _ = locate(pool, index, n_pages, P, v)
            if a < 0 or b < 0:
                if dirn == 0:
                    cuda.atomic.min(fail, 0, int64(g))
                continue
            pos = find(pool, index[3], index[2], P, a, s, v)
            esrc[e] = u
            edst[e] = v
            etag[e] = g
            epos[e] = pos
            ekey[e] = (int64(pos) + 1) * n1 + v if p == 0 else int64(v)
            cuda.atomic.add(cnt, p * n_ids + u, 1)

    def scatter(esrc, ekey, entry_off, n_ids, S, cnt, perm, skey):
        for e in range(cuda.grid(1), entry_off[3], cuda.gridsize(1)):
            x = esrc[e]
            if x < 0:
                continue
            p = 0 if e < entry_off[1] else (1 if e < entry_off[2] else 2)
            key = p * n_ids + x
            slot = S[key] + cuda.atomic.add(cnt, key, -1) - 1
            perm[slot] = e
            skey[slot] = ekey[e]

    def sort_groups(S, groups, skey, perm, gaps):
        """Shell sort of each group by (key, entry): one thread per group."""
        for i in range(cuda.grid(1), groups, cuda.gridsize(1)):
            a = S[i]
            n = S[i + 1] - a
            if n < 2:
                continue
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

    def totals(fail, sums, n_pages, out):
        if cuda.grid(1) == 0:
            for c in range(5):
                out[c] = fail[c]
                out[5 + c] = sums[c, n_pages]

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
            c0 = desc[0, q]
            r = desc[5, q]
            m = index[2, c0] if index[2, c0] > 0 else 1
            if r < m:
                phys_out[q] = index[3, c0 + r]
            else:
                e = sums[2, c0] + r - m
                phys_out[q] = free[n_free - 1 - e] if e < n_free else high + e - n_free

    def write_pages(desc, n_q, phys_out, scratch, wscratch, scrmap, index, P, dstart, dkey, n1,
                    istart, itgt, iw, newoff, weighted, pool, wpool):
        for q in range(cuda.blockIdx.x, n_q, cuda.gridDim.x):
            write_page(q, desc, phys_out[q], scratch, wscratch, scrmap, index[2], P, dstart, dkey, n1,
                       istart, itgt, iw, newoff, weighted, pool, wpool, cuda.threadIdx.x, cuda.blockDim.x)

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

    def reweigh(S, n_ids, ssrc, skey, sw, pool, index, n_pages, P, wpool, pages):
        first = S[2 * n_ids]
        for k in range(first + cuda.grid(1), S[3 * n_ids], cuda.gridsize(1)):
            c, s = locate(pool, index, n_pages, P, ssrc[k])
            j = find(pool, index[3], index[2], P, c, s, skey[k])
            word = entry_word(pool, index[3], index[2], P, c, s, j)
            wpool[word] = sw[k]
            pages[k - first] = word // P

    class Kernels:
        pass

    ns = Kernels()
    for fn in (zero, expand, scatter, sort_groups, gather, check, mark_touched, count_pages, totals,
               copy_old, describe, choose_pages, write_pages, free_pages, rewrite_index, reweigh, gather_pages,
               unpack_sums):
        setattr(ns, fn.__name__, kernel_jit(fn))
    ns.column_sums_load = cuda.jit(device=True)(column_sums_load)
    ns.cuda = cuda
    return ns


class DeviceUpdater:
    """Applies batches to a mirror's device pages; the host structure follows by replay."""

    def __init__(self, mirror):
        from kernels.operators.launch import Workspace

        self.mirror = mirror
        self.graph = mirror.graph
        self.workspace = Workspace()
        self._spare_index = None
        self.history: list[DeviceBatchResult] = []

    def _shape(self, table):
        return table["sim" if simulator_enabled() else "cuda"]

    def _grid(self, items: int, block: int) -> int:
        from kernels.operators.launch import grid_for

        return grid_for(items, block)

    def apply(self, insert=None, delete=None, reweight=None, *, verify: bool = True) -> DeviceBatchResult:
        """Apply one batch on the device, replay it on the host, check both (``verify``)."""
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
        clock = ("perf_counter, CUDA simulator" if simulator_enabled() else
                 "perf_counter around the device work and cuda.synchronize() (batch upload included)")
        report = batch_rules.BatchReport("gpu", batch.size, host.entries_deleted, host.entries_inserted,
                                         host.weights_changed, device_pages, host.pages_opened,
                                         host.pages_freed, seconds=t1 - t0, clock=clock)
        t2 = time.perf_counter()
        if verify:
            problems = self.differences(device_pages, host.pages_touched)
            if problems:
                raise DeviceMismatchError("device and host pages differ after a batch: " + "; ".join(problems[:5]))
        g.mark_synced()                      # the device holds what the host just wrote
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
        k = _kernels()
        cuda = k.cuda
        g, mirror, ws = self.graph, self.mirror, self.workspace
        block = self._shape(BLOCK)
        page_block = self._shape(PAGE_BLOCK)
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
        d_U = ws.get("U", np.int32, m_edges)
        d_V = ws.get("V", np.int32, m_edges)
        wdtype = g.weight_dtype
        d_W = ws.get("W", wdtype, m_edges)
        # each part straight into its slice of the device buffers (no host concatenation)
        zeros = np.zeros(n_edges[0], dtype=wdtype) if weighted else None
        for p, (u, v) in enumerate(parts):
            a, b = int(edge_off[p]), int(edge_off[p]) + n_edges[p]
            if b > a:
                d_U[a:b].copy_to_device(np.ascontiguousarray(u, dtype=np.int32))
                d_V[a:b].copy_to_device(np.ascontiguousarray(v, dtype=np.int32))
                if weighted:
                    w = (zeros, batch.insert_w, batch.reweight_w)[p]
                    d_W[a:b].copy_to_device(np.ascontiguousarray(w, dtype=wdtype))
        # offsets and the failure slots in one small copy
        small = np.concatenate([edge_off, entry_off, np.full(5, batch_rules.NO_FAILURE, dtype=np.int64)])
        d_small = ws.get("small", np.int64, len(small))
        d_small[:len(small)].copy_to_device(small)
        d_edge_off, d_entry_off, fail = d_small[0:3], d_small[3:7], d_small[7:12]
        pool = mirror.pool
        wpool = mirror.weights if weighted else ws.get("wdummy", wdtype, 1)
        index = mirror.index
        esrc = ws.get("esrc", np.int32, m_entries)
        edst = ws.get("edst", np.int32, m_entries)
        etag = ws.get("etag", np.int64, m_entries)
        epos = ws.get("epos", np.int64, m_entries)
        ekey = ws.get("ekey", np.int64, m_entries)
        groups = 3 * n_ids
        cnt = ws.get("cnt", np.int64, groups + 1)
        k.zero[grid(groups + 1, block), block](cnt, groups + 1)
        k.expand[grid(m_entries, block), block](d_U, d_V, d_edge_off, d_entry_off, int(directed), pool, index,
                                                n_pages, P, n1, n_ids, esrc, edst, etag, epos, ekey, cnt, fail)
        from kernels.operators.scan import scan_array

        S = ws.get("S", np.int64, groups + 1)
        scan_total = ws.get("S.total", np.int64, 1)
        scan_array(cnt, groups + 1, S, scan_total, ws)
        perm = ws.get("perm", np.int64, m_entries)
        skey = ws.get("skey", np.int64, m_entries)
        k.scatter[grid(m_entries, block), block](esrc, ekey, d_entry_off, n_ids, S, cnt, perm, skey)
        gaps = self._gaps()
        k.sort_groups[grid(groups, block), block](S, groups, skey, perm, gaps)
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
        info = ws.get("info", np.int64, 10)
        k.totals[1, 1](fail, sums, n_pages, info)
        info = info[:10].copy_to_host()                       # the one read-back before writing
        failure = batch_rules.first_failure(info[:5])
        if failure is not None:
            raise batch_rules.refusal(g, batch, *failure)
        new_pages, n_q, n_open, _n_freed, n_scr = (int(x) for x in info[5:])
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
        free = g.free_page_stack()
        d_free = ws.get("free", np.int32, max(len(free), 1))
        if len(free):
            d_free[:len(free)].copy_to_device(np.ascontiguousarray(free))
        phys_out = ws.get("phys_out", np.int64, max(n_q, 1))
        k.choose_pages[grid(n_q, block), block](desc, n_q, index, sums, d_free, n_free, high, phys_out)
        k.write_pages[grid(n_q * page_block, page_block), page_block](
            desc, n_q, phys_out, scratch, wscratch, scrmap, index, P, dstart, skey, n1, istart, skey, sw,
            newoff, int(weighted), pool, wpool)
        k.free_pages[grid(n_pages * page_block, page_block), page_block](index, n_pages, P, touched, k_out,
                                                                         pool, wpool, int(weighted))
        new_index = self._index_buffer(new_pages)
        k.rewrite_index[grid(n_pages, block), block](index, n_pages, P, touched, k_out, sums, desc, phys_out,
                                                     scratch, scrmap, new_index)
        self._spare_index = mirror.index
        mirror.index = new_index
        mirror.num_pages = new_pages
        n_reweight = len(batch.reweight_u) * (1 if directed else 2)
        pages = [phys_out[:n_q].copy_to_host()] if n_q else []
        if n_reweight:
            rpages = ws.get("rpages", np.int64, n_reweight)
            k.zero[grid(n_reweight, block), block](rpages, n_reweight)
            k.reweigh[grid(n_reweight, block), block](S, n_ids, ssrc, skey, sw, pool, new_index, new_pages, P,
                                                     wpool, rpages)
            kept = self._kept_host(batch)
            pages.append(rpages[:kept].copy_to_host())
        cuda.synchronize()
        return np.unique(np.concatenate(pages)) if pages else np.zeros(0, dtype=np.int64)

    @staticmethod
    def _kept_host(batch) -> int:
        if batch.directed:
            return len(batch.reweight_u)
        return 2 * len(batch.reweight_u) - int(np.count_nonzero(batch.reweight_u == batch.reweight_v))

    def _gaps(self):
        gaps = self.workspace.get("gaps", np.int64, len(SORT_GAPS))
        if not getattr(self, "_gaps_ready", False):
            gaps[:len(SORT_GAPS)].copy_to_device(np.array(SORT_GAPS, dtype=np.int64))
            self._gaps_ready = True
        return gaps[:len(SORT_GAPS)]

    def _index_buffer(self, columns: int):
        """A device index of at least ``columns`` columns that is not the mirror's current one."""
        from numba import cuda

        spare = self._spare_index
        if spare is None or spare.shape[1] < columns or spare is self.mirror.index:
            cap = max(columns, self.mirror.index.shape[1], 1)
            spare = cuda.device_array((4, int(np.ceil(cap * 1.5))), dtype=np.int32)
        return spare
