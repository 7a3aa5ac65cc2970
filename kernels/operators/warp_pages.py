"""A warp's share of the compact path's fused launch (:mod:`kernels.operators.device_updates`,
``fused_c``): copying a touched unit's old pages to scratch, describing the unit, and writing
an output page, written so that a warp keeps several memory reads in flight.

Why: in the fused launch a warp owns one page at a time, and a 10^3-edge batch gives each warp
about one page. The batch_core forms (``pack``, ``write_page``, shared with the host path) walk
a page's vertices and words one after another, each step a chain of dependent global reads
(the slot, the degree word, the group starts, the deletion keys, the scratch word): 20-60 us a
page on an H200, while the GPU's bandwidth would copy the page in well under one. So here:

* :func:`copy_words` copies with eight reads issued before their eight writes (a page of 1,024
  words is four such rounds a lane instead of 32 read-then-write steps);
* ``describe`` packs with ``pack_warp``: the lanes read 32 slots' vertices and new degrees at a
  time into shared memory, lane 0 runs the greedy rule from there; the unit's output pages'
  index columns are then a lane each;
* ``write_page`` has each lane gather one vertex's facts (its old list's first word, deletion
  and insertion ranges, new offset) into shared memory, then the lanes take the 32 vertices'
  lists as one run of entries (a round per 32 entries rather than per vertex: a page of short
  lists took a round per list); a large-list page follows its deletions incrementally instead of
  a binary search per word.

The words written are exactly batch_core's (``write_page``, ``pack``): the host path still runs
those, and every test compares the two page for page. ``VX_ROWS`` rows of shared int64 a thread.

Every function is called by all 32 lanes of a warp alike (``lanes == WARP``: the fused launch
only; its split form keeps batch_core's), and every ``sync()`` sits where the whole warp goes.
Under the simulator ``sync()`` is ``syncthreads()``, exact because the fused launch's simulator
blocks are one warp (``WARP_BLOCK["sim"]`` = 32): a larger simulator block would hang there.
"""

from __future__ import annotations

VX_ROWS = 8          # per-vertex facts a lane gathers for write_page (rows of the shared array)
UNROLL = 8           # reads in flight a lane in copy_words


