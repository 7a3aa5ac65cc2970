"""Batch updates on a real GPU (``GRAPH_KERNELS_TARGET=cuda pytest -m gpu``): bigger graphs and
batches than the simulator can run, both paths, checked page for page and edge for edge. Kept
apart from the simulator tests so that it needs neither hypothesis nor Qt."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.errors import GraphEditError
from kernels.graph.device import DeviceMirror
from kernels.graph.slotted import SlottedGraph
from kernels.graph.update_batches import random_batch
from kernels.operators import device_updates
from kernels.operators.device_updates import DeviceUpdater
from tests.batch_helpers import directory_problems, edge_dict, model_apply, random_graph, same_state

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("weight_dtype", [np.float64, np.float32])
def test_real_gpu_batches_agree_with_the_host_on_a_bigger_graph(directed, weight_dtype):
    csr = random_graph(5000, 40000, 11, directed=directed, weighted=True)
    g = SlottedGraph.from_csr(csr, page_size=256, weight_dtype=weight_dtype)
    mirror = DeviceMirror(g)
    updater = DeviceUpdater(mirror)
    twin = g.copy()
    model = edge_dict(g)
    rng = np.random.default_rng(11)
    for size in (10, 1000, 20000, 60000):           # the last one forces overflow pages
        batch = random_batch(g, size, size // 2, rng)
        model = model_apply(model, directed, **batch)
        result = updater.apply(**batch)
        twin.apply_updates(**batch)
        assert result.verified and not mirror.differences() and same_state(g, twin)
        g.check_invariants()
        assert edge_dict(g) == model                  # weights are small integers: exact in float32 too
    assert g.num_pages > SlottedGraph.from_csr(csr, page_size=256).num_pages


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("directed", [False, True])
def test_real_gpu_compact_batches_in_one_launch_or_split(fused, directed, monkeypatch):
    """The compact path as one cooperative launch and as its split launches: batches of 1 to
    2,000 edges with weight changes, the fused launch's buffers at first too small (its
    fallback to the split launches), a refused batch that writes nothing, the vertex directory
    after every batch."""
    monkeypatch.setattr(device_updates, "COMPACT_FUSED", fused)
    # the threshold as when this test was written (2^12 entries; 30,000 since), so that the
    # 2,000-edge undirected batch still takes the full path between compact ones
    monkeypatch.setattr(device_updates, "COMPACT_MAX_ENTRIES", 1 << 12)
    csr = random_graph(3000, 30000, 5, directed=directed, weighted=True)
    g = SlottedGraph.from_csr(csr, page_size=64)
    mirror = DeviceMirror(g)
    updater = DeviceUpdater(mirror)
    updater.compact_room = {"scratch": 4, "described": 4}
    twin = g.copy()
    model = edge_dict(g)
    rng = np.random.default_rng(3)
    flows = []
    for size in (1, 10, 100, 500, 1000, 2000, 100, 10):
        batch = random_batch(g, size, size // 2, rng)
        busy = {(int(a), int(b)) for a, b in zip(*batch["delete"], strict=True)}
        busy |= {(int(a), int(b)) for a, b in zip(*batch["insert"][:2], strict=True)}
        busy |= {(b, a) for a, b in busy}
        pick = [e for e in list(model)[: 4 * size] if e not in busy and (directed or e[0] < e[1])][: size // 5]
        if pick:                                       # weight changes of edges the batch leaves alone
            ru, rv = (np.array(x, dtype=np.int64) for x in zip(*pick, strict=True))
            batch["reweight"] = (ru, rv, rng.integers(1, 101, len(ru)).astype(np.float64))
        model = model_apply(model, directed, **batch)
        result = updater.apply(**batch)
        flows.append(updater.last_flow)
        twin.apply_updates(**batch)
        assert result.verified and not mirror.differences() and same_state(g, twin)
        assert not directory_problems(mirror)
        assert edge_dict(g) == model
    # (2,000 undirected edges and their weight changes pass the threshold set above: "full")
    if fused:
        assert "fused, then split" in flows and flows[-1] == "fused"
    else:
        assert "split" in flows and set(flows) <= {"split", "full"}
    a, b = next(iter(model))
    with pytest.raises(GraphEditError):               # an edge already stored: refused, nothing written
        updater.apply(insert=([a], [b], [1.0]))
    assert not mirror.differences() and same_state(g, twin) and not directory_problems(mirror)


@pytest.mark.parametrize("path", ["fused", "full", "full by directory"])
@pytest.mark.parametrize("directed", [False, True])
def test_real_gpu_batches_search_hubs_long_lists_by_the_grid(directed, path, monkeypatch):
    """Six hubs of 3,000-5,000 neighbours (lists past ``LONG_LIST``, many pages each) in a random
    graph: batches that delete hub edges anywhere in their lists, insert new hub edges and
    touch other vertices go through the fused launch's grid-wide long-list phase, every warp a
    range of the lists' pages (``fused``), or through the full path's table of pairs, each hub's
    list read once (``full``, forced; its endpoints and lists found by ``locate`` or through the
    vertex directory); checked page for page and against a model of the edge set."""
    from kernels.graph.csr import CSRGraph

    if path.startswith("full"):
        monkeypatch.setattr(device_updates, "COMPACT_MAX_ENTRIES", -1)
        monkeypatch.setattr(device_updates, "EXPAND_BY_DIRECTORY", path == "full by directory")

    rng = np.random.default_rng(8)
    n = 20000
    src, dst = [], []
    for h in range(6):
        others = rng.choice(np.arange(6, n), size=3000 + 400 * h, replace=False)
        src.append(np.full(len(others), h))
        dst.append(others)
    extra = rng.integers(6, n, size=(2, 30000))
    keep = extra[0] < extra[1]
    src.append(extra[0][keep])
    dst.append(extra[1][keep])
    pairs = np.unique(np.stack([np.concatenate(src), np.concatenate(dst)]), axis=1)
    csr = CSRGraph.from_edges(n, pairs[0], pairs[1], None, directed=directed, both_directions=not directed)
    g = SlottedGraph.from_csr(csr, page_size=64)
    mirror = DeviceMirror(g)
    updater = DeviceUpdater(mirror)
    twin = g.copy()
    model = edge_dict(g)
    long_entries, flows = 0, []
    for _ in range(6):
        hub_edges = [e for e in model if e[0] < 6]
        gone = [hub_edges[i] for i in rng.choice(len(hub_edges), size=200, replace=False)]
        new = []
        while len(new) < 200:
            h, v = int(rng.integers(0, 6)), int(rng.integers(6, n))
            if (h, v) not in model and (h, v) not in new:
                new.append((h, v))
        batch = random_batch(g, 100, 100, rng)
        busy = {(int(a), int(b)) for a, b in zip(*batch["delete"], strict=True)}
        busy |= {(int(a), int(b)) for a, b in zip(*batch["insert"][:2], strict=True)}
        busy |= {(b, a) for a, b in busy}
        gone = [e for e in gone if e not in busy]
        new = [e for e in new if e not in busy]
        du, dv = (np.concatenate([np.asarray(x, dtype=np.int64) for x in (batch["delete"][i], [e[i] for e in gone])])
                  for i in (0, 1))
        iu, iv = (np.concatenate([np.asarray(x, dtype=np.int64) for x in (batch["insert"][i], [e[i] for e in new])])
                  for i in (0, 1))
        batch = {"delete": (du, dv), "insert": (iu, iv)}
        model = model_apply(model, directed, **batch)
        result = updater.apply(**batch)
        twin.apply_updates(**batch)
        flows.append(updater.last_flow)
        if updater.last_flow == "fused":             # (a first batch may outgrow the buffers: split)
            long_entries += updater.last_phases["long entries"]
        if path.startswith("full"):
            assert updater.last_flow == "full" and updater.last_long_lists >= 6
        assert result.verified and not mirror.differences() and same_state(g, twin)
        assert not directory_problems(mirror)
        assert edge_dict(g) == model
    if path == "fused":
        assert flows.count("fused") >= 4 and long_entries >= 400 * flows.count("fused")


def test_real_gpu_two_updaters_on_two_threads_share_the_fused_kernel():
    """Two graphs' updaters, the same fused kernel and plan, batches on two threads at once: a
    launch must never take another updater's parameter words for its own
    (``FastKernel.launch_known``'s owner records); every batch checked page for page."""
    from concurrent.futures import ThreadPoolExecutor

    pairs = []
    for seed in (1, 2):
        csr = random_graph(4000, 30000, seed, directed=False, weighted=False)
        g = SlottedGraph.from_csr(csr, page_size=64)
        mirror = DeviceMirror(g)
        pairs.append((g, mirror, DeviceUpdater(mirror), g.copy()))

    def run(i):
        g, mirror, updater, twin = pairs[i]
        rng = np.random.default_rng(10 + i)
        flows = []
        for size in (300, 40, 200, 5, 500, 60, 300, 20, 100, 250):
            batch = random_batch(g, size, size, rng)
            result = updater.apply(**batch)
            twin.apply_updates(**batch)
            flows.append(updater.last_flow)
            assert result.verified and not mirror.differences() and same_state(g, twin)
            assert not directory_problems(mirror)
        return flows

    with ThreadPoolExecutor(2) as pool:
        flows = [f.result() for f in [pool.submit(run, 0), pool.submit(run, 1)]]
    assert all(flow.count("fused") >= 5 for flow in flows)
