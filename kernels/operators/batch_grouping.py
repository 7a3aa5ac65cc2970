"""The compact device path's host grouping of a batch of edge updates (numba on the CPU).

``group_into(out, at, du, dv, iu, iv, ru, rv, iw, rw, w_out, scratch, directed, weighted)``
writes, as int64 from ``out[at]`` on, the touched sources ascending (t), the entries' sources
and targets in group order (M each), the 3t + 1 group starts and the tags (M), the weights in
group order into ``w_out`` when weighted, and returns (t, M). ``out`` is the pinned buffer the
batch is uploaded from (nothing is copied into it afterwards) and ``scratch`` an int64 array of
at least ``4 * entries`` items kept by the caller (fresh arrays of 10^5 entries cost as much in
page faults as the grouping itself). ``group_into_chunks`` takes one more argument, ``chunks``,
and runs the same passes on that many of numba's threads, with the same output word for word.

How (both): an entry is packed in two words, sorted by source with an LSD radix sort that
carries the packed word (every pass reads in order), then placed: a part's entries in sorted
order are its groups in order, so each lands at its part's start plus its rank among them. On an
H200 host, 10^5 undirected edges took 31 ms as before (a radix sort of positions and a counting
sort by group), 12.5 ms serial, 2.8 ms on its threads (``benchmarks/diag/host_grouping.py``).

The functions live at module level: numba's disk cache keys a closure by a pickle of what it
closes over, and a jitted function's pickle differs in every process, so closures that call
closures compiled afresh in every process (0.8 s serial, 3.8 s threaded on the 2-core
development machine, at each process's first batch). Imported by
:mod:`kernels.operators.device_updates` on a compact batch's first grouping.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True)
def radix_sort(keys, items, keys2, items2):
    # ``keys`` (non-negative) ascending, stably, each with its item: an LSD radix sort, 11
    # bits a pass (two passes for four million ids), the items carried through the passes
    # so that every pass reads its input in order (an order array read through cost a
    # random read an entry a pass, and the passes after it one more each). Returns the
    # arrays that hold the result: (keys, items) or (keys2, items2)
    n = len(keys)
    largest = 0
    for j in range(n):
        largest = max(largest, keys[j])
    counts = np.empty(2049, np.int64)
    shift = 0
    first = True
    while first or (largest >> shift) > 0:
        counts[:] = 0
        for j in range(n):
            counts[((keys[j] >> shift) & 2047) + 1] += 1
        for b in range(2048):
            counts[b + 1] += counts[b]
        for j in range(n):
            digit = (keys[j] >> shift) & 2047
            q = counts[digit]
            counts[digit] = q + 1
            keys2[q] = keys[j]
            items2[q] = items[j]
        keys, keys2 = keys2, keys
        items, items2 = items2, items
        shift += 11
        first = False
    return keys, items

@njit(cache=True)
def part_entries(u, v, directed):
    # a part's adjacency entries: an edge each, and its mirror unless directed or a self-loop
    n = len(u)
    if not directed:
        for i in range(len(u)):
            n += u[i] != v[i]
    return n

@njit(cache=True)
def fill_part(u, v, p, off, directed, src, who, k):
    # the part's entries from ``k`` on (its mirror entries after its own, a self-loop's
    # dropped): the source, and part << 61 | tag << 31 | target; returns the next free place.
    # (A loop over a tuple of the parts, indexed by a variable, took 16 ns an entry.)
    for i in range(len(u)):
        src[k] = u[i]
        who[k] = (np.int64(p) << 61) | (np.int64(off + i) << 31) | np.int64(v[i])
        k += 1
    if not directed:
        for i in range(len(u)):
            if u[i] != v[i]:
                src[k] = v[i]
                who[k] = (np.int64(p) << 61) | (np.int64(off + i) << 31) | np.int64(u[i])
                k += 1
    return k

@njit(cache=True)
def entries_into(du, dv, iu, iv, ru, rv, directed, scratch):
    # every part's entries (deletions, insertions, weight changes) into the scratch's first two
    # quarters (sources, packed words); returns their number
    total = part_entries(du, dv, directed) + part_entries(iu, iv, directed) + part_entries(ru, rv, directed)
    src = scratch[:total]
    who = scratch[total:2 * total]
    k = fill_part(du, dv, 0, 0, directed, src, who, 0)
    k = fill_part(iu, iv, 1, len(du), directed, src, who, k)
    fill_part(ru, rv, 2, len(du) + len(iu), directed, src, who, k)
    return total

@njit(cache=True)
def weight_of(p, tag, iw, rw, n_delete, n_insert):
    # an entry's weight from its part and tag: 0 for a deletion, else its part's weight
    if p == 0:
        return 0.0
    if p == 1:
        return iw[tag - n_delete]
    return rw[tag - n_delete - n_insert]

@njit(cache=True)
def group_into(out, at, du, dv, iu, iv, ru, rv, iw, rw, w_out, scratch, directed, weighted):
    # entries in the order of the parts (deletions, insertions, weight changes), each part's
    # mirror entries (v, u) of an undirected batch after its own, a self-loop's dropped; the
    # tag is the edge's place in the batch, shared by both entries of an edge. An entry is two
    # scratch words: its source, and its part, tag and target packed
    total = entries_into(du, dv, iu, iv, ru, rv, directed, scratch)
    if total == 0:
        out[at] = 0                          # the one group start
        return 0, 0
    src = scratch[:total]                    # the source
    who = scratch[total:2 * total]           # part << 61 | tag << 31 | target
    # sorted by source, stably: within a source the parts' entries keep the order above
    src, who = radix_sort(src, who, scratch[2 * total:3 * total], scratch[3 * total:4 * total])
    # the touched sources ascending (written in place), so the regions' places are known
    t = 0
    last = -1
    for j in range(total):
        x = src[j]
        if x != last:
            out[at + t] = x
            t += 1
            last = x
    M = total
    o_src = at + t
    o_dst = o_src + M
    o_S = o_dst + M
    o_tag = o_S + 3 * t + 1
    # group g = part * t + rank: its size counted at S[g + 1], then the starts by a prefix sum
    out[o_S:o_S + 3 * t + 1] = 0
    r = -1
    last = -1
    for j in range(total):
        x = src[j]
        if x != last:
            r += 1
            last = x
        out[o_S + 1 + (who[j] >> 61) * t + r] += 1
    running = 0
    for g in range(1, 3 * t + 1):        # the sum in a register: S[g] += S[g - 1] in memory
        running += out[o_S + g]           # waited for each store (2 ns a group)
        out[o_S + g] = running
    # the entries in group order: within a part the sorted order visits its groups ascending,
    # each group's entries in their order above, so each part's entries are written one after
    # another from its first group's start
    nxt = np.empty(3, np.int64)
    for p in range(3):
        nxt[p] = out[o_S + p * t]
    for j in range(total):
        word = who[j]
        p = word >> 61
        q = nxt[p]
        nxt[p] = q + 1
        tag = (word >> 31) & 0x3FFFFFFF
        out[o_src + q] = src[j]
        out[o_dst + q] = word & 0x7FFFFFFF
        out[o_tag + q] = tag
        if weighted:
            w_out[q] = weight_of(p, tag, iw, rw, len(du), len(iu))
    return t, M

@njit(nogil=True, parallel=True, cache=True)
def group_into_chunks(out, at, du, dv, iu, iv, ru, rv, iw, rw, w_out, scratch, directed, weighted, chunks):
    # ``group_into`` on ``chunks`` threads (contiguous ranges of the entries, in order): the
    # radix sort's passes by per-chunk histograms, then each chunk places its sorted entries
    # from the counts of the chunks before it; the same output word for word
    total = entries_into(du, dv, iu, iv, ru, rv, directed, scratch)
    if total == 0:
        out[at] = 0                          # the one group start
        return 0, 0
    src = scratch[:total]                    # the source
    who = scratch[total:2 * total]           # part << 61 | tag << 31 | target
    keys, items = src, who
    keys2, items2 = scratch[2 * total:3 * total], scratch[3 * total:4 * total]
    largest = 0
    for j in range(total):
        largest = max(largest, keys[j])
    hist = np.zeros((chunks, 2048), np.int64)
    shift = 0
    first = True
    while first or (largest >> shift) > 0:
        for c in prange(chunks):
            lo, hi = c * total // chunks, (c + 1) * total // chunks
            for d in range(2048):
                hist[c, d] = 0
            for j in range(lo, hi):
                hist[c, (keys[j] >> shift) & 2047] += 1
        running = 0                      # digit-major, then chunk: where each chunk's run starts
        for d in range(2048):
            for c in range(chunks):
                h = hist[c, d]
                hist[c, d] = running
                running += h
        for c in prange(chunks):
            lo, hi = c * total // chunks, (c + 1) * total // chunks
            for j in range(lo, hi):
                d = (keys[j] >> shift) & 2047
                q = hist[c, d]
                hist[c, d] = q + 1
                keys2[q] = keys[j]
                items2[q] = items[j]
        keys, keys2 = keys2, keys
        items, items2 = items2, items
        shift += 11
        first = False
    src, who = keys, items
    # per chunk: the touched sources starting in it, and its entries of each part
    counts = np.zeros((chunks, 4), np.int64)
    for c in prange(chunks):
        lo, hi = c * total // chunks, (c + 1) * total // chunks
        for j in range(lo, hi):
            if j == 0 or src[j] != src[j - 1]:
                counts[c, 3] += 1
            counts[c, who[j] >> 61] += 1
    # prefixes over the chunks: a part's entries go in sorted order from the part's start
    # (group order within a part is source rank, then the order above: the sorted order)
    first_at = np.zeros((chunks, 4), np.int64)
    run = np.zeros(4, np.int64)
    run[1] = counts[:, 0].sum()
    run[2] = run[1] + counts[:, 1].sum()
    for c in range(chunks):
        for x in range(4):
            first_at[c, x] = run[x]
            run[x] += counts[c, x]
    t = run[3]
    M = total
    o_src = at + t
    o_dst = o_src + M
    o_S = o_dst + M
    o_tag = o_S + 3 * t + 1
    out[o_S + 3 * t] = M
    for c in prange(chunks):
        lo, hi = c * total // chunks, (c + 1) * total // chunks
        q0, q1, q2 = first_at[c, 0], first_at[c, 1], first_at[c, 2]
        r = first_at[c, 3] - 1
        for j in range(lo, hi):
            if j == 0 or src[j] != src[j - 1]:
                r += 1                       # a group's start: the part's entries placed before it
                out[at + r] = src[j]
                out[o_S + r] = q0
                out[o_S + t + r] = q1
                out[o_S + 2 * t + r] = q2
            word = who[j]
            p = word >> 61
            if p == 0:
                q = q0
                q0 += 1
            elif p == 1:
                q = q1
                q1 += 1
            else:
                q = q2
                q2 += 1
            tag = (word >> 31) & 0x3FFFFFFF
            out[o_src + q] = src[j]
            out[o_dst + q] = word & 0x7FFFFFFF
            out[o_tag + q] = tag
            if weighted:
                w_out[q] = weight_of(p, tag, iw, rw, len(du), len(iu))
    return t, M

