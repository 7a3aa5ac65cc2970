"""The rules of a batch of edge updates, written once as plain functions and compiled twice:
by numba's ``njit`` for the host path (:mod:`.batch_host`) and as CUDA device functions for
the device path (:mod:`kernels.operators.device_updates`). Both paths therefore write the same
words; the tests compare them page for page.

What a batch does to the pages (docs/updates.md has the whole rule set):

* A *unit* is an ordinary page or all pages of one large list. A unit is *touched* when a
  vertex stored in it loses or gains entries.
* A touched unit is rebuilt: each of its vertices' new list is its old list with the deleted
  entries taken out (survivors keep their order) followed by the inserted targets in ascending
  order. The vertices (ascending ids) are then packed greedily into pages: a vertex joins the
  current page while header + records + slots fit in ``P`` words; a vertex whose list is
  longer than ``P - 6`` gets a large list of its own. One page out = the page rewritten in
  place; more = overflow pages, opened right after it in logical order.
* Output page ``r`` of a unit takes the unit's ``r``-th old physical page; extra pages come
  from the free stack (top first), then from the high-water mark, numbered over all units in
  logical order by a prefix sum; pages a unit no longer needs are zeroed and pushed on the free
  stack in logical order, after the allocations.

Arrays the functions share: ``pagemap[c]`` is the page (in ``pool``) holding logical column
``c`` -- the index's physical row for the live pool, the scratch slot for the copy of the old
pages a rebuild reads from; ``lcount`` is the old index's large-list row. ``desc`` describes
output pages, one column each (rows ``D_*`` below).
"""

from __future__ import annotations

# batch_host.py caches its compiled passes (numba keys the cache on that file alone) with these
# functions inlined: touch batch_host.py whenever this file changes.

# rows of the output-page descriptor array (int32 [DESC_ROWS, pages out])
D_UNIT = 0       # the unit's first old column
D_FIRST = 1      # first slot (in the unit's old first page) of the vertices this page holds
D_COUNT = 2      # vertices in the page (1 for a large-list page)
D_LPOS = 3       # position in a large list, -1 for an ordinary page
D_LCOUNT = 4     # pages of that large list, -1 for an ordinary page
D_LOCAL = 5      # output page number within the unit (takes the unit's old page of that rank)
D_END = 6        # end of the records zone
DESC_ROWS = 7


