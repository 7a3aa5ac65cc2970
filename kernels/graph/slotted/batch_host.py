"""The host path of batch updates: a whole batch applied to a ``SlottedGraph`` in a few
compiled passes (group by source, check, plan, rebuild the touched units), instead of one
engine call per edge. It writes exactly what the device path writes (both use
:mod:`.batch_core`); the rules are in :mod:`.batch_rules` and docs/updates.md.

Passes, each O(batch), O(touched lists) or a parallel sweep of an id-sized array:

1. ``group_part`` (per part of the batch): entries grouped by source in parallel (a bucket sort
   by ``source >> shift``, then a counting sort inside each bucket), each group sorted by
   target; removed endpoints and duplicates (equal neighbours) found on the way;
2. ``lookup``: each source with entries is located once and its stored list scanned once,
   every list entry looked up (binary search) among the source's deletions, insertions and
   weight changes: old positions of deletions (written in list order, so the deletion keys
   come out sorted), stored insertions, weight changes; rules 2..4 checked; touched units
   marked. A hub's k updates cost one scan of its list, not k;
3. plan: how many pages each touched unit becomes (:func:`batch_core.pack`), prefix sums
   for new index columns, pages opened and pages freed;
4. rebuild: a touched unit at a time, its old pages copied to a scratch of its own and its
   output pages written from it (into its own pages, then opened ones), freed
   pages zeroed and pushed on the free stack, the index rewritten; weights changed last (the
   new position of a weight change is its old one less the deletions before it).
"""

from __future__ import annotations

import time

import numpy as np
from numba import get_num_threads, njit, prange

from kernels.graph.slotted import batch_core, batch_rules
from kernels.graph.slotted.batch_core import DESC_ROWS
from kernels.graph.slotted.layout import (
    INDEX_ROWS,
    M_ENTRIES,
    M_FREE,
    M_HIGH_WATER,
    M_INDEX_DIRTY,
    M_PAGE_SIZE,
    M_PAGES,
    M_SELF_LOOPS,
    M_WEIGHTED,
)

_core = batch_core.build(njit(nogil=True, inline="always"))   # inlined: a call per entry cost more than the entry
_locate, _pack, _write_page = _core.locate, _core.pack, _core.write_page
_position, _physical_page = _core.position, _core.physical_page
_entry_word, _degree = _core.entry_word, _core.degree
NO_FAILURE = batch_rules.NO_FAILURE
# the passes run their loops on every core (numba prange: output pages, entries and sources are
# independent); one core took ~1.3 s for a million undirected insertions on R-MAT scale 18.
# cache=True: compiling them took 90 s on a loaded 2-core VM. numba keys the cache on this file
# only, and batch_core's functions are inlined here: after changing batch_core.py, touch this file.
_PARALLEL = dict(nogil=True, parallel=True, cache=True)



BUCKET_TARGET = 8192      # source buckets of the parallel grouping (ids >> shift)
UNIT_CHUNK_PAGES = 64     # old pages of touched units per task of the rebuild
CHUNK = 8192              # entries per chunk of the grouping's histogram and scatter
ID_BLOCK = 1024           # vertex ids per task of the lookup


