"""The compact device path's host grouping (serial and threaded) against the plain numpy statement
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


@pytest.mark.parametrize("chunks", [1, 3, 8])
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("weighted,wdtype", [(False, np.float64), (True, np.float64), (True, np.float32)])
@pytest.mark.parametrize("sizes,n", [((0, 5, 0), 12), ((7, 0, 3), 12), ((40, 60, 9), 12), ((0, 0, 0), 12),
                                     ((300, 500, 40), 5000), ((200, 300, 10), (1 << 31) - 1)])
def test_the_compiled_grouping_is_the_numpy_one(directed, weighted, wdtype, sizes, n, chunks):
    # small ids: self-loops, repeats, a source's entries across the chunks' borders; larger ones:
    # the radix sort's second and third passes. chunks > 1: the threaded passes (on any batch:
    # the updater takes them from GROUP_CHUNK_ENTRIES entries a chunk), more chunks than entries too
    rng = np.random.default_rng(sum(sizes) + 7 * directed + 3 * weighted)
    batch = random_batch(rng, n, sizes, weighted, directed, wdtype)
    got = DeviceUpdater._group_on_host(batch, weighted, wdtype, chunks=chunks)
    want = numpy_grouping(batch, weighted, wdtype)
    for name, a, b in zip(("T", "S", "src", "dst", "tag", "w"), got, want, strict=True):
        if b is None:
            assert a is None, name
            continue
        assert a.dtype == b.dtype and np.array_equal(a, b), name


def test_the_updater_groups_into_its_upload_buffer_as_alone():
    # the compact path's call: into a kept buffer (stale words from a larger batch left in it) and
    # kept scratch, chunked as the updater chooses; the regions laid out as the fused kernel reads them
    from kernels.operators.device_updates import GROUP_CHUNK_ENTRIES, HEADER_WORDS

    rng = np.random.default_rng(5)
    out = np.full(HEADER_WORDS + 8 * 3 * GROUP_CHUNK_ENTRIES, -7, dtype=np.int64)
    scratch = np.full(4 * 3 * GROUP_CHUNK_ENTRIES, -9, dtype=np.int64)
    for sizes in ((1500, 2500, 300), (10, 20, 0)):            # the second into the first's leftovers
        batch = random_batch(rng, 3000, sizes, True, False, np.float64)
        w_out = np.full(2 * sum(sizes), np.nan)
        t, M = DeviceUpdater._group_on_host(batch, True, np.float64, out, w_out, scratch)
        T, S, src, dst, tag, w = numpy_grouping(batch, True, np.float64)
        assert (t, M) == (len(T), len(src))
        regions = np.split(out[HEADER_WORDS:HEADER_WORDS + 4 * t + 3 * M + 1], np.cumsum([t, M, M, 3 * t + 1]))
        for got, want in zip(regions, (T, src, dst, S, tag), strict=True):
            assert np.array_equal(got, want)
        assert np.array_equal(w_out[:M], w)
        assert np.all(out[:HEADER_WORDS] == -7)                # the header is the caller's


def test_a_second_process_loads_the_grouping_from_the_disk_cache(tmp_path):
    # numba keys a closure's cache entry by a pickle of what it closes over, which differs in
    # every process: the grouping, as closures calling closures, compiled again in each process
    # (about 4.6 s on a 2-core machine before its first batch). At module level it is loaded
    import os
    import subprocess
    import sys

    script = (
        "import numpy as np\n"
        "from types import SimpleNamespace\n"
        "from kernels.operators.device_updates import DeviceUpdater, _host_grouping\n"
        "e = np.zeros(0, np.int32)\n"
        "u = np.arange(50, dtype=np.int32)\n"
        "b = SimpleNamespace(delete_u=e, delete_v=e, insert_u=u, insert_v=(u + 1) % 50, reweight_u=e,\n"
        "                    reweight_v=e, insert_w=None, reweight_w=None, directed=False)\n"
        "for chunks in (1, 2):\n"
        "    DeviceUpdater._group_on_host(b, False, np.float64, chunks=chunks)\n"
        "print(*(sum(f.stats.cache_hits.values()) for f in _host_grouping()))\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    assert runs[0].stdout.split() == ["0", "0"]          # compiled and written by the first
    assert runs[1].stdout.split() == ["1", "1"]          # both loaded by the second
