"""The host path of batch updates: a whole batch applied to a ``SlottedGraph`` in a few
compiled passes (group by source, check, plan, rebuild the touched units), instead of one
engine call per edge. It writes exactly what the device path writes (both use
:mod:`.batch_core`); the rules are in :mod:`.batch_rules` and docs/updates.md.

Passes, each O(batch) or O(touched pages):

1. entries grouped by source with a stable counting sort, each source's group sorted by key
   (deletions by (old position, target), insertions and weight changes by target);
2. checks in the order of :mod:`.batch_rules` (duplicates are neighbours after the sort);
3. plan: the touched units, how many pages each becomes (:func:`batch_core.pack`), prefix sums
   for new index columns, pages opened and pages freed;
4. rebuild: old pages of touched units copied to scratch, output pages written from it, freed
   pages zeroed and pushed on the free stack, the index rewritten, weights changed.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit, prange

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
_locate, _find, _pack, _write_page = _core.locate, _core.find, _core.pack, _core.write_page
_deleted, _contains, _entry_word = _core.deleted, _core.contains, _core.entry_word
NO_FAILURE = batch_rules.NO_FAILURE
# the passes run their loops on every core (numba prange: output pages, entries and sources are
# independent); one core took ~1.3 s for a million undirected insertions on R-MAT scale 18.
# cache=True: compiling them took 90 s on a loaded 2-core VM. numba keys the cache on this file
# only, and batch_core's functions are inlined here: after changing batch_core.py, touch this file.
_PARALLEL = dict(nogil=True, parallel=True, cache=True)
SMALL_GROUP = 24          # groups up to this size are insertion-sorted in place (no allocation)


@njit(**_PARALLEL)
def group(src, keys, n_ids):
    """Stable counting sort of entries by source, then each source's entries by key:
    (count per vertex, start per vertex, permutation of the entries)."""
    m = src.shape[0]
    cnt = np.zeros(n_ids, np.int64)
    for e in range(m):
        cnt[src[e]] += 1
    start = np.zeros(n_ids + 1, np.int64)
    for x in range(n_ids):
        start[x + 1] = start[x] + cnt[x]
    cur = start[:n_ids].copy()
    perm = np.empty(m, np.int64)
    for e in range(m):
        x = src[e]
        perm[cur[x]] = e
        cur[x] += 1
    for x in prange(n_ids):
        a, b = start[x], start[x + 1]
        if b - a <= 1:
            continue
        if b - a <= SMALL_GROUP:                  # stable insertion sort by key
            for j in range(a + 1, b):
                e = perm[j]
                k = keys[e]
                m = j
                while m > a and keys[perm[m - 1]] > k:
                    perm[m] = perm[m - 1]
                    m -= 1
                perm[m] = e
            continue
        seg = perm[a:b].copy()
        order = np.argsort(keys[seg], kind="mergesort")
        for t in range(b - a):
            perm[a + t] = seg[order[t]]
    return cnt, start, perm


@njit(**_PARALLEL)
def positions(pool, index, n_pages, P, src, dst):
    """Old list position of each entry src -> dst (-1 when absent)."""
    out = np.empty(src.shape[0], np.int64)
    for e in prange(src.shape[0]):
        c, s = _locate(pool, index, n_pages, P, src[e])
        out[e] = -1 if c < 0 else _find(pool, index[3], index[2], P, c, s, dst[e])
    return out


@njit(**_PARALLEL)
def check(pool, index, n_pages, P, n1, dkey, dtag, dsrc, dstart, itgt, itag, isrc, istart,
          rtgt, rtag, rsrc):
    """Smallest failing batch position per category 1..4 (categories of batch_rules)."""
    nd, ni, nr = dkey.shape[0], itgt.shape[0], rtgt.shape[0]
    bad = np.full((5, max(nd, ni, nr, 1)), NO_FAILURE, np.int64)
    for k in prange(nd):
        if k + 1 < nd and dsrc[k] == dsrc[k + 1] and dkey[k] == dkey[k + 1]:     # neighbours after the sort
            bad[1, k] = min(dtag[k], dtag[k + 1])
        if dkey[k] // n1 - 1 < 0:
            bad[2, k] = dtag[k]
    for k in prange(ni):
        u = isrc[k]
        if k + 1 < ni and isrc[k + 1] == u and itgt[k] == itgt[k + 1]:
            bad[0, k] = min(itag[k], itag[k + 1])
        c, s = _locate(pool, index, n_pages, P, u)
        pos = _find(pool, index[3], index[2], P, c, s, itgt[k])
        if pos >= 0 and not _deleted(dkey, dstart[u], dstart[u + 1] - dstart[u], n1, pos):
            bad[3, k] = itag[k]
    for k in prange(nr):
        u = rsrc[k]
        c, s = _locate(pool, index, n_pages, P, u)
        pos = _find(pool, index[3], index[2], P, c, s, rtgt[k])
        gone = pos < 0 or _deleted(dkey, dstart[u], dstart[u + 1] - dstart[u], n1, pos)
        if gone or _contains(itgt, istart[u], istart[u + 1] - istart[u], rtgt[k]):
            bad[4, k] = rtag[k]
    fail = np.full(5, NO_FAILURE, np.int64)
    fail[1] = min(bad[1].min(), bad[0].min())
    fail[2] = bad[2].min()
    fail[3] = bad[3].min()
    for k in range(nr):                             # reweight duplicates are category 1
        if k + 1 < nr and rsrc[k + 1] == rsrc[k] and rtgt[k] == rtgt[k + 1]:
            fail[1] = min(fail[1], min(rtag[k], rtag[k + 1]))
    fail[4] = bad[4].min()
    return fail


@njit(**_PARALLEL)
def plan(pool, index, n_pages, P, dstart, istart):
    """Touched units and, per column, (touched, pages out at a unit's first column)."""
    touched = np.zeros(n_pages, np.uint8)
    for x in prange(dstart.shape[0] - 1):
        if dstart[x + 1] - dstart[x] + istart[x + 1] - istart[x] > 0:
            c, s = _locate(pool, index, n_pages, P, x)
            touched[c] = 1                    # every writer writes 1
    k_out = np.zeros(n_pages, np.int64)
    dummy_desc = np.zeros((DESC_ROWS, 1), np.int32)
    dummy_off = np.zeros(1, np.int32)
    for c in prange(n_pages):
        if touched[c]:
            k_out[c] = _pack(pool, index[3], index[2], P, c, dstart, istart, False, 0, dummy_desc, dummy_off)
    return touched, k_out


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
def rebuild(pool, wpool, index, meta, free, dirty, n_pages, P, weighted, touched, k_out, sums,
            dstart, dkey, n1, istart, itgt, iw, n_ids):
    """Write the touched units' new pages, free what they no longer need, rewrite the index.
    Returns the physical pages written."""
    n_scr = sums[4, n_pages]
    n_q = sums[1, n_pages]
    n_open = sums[2, n_pages]
    n_freed = sums[3, n_pages]
    scratch = np.empty(max(n_scr, 1) * P, pool.dtype)
    wscratch = np.empty(max(n_scr, 1) * P if weighted else 1, wpool.dtype)
    scrmap = np.full(n_pages, -1, np.int32)
    for c in prange(n_pages):
        c0 = c - max(index[1, c], 0)
        if touched[c0]:
            j = sums[4, c]
            scrmap[c] = j
            src = index[3, c] * P
            scratch[j * P:(j + 1) * P] = pool[src:src + P]
            if weighted:
                wscratch[j * P:(j + 1) * P] = wpool[src:src + P]
    desc = np.zeros((DESC_ROWS, max(n_q, 1)), np.int32)
    newoff = np.zeros(n_ids, np.int32)
    for c in prange(n_pages):
        if touched[c]:
            _pack(scratch, scrmap, index[2], P, c, dstart, istart, True, sums[1, c], desc, newoff)
    n_free = meta[M_FREE]
    high = meta[M_HIGH_WATER]
    phys_out = np.empty(n_q, np.int64)
    for q in prange(n_q):
        c0 = desc[0, q]
        r = desc[5, q]
        m = index[2, c0] if index[2, c0] > 0 else 1
        if r < m:
            phys_out[q] = index[3, c0 + r]
        else:
            e = sums[2, c0] + r - m                  # the e-th page opened by this batch
            phys_out[q] = free[n_free - 1 - e] if e < n_free else high + e - n_free
    for q in prange(n_q):                             # output pages are disjoint
        _write_page(q, desc, phys_out[q], scratch, wscratch, scrmap, index[2], P, dstart, dkey,
                    n1, istart, itgt, iw, newoff, weighted, pool, wpool, 0, 1)
        dirty[phys_out[q]] = 1
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
    new_index = np.zeros((INDEX_ROWS, new_pages), np.int32)
    for c in prange(n_pages):
        c0 = c - max(index[1, c], 0)
        if not touched[c0]:
            for row in range(INDEX_ROWS):
                new_index[row, sums[0, c]] = index[row, c]
        elif c == c0:
            for r in range(k_out[c]):
                q = sums[1, c] + r
                col = sums[0, c] + r
                new_index[0, col] = scratch[scrmap[c] * P + P - 1 - 2 * desc[1, q]]
                new_index[1, col] = desc[3, q]
                new_index[2, col] = desc[4, q]
                new_index[3, col] = phys_out[q]
    index[:, :new_pages] = new_index
    if new_pages < n_pages:
        index[:, new_pages:n_pages] = 0
    meta[M_PAGES] = new_pages
    meta[M_FREE] = kept + n_freed
    meta[M_HIGH_WATER] = high + max(0, n_open - n_free)
    if n_open or n_freed or new_pages != n_pages:
        meta[M_INDEX_DIRTY] = 1
    return phys_out


@njit(nogil=True, cache=True)
def reweigh(pool, wpool, index, n_pages, P, dirty, src, dst, w):
    """Set the weight of each (present) entry src -> dst; returns the pages written."""
    pages = np.empty(src.shape[0], np.int64)
    for e in range(src.shape[0]):
        c, s = _locate(pool, index, n_pages, P, src[e])
        j = _find(pool, index[3], index[2], P, c, s, dst[e])
        word = _entry_word(pool, index[3], index[2], P, c, s, j)
        wpool[word] = w[e]
        pages[e] = word // P
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
    d, i = plan_arrays["delete"], plan_arrays["insert"]
    touched, k_out = plan(pool, index, n_pages, P, d["start"], i["start"])
    sums = column_sums(index, n_pages, touched, k_out)
    g.reserve_pages(int(sums[2, n_pages]))
    st = g.engine_state()
    pool, wpool, index, meta, free, dirty = st[0], st[1], st[2], st[3], st[4], st[5]
    written = rebuild(pool, wpool, index, meta, free, dirty, n_pages, P, weighted, touched, k_out, sums,
                      d["start"], d["key"], plan_arrays["n1"], i["start"], i["key"],
                      i["w"], g.next_vertex_id)
    meta[M_ENTRIES] += len(i["key"]) - len(d["key"])
    meta[M_SELF_LOOPS] += plan_arrays["loops_in"] - plan_arrays["loops_out"]
    r = plan_arrays["reweight"]
    if len(r["src"]):
        written = np.concatenate([written, reweigh(pool, wpool, index, int(meta[M_PAGES]), P, dirty,
                                                   r["src"], r["key"], r["w"])])
    return batch_rules.BatchReport(
        "host", batch.size, len(d["key"]), len(i["key"]), len(r["src"]), np.unique(written),
        pages_opened=int(sums[2, n_pages]), pages_freed=int(sums[3, n_pages]),
        seconds=time.perf_counter() - t0)


def grouped(g, batch: batch_rules.Batch) -> dict:
    """Entries of each part grouped by source and sorted, and the first failure (or None)."""
    nd, ni = len(batch.delete_u), len(batch.insert_u)
    n_ids = g.next_vertex_id
    n1 = n_ids + 1
    alive = g.live_flags()
    st = g.engine_state()
    pool, index, meta = st[0], st[2], st[3]
    P, n_pages = int(meta[M_PAGE_SIZE]), int(meta[M_PAGES])
    failures = np.full(5, NO_FAILURE, np.int64)
    bad_vertex = []
    for first, u, v in ((0, batch.delete_u, batch.delete_v), (nd, batch.insert_u, batch.insert_v),
                        (nd + ni, batch.reweight_u, batch.reweight_v)):
        bad = ~(alive[u] & alive[v])
        if bad.any():
            bad_vertex.append(first + int(np.argmax(bad)))
    if bad_vertex:
        failures[0] = min(bad_vertex)
        return {"failure": batch_rules.first_failure(failures)}
    out = {"n1": n1}
    parts = (("delete", batch.delete_u, batch.delete_v, None, 0),
             ("insert", batch.insert_u, batch.insert_v, batch.insert_w, nd),
             ("reweight", batch.reweight_u, batch.reweight_v, batch.reweight_w, nd + ni))
    for name, u, v, w, first in parts:
        src, dst, tags, edge = batch_rules.expand(u, v, batch.directed, first)
        if name == "delete":
            pos = positions(pool, index, n_pages, P, src, dst)
            keys = (pos + 1) * n1 + dst
        else:
            keys = dst.astype(np.int64)
        cnt, start, perm = group(src, keys, n_ids)
        part = {"start": start, "src": src[perm], "tag": tags[perm]}
        part["key"] = keys[perm] if name == "delete" else dst[perm]
        part["w"] = (w[edge[perm]] if w is not None else np.zeros(1, g.weight_dtype))
        out[name] = part
        if name == "delete":
            out["loops_out"] = int(np.count_nonzero(src == dst))
        if name == "insert":
            out["loops_in"] = int(np.count_nonzero(src == dst))
    d, i, r = out["delete"], out["insert"], out["reweight"]
    failures = check(pool, index, n_pages, P, n1, d["key"], d["tag"], d["src"], d["start"],
                     i["key"], i["tag"], i["src"], i["start"],
                     r["key"], r["tag"], r["src"])
    out["failure"] = batch_rules.first_failure(failures)
    return out