@njit(**_PARALLEL)
def group_part(u, v, directed, first_tag, alive, n_ids, max_chunks):
    """The adjacency entries of edges (u, v) (``batch_rules.expand``'s), grouped by source and
    each group sorted by target, in parallel and without a per-group allocation: entries are
    scattered into buckets of sources (``source >> shift``; chunked histograms), each bucket is
    counting-sorted by source (the counts kept in ``start``, disjoint per bucket) and each
    source's group sorted by target (insertion sort; ``np.sort`` for a hub's large group).

    Returns (start per vertex id [n_ids + 1], targets, batch positions, edge of each entry,
    smallest position of an edge with a removed endpoint, smallest position of an entry equal
    to its group's neighbour (a duplicate), self-loops)."""
    n = u.shape[0]
    per = 1 if directed else 2
    m = per * n
    shift = 0
    while (n_ids >> shift) > BUCKET_TARGET:
        shift += 1
    nb = (n_ids >> shift) + 1
    nc = min(max(1, m // CHUNK), max_chunks)     # the serial prefix below is nb * nc
    size = (m + nc - 1) // nc
    hist = np.zeros((nc, nb), np.int64)
    bad = np.full(nc, NO_FAILURE, np.int64)
    loops = np.zeros(nc, np.int64)
    for c in prange(nc):
        for e in range(c * size, min(m, (c + 1) * size)):
            t = e // per
            a = u[t]
            b = v[t]
            if e % per == 1:
                if a == b:
                    continue
                a = b
            elif not (alive[a] and alive[b]):
                bad[c] = min(bad[c], first_tag + t)
            elif a == b:
                loops[c] += 1
            hist[c, a >> shift] += 1
    off = np.empty((nc, nb), np.int64)
    bstart = np.zeros(nb + 1, np.int64)
    acc = 0
    for b in range(nb):
        bstart[b] = acc
        for c in range(nc):
            off[c, b] = acc
            acc += hist[c, b]
    bstart[nb] = acc
    k = acc
    bsrc = np.empty(k, np.int32)
    bval = np.empty(k, np.int64)                 # target << 32 | edge
    for c in prange(nc):
        for e in range(c * size, min(m, (c + 1) * size)):
            t = e // per
            a = u[t]
            b = v[t]
            if e % per == 1:
                if a == b:
                    continue
                a, b = b, a
            q = off[c, a >> shift]
            off[c, a >> shift] = q + 1
            bsrc[q] = a
            bval[q] = (np.int64(b) << 32) | t
    start = np.zeros(n_ids + 1, np.int64)
    cur = np.empty(max(n_ids, 1), np.int64)
    val = np.empty(k, np.int64)
    dup = np.full(nb, NO_FAILURE, np.int64)
    for b in prange(nb):
        a0, z = bstart[b], bstart[b + 1]
        lo = b << shift
        hi = min(n_ids, (b + 1) << shift)
        for q in range(a0, z):
            start[bsrc[q]] += 1
        acc = a0
        for x in range(lo, hi):
            cnt = start[x]
            start[x] = acc
            cur[x] = acc
            acc += cnt
        for q in range(a0, z):
            x = bsrc[q]
            val[cur[x]] = bval[q]
            cur[x] += 1
        for x in range(lo, hi):
            g0 = start[x]
            g1 = cur[x]
            if g1 - g0 > 32:
                val[g0:g1] = np.sort(val[g0:g1])
            else:
                for j in range(g0 + 1, g1):
                    w = val[j]
                    i = j
                    while i > g0 and val[i - 1] > w:
                        val[i] = val[i - 1]
                        i -= 1
                    val[i] = w
            for j in range(g0 + 1, g1):
                if (val[j] >> 32) == (val[j - 1] >> 32):
                    dup[b] = min(dup[b], first_tag + min(val[j] & 0xFFFFFFFF, val[j - 1] & 0xFFFFFFFF))
    start[n_ids] = k
    tgt = np.empty(k, np.int32)
    tag = np.empty(k, np.int64)
    edge = np.empty(k, np.int64)
    for q in prange(k):
        tgt[q] = val[q] >> 32
        edge[q] = val[q] & 0xFFFFFFFF
        tag[q] = first_tag + edge[q]
    return start, tgt, tag, edge, bad.min(), dup.min(), loops.sum()


@njit(**_PARALLEL)
def lookup(pool, index, n_pages, P, n1, n_ids, dstart, dtgt, dtag, istart, itgt, itag,
           rstart, rtgt, rtag, touched):
    """One scan of each source's stored list (sources with entries in the batch, each located
    once): finds the old position of every deletion and weight change and every inserted
    entry already stored, checks rules 2..4 of :mod:`.batch_rules`, marks the touched units.

    Returns (smallest failing batch position per category [5], deletion keys in each group's
    list order: (position + 1) * n1 + target, old position of each weight change)."""
    nblk = (n_ids + ID_BLOCK - 1) // ID_BLOCK
    fail = np.full((max(nblk, 1), 5), NO_FAILURE, np.int64)
    dkey = np.empty(dtgt.shape[0], np.int64)
    dfound = np.zeros(dtgt.shape[0], np.uint8)
    ifound = np.zeros(itgt.shape[0], np.uint8)
    rpos = np.full(rtgt.shape[0], -1, np.int64)
    pagemap = index[3]
    lcount = index[2]
    for blk in prange(nblk):
        for x in range(blk * ID_BLOCK, min(n_ids, (blk + 1) * ID_BLOCK)):
            d0, nd = dstart[x], dstart[x + 1] - dstart[x]
            i0, ni = istart[x], istart[x + 1] - istart[x]
            r0, nr = rstart[x], rstart[x + 1] - rstart[x]
            if nd + ni + nr == 0:
                continue
            c, s = _locate(pool, index, n_pages, P, x)
            if nd + ni > 0:
                touched[c] = 1                # every writer writes 1
            deg = _degree(pool, pagemap, P, c, s)
            want = nd + ni + nr
            found = 0
            cursor = d0
            for j in range(deg):
                if found == want:
                    break
                t = pool[_entry_word(pool, pagemap, lcount, P, c, s, j)]
                if nd > 0:
                    q = _position(dtgt, d0, nd, t)
                    if q >= 0 and not dfound[q]:
                        dkey[cursor] = (j + 1) * n1 + t       # list order: ascending position
                        cursor += 1
                        dfound[q] = 1
                        found += 1
                if ni > 0:
                    q = _position(itgt, i0, ni, t)
                    if q >= 0 and not ifound[q]:
                        ifound[q] = 1
                        found += 1
                if nr > 0:
                    q = _position(rtgt, r0, nr, t)
                    if q >= 0 and rpos[q] < 0:
                        rpos[q] = j
                        found += 1
            for q in range(d0, d0 + nd):
                if not dfound[q]:
                    fail[blk, 2] = min(fail[blk, 2], dtag[q])
            for q in range(i0, i0 + ni):          # stored and not deleted by this batch
                if ifound[q] and _position(dtgt, d0, nd, itgt[q]) < 0:
                    fail[blk, 3] = min(fail[blk, 3], itag[q])
            for q in range(r0, r0 + nr):
                t = rtgt[q]
                if rpos[q] < 0 or _position(dtgt, d0, nd, t) >= 0 or _position(itgt, i0, ni, t) >= 0:
                    fail[blk, 4] = min(fail[blk, 4], rtag[q])
    out = np.full(5, NO_FAILURE, np.int64)
    for blk in range(fail.shape[0]):
        for cat in range(5):
            out[cat] = min(out[cat], fail[blk, cat])
    return out, dkey, rpos


@njit(**_PARALLEL)
def plan(pool, index, n_pages, P, touched, dstart, istart):
    """Pages out of each touched unit (at its first column; ``lookup`` marked the units)."""
    k_out = np.zeros(n_pages, np.int64)
    dummy_desc = np.zeros((DESC_ROWS, 1), np.int32)
    dummy_off = np.zeros(1, np.int32)
    for c in prange(n_pages):
        if touched[c]:
            k_out[c] = _pack(pool, index[3], index[2], P, c, dstart, istart, False, 0, dummy_desc, dummy_off)
    return k_out


@njit(nogil=True, cache=True)
def column_sums(index, n_pages, touched, k_out):
    """Exclusive prefix sums over old columns: new column, output page, page opened, page freed,
    scratch page; the last entry of each is the total."""
    sums = np.zeros((5, n_pages + 1), np.int64)
    for c in range(n_pages):
        c0 = c - max(index[1, c], 0)
        m = index[2, c0] if index[2, c0] > 0 else 1
        cols = qs = opened = freed = scr = 0
        if touched[c0]:
            scr = 1
            if c == c0:
                k = k_out[c0]
                cols = k
                qs = k
                opened = max(0, k - m)
                freed = max(0, m - k)
        else:
            cols = 1
        sums[0, c + 1] = sums[0, c] + cols
        sums[1, c + 1] = sums[1, c] + qs
        sums[2, c + 1] = sums[2, c] + opened
        sums[3, c + 1] = sums[3, c] + freed
        sums[4, c + 1] = sums[4, c] + scr
    return sums


@njit(**_PARALLEL)
def free_and_commit(pool, wpool, index, meta, free, dirty, n_pages, P, weighted, touched, k_out, sums, new_index):
    """The rebuild's end, after the new pages are written and ``new_index`` holds the
    touched units' new columns: the pages a unit no longer needs zeroed and pushed on the free
    stack, the untouched columns copied into ``new_index``, the index and the counts committed."""
    n_open = sums[2, n_pages]
    n_freed = sums[3, n_pages]
    n_free = meta[M_FREE]
    high = meta[M_HIGH_WATER]
    kept = n_free - min(n_free, n_open)
    for c in range(n_pages):                          # pages a unit no longer needs
        if touched[c] and index[1, c] <= 0:
            m = index[2, c] if index[2, c] > 0 else 1
            for r in range(k_out[c], m):
                phys = index[3, c + r]
                pool[phys * P:(phys + 1) * P] = 0
                if weighted:
                    wpool[phys * P:(phys + 1) * P] = 0
                dirty[phys] = 0
                free[kept + sums[3, c] + r - k_out[c]] = phys
    new_pages = sums[0, n_pages]
    for c in prange(n_pages):
        c0 = c - max(index[1, c], 0)
        if not touched[c0]:
            for row in range(INDEX_ROWS):
                new_index[row, sums[0, c]] = index[row, c]
    index[:, :new_pages] = new_index
    if new_pages < n_pages:
        index[:, new_pages:n_pages] = 0
    meta[M_PAGES] = new_pages
    meta[M_FREE] = kept + n_freed
    meta[M_HIGH_WATER] = high + max(0, n_open - n_free)
    if n_open or n_freed or new_pages != n_pages:
        meta[M_INDEX_DIRTY] = 1


@njit(**_PARALLEL)
def rebuild(pool, wpool, index, meta, free, dirty, n_pages, P, weighted, touched, k_out, sums,
            dstart, dkey, n1, istart, itgt, iw, n_ids, chunk_pages):
    """Write the touched units' new pages, free what they no longer need, rewrite the index, a
    unit at a time: each touched unit's old pages are copied into a scratch of their own (a few
    pages, cache-resident), then its output pages are written, into its own old pages first
    (``physical_page``: a unit's old page of the same rank, else a page the batch opens from the
    free stack or the high-water mark, never another unit's), so units are independent and no
    pool-sized copy is made (until 2026-11-29 every touched page was first copied into one
    pool-sized scratch: twice the bytes moved, docs/updates.md). A task takes units of about
    ``chunk_pages`` old pages in all. Returns the physical pages written."""
    n_q = sums[1, n_pages]
    units = np.flatnonzero(touched[:n_pages])
    n_units = units.shape[0]
    # tasks of about chunk_pages old pages (a large list is one task however long)
    bounds = np.empty(n_units + 1, np.int64)
    n_tasks = 0
    acc = chunk_pages
    for i in range(n_units):
        c = units[i]
        if acc >= chunk_pages:
            bounds[n_tasks] = i
            n_tasks += 1
            acc = 0
        acc += index[2, c] if index[2, c] > 0 else 1
    bounds[n_tasks] = n_units
    scrmap = np.full(n_pages, -1, np.int32)
    desc = np.zeros((DESC_ROWS, max(n_q, 1)), np.int32)
    newoff = np.zeros(n_ids, np.int32)
    n_free = meta[M_FREE]
    high = meta[M_HIGH_WATER]
    phys_out = np.empty(n_q, np.int64)
    new_index = np.zeros((INDEX_ROWS, sums[0, n_pages]), np.int32)
    for task in prange(n_tasks):
        most = 1
        for i in range(bounds[task], bounds[task + 1]):
            c = units[i]
            most = max(most, index[2, c] if index[2, c] > 0 else 1)
        scratch = np.empty(most * P, pool.dtype)
        wscratch = np.empty(most * P if weighted else 1, wpool.dtype)
        for i in range(bounds[task], bounds[task + 1]):
            c = units[i]
            m = index[2, c] if index[2, c] > 0 else 1
            for r in range(m):
                src = index[3, c + r] * P
                scratch[r * P:(r + 1) * P] = pool[src:src + P]
                if weighted:
                    wscratch[r * P:(r + 1) * P] = wpool[src:src + P]
                scrmap[c + r] = r
            _pack(scratch, scrmap, index[2], P, c, dstart, istart, True, sums[1, c], desc, newoff)
            for r in range(k_out[c]):
                q = sums[1, c] + r
                phys = _physical_page(desc, q, index, sums, free, n_free, high)
                phys_out[q] = phys
                _write_page(q, desc, phys, scratch, wscratch, scrmap, index[2], P, dstart, dkey,
                            n1, istart, itgt, iw, newoff, weighted, pool, wpool, 0, 1)
                dirty[phys] = 1
                col = sums[0, c] + r
                new_index[0, col] = scratch[P - 1 - 2 * desc[1, q]]
                new_index[1, col] = desc[3, q]
                new_index[2, col] = desc[4, q]
                new_index[3, col] = phys
    free_and_commit(pool, wpool, index, meta, free, dirty, n_pages, P, weighted, touched, k_out, sums, new_index)
    return phys_out


@njit(**_PARALLEL)
def reweigh(pool, wpool, index, n_pages, P, dirty, n1, n_ids, rstart, rpos, w, dstart, dkey):
    """Set the weight of each weight change (old list position ``rpos``, grouped by source):
    its new position is the old one less the deleted positions before it. Returns the pages
    written."""
    pages = np.empty(rpos.shape[0], np.int64)
    nblk = (n_ids + ID_BLOCK - 1) // ID_BLOCK
    for blk in prange(nblk):
        for x in range(blk * ID_BLOCK, min(n_ids, (blk + 1) * ID_BLOCK)):
            r0, nr = rstart[x], rstart[x + 1] - rstart[x]
            if nr == 0:
                continue
            c, s = _locate(pool, index, n_pages, P, x)
            d0, nd = dstart[x], dstart[x + 1] - dstart[x]
            for q in range(r0, r0 + nr):
                key = (rpos[q] + 1) * n1
                lo = 0
                hi = nd
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if dkey[d0 + mid] < key:
                        lo = mid + 1
                    else:
                        hi = mid
                word = _entry_word(pool, index[3], index[2], P, c, s, rpos[q] - lo)
                wpool[word] = w[q]
                pages[q] = word // P
                dirty[word // P] = 1
    return pages


def apply(g, batch: batch_rules.Batch) -> batch_rules.BatchReport:
    """Apply a prepared batch to ``g`` (refused as a whole with ``GraphEditError``)."""
    t0 = time.perf_counter()
    plan_arrays = grouped(g, batch)
    failure = plan_arrays.pop("failure")
    if failure is not None:
        raise batch_rules.refusal(g, batch, *failure)
    st = g.engine_state()
    pool, wpool, index, meta, free, dirty = st[0], st[1], st[2], st[3], st[4], st[5]
    P = int(meta[M_PAGE_SIZE])
    weighted = bool(meta[M_WEIGHTED])
    n_pages = int(meta[M_PAGES])
    n1 = plan_arrays["n1"]
    d, i, r = plan_arrays["delete"], plan_arrays["insert"], plan_arrays["reweight"]
    touched = plan_arrays["touched"]
    k_out = plan(pool, index, n_pages, P, touched, d["start"], i["start"])
    sums = column_sums(index, n_pages, touched, k_out)
    g.reserve_pages(int(sums[2, n_pages]))
    st = g.engine_state()
    pool, wpool, index, meta, free, dirty = st[0], st[1], st[2], st[3], st[4], st[5]
    written = rebuild(pool, wpool, index, meta, free, dirty, n_pages, P, weighted, touched, k_out, sums,
                      d["start"], d["key"], n1, i["start"], i["key"], i["w"], g.next_vertex_id, UNIT_CHUNK_PAGES)
    meta[M_ENTRIES] += len(i["key"]) - len(d["key"])
    meta[M_SELF_LOOPS] += plan_arrays["loops_in"] - plan_arrays["loops_out"]
    if len(r["key"]):
        written = np.concatenate([written, reweigh(pool, wpool, index, int(meta[M_PAGES]), P, dirty, n1,
                                                   g.next_vertex_id, r["start"], r["pos"], r["w"],
                                                   d["start"], d["key"])])
    return batch_rules.BatchReport(
        "host", batch.size, len(d["key"]), len(i["key"]), len(r["key"]), np.unique(written),
        pages_opened=int(sums[2, n_pages]), pages_freed=int(sums[3, n_pages]),
        seconds=time.perf_counter() - t0)


def grouped(g, batch: batch_rules.Batch) -> dict:
    """Entries of each part grouped by source and sorted (deletions by old list position,
    insertions and weight changes by target), the touched units, and the first failure (or
    None)."""
    nd, ni = len(batch.delete_u), len(batch.insert_u)
    n_ids = g.next_vertex_id
    n1 = n_ids + 1
    alive = g.live_flags()
    st = g.engine_state()
    pool, index, meta = st[0], st[2], st[3]
    P, n_pages = int(meta[M_PAGE_SIZE]), int(meta[M_PAGES])
    failures = np.full(5, NO_FAILURE, np.int64)
    out = {"n1": n1}
    parts = (("delete", batch.delete_u, batch.delete_v, None, 0),
             ("insert", batch.insert_u, batch.insert_v, batch.insert_w, nd),
             ("reweight", batch.reweight_u, batch.reweight_v, batch.reweight_w, nd + ni))
    for name, u, v, w, first in parts:
        start, tgt, tag, edge, bad_vertex, dup, loops = group_part(u, v, batch.directed, first, alive, n_ids,
                                                                             4 * get_num_threads())
        failures[0] = min(failures[0], bad_vertex)
        failures[1] = min(failures[1], dup)
        out[name] = {"start": start, "key": tgt, "tag": tag,
                     "w": w[edge] if w is not None else np.zeros(1, g.weight_dtype)}
        out["loops_out" if name == "delete" else "loops_in" if name == "insert" else "loops_rw"] = int(loops)
    failure = batch_rules.first_failure(failures)
    if failure is not None:
        return {"failure": failure}
    d, i, r = out["delete"], out["insert"], out["reweight"]
    touched = np.zeros(n_pages, np.uint8)
    fail, dkey, rpos = lookup(pool, index, n_pages, P, n1, n_ids, d["start"], d["key"], d["tag"],
                              i["start"], i["key"], i["tag"], r["start"], r["key"], r["tag"], touched)
    d["key"] = dkey
    r["pos"] = rpos
    out["touched"] = touched
    out["failure"] = batch_rules.first_failure(fail)
    return out