def build(compile_function):
    """The shared functions compiled by ``compile_function`` (``numba.njit(...)`` or
    ``cuda.jit(device=True)``), as a namespace."""

    def locate(pool, index, n_pages, P, v):
        """(first column of v's unit, slot) of a stored vertex v, else (-1, -1)."""
        lo = 0
        hi = n_pages
        while lo < hi:
            mid = (lo + hi) >> 1
            if index[0, mid] <= v:
                lo = mid + 1
            else:
                hi = mid
        i = lo - 1
        if i < 0:
            return -1, -1
        if index[1, i] > 0:
            i -= index[1, i]
        base = index[3, i] * P
        n = pool[base]
        lo = 0
        hi = n
        while lo < hi:
            mid = (lo + hi) >> 1
            if pool[base + P - 1 - 2 * mid] < v:
                lo = mid + 1
            else:
                hi = mid
        if lo < n and pool[base + P - 1 - 2 * lo] == v:
            return i, lo
        return -1, -1

    def degree(pool, pagemap, P, c, s):
        base = pagemap[c] * P
        return pool[base + pool[base + P - 2 - 2 * s]]

    def entry_word(pool, pagemap, lcount, P, c, s, j):
        """Word (in ``pool``) of entry ``j`` of the list at (column c, slot s)."""
        if lcount[c] > 0:
            per = P - 6
            return pagemap[c + j // per] * P + 4 + j % per
        base = pagemap[c] * P
        return base + pool[base + P - 2 - 2 * s] + 1 + j

    def find(pool, pagemap, lcount, P, c, s, v):
        """Position of v in the list at (c, s), or -1 (a linear scan, as the host engine's)."""
        d = degree(pool, pagemap, P, c, s)
        for j in range(d):
            if pool[entry_word(pool, pagemap, lcount, P, c, s, j)] == v:
                return j
        return -1

    locate = compile_function(locate)
    degree = compile_function(degree)
    entry_word = compile_function(entry_word)
    find = compile_function(find)

    def emit(desc, q, unit, first, count, lpos, lcount, local, end):
        desc[0, q] = unit
        desc[1, q] = first
        desc[2, q] = count
        desc[3, q] = lpos
        desc[4, q] = lcount
        desc[5, q] = local
        desc[6, q] = end

    emit = compile_function(emit)

    def pack(pool, pagemap, lcount, P, c0, dstart, istart, write, q0, desc, newoff):
        """Pack the unit at old column c0 into pages; returns how many. With ``write``, fills
        ``desc[:, q0 ...]`` and each ordinary vertex's new degree-word offset ``newoff[x]``."""
        base = pagemap[c0] * P
        n = pool[base]
        per = P - 6
        k = 0
        cur_n = 0
        cur_first = 0
        used = 3
        for s in range(n):
            x = pool[base + P - 1 - 2 * s]
            d = degree(pool, pagemap, P, c0, s) - (dstart[x + 1] - dstart[x]) + (istart[x + 1] - istart[x])
            if d > per:
                if cur_n > 0:
                    if write:
                        emit(desc, q0 + k, c0, cur_first, cur_n, -1, -1, k, used)
                    k += 1
                    cur_n = 0
                    used = 3
                pages = (d + per - 1) // per
                for r in range(pages):
                    if write:
                        here = min(per, d - r * per)
                        emit(desc, q0 + k, c0, s, 1, r, pages, k, 4 + here)
                    k += 1
                continue
            if cur_n > 0 and used + 1 + d + 2 * (cur_n + 1) > P:
                if write:
                    emit(desc, q0 + k, c0, cur_first, cur_n, -1, -1, k, used)
                k += 1
                cur_n = 0
                used = 3
            if cur_n == 0:
                cur_first = s
            if write:
                newoff[x] = used
            cur_n += 1
            used += 1 + d
        if cur_n > 0:
            if write:
                emit(desc, q0 + k, c0, cur_first, cur_n, -1, -1, k, used)
            k += 1
        return k

    def survivor(dkey, start, count, n1, j):
        """Old position of the j-th surviving entry: the smallest t with dpos[t] - t > j (or
        t = count) gives j + t; ``dkey`` holds (position + 1) * n1 + target, sorted."""
        lo = 0
        hi = count
        while lo < hi:
            mid = (lo + hi) >> 1
            if dkey[start + mid] // n1 - 1 - mid > j:
                hi = mid
            else:
                lo = mid + 1
        return j + lo

    def deleted(dkey, start, count, n1, pos):
        """Whether position ``pos`` of a list is among its deleted positions."""
        lo = 0
        hi = count
        key = (pos + 1) * n1
        while lo < hi:
            mid = (lo + hi) >> 1
            if dkey[start + mid] < key:
                lo = mid + 1
            else:
                hi = mid
        return lo < count and dkey[start + lo] < key + n1

    def position(values, start, count, v):
        """Where ``v`` is in the sorted ``values[start : start + count]``, else -1."""
        lo = 0
        hi = count
        while lo < hi:
            mid = (lo + hi) >> 1
            if values[start + mid] < v:
                lo = mid + 1
            else:
                hi = mid
        if lo < count and values[start + lo] == v:
            return start + lo
        return -1

    def physical_page(desc, q, index, sums, free, n_free, high):
        """The page output page ``q`` is written to: its unit's old page of the same rank, else
        the ``e``-th page the batch opens (from the free stack's top, then the high-water mark)."""
        c0 = desc[D_UNIT, q]
        r = desc[D_LOCAL, q]
        m = index[2, c0] if index[2, c0] > 0 else 1
        if r < m:
            return index[3, c0 + r]
        e = sums[2, c0] + r - m
        return free[n_free - 1 - e] if e < n_free else high + e - n_free

    pack = compile_function(pack)
    survivor = compile_function(survivor)
    deleted = compile_function(deleted)
    position = compile_function(position)
    physical_page = compile_function(physical_page)

    def contains(values, start, count, v):
        """Whether the sorted ``values[start : start + count]`` hold ``v``."""
        return position(values, start, count, v) >= 0

    contains = compile_function(contains)

    def entry_value(scratch, wscratch, scrmap, lcount, P, c0, s, x, j, od, dstart, dkey, n1,
                    istart, itgt, iw, weighted, pool, wpool, word):
        """Write entry j of vertex x's new list (x at old column c0, slot s) to ``word``."""
        sv = od - (dstart[x + 1] - dstart[x])
        if j < sv:
            o = survivor(dkey, dstart[x], dstart[x + 1] - dstart[x], n1, j)
            src = entry_word(scratch, scrmap, lcount, P, c0, s, o)
            pool[word] = scratch[src]
            if weighted:
                wpool[word] = wscratch[src]
        else:
            t = istart[x] + j - sv
            pool[word] = itgt[t]
            if weighted:
                wpool[word] = iw[t]

    entry_value = compile_function(entry_value)

    def page_frame(pool, wpool, weighted, base, P, count, end, lane, lanes):
        """An ordinary page's header words (vertices, records' end, 0) and its free gap between
        the records and the slots, written (weights 0) by lanes ``lane, lane + lanes, ...``."""
        for w in range(lane, 3, lanes):
            pool[base + w] = count if w == 0 else (end if w == 1 else 0)
            if weighted:
                wpool[base + w] = 0
        for w in range(end + lane, P - 2 * count, lanes):     # the free gap
            pool[base + w] = 0
            if weighted:
                wpool[base + w] = 0

    page_frame = compile_function(page_frame)

    def write_page(q, desc, phys, scratch, wscratch, scrmap, lcount, P, dstart, dkey, n1,
                   istart, itgt, iw, newoff, weighted, pool, wpool, lane, lanes):
        """Write output page q into physical page ``phys``; every word is written once, by
        lanes ``lane, lane + lanes, ...`` (one host thread: lane 0 of 1; a block on a GPU)."""
        c0 = desc[0, q]
        first = desc[1, q]
        count = desc[2, q]
        lpos = desc[3, q]
        end = desc[6, q]
        base = phys * P
        sb = scrmap[c0] * P
        if lpos >= 0:                      # one page of a large list
            per = P - 6
            x = scratch[sb + P - 1 - 2 * first]
            od = degree(scratch, scrmap, P, c0, first)
            nd = od - (dstart[x + 1] - dstart[x]) + (istart[x + 1] - istart[x])
            here = end - 4
            for w in range(lane, P, lanes):
                if w == 0:
                    pool[base] = 1
                elif w == 1:
                    pool[base + 1] = end
                elif w == 2:
                    pool[base + 2] = 1
                elif w == 3:
                    pool[base + 3] = nd if lpos == 0 else here
                elif w < end:
                    entry_value(scratch, wscratch, scrmap, lcount, P, c0, first, x, lpos * per + w - 4,
                                od, dstart, dkey, n1, istart, itgt, iw, weighted, pool, wpool,
                                base + w)
                    continue
                elif w == P - 2:
                    pool[base + w] = 3
                elif w == P - 1:
                    pool[base + w] = x
                else:
                    pool[base + w] = 0
                if weighted:
                    wpool[base + w] = 0
            return
        page_frame(pool, wpool, weighted, base, P, count, end, lane, lanes)
        for t in range(lane, count, lanes):                   # degree words and slots
            s = first + t
            x = scratch[sb + P - 1 - 2 * s]
            nd = degree(scratch, scrmap, P, c0, s) - (dstart[x + 1] - dstart[x]) + (istart[x + 1] - istart[x])
            off = newoff[x]
            pool[base + off] = nd
            pool[base + P - 2 - 2 * t] = off
            pool[base + P - 1 - 2 * t] = x
            if weighted:
                wpool[base + off] = 0
                wpool[base + P - 2 - 2 * t] = 0
                wpool[base + P - 1 - 2 * t] = 0
        for t in range(count):                                # the lists, lanes over entries
            s = first + t
            x = scratch[sb + P - 1 - 2 * s]
            od = degree(scratch, scrmap, P, c0, s)
            nd = od - (dstart[x + 1] - dstart[x]) + (istart[x + 1] - istart[x])
            off = newoff[x]
            for j in range(lane, nd, lanes):
                entry_value(scratch, wscratch, scrmap, lcount, P, c0, s, x, j, od, dstart, dkey,
                            n1, istart, itgt, iw, weighted, pool, wpool, base + off + 1 + j)

    write_page = compile_function(write_page)

    class Namespace:
        pass

    ns = Namespace()
    for name, fn in (("locate", locate), ("degree", degree), ("entry_word", entry_word), ("find", find),
                     ("emit", emit), ("pack", pack), ("survivor", survivor), ("page_frame", page_frame),
                     ("deleted", deleted), ("contains", contains), ("position", position),
                     ("physical_page", physical_page), ("entry_value", entry_value),
                     ("write_page", write_page)):
        setattr(ns, name, fn)
    return ns
