"""The fused launch's warp forms of the copy and write phases (kernels.operators.warp_pages)
write exactly the host path's words: hubs' large lists losing entries on every page and at
page boundaries, lists growing into large lists and large lists shrinking back, weighted and
unweighted, pages of more vertices than a warp has lanes. CUDA simulator (a GPU with
``GRAPH_KERNELS_TARGET=cuda``); every batch is checked page for page by the updater and here
against the host path of a twin and an edge dict."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.graph.csr import CSRGraph
from kernels.graph.device import DeviceMirror
from kernels.graph.slotted import SlottedGraph
from kernels.operators import device_updates
from kernels.operators.device_updates import DeviceUpdater
from tests.batch_helpers import directory_problems, edge_dict, model_apply, same_state


def _hub_graph(weighted: bool, hub: int) -> CSRGraph:
    """Vertex 0 a hub of ``hub`` neighbours (3 .. hub + 2: a large list), vertex 1 of 24 (a
    large list at page size 16), vertex 2 of 9 (an ordinary list, one short of a large one at
    page size 16), and a path over the last 17 vertices (small lists, several to a page)."""
    n = hub + 100
    edges = [(0, v) for v in range(3, hub + 3)] + [(1, v) for v in range(40, 64)]
    edges += [(2, v) for v in range(64, 73)] + [(v, v + 1) for v in range(n - 17, n - 1)]
    src, dst = np.array(edges).T
    w = (np.arange(len(src)) % 7 + 1).astype(float) if weighted else None
    return CSRGraph.from_edges(n, src, dst, w, directed=False, both_directions=True)


def _batches(weighted: bool, hub: int):
    w = (lambda k: (np.arange(k) % 5 + 2).astype(float)) if weighted else (lambda k: None)

    def ins(u, v):
        return (u, v) if not weighted else (u, v, w(len(u)))

    spread = list(range(hub // 3, hub, 3))                 # every third neighbour past the first third
    far = [hub + 3 + k for k in range(4)]                  # ids the hub has no edge to
    return [
        # the hub loses its first entry, one at each of two page boundaries (16 words), two on one
        # page and its last
        {"delete": ([0] * 7, [3, 12, 13, 30, 31, 33, hub + 2])},
        # ...gains entries past its end; vertex 2 grows into a large list (at page size 16)
        {"insert": ins([0, 0, 2, 2, 2], far[:2] + [3, 4, 5])},
        # both at once: deletions on every third entry of the hub's later pages, inserts behind them
        {"delete": ([0] * len(spread) + [1], spread + [50]), "insert": ins([0, 1, 5], [far[2], 2, far[3]])},
        # vertex 1 shrinks back to an ordinary list (24 -> 9 entries)
        {"delete": ([1] * 15, list(range(41, 50)) + list(range(51, 57)))},
    ]


@pytest.mark.parametrize("page_size, hub, passes, weighted", [
    # the hub's unit: 33 pages, more than a warp's lanes describe in one round
    (16, 330, device_updates.WARP_PASSES, True),
    # 58 entries a large-list page: a lane writes two or more of them, past deletions
    (64, 300, device_updates.WARP_PASSES, False),
    (64, 300, device_updates.WARP_PASSES, True),
    (64, 300, 0, True),                 # batch_core's forms in the fused launch
])
def test_the_warp_passes_write_the_host_paths_words(monkeypatch, page_size, hub, passes, weighted):
    monkeypatch.setattr(device_updates, "COMPACT_MAX_ENTRIES", device_updates.COMPACT_LIMIT_ENTRIES)
    monkeypatch.setattr(device_updates, "WARP_PASSES", passes)
    g = SlottedGraph.from_csr(_hub_graph(weighted, hub), page_size=page_size, fill=0.9)
    updater = DeviceUpdater(DeviceMirror(g, headroom=2.0))
    twin = g.copy()
    _, _, index = g.host_arrays()
    assert int(np.sum((index[1] == 0) & (index[2] > 0))) == (2 if page_size == 16 else 1)   # large lists
    for batch in _batches(weighted, hub):
        model = model_apply(edge_dict(g), False, **batch)
        result = updater.apply(**batch)
        assert updater.last_flow == "fused"
        twin.apply_updates(**batch)
        assert result.verified
        assert not updater.mirror.differences()
        assert not directory_problems(updater.mirror)
        assert same_state(g, twin)
        g.check_invariants()
        assert edge_dict(g) == model
    assert len(g.neighbors(1)) == 9 and len(g.neighbors(2)) == 13       # at 16: 1 ordinary again, 2 large


def test_copy_words_takes_the_unrolled_form_on_pages_of_a_warps_multiple(monkeypatch):
    # pages of 256 words are one round of eight reads a lane (the form a GPU takes for 256-1,024
    # words); the pages hold more vertices than a warp has lanes, so write_page's facts come in
    # several rounds
    from tests.batch_helpers import random_graph
    monkeypatch.setattr(device_updates, "COMPACT_MAX_ENTRIES", device_updates.COMPACT_LIMIT_ENTRIES)
    g = SlottedGraph.from_csr(random_graph(300, 150, 7, weighted=True), page_size=256)
    pool, _, index = g.host_arrays()
    assert max(int(pool[int(phys) * 256]) for phys in index[3]) > 32
    updater = DeviceUpdater(DeviceMirror(g))
    twin = g.copy()
    stored = [(u, v) for u, v in edge_dict(g) if u < v][:5]
    new = [(u, u + 150) for u in range(5) if not g.has_edge(u, u + 150)]
    batch = {"delete": tuple(np.array(stored).T), "insert": (*np.array(new).T, np.full(len(new), 3.0))}
    updater.apply(**batch)
    assert updater.last_flow == "fused"
    twin.apply_updates(**batch)
    assert same_state(g, twin) and not updater.mirror.differences()


def _page_with_slots(g, at_least: int) -> list[int]:
    """The vertices (slot order) of the first ordinary page holding at least ``at_least``."""
    pool, _, index = g.host_arrays()
    P = g.page_size
    for c in range(index.shape[1]):
        base = int(index[3, c]) * P
        if index[2, c] <= 0 and int(pool[base]) >= at_least:            # not a large list
            return [int(pool[base + P - 1 - 2 * s]) for s in range(int(pool[base]))]
    raise AssertionError(f"no page of {at_least} vertices")


@pytest.mark.parametrize("page_size, n, slot", [
    (16, 40, 1),        # a page [a, b, c]: b grows into a large list, [a] is flushed before it, [c] after
    (256, 600, 35),     # the same at slot 35 of a page of more than 32 lists: in pack_warp's second round
])
def test_a_list_growing_large_inside_a_page_splits_it_around_the_large_list(monkeypatch, page_size, n, slot):
    # pack's flush before a large list and the next page's first slot, found by a review: the
    # earlier cases grew a vertex alone in its page, or in pack_warp's first round of 32 slots
    monkeypatch.setattr(device_updates, "COMPACT_MAX_ENTRIES", device_updates.COMPACT_LIMIT_ENTRIES)
    src = np.arange(0, n, 2)
    csr = CSRGraph.from_edges(n, src, src + 1, None, directed=False, both_directions=True)   # a matching
    g = SlottedGraph.from_csr(csr, page_size=page_size, fill=1.0)        # 3 lists a page of 16 words
    page = _page_with_slots(g, slot + 2)
    b = page[slot]
    targets = [v for v in range(n) if v != b and not g.has_edge(b, v)][:page_size - 5]       # past P - 6
    updater = DeviceUpdater(DeviceMirror(g, headroom=2.0))
    twin = g.copy()
    batch = {"insert": (np.full(len(targets), b), np.array(targets))}
    model = model_apply(edge_dict(g), False, **batch)
    updater.apply(**batch)
    assert updater.last_flow == "fused"
    twin.apply_updates(**batch)
    assert same_state(g, twin) and not updater.mirror.differences()
    assert not directory_problems(updater.mirror)
    g.check_invariants()
    assert edge_dict(g) == model
    _, _, index = g.host_arrays()
    assert int(np.sum((index[1] == 0) & (index[2] > 0))) == 1                              # b's large list
