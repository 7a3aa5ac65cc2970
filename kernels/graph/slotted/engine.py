"""The edit engine: numba-compiled operations on the page pool, the index and the free stack.

Every function takes the engine state ``st``, a tuple of arrays the Python class owns::

    st[0] pool    int32[capacity_pages * P]   the pages, page slot s at words s*P .. s*P+P-1
    st[1] wpool   float[capacity_pages * P]   weights at the same words (length 0 if unweighted)
    st[2] index   int32[4, index_capacity]    one column per logical page (see layout.py)
    st[3] meta    int64[META_LEN]             counters (pages, high water, entries, ...)
    st[4] free    int32[capacity_pages]       stack of freed physical slots
    st[5] dirty   uint8[capacity_pages]       page slot changed since the last device sync
    st[6] counts  int64[N_CASES]              how often each rule case was taken

Callers validate first (vertices alive, edges present or absent) and make sure there is room
for new pages: a single directed insertion opens at most one page and one index column, so
:func:`has_room` for 2 is checked before each (undirected) edit. Work per edit is bounded by
the page size, plus the index (a few int32 per page) when a page is inserted or deleted;
only removing a vertex with clean-up from a directed graph scans all lists (there is no
reverse index).

Freed pages are zeroed and pages past the high-water mark are zero, so a page handed out is
blank; the free gap of every page is kept zero as well (``check_invariants`` verifies it).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels.graph.slotted.layout import (
    ADD_BECOME_LARGE,
    ADD_IN_PLACE,
    ADD_LARGE_APPEND,
    ADD_LARGE_NEW_PAGE,
    ADD_MOVE_FOLLOWING,
    ADD_MOVE_OWN,
    H_COUNT,
    H_END,
    H_LARGE,
    IDX_FIRST,
    IDX_LCOUNT,
    IDX_LPOS,
    IDX_SLOT,
    M_ENTRIES,
    M_FREE,
    M_HIGH_WATER,
    M_INDEX_DIRTY,
    M_PAGE_SIZE,
    M_PAGES,
    M_SELF_LOOPS,
    M_WEIGHTED,
    RECORD_START,
    REMOVE_FREE_TRAILING_PAGE,
    REMOVE_IN_PAGE,
    REMOVE_LARGE,
    REMOVE_LARGE_TO_ORDINARY,
    VERTEX_NEW_PAGE,
    VERTEX_REMOVE,
    VERTEX_REMOVE_DELETE_PAGE,
    VERTEX_REMOVE_LARGE,
    VERTEX_RESTORE_IN_PAGE,
    VERTEX_RESTORE_NEW_PAGE,
    VERTEX_RESTORE_SPLIT,
    VERTEX_TO_LAST_PAGE,
)

_JIT = dict(cache=True, nogil=True)


# ---- small helpers ---------------------------------------------------------------------
@njit(**_JIT)
def slot_offset_word(P, s):
    """Word (within the page) of slot ``s``'s degree-word offset; the vertex id follows it."""
    return P - 2 - 2 * s


@njit(**_JIT)
def free_words(pool, base, P):
    return P - 2 * pool[base + H_COUNT] - pool[base + H_END]


@njit(**_JIT)
def has_room(st, pages):
    """Whether ``pages`` new pages (and index columns) can be opened without growing."""
    pool, index, meta = st[0], st[2], st[3]
    P = meta[M_PAGE_SIZE]
    capacity = pool.shape[0] // P
    spare = meta[M_FREE] + capacity - meta[M_HIGH_WATER]
    return spare >= pages and index.shape[1] - meta[M_PAGES] >= pages


@njit(**_JIT)
def rightmost_page_at_or_below(st, v):
    """Logical page with the largest first vertex <= v (-1 if v precedes every page)."""
    index, meta = st[2], st[3]
    lo = 0
    hi = meta[M_PAGES]
    while lo < hi:
        mid = (lo + hi) >> 1
        if index[IDX_FIRST, mid] <= v:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


