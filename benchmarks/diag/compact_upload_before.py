"""The compact path's host side as it was before 2026-11-29, for a side-by-side run in one process.

``benchmarks/diag/device_update_phases.py --variant "UPLOAD_BEFORE=1"`` puts
:func:`upload_grouped_before` in place of ``DeviceUpdater._upload_grouped`` for that variant: the
grouping of main at f2001d7 (a radix sort of entry positions, each later pass reading the
entries through them, and a counting sort by group into arrays of its own, allocated each batch)
and the upload that then copied those arrays into the pinned buffer (``Workspace.upload``). The
device work after it is the same. Diagnostic code only: nothing in ``kernels`` imports it.
"""

from __future__ import annotations

import functools

import numpy as np

from kernels.graph.slotted import batch_rules
from kernels.operators.device_updates import _ZERO, COMPACT_FUSED, LIMIT_WORDS


@functools.cache
def _host_grouping():
    """The compact path's host grouping, compiled once (numba on the CPU; cached on disk)."""
    import numba

    @numba.njit(cache=True)
    def radix_order(keys):
        # the positions of ``keys`` (non-negative int32) in ascending order: an LSD radix sort,
        # 11 bits a pass (two passes for a million ids; half the time of np.argsort at 2,000 keys)
        n = len(keys)
        order = np.arange(n)
        spare = np.empty(n, np.int64)
        largest = 0
        for j in range(n):
            largest = max(largest, keys[j])
        counts = np.empty(2049, np.int64)
        shift = 0
        while shift == 0 or (largest >> shift) > 0:
            counts[:] = 0
            for j in range(n):
                counts[((keys[order[j]] >> shift) & 2047) + 1] += 1
            for b in range(2048):
                counts[b + 1] += counts[b]
            for j in range(n):
                digit = (keys[order[j]] >> shift) & 2047
                spare[counts[digit]] = order[j]
                counts[digit] += 1
            order, spare = spare, order
            shift += 11
        return order

    @numba.njit(cache=True)
    def group(du, dv, iu, iv, ru, rv, iw, rw, directed, weighted):
        # entries in the order of the parts (deletions, insertions, weight changes), each part's
        # mirror entries (v, u) of an undirected batch after its own, a self-loop's dropped; the
        # tag is the edge's place in the batch, shared by both entries of an edge
        parts_u = (du, iu, ru)
        parts_v = (dv, iv, rv)
        total = 0
        for p in range(3):
            total += len(parts_u[p])
            if not directed:
                for i in range(len(parts_u[p])):
                    if parts_u[p][i] != parts_v[p][i]:
                        total += 1
        src = np.empty(total, np.int32)
        dst = np.empty(total, np.int32)
        tag = np.empty(total, np.int64)
        part = np.empty(total, np.int64)
        w = np.zeros(total if weighted else 0, iw.dtype)
        k = 0
        off = 0
        for p in range(3):
            u, v = parts_u[p], parts_v[p]
            for rep in range(1 if directed else 2):
                for i in range(len(u)):
                    if rep == 1 and u[i] == v[i]:
                        continue
                    src[k] = u[i] if rep == 0 else v[i]
                    dst[k] = v[i] if rep == 0 else u[i]
                    tag[k] = off + i
                    part[k] = p
                    if weighted:
                        w[k] = 0 if p == 0 else (iw[i] if p == 1 else rw[i])
                    k += 1
            off += len(u)
        # the touched sources ascending, and each entry's rank among them
        order = radix_order(src)
        rank = np.empty(total, np.int64)
        T = np.empty(total, np.int32)
        t = 0
        for j in range(total):
            x = src[order[j]]
            if t == 0 or T[t - 1] != x:
                T[t] = x
                t += 1
            rank[order[j]] = t - 1
        # a stable counting sort by group (part * t + rank): each group keeps the order above
        S = np.zeros(3 * t + 1, np.int64)
        for j in range(total):
            S[part[j] * t + rank[j] + 1] += 1
        for g in range(3 * t):
            S[g + 1] += S[g]
        at = S[:3 * t].copy()
        out_src = np.empty(total, np.int32)
        out_dst = np.empty(total, np.int32)
        out_tag = np.empty(total, np.int64)
        out_w = np.zeros(total if weighted else 0, iw.dtype)
        for j in range(total):
            g = part[j] * t + rank[j]
            q = at[g]
            at[g] += 1
            out_src[q] = src[j]
            out_dst[q] = dst[j]
            out_tag[q] = tag[j]
            if weighted:
                out_w[q] = w[j]
        return T[:t].copy(), S, out_src, out_dst, out_tag, out_w

    return group


def group_on_host_before(batch, weighted: bool, wdtype):
    """(T, S, src, dst, tag, w) as the old ``DeviceUpdater._group_on_host`` returned them."""
    ids = [np.ascontiguousarray(a, dtype=np.int32) for a in (batch.delete_u, batch.delete_v, batch.insert_u,
                                                              batch.insert_v, batch.reweight_u, batch.reweight_v)]
    if weighted:
        iw = np.ascontiguousarray(batch.insert_w, dtype=wdtype)
        rw = np.ascontiguousarray(batch.reweight_w, dtype=wdtype)
    else:
        iw = rw = np.zeros(0, dtype=np.float64)
    T, S, src, dst, tag, w = _host_grouping()(*ids, iw, rw, bool(batch.directed), bool(weighted))
    return T, S, src, dst, tag, (w if weighted else None)


def upload_grouped_before(self, c, batch) -> bool:
    """The old first half of ``DeviceUpdater._compact_inputs``, as a stand-in for ``_upload_grouped``."""
    g, ws = self.graph, self.workspace
    T, S, src, dst, tag, w = group_on_host_before(batch, c.weighted, c.wdtype)
    t, M = len(T), len(src)
    if M == 0:
        return False
    c.t, c.M = t, M
    c.n_reweight = int(S[3 * t] - S[2 * t])
    free = g.free_page_stack()
    c.free, c.n_free = free, len(free)
    c.free_up = min(c.n_free, M)
    c.limits = self._compact_limits(c) if COMPACT_FUSED else np.zeros(LIMIT_WORDS, dtype=np.int64)
    free_top = c.free[c.n_free - c.free_up:]
    header = np.array([t, M, c.n_pages, c.n1, c.free_up - 1, c.n_free, g.physical_pages_used, c.free_up],
                      dtype=np.int64)
    c.longs = ws.upload("c.longs", header, T, src, dst, S, tag, np.full(5, batch_rules.NO_FAILURE, dtype=np.int64),
                        _ZERO, c.limits, free_top, dtype=np.int64, asynchronous=True)
    c.W = ws.upload("W", w, dtype=c.wdtype, asynchronous=True) if c.weighted else ws.get("W", c.wdtype, M)
    return True
