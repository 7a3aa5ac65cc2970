"""The compact device path's host grouping (one compiled pass) against the plain numpy statement
of the same rule: entries in part order (deletions, insertions, weight changes), each part's
mirror entries after its own for an undirected batch (a self-loop's dropped), grouped stably by
(part, source rank); group starts; tags; weights."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from kernels.operators.device_updates import DeviceUpdater


def numpy_grouping(batch, weighted, wdtype):
    parts = ((batch.delete_u, batch.delete_v), (batch.insert_u, batch.insert_v),
             (batch.reweight_u, batch.reweight_v))
    srcs, dsts, tags, parts_of, ws = [], [], [], [], []
    off = 0
    for p, (u, v) in enumerate(parts):
        u = np.asarray(u, dtype=np.int32)
        v = np.asarray(v, dtype=np.int32)
        tag = np.arange(off, off + len(u), dtype=np.int64)
        w = np.asarray((np.zeros(len(u)), batch.insert_w, batch.reweight_w)[p], dtype=wdtype) if weighted else None
        keep = np.zeros(0, dtype=bool) if batch.directed else u != v
        srcs += [u] + ([] if batch.directed else [v[keep]])
        dsts += [v] + ([] if batch.directed else [u[keep]])
        tags += [tag] + ([] if batch.directed else [tag[keep]])
        if weighted:
            ws += [w] + ([] if batch.directed else [w[keep]])
        parts_of.append(np.full(len(u) + int(np.count_nonzero(keep)), p, dtype=np.int64))
        off += len(u)
    src, dst, tag, part = (np.concatenate(x) for x in (srcs, dsts, tags, parts_of))
    T = np.unique(src)
    t = len(T)
    group = part * t + np.searchsorted(T, src)
    order = np.argsort(group, kind="stable")
    S = np.zeros(3 * t + 1, dtype=np.int64)
    np.cumsum(np.bincount(group, minlength=3 * t), out=S[1:])
    w = np.concatenate(ws)[order] if weighted else None
    return T.astype(np.int32), S, src[order], dst[order], tag[order], w


def random_batch(rng, n, sizes, weighted, directed, wdtype):
    def edges(k):
        return rng.integers(0, n, k).astype(np.int32), rng.integers(0, n, k).astype(np.int32)

    (du, dv), (iu, iv), (ru, rv) = (edges(k) for k in sizes)
    return SimpleNamespace(delete_u=du, delete_v=dv, insert_u=iu, insert_v=iv, reweight_u=ru, reweight_v=rv,
                           insert_w=rng.random(sizes[1]).astype(wdtype) if weighted else None,
                           reweight_w=rng.random(sizes[2]).astype(wdtype) if weighted else None,
                           directed=directed)


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("weighted,wdtype", [(False, np.float64), (True, np.float64), (True, np.float32)])
@pytest.mark.parametrize("sizes,n", [((0, 5, 0), 12), ((7, 0, 3), 12), ((40, 60, 9), 12), ((0, 0, 0), 12),
                                     ((300, 500, 40), 5000), ((200, 300, 10), 1 << 31 - 1)])
def test_the_compiled_grouping_is_the_numpy_one(directed, weighted, wdtype, sizes, n):
    # small ids: self-loops, repeats; larger ones: the radix sort's second and third passes
    rng = np.random.default_rng(sum(sizes) + 7 * directed + 3 * weighted)
    batch = random_batch(rng, n, sizes, weighted, directed, wdtype)
    got = DeviceUpdater._group_on_host(batch, weighted, wdtype)
    want = numpy_grouping(batch, weighted, wdtype)
    for name, a, b in zip(("T", "S", "src", "dst", "tag", "w"), got, want, strict=True):
        if b is None:
            assert a is None, name
            continue
        assert a.dtype == b.dtype and np.array_equal(a, b), name