@njit(**_JIT)
def slot_search(pool, base, P, v):
    """Slot holding ``v`` (>= 0), or ``-(insertion point) - 1``; slot vertex ids ascend."""
    n = pool[base + H_COUNT]
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        if pool[base + P - 1 - 2 * mid] < v:
            lo = mid + 1
        else:
            hi = mid
    if lo < n and pool[base + P - 1 - 2 * lo] == v:
        return lo
    return -lo - 1


@njit(**_JIT)
def locate(st, v):
    """(logical page, slot) of vertex ``v``; for a large list the list's first page.

    (-1, -1) when ``v`` is not stored."""
    pool, index, meta = st[0], st[2], st[3]
    P = meta[M_PAGE_SIZE]
    i = rightmost_page_at_or_below(st, v)
    if i < 0:
        return -1, -1
    if index[IDX_LPOS, i] > 0:
        i -= index[IDX_LPOS, i]
    base = index[IDX_SLOT, i] * P
    s = slot_search(pool, base, P, v)
    if s < 0:
        return -1, -1
    return i, s


@njit(**_JIT)
def mark_dirty(st, phys):
    st[5][phys] = 1


@njit(**_JIT)
def alloc_page(st):
    """A blank physical page slot (reused from the free stack first), marked dirty."""
    meta, free = st[3], st[4]
    if meta[M_FREE] > 0:
        meta[M_FREE] -= 1
        phys = free[meta[M_FREE]]
    else:
        phys = meta[M_HIGH_WATER]
        meta[M_HIGH_WATER] += 1
    st[5][phys] = 1
    return phys


@njit(**_JIT)
def release_page(st, phys):
    """Zero a page and put its slot on the free stack; nothing of it needs uploading."""
    pool, wpool, meta, free = st[0], st[1], st[3], st[4]
    P = meta[M_PAGE_SIZE]
    base = phys * P
    for k in range(P):
        pool[base + k] = 0
    if meta[M_WEIGHTED]:
        for k in range(P):
            wpool[base + k] = 0.0
    free[meta[M_FREE]] = phys
    meta[M_FREE] += 1
    st[5][phys] = 0


@njit(**_JIT)
def index_insert(st, pos, first, lpos, lcount, phys):
    index, meta = st[2], st[3]
    n = meta[M_PAGES]
    for j in range(n, pos, -1):
        for r in range(4):
            index[r, j] = index[r, j - 1]
    index[IDX_FIRST, pos] = first
    index[IDX_LPOS, pos] = lpos
    index[IDX_LCOUNT, pos] = lcount
    index[IDX_SLOT, pos] = phys
    meta[M_PAGES] = n + 1
    meta[M_INDEX_DIRTY] = 1


@njit(**_JIT)
def index_delete(st, pos):
    index, meta = st[2], st[3]
    n = meta[M_PAGES]
    for j in range(pos, n - 1):
        for r in range(4):
            index[r, j] = index[r, j + 1]
    for r in range(4):
        index[r, n - 1] = 0
    meta[M_PAGES] = n - 1
    meta[M_INDEX_DIRTY] = 1


# ---- moving words inside and between pages ---------------------------------------------
@njit(**_JIT)
def shift_words_right(st, base, start, end, by):
    """Move words [start, end) of a page ``by`` words to the right (weights too)."""
    pool, wpool, meta = st[0], st[1], st[3]
    weighted = meta[M_WEIGHTED]
    for k in range(end - 1, start - 1, -1):
        pool[base + k + by] = pool[base + k]
        if weighted:
            wpool[base + k + by] = wpool[base + k]


@njit(**_JIT)
def shift_words_left(st, base, start, end, by):
    """Move words [start, end) ``by`` words to the left and zero the vacated tail."""
    pool, wpool, meta = st[0], st[1], st[3]
    weighted = meta[M_WEIGHTED]
    for k in range(start, end):
        pool[base + k - by] = pool[base + k]
        if weighted:
            wpool[base + k - by] = wpool[base + k]
    for k in range(end - by, end):
        pool[base + k] = 0
        if weighted:
            wpool[base + k] = 0.0