def build(core, sync, int64, WARP: int):
    """The device functions, compiled with ``cuda.jit(device=True)``: ``core`` is batch_core's
    device namespace, ``sync`` orders a warp's writes before its reads (``warp_sync``)."""
    from numba import cuda

    degree, survivor, entry_word, emit = core.degree, core.survivor, core.entry_word, core.emit
    page_frame = core.page_frame
    device = cuda.jit(device=True)

    def copy_words(dst_arr, dst, src_arr, src, n, lane, lanes):
        """``dst_arr[dst:dst + n] = src_arr[src:src + n]``, lanes over words: where ``n`` is a
        multiple of ``lanes * UNROLL`` (pages of 256-1,024 words, a warp) each lane issues eight
        reads before its eight writes, else one word a step."""
        if n % (lanes * UNROLL) != 0:
            for w in range(lane, n, lanes):
                dst_arr[dst + w] = src_arr[src + w]
            return
        for w in range(lane, n, lanes * UNROLL):
            a0 = src_arr[src + w]
            a1 = src_arr[src + w + lanes]
            a2 = src_arr[src + w + 2 * lanes]
            a3 = src_arr[src + w + 3 * lanes]
            a4 = src_arr[src + w + 4 * lanes]
            a5 = src_arr[src + w + 5 * lanes]
            a6 = src_arr[src + w + 6 * lanes]
            a7 = src_arr[src + w + 7 * lanes]
            dst_arr[dst + w] = a0
            dst_arr[dst + w + lanes] = a1
            dst_arr[dst + w + 2 * lanes] = a2
            dst_arr[dst + w + 3 * lanes] = a3
            dst_arr[dst + w + 4 * lanes] = a4
            dst_arr[dst + w + 5 * lanes] = a5
            dst_arr[dst + w + 6 * lanes] = a6
            dst_arr[dst + w + 7 * lanes] = a7

    copy_words = device(copy_words)

    def pack_warp(pool, pagemap, P, c0, dstart, istart, q0, desc, newoff, lane, vx, vb):
        """batch_core ``pack`` with ``write`` (the same greedy rule, the same ``desc`` columns and
        ``newoff`` words) by a warp: the lanes read 32 slots' vertices and new degrees at a time
        into shared memory, lane 0 packs from there (in ``pack`` each slot is a chain of four
        dependent global reads, one slot after another)."""
        base = int64(pagemap[c0]) * P
        n = pool[base]
        per = P - 6
        k = int64(0)
        cur_n = int64(0)
        cur_first = int64(0)
        used = int64(3)
        for s0 in range(0, n, WARP):
            s = s0 + lane
            if s < n:
                x = pool[base + P - 1 - 2 * s]
                od = pool[base + pool[base + P - 2 - 2 * s]]
                vx[0, vb + lane] = x
                vx[1, vb + lane] = od - (dstart[x + 1] - dstart[x]) + (istart[x + 1] - istart[x])
            sync()
            if lane == 0:
                for i in range(min(WARP, n - s0)):
                    x = vx[0, vb + i]
                    d = vx[1, vb + i]
                    if d > per:
                        if cur_n > 0:
                            emit(desc, q0 + k, c0, cur_first, cur_n, -1, -1, k, used)
                            k += 1
                            cur_n = 0
                            used = 3
                        pages = (d + per - 1) // per
                        for r in range(pages):
                            emit(desc, q0 + k, c0, s0 + i, 1, r, pages, k, 4 + min(per, d - r * per))
                            k += 1
                        continue
                    if cur_n > 0 and used + 1 + d + 2 * (cur_n + 1) > P:
                        emit(desc, q0 + k, c0, cur_first, cur_n, -1, -1, k, used)
                        k += 1
                        cur_n = 0
                        used = 3
                    if cur_n == 0:
                        cur_first = s0 + i
                    newoff[x] = used
                    cur_n += 1
                    used += 1 + d
            sync()                                           # before the next slots' facts
        if lane == 0 and cur_n > 0:
            emit(desc, q0 + k, c0, cur_first, cur_n, -1, -1, k, used)

    pack_warp = device(pack_warp)

    def unit_columns(r, cpos, vals, pre, index, P, pool, desc, free_top, n_top, free_last, n_free, high, phys_out,
                     new_index, lane, lanes):
        """Touched unit r's output pages (described by ``pack``) given their physical pages and
        index columns, by lanes ``lane, lane + lanes, ...`` (``describe_unit``: one thread).
        Opened pages come from the free stack's top first (``free_top[free_last]``, then down:
        ``n_top`` of them), then past the high-water mark ``high``."""
        c = cpos[r]
        m = vals[3, r]
        q0 = pre[0, r]
        col0 = c + pre[0, r] - pre[3, r]
        first = int64(index[3, c]) * P
        for lr in range(lane, vals[0, r], lanes):
            q = q0 + lr
            if lr < m:
                phys = int64(index[3, c + lr])
            else:
                e = pre[1, r] + lr - m
                phys = int64(free_top[free_last - e]) if e < n_top else high + e - n_free
            phys_out[q] = phys
            new_index[0, col0 + lr] = pool[first + P - 1 - 2 * desc[1, q]]
            new_index[1, col0 + lr] = desc[3, q]
            new_index[2, col0 + lr] = desc[4, q]
            new_index[3, col0 + lr] = phys

    unit_columns = device(unit_columns)

    def describe(r, cpos, vals, pre, index, P, pool, dfull, ifull, desc, newoff, free_top, n_top, free_last,
                 n_free, high, phys_out, new_index, lane, vx, vb):
        """``describe_unit`` (device_updates) by a warp: ``pack_warp``, then the unit's output pages'
        physical pages and index columns a lane each."""
        pack_warp(pool, index[3], P, cpos[r], dfull, ifull, pre[0, r], desc, newoff, lane, vx, vb)
        sync()                                           # desc and newoff, written by lane 0
        unit_columns(r, cpos, vals, pre, index, P, pool, desc, free_top, n_top, free_last, n_free, high, phys_out,
                     new_index, lane, WARP)

    describe = device(describe)

    def write_large(q, desc, base, scratch, wscratch, scrmap, lcount, P, dstart, dkey, n1, istart, itgt, iw,
                    weighted, pool, wpool, lane):
        """One page of a large list (batch_core ``write_page``'s first branch), lanes over words:
        each lane follows its words' old positions past the deletions incrementally."""
        c0 = desc[0, q]
        first = desc[1, q]
        lpos = desc[3, q]
        end = desc[6, q]
        per = P - 6
        sb = int64(scrmap[c0]) * P
        x = scratch[sb + P - 1 - 2 * first]
        od = int64(degree(scratch, scrmap, P, c0, first))
        d0 = int64(dstart[x])
        nde = int64(dstart[x + 1]) - d0
        i0 = int64(istart[x])
        nd = od - nde + (int64(istart[x + 1]) - i0)
        sv = od - nde
        old_large = lcount[c0] > 0
        list0 = sb + scratch[sb + P - 2 - 2 * first] + 1          # an ordinary old page's list
        for w in range(lane, 4, WARP):
            pool[base + w] = 1 if w != 1 and w != 3 else (end if w == 1 else (nd if lpos == 0 else end - 4))
        for w in range(end + lane, P - 2, WARP):
            pool[base + w] = 0
        if lane == 0:
            pool[base + P - 2] = 3
            pool[base + P - 1] = x
        if weighted:
            for w in range(lane, 4, WARP):
                wpool[base + w] = 0
            for w in range(end + lane, P, WARP):
                wpool[base + w] = 0
        jb = int64(lpos) * per - 4
        w = 4 + lane
        j = jb + w
        # the lane's survivors: o = j + k, k the smallest with dpos[k] - k > j (batch_core.survivor)
        k = survivor(dkey, d0, nde, n1, j) - j if j < sv else nde
        nxt = dkey[d0 + k] // n1 - 1 - k if k < nde else sv
        page = int64(-1)
        pbase = int64(0)
        while w < end:
            j = jb + w
            if j < sv:
                while nxt <= j:
                    k += 1
                    nxt = dkey[d0 + k] // n1 - 1 - k if k < nde else sv
                o = j + k
                if old_large:
                    if o // per != page:
                        page = o // per
                        pbase = int64(scrmap[c0 + page]) * P + 4 - page * per
                    src = pbase + o
                else:
                    src = list0 + o
                pool[base + w] = scratch[src]
                if weighted:
                    wpool[base + w] = wscratch[src]
            else:
                t = i0 + j - sv
                pool[base + w] = itgt[t]
                if weighted:
                    wpool[base + w] = iw[t]
            w += WARP

    write_large = device(write_large)

    def write_page(q, desc, phys, scratch, wscratch, scrmap, lcount, P, dstart, dkey, n1, istart, itgt, iw,
                   newoff, weighted, pool, wpool, lane, vx, vb):
        """Output page ``q`` into physical page ``phys`` by a warp (``vx[:, vb:vb + WARP]``: the
        warp's shared slots): batch_core ``write_page``'s words."""
        base = int64(phys) * P
        if desc[3, q] >= 0:
            write_large(q, desc, base, scratch, wscratch, scrmap, lcount, P, dstart, dkey, n1, istart, itgt, iw,
                        weighted, pool, wpool, lane)
            return
        c0 = desc[0, q]
        first = desc[1, q]
        count = desc[2, q]
        end = desc[6, q]
        sb = int64(scrmap[c0]) * P
        old_large = lcount[c0] > 0
        page_frame(pool, wpool, weighted, base, P, count, end, lane, WARP)
        for t0 in range(0, count, WARP):
            t = t0 + lane
            if t < count:                                    # a lane per vertex: its facts
                s = first + t
                x = scratch[sb + P - 1 - 2 * s]
                dw = scratch[sb + P - 2 - 2 * s]
                od = int64(scratch[sb + dw])
                d0 = int64(dstart[x])
                nde = int64(dstart[x + 1]) - d0
                i0 = int64(istart[x])
                nd = od - nde + (int64(istart[x + 1]) - i0)
                off = newoff[x]
                pool[base + off] = nd
                pool[base + P - 2 - 2 * t] = off
                pool[base + P - 1 - 2 * t] = x
                if weighted:
                    wpool[base + off] = 0
                    wpool[base + P - 2 - 2 * t] = 0
                    wpool[base + P - 1 - 2 * t] = 0
                vx[0, vb + lane] = od - nde                  # survivors
                vx[1, vb + lane] = nde
                vx[2, vb + lane] = d0
                vx[3, vb + lane] = i0
                vx[4, vb + lane] = nd
                vx[5, vb + lane] = base + off + 1            # the new list's first word
                vx[6, vb + lane] = -1 if old_large else sb + dw + 1   # the old list's, in scratch
                vx[7, vb + lane] = nd
            sync()
            m = min(WARP, count - t0)
            # the chunk's lists as one run of entries, lanes over it: each lane finds its entry's
            # vertex among the chunk's end offsets (a round per 32 entries, not per vertex)
            end_u = int64(0)
            if lane < m:
                for u in range(lane + 1):
                    end_u += vx[7, vb + u]
            sync()
            if lane < m:
                vx[7, vb + lane] = end_u                     # entries up to and with vertex lane
            sync()
            total = vx[7, vb + m - 1]
            for e in range(lane, total, WARP):
                lo = 0
                hi = m - 1
                while lo < hi:                               # the first vertex ending past e
                    mid = (lo + hi) >> 1
                    if vx[7, vb + mid] > e:
                        hi = mid
                    else:
                        lo = mid + 1
                u = lo
                nd = vx[4, vb + u]
                j = e - (vx[7, vb + u] - nd)
                sv = vx[0, vb + u]
                dst = vx[5, vb + u]
                if j < sv:
                    nde = vx[1, vb + u]
                    o = j if nde == 0 else survivor(dkey, vx[2, vb + u], nde, n1, j)
                    list0 = vx[6, vb + u]
                    src = list0 + o if list0 >= 0 else entry_word(scratch, scrmap, lcount, P, c0, first + t0 + u, o)
                    pool[dst + j] = scratch[src]
                    if weighted:
                        wpool[dst + j] = wscratch[src]
                else:
                    k = vx[3, vb + u] + j - sv
                    pool[dst + j] = itgt[k]
                    if weighted:
                        wpool[dst + j] = iw[k]
            sync()                                           # before the next vertices' facts

    write_page = device(write_page)

    class Namespace:
        pass

    ns = Namespace()
    ns.copy_words, ns.describe, ns.write_page, ns.unit_columns = copy_words, describe, write_page, unit_columns
    return ns