@njit(**_JIT)
def move_tail(st, src, s0, dst):
    """Move the vertices of slots s0..n-1 (records and slots) from page ``src`` to the blank
    page ``dst`` (both are word offsets of page starts)."""
    pool, wpool, meta = st[0], st[1], st[3]
    P = meta[M_PAGE_SIZE]
    weighted = meta[M_WEIGHTED]
    n = pool[src + H_COUNT]
    end = pool[src + H_END]
    start = pool[src + slot_offset_word(P, s0)]
    length = end - start
    for k in range(length):
        pool[dst + RECORD_START + k] = pool[src + start + k]
        pool[src + start + k] = 0
        if weighted:
            wpool[dst + RECORD_START + k] = wpool[src + start + k]
            wpool[src + start + k] = 0.0
    delta = start - RECORD_START
    for j in range(s0, n):
        w_src = src + slot_offset_word(P, j)
        w_dst = dst + slot_offset_word(P, j - s0)
        pool[w_dst] = pool[w_src] - delta
        pool[w_dst + 1] = pool[w_src + 1]
        pool[w_src] = 0
        pool[w_src + 1] = 0
    pool[dst + H_COUNT] = n - s0
    pool[dst + H_END] = RECORD_START + length
    pool[dst + H_LARGE] = 0
    pool[src + H_COUNT] = s0
    pool[src + H_END] = start


@njit(**_JIT)
def insert_entry(st, base, s, v, w):
    """Append ``v`` to the list of slot ``s`` in an ordinary page with a free word."""
    pool, wpool, meta = st[0], st[1], st[3]
    P = meta[M_PAGE_SIZE]
    n = pool[base + H_COUNT]
    end = pool[base + H_END]
    off = pool[base + slot_offset_word(P, s)]
    deg = pool[base + off]
    pos = off + 1 + deg
    shift_words_right(st, base, pos, end, 1)
    pool[base + pos] = v
    if meta[M_WEIGHTED]:
        wpool[base + pos] = w
    pool[base + off] = deg + 1
    pool[base + H_END] = end + 1
    for j in range(s + 1, n):
        pool[base + slot_offset_word(P, j)] += 1


@njit(**_JIT)
def put_vertex(st, base, s, v):
    """Insert vertex ``v`` (degree 0) as slot ``s`` of an ordinary page with 3 free words."""
    pool, meta = st[0], st[3]
    P = meta[M_PAGE_SIZE]
    n = pool[base + H_COUNT]
    end = pool[base + H_END]
    off = end if s == n else pool[base + slot_offset_word(P, s)]
    shift_words_right(st, base, off, end, 1)
    pool[base + off] = 0
    # slots s..n-1 move one pair towards the front, offsets +1
    for j in range(n - 1, s - 1, -1):
        w_old = base + slot_offset_word(P, j)
        w_new = base + slot_offset_word(P, j + 1)
        pool[w_new] = pool[w_old] + 1
        pool[w_new + 1] = pool[w_old + 1]
    pool[base + slot_offset_word(P, s)] = off
    pool[base + slot_offset_word(P, s) + 1] = v
    pool[base + H_COUNT] = n + 1
    pool[base + H_END] = end + 1


@njit(**_JIT)
def init_large_page(st, base, u, v, w):
    """A continuation page of u's large list holding the single entry v."""
    pool, wpool, meta = st[0], st[1], st[3]
    P = meta[M_PAGE_SIZE]
    pool[base + H_COUNT] = 1
    pool[base + H_END] = RECORD_START + 2
    pool[base + H_LARGE] = 1
    pool[base + RECORD_START] = 1
    pool[base + RECORD_START + 1] = v
    if meta[M_WEIGHTED]:
        wpool[base + RECORD_START + 1] = w
    pool[base + P - 2] = RECORD_START
    pool[base + P - 1] = u


# ---- add an entry u -> v ----------------------------------------------------------------
@njit(**_JIT)
def large_append(st, i, u, v, w):
    pool, wpool, index, meta, counts = st[0], st[1], st[2], st[3], st[6]
    P = meta[M_PAGE_SIZE]
    k = index[IDX_LCOUNT, i]
    last = i + k - 1
    first_base = index[IDX_SLOT, i] * P
    last_phys = index[IDX_SLOT, last]
    last_base = last_phys * P
    end = pool[last_base + H_END]
    pool[first_base + RECORD_START] += 1            # total degree lives in the first page
    mark_dirty(st, index[IDX_SLOT, i])
    if end < P - 2:
        pool[last_base + end] = v
        if meta[M_WEIGHTED]:
            wpool[last_base + end] = w
        pool[last_base + H_END] = end + 1
        pool[last_base + RECORD_START] += 1         # entries in this continuation page
        mark_dirty(st, last_phys)
        counts[ADD_LARGE_APPEND] += 1
        return
    phys = alloc_page(st)
    init_large_page(st, phys * P, u, v, w)
    index_insert(st, last + 1, u, k, k + 1, phys)
    for j in range(i, i + k + 1):
        index[IDX_LCOUNT, j] = k + 1
    counts[ADD_LARGE_NEW_PAGE] += 1


@njit(**_JIT)
def add_entry(st, u, v, w):
    """Store the entry u -> v (u is stored, the entry is absent, there is room for a page)."""
    pool, index, meta, counts = st[0], st[2], st[3], st[6]
    P = meta[M_PAGE_SIZE]
    i, s = locate(st, u)
    meta[M_ENTRIES] += 1
    if u == v:
        meta[M_SELF_LOOPS] += 1
    if index[IDX_LCOUNT, i] > 0:
        large_append(st, i, u, v, w)
        return
    phys = index[IDX_SLOT, i]
    base = phys * P
    mark_dirty(st, phys)
    if free_words(pool, base, P) >= 1:
        insert_entry(st, base, s, v, w)
        counts[ADD_IN_PLACE] += 1
        return
    n = pool[base + H_COUNT]
    new_phys = alloc_page(st)
    new_base = new_phys * P
    if s < n - 1:
        move_tail(st, base, s + 1, new_base)
        index_insert(st, i + 1, pool[new_base + P - 1], -1, -1, new_phys)
        insert_entry(st, base, s, v, w)
        counts[ADD_MOVE_FOLLOWING] += 1
    elif n > 1:
        move_tail(st, base, s, new_base)
        index_insert(st, i + 1, u, -1, -1, new_phys)
        insert_entry(st, new_base, 0, v, w)
        counts[ADD_MOVE_OWN] += 1
    else:
        # u is alone and fills its page: the page becomes the head of a large list
        pool[base + H_LARGE] = 1
        pool[base + RECORD_START] += 1
        init_large_page(st, new_base, u, v, w)
        index[IDX_LPOS, i] = 0
        index[IDX_LCOUNT, i] = 2
        index_insert(st, i + 1, u, 1, 2, new_phys)
        counts[ADD_BECOME_LARGE] += 1


# ---- find and remove an entry u -> v ----------------------------------------------------
@njit(**_JIT)
def find_entry(st, i, s, v):
    """Position of v in the list of (page i, slot s), or -1."""
    pool, index, meta = st[0], st[2], st[3]
    P = meta[M_PAGE_SIZE]
    if index[IDX_LCOUNT, i] > 0:
        per_page = P - 6
        for p in range(index[IDX_LCOUNT, i]):
            base = index[IDX_SLOT, i + p] * P
            end = pool[base + H_END]
            for k in range(RECORD_START + 1, end):
                if pool[base + k] == v:
                    return p * per_page + k - RECORD_START - 1
        return -1
    base = index[IDX_SLOT, i] * P
    off = pool[base + slot_offset_word(P, s)]
    deg = pool[base + off]
    for j in range(deg):
        if pool[base + off + 1 + j] == v:
            return j
    return -1


@njit(**_JIT)
def has_entry(st, u, v):
    i, s = locate(st, u)
    if i < 0:
        return False
    return find_entry(st, i, s, v) >= 0


@njit(**_JIT)
def entry_weight(st, u, v):
    """Weight of u -> v (the entry must exist; 1.0 for an unweighted graph)."""
    pool, wpool, index, meta = st[0], st[1], st[2], st[3]
    P = meta[M_PAGE_SIZE]
    i, s = locate(st, u)
    j = find_entry(st, i, s, v)
    if not meta[M_WEIGHTED]:
        return 1.0
    if index[IDX_LCOUNT, i] > 0:
        per_page = P - 6
        base = index[IDX_SLOT, i + j // per_page] * P
        return wpool[base + RECORD_START + 1 + j % per_page]
    base = index[IDX_SLOT, i] * P
    off = pool[base + slot_offset_word(P, s)]
    return wpool[base + off + 1 + j]


@njit(**_JIT)
def remove_large_entry(st, i, j):
    pool, wpool, index, meta, counts = st[0], st[1], st[2], st[3], st[6]
    P = meta[M_PAGE_SIZE]
    weighted = meta[M_WEIGHTED]
    per_page = P - 6
    k = index[IDX_LCOUNT, i]
    last = i + k - 1
    first_phys = index[IDX_SLOT, i]
    last_phys = index[IDX_SLOT, last]
    hole_phys = index[IDX_SLOT, i + j // per_page]
    hole = hole_phys * P + RECORD_START + 1 + j % per_page
    last_base = last_phys * P
    tail = last_base + pool[last_base + H_END] - 1
    removed = wpool[hole] if weighted else 1.0
    pool[hole] = pool[tail]
    pool[tail] = 0
    if weighted:
        wpool[hole] = wpool[tail]
        wpool[tail] = 0.0
    pool[last_base + H_END] -= 1
    pool[last_base + RECORD_START] -= 1
    pool[first_phys * P + RECORD_START] -= 1
    mark_dirty(st, first_phys)
    mark_dirty(st, hole_phys)
    mark_dirty(st, last_phys)
    if pool[last_base + RECORD_START] > 0:
        counts[REMOVE_LARGE] += 1
        return removed
    release_page(st, last_phys)
    index_delete(st, last)
    k -= 1
    counts[REMOVE_FREE_TRAILING_PAGE] += 1
    if k == 1:
        pool[first_phys * P + H_LARGE] = 0
        index[IDX_LPOS, i] = -1
        index[IDX_LCOUNT, i] = -1
        counts[REMOVE_LARGE_TO_ORDINARY] += 1
    else:
        for p in range(i, i + k):
            index[IDX_LCOUNT, p] = k
    return removed


@njit(**_JIT)
def remove_entry(st, u, v):
    """Remove the entry u -> v (it must exist); returns its weight (1.0 if unweighted)."""
    pool, wpool, index, meta, counts = st[0], st[1], st[2], st[3], st[6]
    P = meta[M_PAGE_SIZE]
    i, s = locate(st, u)
    j = find_entry(st, i, s, v)
    meta[M_ENTRIES] -= 1
    if u == v:
        meta[M_SELF_LOOPS] -= 1
    if index[IDX_LCOUNT, i] > 0:
        return remove_large_entry(st, i, j)
    phys = index[IDX_SLOT, i]
    base = phys * P
    mark_dirty(st, phys)
    off = pool[base + slot_offset_word(P, s)]
    deg = pool[base + off]
    hole = base + off + 1 + j
    last = off + deg                 # word of the list's last entry
    removed = wpool[hole] if meta[M_WEIGHTED] else 1.0
    pool[hole] = pool[base + last]
    if meta[M_WEIGHTED]:
        wpool[hole] = wpool[base + last]
    shift_words_left(st, base, last + 1, pool[base + H_END], 1)   # also zeroes the freed word
    pool[base + off] = deg - 1
    pool[base + H_END] -= 1
    for t in range(s + 1, pool[base + H_COUNT]):
        pool[base + slot_offset_word(P, t)] -= 1
    counts[REMOVE_IN_PAGE] += 1
    return removed


# ---- vertices ---------------------------------------------------------------------------
@njit(**_JIT)
def new_page_with_vertex(st, pos, v):
    pool, meta = st[0], st[3]
    P = meta[M_PAGE_SIZE]
    phys = alloc_page(st)
    base = phys * P
    pool[base + H_COUNT] = 1
    pool[base + H_END] = RECORD_START + 1
    pool[base + P - 2] = RECORD_START
    pool[base + P - 1] = v
    index_insert(st, pos, v, -1, -1, phys)


@njit(**_JIT)
def append_vertex(st, v, min_free_words):
    """A new vertex (id above all stored ids): the last page if it has ``min_free_words``
    free, else a new page at the end."""
    pool, index, meta, counts = st[0], st[2], st[3], st[6]
    P = meta[M_PAGE_SIZE]
    n_pages = meta[M_PAGES]
    if n_pages > 0 and index[IDX_LCOUNT, n_pages - 1] < 0:
        phys = index[IDX_SLOT, n_pages - 1]
        base = phys * P
        if free_words(pool, base, P) >= min_free_words:
            put_vertex(st, base, pool[base + H_COUNT], v)
            mark_dirty(st, phys)
            counts[VERTEX_TO_LAST_PAGE] += 1
            return
    new_page_with_vertex(st, n_pages, v)
    counts[VERTEX_NEW_PAGE] += 1


@njit(**_JIT)
def restore_vertex(st, v):
    """Put a removed id back with no edges, where ascending order says it belongs."""
    pool, index, meta, counts = st[0], st[2], st[3], st[6]
    P = meta[M_PAGE_SIZE]
    n_pages = meta[M_PAGES]
    i = rightmost_page_at_or_below(st, v)
    t = 0 if i < 0 else i
    if i >= 0 and index[IDX_LCOUNT, i] > 0:
        t = i + 1                     # i is the last page of a large list of a smaller vertex
    if t >= n_pages or index[IDX_LCOUNT, t] > 0:
        new_page_with_vertex(st, t, v)
        counts[VERTEX_RESTORE_NEW_PAGE] += 1
        return
    phys = index[IDX_SLOT, t]
    base = phys * P
    s = -slot_search(pool, base, P, v) - 1
    n = pool[base + H_COUNT]
    if free_words(pool, base, P) < 3:
        if s == n:
            new_page_with_vertex(st, t + 1, v)
            counts[VERTEX_RESTORE_NEW_PAGE] += 1
            return
        new_phys = alloc_page(st)
        new_base = new_phys * P
        move_tail(st, base, s, new_base)
        index_insert(st, t + 1, pool[new_base + P - 1], -1, -1, new_phys)
        counts[VERTEX_RESTORE_SPLIT] += 1
    else:
        counts[VERTEX_RESTORE_IN_PAGE] += 1
    put_vertex(st, base, s, v)
    mark_dirty(st, phys)
    if s == 0:
        index[IDX_FIRST, t] = v
        meta[M_INDEX_DIRTY] = 1


@njit(**_JIT)
def drop_vertex(st, v):
    """Remove v's list and slot (edges pointing to v elsewhere are not touched)."""
    pool, index, meta, counts = st[0], st[2], st[3], st[6]
    P = meta[M_PAGE_SIZE]
    i, s = locate(st, v)
    if index[IDX_LCOUNT, i] > 0:
        k = index[IDX_LCOUNT, i]
        first_base = index[IDX_SLOT, i] * P
        meta[M_ENTRIES] -= pool[first_base + RECORD_START]
        for _ in range(k):
            base = index[IDX_SLOT, i] * P
            for w in range(RECORD_START + 1, pool[base + H_END]):
                if pool[base + w] == v:
                    meta[M_SELF_LOOPS] -= 1
            release_page(st, index[IDX_SLOT, i])
            index_delete(st, i)
        counts[VERTEX_REMOVE_LARGE] += 1
        return
    phys = index[IDX_SLOT, i]
    base = phys * P
    n = pool[base + H_COUNT]
    end = pool[base + H_END]
    off = pool[base + slot_offset_word(P, s)]
    deg = pool[base + off]
    for w in range(off + 1, off + 1 + deg):
        if pool[base + w] == v:
            meta[M_SELF_LOOPS] -= 1
    meta[M_ENTRIES] -= deg
    length = 1 + deg
    shift_words_left(st, base, off + length, end, length)         # also zeroes the freed words
    for j in range(s, n - 1):
        w_dst = base + slot_offset_word(P, j)
        w_src = base + slot_offset_word(P, j + 1)
        pool[w_dst] = pool[w_src] - length
        pool[w_dst + 1] = pool[w_src + 1]
    last_slot = base + slot_offset_word(P, n - 1)
    pool[last_slot] = 0
    pool[last_slot + 1] = 0
    pool[base + H_COUNT] = n - 1
    pool[base + H_END] = end - length
    if n == 1:
        release_page(st, phys)
        index_delete(st, i)
        counts[VERTEX_REMOVE_DELETE_PAGE] += 1
        return
    mark_dirty(st, phys)
    if s == 0:
        index[IDX_FIRST, i] = pool[base + P - 1]
        meta[M_INDEX_DIRTY] = 1
    counts[VERTEX_REMOVE] += 1


# ---- reading lists ----------------------------------------------------------------------
@njit(**_JIT)
def vertex_degree(st, v):
    pool, index, meta = st[0], st[2], st[3]
    P = meta[M_PAGE_SIZE]
    i, s = locate(st, v)
    base = index[IDX_SLOT, i] * P
    return pool[base + pool[base + slot_offset_word(P, s)]]


@njit(**_JIT)
def copy_list(st, v, out, wout):
    """Copy v's neighbours (stored order) into ``out`` (and weights into ``wout`` unless it
    is empty)."""
    pool, wpool, index, meta = st[0], st[1], st[2], st[3]
    P = meta[M_PAGE_SIZE]
    weighted = meta[M_WEIGHTED] and wout.shape[0] > 0
    i, s = locate(st, v)
    if index[IDX_LCOUNT, i] > 0:
        t = 0
        for p in range(index[IDX_LCOUNT, i]):
            base = index[IDX_SLOT, i + p] * P
            for w in range(RECORD_START + 1, pool[base + H_END]):
                out[t] = pool[base + w]
                if weighted:
                    wout[t] = wpool[base + w]
                t += 1
        return
    base = index[IDX_SLOT, i] * P
    off = pool[base + slot_offset_word(P, s)]
    for j in range(pool[base + off]):
        out[j] = pool[base + off + 1 + j]
        if weighted:
            wout[j] = wpool[base + off + 1 + j]


@njit(**_JIT)
def sources_of(st, v, out):
    """Every stored vertex whose list holds v (a scan of all lists); returns the count."""
    pool, index, meta = st[0], st[2], st[3]
    P = meta[M_PAGE_SIZE]
    count = 0
    for i in range(meta[M_PAGES]):
        base = index[IDX_SLOT, i] * P
        if index[IDX_LCOUNT, i] > 0:
            for w in range(RECORD_START + 1, pool[base + H_END]):
                if pool[base + w] == v:
                    out[count] = pool[base + P - 1]
                    count += 1
            continue
        for s in range(pool[base + H_COUNT]):
            off = pool[base + slot_offset_word(P, s)]
            for w in range(off + 1, off + 1 + pool[base + off]):
                if pool[base + w] == v:
                    out[count] = pool[base + P - 1 - 2 * s]
                    count += 1
                    break
    return count


# ---- batches (stop early when the pool or index must grow) ------------------------------
@njit(**_JIT)
def apply_add_edges(st, us, vs, ws, both_directions, start):
    """Add edges from position ``start``; returns where it stopped (len(us) when done)."""
    for t in range(start, us.shape[0]):
        if not has_room(st, 2):
            return t
        add_entry(st, us[t], vs[t], ws[t])
        if both_directions and us[t] != vs[t]:
            add_entry(st, vs[t], us[t], ws[t])
    return us.shape[0]


@njit(**_JIT)
def apply_remove_edges(st, us, vs, both_directions, removed):
    """Remove u -> v for each pair (present by validation) and, for an undirected graph,
    v -> u where v is stored and holds it; ``removed`` receives the weights."""
    for t in range(us.shape[0]):
        removed[t] = remove_entry(st, us[t], vs[t])
        if both_directions and us[t] != vs[t] and has_entry(st, vs[t], us[t]):
            remove_entry(st, vs[t], us[t])


@njit(**_JIT)
def entries_present(st, us, vs):
    out = np.zeros(us.shape[0], dtype=np.bool_)
    for t in range(us.shape[0]):
        out[t] = has_entry(st, us[t], vs[t])
    return out

