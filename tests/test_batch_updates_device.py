"""Batch updates on the device pages (CUDA simulator; real GPU with ``-m gpu``): every batch
is replayed on the host and the two compared page for page by the updater itself, and here
again over the whole pool (``DeviceMirror.differences``) and edge for edge against an edge
dict. Hornet's bug reports are tested as they were reported: updates landing on the wrong
vertex (cuhornet #41), duplicates in a batch (cuhornet #64), a stale flag (hornet #17)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from kernels.errors import GraphEditError
from kernels.graph.device import DeviceMirror
from kernels.graph.slotted import SlottedGraph
from kernels.graph.update_batches import random_batch
from kernels.measure.targets import simulator_enabled
from kernels.operators import device_updates
from kernels.operators.device_updates import DeviceUpdater
from tests.batch_helpers import directory_problems, edge_dict, model_apply, random_graph, same_state


@pytest.fixture(autouse=True, params=["compact", "split", "full"])
def device_path(request, monkeypatch):
    """Every test on the three device flows: the compact path (every batch up to its limit,
    ``COMPACT_LIMIT_ENTRIES``) as one cooperative launch (``compact``) and as its split launches
    (``split``), and the full-graph path, forced by moving the threshold."""
    if request.param == "full":
        monkeypatch.setattr(device_updates, "COMPACT_MAX_ENTRIES", -1)
    else:                       # every batch the compact path can take, not only the default's
        monkeypatch.setattr(device_updates, "COMPACT_MAX_ENTRIES", device_updates.COMPACT_LIMIT_ENTRIES)
        monkeypatch.setattr(device_updates, "COMPACT_FUSED", request.param == "compact")
    return request.param


#: for tests that set a module constant the fused kernel reads (``LONG_LIST``, ``LONG_SPLIT``): the simulator reads
#: it as the kernel runs; a GPU compiles it into the kernel (and the disk cache's key does not hold
#: it), so with ``GRAPH_KERNELS_TARGET=cuda`` these tests would run with the default
simulator_only = pytest.mark.skipif(not simulator_enabled(), reason="sets a constant compiled into the kernel on a GPU")


def _refusals_match_the_host(g, updater, twin, rng, n_ids):
    """Vertex 7 removed on both sides; batches naming it, or an id past the graph's ``n_ids``,
    refused on the device in the host path's words, nothing written; then a batch applied."""
    g.remove_vertex(7)
    twin.remove_vertex(7)
    keep = next(v for v in range(8, n_ids) if not g.has_edge(3, v))
    for batch in ({"insert": ([3], [7])}, {"insert": ([3, 3], [keep, n_ids + 5])}, {"delete": ([7], [3])}):
        with pytest.raises(GraphEditError) as on_device:
            updater.apply(**batch)
        with pytest.raises(GraphEditError) as on_host:
            twin.apply_updates(**batch)
        assert str(on_device.value) == str(on_host.value)
    assert same_state(g, twin)
    _apply_both(g, updater, twin, **random_batch(g, 10, 10, rng))
    assert edge_dict(g) == edge_dict(twin)


def _pair(csr, page_size=16, fill=0.9, headroom=1.5):
    g = SlottedGraph.from_csr(csr, page_size=page_size, fill=fill)
    mirror = DeviceMirror(g, headroom=headroom)
    return g, mirror, DeviceUpdater(mirror)


def _apply_both(g, updater, host_twin, **batch):
    """The batch on the device (replayed on ``g``) and on the host path of a twin; both must
    end word for word equal, the device pool equal to its host's."""
    result = updater.apply(**batch)
    host_twin.apply_updates(**batch)
    assert result.verified
    assert not updater.mirror.differences()
    assert not directory_problems(updater.mirror)        # the traversal kernels' directory followed
    assert same_state(g, host_twin)
    g.check_invariants()
    return result


def test_updates_land_on_their_own_vertex_cuhornet_41():
    # cuhornet #41: in a batch whose sources are neighbours in id (same page, unsorted, some
    # with large lists), edges were stored under the wrong source. Each list must get exactly
    # its own new targets.
    g, _, updater = _pair(random_graph(24, 30, 41, directed=True), page_size=16)
    twin = g.copy()
    sources = np.array([5, 3, 4, 3, 6, 5, 4, 7, 7, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    targets = np.array([9, 9, 9, 10, 9, 10, 23, 1, 2, 22, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    keep = np.array([not g.has_edge(int(u), int(v)) for u, v in zip(sources, targets, strict=True)])
    sources, targets = sources[keep], targets[keep]
    before = {u: g.neighbors(u).tolist() for u in range(24)}
    _apply_both(g, updater, twin, insert=(sources, targets))
    for u in range(24):
        mine = sorted(int(v) for s, v in zip(sources, targets, strict=True) if s == u)
        assert g.neighbors(u).tolist() == before[u] + mine, f"vertex {u} got another vertex's edges"
    assert g.index.large_pages.max() >= 2                       # vertex 0 became a large list


@pytest.mark.parametrize("directed", [False, True])
def test_duplicates_in_a_batch_are_refused_on_both_paths_cuhornet_64(directed):
    # cuhornet #64: duplicate edges inside one batch were inserted twice. Here the host rule:
    # the batch is refused whole, with the same words on both paths, and nothing changes.
    g, mirror, updater = _pair(random_graph(24, 40, 64, directed=directed))
    absent = next(v for v in range(1, 24) if not g.has_edge(0, v))
    twin = g.copy()
    words = mirror.pool.copy_to_host()
    batches = [{"insert": ([0, 1, 0], [absent, 2, absent])},
               {"delete": ([0, 0], [int(g.neighbors(0)[0])] * 2)}]
    if not directed:
        batches.append({"insert": ([0, absent], [absent, 0])})      # one undirected edge twice
    for batch in batches:
        with pytest.raises(GraphEditError) as on_device:
            updater.apply(**batch)
        with pytest.raises(GraphEditError) as on_host:
            twin.apply_updates(**batch)
        assert str(on_device.value) == str(on_host.value) and "appears twice" in str(on_device.value)
    assert np.array_equal(mirror.pool.copy_to_host(), words) and same_state(g, twin)


def test_no_stale_large_list_flag_or_batch_state_hornet_17():
    # hornet #17: a flag left over from an earlier update made later ones wrong. Here a list
    # grows into a large list and shrinks back to an ordinary page (header flag and index
    # must follow), and every batch must start from clean per-batch state: a batch touching
    # other vertices writes none of the pages the previous batch wrote.
    g, _, updater = _pair(random_graph(30, 30, 17), page_size=16, fill=1.0)
    twin = g.copy()
    hub = np.array([v for v in range(1, 30) if not g.has_edge(0, v)][:20])
    first = _apply_both(g, updater, twin, insert=(np.zeros(len(hub), np.int64), hub))
    assert first.report.pages_opened > 0
    large_pages = g.index.physical_page[g.index.large_pages > 0]
    assert len(large_pages) >= 2
    second = _apply_both(g, updater, twin, delete=(np.zeros(len(hub), np.int64), hub))
    assert second.report.pages_freed > 0
    for column in range(g.num_pages):
        flag = g.page_layout(column)["words"][2]
        assert flag == (1 if g.index.large_pages[column] > 0 else 0)
    far = [v for v in range(20, 30) if g.has_vertex(v) and g.degree(v)][:1]
    if far:
        third = _apply_both(g, updater, twin, delete=(far, [int(g.neighbors(far[0])[0])]))
        assert not set(third.report.pages_touched) & (set(large_pages) - set(g.index.physical_page))


def test_a_batch_larger_than_the_free_slots_opens_pages_on_the_device():
    g, mirror, updater = _pair(random_graph(28, 50, 7, weighted=True), page_size=16, fill=1.0, headroom=1.0)
    twin = g.copy()
    capacity = mirror.capacity_pages
    result = _apply_both(g, updater, twin, **random_batch(g, 40, 5, np.random.default_rng(7)))
    assert result.report.pages_opened > 0
    assert mirror.capacity_pages >= g.physical_pages_used > capacity      # the device pool grew


def test_weight_changes_on_the_device(monkeypatch):
    g, mirror, updater = _pair(random_graph(20, 40, 8, weighted=True), page_size=32)
    twin = g.copy()
    u, v = 3, int(g.neighbors(3)[0])
    model = model_apply(edge_dict(g), False, reweight=([u], [v], [9.0]))
    calls = []                            # directory rebuilds: by the mirror, or inside the fused launch
    refresh = mirror.refresh_directory
    monkeypatch.setattr(mirror, "refresh_directory", lambda: calls.append("rebuilt") or refresh())
    compact = updater._apply_compact

    def spy(batch, refresh_directory=True):
        calls.append("rebuilt" if refresh_directory and device_updates.COMPACT_FUSED else "asked")
        return compact(batch, refresh_directory=refresh_directory)

    monkeypatch.setattr(updater, "_apply_compact", spy)
    _apply_both(g, updater, twin, reweight=([u], [v], [9.0]))
    assert edge_dict(g) == model
    assert "rebuilt" not in calls         # weights move no list: the vertex directory is left as it is
    calls.clear()
    _apply_both(g, updater, twin, delete=([u], [v]))
    assert calls.count("rebuilt") == 1


def test_entries_far_down_a_hubs_list_are_found_by_the_warp_search():
    # The device searches an (unsorted) list a warp at a time, 32 entries a round: the entries
    # deleted and reweighted here sit in the first, at the end of the first, in later rounds and
    # last of a 100-entry list; an insertion of an edge stored in a later round is refused.
    from kernels.graph.csr import CSRGraph

    n = 101
    csr = CSRGraph.from_edges(n, np.zeros(50, dtype=np.int64), np.arange(51, n), directed=True,
                              weights=np.arange(51.0, n))
    g = SlottedGraph.from_csr(csr, page_size=32, fill=0.9)
    g.apply_updates(insert=([0] * 50, np.arange(1, 51), np.arange(1.0, 51)))   # appended: unsorted
    updater = DeviceUpdater(DeviceMirror(g, headroom=1.5))
    twin = g.copy()
    stored = g.neighbors(0).tolist()
    picks = [stored[j] for j in (0, 31, 32, 33, 64, 98, 99)]
    with pytest.raises(GraphEditError, match="already exists"):
        updater.apply(insert=([0], [stored[70]]))
    model = model_apply(edge_dict(g), True, reweight=([0] * 3, picks[:3], [7.0, 8.0, 9.0]))
    _apply_both(g, updater, twin, reweight=([0] * 3, picks[:3], [7.0, 8.0, 9.0]))
    assert edge_dict(g) == model
    model = model_apply(model, True, delete=([0] * len(picks), picks))
    _apply_both(g, updater, twin, delete=([0] * len(picks), picks))
    assert edge_dict(g) == model
    assert g.neighbors(0).tolist() == [v for v in stored if v not in picks]


def test_pages_holding_more_vertices_than_a_warp_has_lanes():
    # The compact path's lanes take a touched unit's slots 32 at a time: on pages of 256 words a
    # page holds far more than 32 small lists, so the later rounds of slots are exercised.
    g, _, updater = _pair(random_graph(300, 150, 7), page_size=256)
    pool, _, index = g.host_arrays()
    assert max(int(pool[int(phys) * 256]) for phys in index[3]) > 32     # slots of the fullest page
    twin = g.copy()
    rng = np.random.default_rng(11)
    for _ in range(2):
        batch = random_batch(g, 12, 6, rng)
        model = model_apply(edge_dict(g), g.directed, **batch)
        _apply_both(g, updater, twin, **batch)
        assert edge_dict(g) == model


class BatchMachine(RuleBasedStateMachine):
    """Random batches (deletions, insertions, both) on the device path and on the host path of
    a twin, against an edge dict."""

    @initialize(directed=st.booleans(), weighted=st.booleans(), seed=st.integers(0, 1000),
                page_size=st.sampled_from([16, 32]))
    def build(self, directed, weighted, seed, page_size):
        self.g, self.mirror, self.updater = _pair(random_graph(20, 36, seed, directed=directed,
                                                               weighted=weighted), page_size=page_size)
        self.twin = self.g.copy()
        self.model = edge_dict(self.g)
        self.rng = np.random.default_rng(seed)

    @rule(inserts=st.integers(0, 16), deletes=st.integers(0, 6))
    def batch(self, inserts, deletes):
        stored = len(self.model) if self.g.directed else (len(self.model) + self.g.num_self_loops) // 2
        batch = random_batch(self.g, inserts, min(deletes, stored), self.rng)
        self.model = model_apply(self.model, self.g.directed, **batch)
        _apply_both(self.g, self.updater, self.twin, **batch)

    @rule()
    def refused(self):
        u = int(self.g.vertices()[0])
        nbrs = self.g.neighbors(u)
        if len(nbrs):
            with pytest.raises(GraphEditError, match="already exists"):
                self.updater.apply(insert=([u], [int(nbrs[0])]))

    @invariant()
    def edges_match_the_model(self):
        if hasattr(self, "model"):
            assert edge_dict(self.g) == self.model == edge_dict(self.twin)


def test_random_batches_agree_on_both_paths_page_for_page():
    run_state_machine_as_test(BatchMachine, settings=settings(
        max_examples=4, stateful_step_count=3, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))


def test_the_page_check_sees_a_wrong_word():
    g, mirror, updater = _pair(random_graph(20, 30, 9), page_size=16)
    result = updater.apply(insert=([0], [next(v for v in range(1, 20) if not g.has_edge(0, v))]))
    page = int(result.report.pages_touched[0])
    words = mirror.pool.copy_to_host()
    words[page * 16 + 3] += 1
    mirror.pool.copy_to_device(words)
    problems = updater.differences(result.report.pages_touched, result.host.pages_touched)
    assert problems == [f"physical page {page}"]


def _count_device_calls(updater, monkeypatch, batch) -> dict:
    """Kernel launches and copies (each way) of one batch's device work, counted at the
    simulator's own launch and copy points (not by the updater)."""
    from numba.cuda.simulator import kernel as sim_kernel
    from numba.cuda.simulator.cudadrv import devicearray as sim_array

    counts = {"launches": 0, "to_host": 0, "to_device": 0, "on": False}

    def counted(name, original):
        def wrapper(*args, **kwargs):
            if counts["on"]:
                counts[name] += 1
            return original(*args, **kwargs)
        return wrapper

    inner = updater._apply_on_device

    def timed_part(b):
        counts["on"] = True
        try:
            return inner(b)
        finally:
            counts["on"] = False

    with monkeypatch.context() as patch:
        patch.setattr(sim_kernel.FakeCUDAKernel, "__getitem__",
                      counted("launches", sim_kernel.FakeCUDAKernel.__getitem__))
        patch.setattr(sim_array.FakeCUDAArray, "copy_to_host",
                      counted("to_host", sim_array.FakeCUDAArray.copy_to_host))
        patch.setattr(sim_array.FakeCUDAArray, "copy_to_device",
                      counted("to_device", sim_array.FakeCUDAArray.copy_to_device))
        patch.setattr(updater, "_apply_on_device", timed_part)
        updater.apply(**batch)
    counts.pop("on")
    return counts


def test_a_small_batch_costs_the_same_launches_and_copies_on_a_small_and_a_large_graph(
        device_path, monkeypatch):
    # The fixed cost of a batch: its launches and copies must not grow with the graph. One
    # small mixed batch (inserts, deletes, weight changes) on a 100- and a 10,000-vertex
    # graph: the same counts, at most 9 launches (7 for the batch, 2 rebuilding the vertex
    # directory the traversal kernels read), 2 device-to-host copies (the totals before
    # writing, the pages written after) and 4 host-to-device copies.
    if device_path == "full":
        pytest.skip("the full-graph path scans all vertices and pages (large batches only)")
    counts = []
    for n in (100, 10_000):
        g, _, updater = _pair(random_graph(n, 3 * n, 5, weighted=True), page_size=32)
        rng = np.random.default_rng(3)
        updater.apply(**random_batch(g, 4, 2, rng))                 # first batch: one-time set-up
        batch = random_batch(g, 6, 3, rng)
        gone = {frozenset((int(a), int(b))) for a, b in zip(*batch["delete"], strict=True)}
        u, v = next((int(a), int(b)) for a, b in edge_dict(g) if frozenset((a, b)) not in gone)
        batch["reweight"] = ([u], [v], [7.0])
        counts.append(_count_device_calls(updater, monkeypatch, batch))
    assert counts[0] == counts[1], counts
    assert counts[0]["launches"] <= 9 and counts[0]["to_host"] <= 2 and counts[0]["to_device"] <= 4, counts


def test_a_fused_batch_too_large_for_its_buffers_is_finished_by_the_split_launches(device_path):
    if device_path != "compact":
        pytest.skip("the fused launch's buffers")
    g, mirror, updater = _pair(random_graph(60, 400, 3), page_size=16)
    updater.compact_room = {"scratch": 1, "described": 1}
    twin = g.copy()
    rng = np.random.default_rng(5)
    _apply_both(g, updater, twin, **random_batch(g, 40, 40, rng))
    assert updater.last_flow == "fused, then split"     # nothing written by the fused launch, then all
    assert updater.compact_room["scratch"] > 1           # grown from what the batch needed
    _apply_both(g, updater, twin, **random_batch(g, 5, 5, rng))
    assert updater.last_flow == "fused"
    assert edge_dict(g) == edge_dict(twin)


@simulator_only
@pytest.mark.parametrize("split", [0, 3, 7])
def test_the_fused_launch_searches_long_lists_by_the_grid(device_path, monkeypatch, split):
    # lists of several lengths, a page-chunk each 10 entries (page size 16), the chunks divided
    # among 1, 3 and 7 warps' ranges (each range's first entry found by a search)
    if device_path != "compact":
        pytest.skip("the fused launch's long-list phase")
    monkeypatch.setattr(device_updates, "LONG_LIST", 3)      # read as the simulated kernel runs
    monkeypatch.setattr(device_updates, "LONG_SPLIT", split)
    g, mirror, updater = _pair(random_graph(30, 200, 12), page_size=16)
    twin = g.copy()
    rng = np.random.default_rng(12)
    long_entries = 0
    for _ in range(3):
        _apply_both(g, updater, twin, **random_batch(g, 15, 15, rng))
        assert updater.last_flow == "fused"
        long_entries += updater.last_phases["long entries"]
    assert long_entries > 0
    assert edge_dict(g) == edge_dict(twin)


@simulator_only
def test_the_fused_launch_finds_entries_far_down_a_long_list(device_path, monkeypatch):
    # a hub of 150 entries (15 page-chunks, divided among 4 warps' ranges), deletions past
    # position 40, insertions found nowhere
    if device_path != "compact":
        pytest.skip("the fused launch's long-list phase")
    from kernels.graph.csr import CSRGraph

    monkeypatch.setattr(device_updates, "LONG_LIST", 3)
    monkeypatch.setattr(device_updates, "LONG_SPLIT", 4)
    monkeypatch.setattr(device_updates, "FUSED_PAGES_READ", 1)    # the pages past the first: a second read-back
    csr = CSRGraph.from_edges(200, np.zeros(150, dtype=np.int64), np.arange(1, 151), None, directed=True,
                              both_directions=False)
    g, mirror, updater = _pair(csr, page_size=16)
    twin = g.copy()
    for round_ in range(3):
        far = g.neighbors(0)[40 + 3 * round_: 42 + 3 * round_]
        new = [v for v in range(151, 200) if not g.has_edge(0, v)][:2]
        _apply_both(g, updater, twin, delete=(np.zeros(2, dtype=np.int64), far),
                    insert=(np.zeros(2, dtype=np.int64), np.array(new)))
        assert updater.last_flow == "fused" and updater.last_phases["long entries"] == 4
    assert edge_dict(g) == edge_dict(twin)


@pytest.mark.parametrize("by_grid", [False, True])
@pytest.mark.parametrize("by_directory", [False, True])
def test_the_compact_front_by_directory_finds_what_locate_finds(device_path, monkeypatch, by_directory, by_grid):
    # the compact path's front phase (the entries' endpoints and lists, the touched sources' units)
    # through the vertex directory or by locate, and the fused launch's column scan by the grid or
    # by one block: short lists, sources sharing a page, large lists spanning pages (page size 16)
    # with entries far down them (long lists past 3 entries, searched by the grid), then removed
    # vertices and ids past the graph refused in the host path's words
    if device_path == "full":
        pytest.skip("the compact path's front phase")
    monkeypatch.setattr(device_updates, "FRONT_BY_DIRECTORY", by_directory)
    monkeypatch.setattr(device_updates, "SCAN_BY_GRID", by_grid)
    monkeypatch.setattr(device_updates, "LONG_LIST", 3)
    from kernels.graph.csr import CSRGraph

    sparse = random_graph(60, 40, 37)                            # most pages hold several vertices
    src = np.concatenate([np.repeat(np.arange(60), np.diff(sparse.indptr)), np.zeros(30, dtype=np.int64)])
    dst = np.concatenate([sparse.indices, np.arange(30, 60)])    # and a hub whose list spans pages
    key = np.unique(np.minimum(src, dst) * 60 + np.maximum(src, dst))
    csr = CSRGraph.from_edges(60, key // 60, key % 60, np.arange(1.0, 1.0 + len(key)), directed=False,
                              both_directions=True)
    g, mirror, updater = _pair(csr, page_size=16)
    assert (g.index.large_pages > 0).any()                       # large lists
    assert g.num_vertices > 1.2 * g.num_pages                   # pages holding several vertices
    twin = g.copy()
    rng = np.random.default_rng(37)
    for _ in range(2):
        _apply_both(g, updater, twin, **random_batch(g, 25, 25, rng))
        assert updater.last_flow == ("fused" if device_path == "compact" else "split")
    _refusals_match_the_host(g, updater, twin, rng, n_ids=60)


@pytest.mark.parametrize("patch", [False, True])
def test_the_directory_is_patched_where_a_batch_moved_lists(device_path, monkeypatch, patch):
    # small vertices sharing pages, then hubs whose large lists span pages: insertions at the
    # small vertices open pages before the hubs (their first columns, which are their handles,
    # move), deletions free pages, a hub's own list changes length; after every batch the
    # directory must equal one rebuilt from the pages (``_apply_both`` reads it back and checks
    # every id), patched by the fused launch or rebuilt
    if device_path == "full":
        pytest.skip("the compact path's directory patch")
    monkeypatch.setattr(device_updates, "DIRECTORY_PATCH", patch)
    from kernels.graph.csr import CSRGraph

    small = [(v, 30 + v) for v in range(20)]
    hubs = [(h, x) for h in range(20, 25) for x in range(30 + 3 * h, 60 + 3 * h)]
    src, dst = np.array(small + hubs).T
    g, mirror, updater = _pair(CSRGraph.from_edges(150, src, dst, None, directed=False, both_directions=True),
                               page_size=16)
    twin = g.copy()
    assert (g.index.large_pages > 0).sum() >= 5
    for round_ in range(3):
        new = [(u, 100 + 10 * round_ + u) for u in range(6)]           # pages opened before the hubs
        gone = [(u, 30 + u) for u in range(6 + 3 * round_, 9 + 3 * round_)]   # and freed
        hub = [(20 + round_, 140 + round_)]                             # a hub's list grows
        iu, iv = np.array(new + hub).T
        du, dv = np.array(gone).T
        _apply_both(g, updater, twin, insert=(iu, iv), delete=(du, dv))
        assert updater.last_flow == ("fused" if device_path == "compact" else "split")
    assert edge_dict(g) == edge_dict(twin)


def test_a_refused_batch_leaves_a_directory_grown_for_it_filled(device_path):
    # a directory shorter than the ids (as if never built for them) is grown, new and unfilled,
    # for the batch; a refused batch writes nothing, so the updater rebuilds it before raising:
    # the next batch must not read (or patch) an unfilled directory
    if device_path == "full":
        pytest.skip("the fused launch's directory")
    g, mirror, updater = _pair(random_graph(40, 120, 9), page_size=16)
    twin = g.copy()
    loc, degree = mirror.directory
    mirror.directory = (loc[:5], degree[:5])
    u = next(v for v in range(40) if len(g.neighbors(v)) > 0)
    with pytest.raises(GraphEditError):
        updater.apply(insert=([u], [int(g.neighbors(u)[0])]))     # an edge already stored
    assert not directory_problems(mirror)
    rng = np.random.default_rng(9)
    _apply_both(g, updater, twin, **random_batch(g, 10, 10, rng))


def test_the_compact_front_reads_the_directory(device_path, monkeypatch):
    # the directory is what the front phase reads (not locate): a vertex whose entry is cleared on
    # the device (as if it had no slot) is refused as unknown, though its pages still hold it
    if device_path == "full":
        pytest.skip("the compact path's front phase")
    g, mirror, updater = _pair(random_graph(30, 100, 5), page_size=16)
    loc = mirror.directory[0].copy_to_host()
    u = next(v for v in range(30) if g.has_vertex(v) and len(g.neighbors(v)) > 0)
    v = next(x for x in range(30) if x != u and not g.has_edge(u, x))
    loc[u] = 0
    mirror.directory[0].copy_to_device(loc)
    with pytest.raises(GraphEditError, match=str(u)):
        updater.apply(insert=([u], [v]))
    monkeypatch.setattr(device_updates, "FRONT_BY_DIRECTORY", False)
    updater.apply(insert=([u], [v]))                              # locate finds it on the pages


@pytest.mark.parametrize("by_directory", [False, True])
@pytest.mark.parametrize("split", [0, 3, 7])
def test_the_full_path_reads_each_long_list_once_for_all_its_entries(device_path, monkeypatch, split, by_directory):
    # every list past 3 entries is a long list: its pairs go through the table, the list is read
    # once by long_scan (its page-chunks divided among 1, 3 and 7 warps' ranges), weighted, with
    # deletions, insertions and weight changes in the same batches
    if device_path != "full":
        pytest.skip("the full path's long lists")
    monkeypatch.setattr(device_updates, "FULL_LONG_LIST", 3)
    monkeypatch.setattr(device_updates, "LONG_SPLIT", split)
    monkeypatch.setattr(device_updates, "EXPAND_BY_DIRECTORY", by_directory)
    g, mirror, updater = _pair(random_graph(30, 200, 13, weighted=True), page_size=16)
    twin = g.copy()
    rng = np.random.default_rng(13)
    long_lists = 0
    for _ in range(3):
        batch = random_batch(g, 15, 15, rng)
        gone = {frozenset(e) for e in zip(*batch["delete"], strict=True)}
        kept = [(u, int(v)) for u in g.vertices() for v in g.neighbors(u) if frozenset((u, int(v))) not in gone]
        pick = rng.choice(len(kept), 5, replace=False)
        batch["reweight"] = ([kept[i][0] for i in pick], [kept[i][1] for i in pick], rng.uniform(1, 9, 5))
        _apply_both(g, updater, twin, **batch)
        assert updater.last_flow == "full"
        long_lists += updater.last_long_lists
    assert long_lists > 0
    assert edge_dict(g) == edge_dict(twin)


def test_the_full_path_through_the_vertex_directory_finds_what_locate_finds(device_path, monkeypatch):
    # short lists (the warp search by directory handle), large lists of 30+ entries spanning pages
    # (page size 16), removed vertices and ids past the graph refused in the host path's words
    if device_path != "full":
        pytest.skip("the full path's expand")
    monkeypatch.setattr(device_updates, "EXPAND_BY_DIRECTORY", True)
    g, mirror, updater = _pair(random_graph(40, 300, 31, weighted=True), page_size=16)
    twin = g.copy()
    rng = np.random.default_rng(31)
    for _ in range(2):
        _apply_both(g, updater, twin, **random_batch(g, 25, 25, rng))
    assert (g.index.large_pages > 0).any()                       # large lists were searched
    _refusals_match_the_host(g, updater, twin, rng, n_ids=40)


@pytest.mark.parametrize("by_warp", [True, False])
def test_the_full_path_writes_pages_a_warp_or_a_block_each_alike(device_path, monkeypatch, by_warp):
    if device_path != "full":
        pytest.skip("the full path's page writes")
    monkeypatch.setattr(device_updates, "WRITE_BY_WARP", by_warp)
    g, mirror, updater = _pair(random_graph(40, 150, 23, weighted=True), page_size=16, fill=1.0)
    twin = g.copy()
    rng = np.random.default_rng(23)
    for _ in range(2):                     # pages opened, rewritten and freed
        _apply_both(g, updater, twin, **random_batch(g, 30, 20, rng))
    assert edge_dict(g) == edge_dict(twin)


@pytest.mark.parametrize("by_directory", [False, True])
@pytest.mark.parametrize("directed", [True, False])
def test_the_full_path_finds_and_refuses_on_a_hubs_long_list(device_path, monkeypatch, directed, by_directory):
    # a hub of 150 entries (15 page-chunks): deletions and a weight change far down its list,
    # new targets found nowhere; then an insertion already present and a deletion of an absent
    # edge on the hub are refused in the host path's words, nothing written
    if device_path != "full":
        pytest.skip("the full path's long lists")
    from kernels.graph.csr import CSRGraph

    monkeypatch.setattr(device_updates, "FULL_LONG_LIST", 3)
    monkeypatch.setattr(device_updates, "LONG_SPLIT", 4)
    monkeypatch.setattr(device_updates, "EXPAND_BY_DIRECTORY", by_directory)
    hub_edges = np.arange(1, 151)
    csr = CSRGraph.from_edges(200, np.zeros(150, dtype=np.int64), hub_edges, np.linspace(1.0, 2.0, 150),
                              directed=directed, both_directions=not directed)
    g, mirror, updater = _pair(csr, page_size=16)
    twin = g.copy()
    for round_ in range(3):
        far = g.neighbors(0)[40 + 3 * round_: 42 + 3 * round_]
        new = [v for v in range(151, 200) if not g.has_edge(0, v)][:2]
        keep = int(g.neighbors(0)[100 + round_])
        _apply_both(g, updater, twin, delete=(np.zeros(2, dtype=np.int64), far),
                    insert=(np.zeros(2, dtype=np.int64), np.array(new)),
                    reweight=(np.array([0]), np.array([keep]), np.array([7.5 + round_])))
        assert updater.last_flow == "full" and updater.last_long_lists >= 1
    words = mirror.pool.copy_to_host()
    present, absent = int(g.neighbors(0)[120]), next(v for v in range(151, 200) if not g.has_edge(0, v))
    refused = (({"insert": ([0], [present])}, "already exists"), ({"delete": ([0], [absent])}, "does not exist"))
    for batch, says in refused:
        with pytest.raises(GraphEditError) as on_device:
            updater.apply(**batch)
        with pytest.raises(GraphEditError) as on_host:
            twin.apply_updates(**batch)
        assert str(on_device.value) == str(on_host.value) and says in str(on_device.value)
    assert np.array_equal(mirror.pool.copy_to_host(), words) and same_state(g, twin)
    assert edge_dict(g) == edge_dict(twin)


def test_groups_past_a_threads_share_are_sorted_by_a_block_in_the_threads_order(device_path):
    # the full path's sort: groups of at most thread_max entries by a thread (shell sort), larger
    # ones listed and sorted by a block (a bitonic network over the group rounded up to a power
    # of two); many equal keys, so the order of entries breaks ties, as the check needs
    if device_path != "full":
        pytest.skip("the full path's sort")
    from numba import cuda

    k = device_updates._kernels()
    rng = np.random.default_rng(5)
    sizes = [0, 1, 2, 3, 4, 5, 8, 9, 16, 17, 31, 33, 64, 70, 2]
    S = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    keys = rng.integers(0, 6, S[-1]).astype(np.int64)
    perm = rng.permutation(S[-1]).astype(np.int64)
    d_key, d_perm = cuda.to_device(keys), cuda.to_device(perm)
    big, count = cuda.to_device(np.full(len(sizes), -1, dtype=np.int64)), cuda.to_device(np.zeros(1, np.int64))
    gaps = cuda.to_device(np.array(device_updates.SORT_GAPS, dtype=np.int64))
    k.sort_small_groups[1, 16](cuda.to_device(S), len(sizes), d_key, d_perm, gaps, 4, big, count)
    listed = big.copy_to_host()[:int(count.copy_to_host()[0])]
    assert sorted(listed.tolist()) == [i for i, n in enumerate(sizes) if n > 4]
    k.sort_big_groups[3, 16](cuda.to_device(S), d_key, d_perm, big, count)
    got_key, got_perm = d_key.copy_to_host(), d_perm.copy_to_host()
    for i in range(len(sizes)):
        a, b = S[i], S[i + 1]
        order = np.lexsort((perm[a:b], keys[a:b]))
        assert got_key[a:b].tolist() == keys[a:b][order].tolist(), f"group {i} of {sizes[i]}"
        assert got_perm[a:b].tolist() == perm[a:b][order].tolist(), f"group {i} of {sizes[i]}"


@pytest.mark.parametrize("thread_max", [1, 4])
def test_the_full_path_with_a_hubs_group_sorted_by_a_block(device_path, monkeypatch, thread_max):
    # a mixed batch on a hub (its deletions and insertions a group of 20 and more entries),
    # random batches around it, then the same edge twice in the hub's group: refused as on the
    # host (duplicates are found as neighbours after the sort)
    if device_path != "full":
        pytest.skip("the full path's sort")
    from kernels.graph.csr import CSRGraph

    monkeypatch.setattr(device_updates, "SORT_THREAD_MAX", thread_max)
    rng = np.random.default_rng(thread_max)
    hub = rng.choice(np.arange(1, 80), 50, replace=False)
    csr = CSRGraph.from_edges(80, np.zeros(50, dtype=np.int64), hub, rng.uniform(1, 2, 50),
                              directed=False, both_directions=True)
    g, mirror, updater = _pair(csr, page_size=16)
    twin = g.copy()
    gone = rng.choice(g.neighbors(0), 20, replace=False)
    new = [v for v in range(1, 80) if not g.has_edge(0, v)][:20]
    _apply_both(g, updater, twin, delete=(np.zeros(20, dtype=np.int64), gone),
                insert=(np.zeros(20, dtype=np.int64), np.array(new)))
    for _ in range(2):
        _apply_both(g, updater, twin, **random_batch(g, 25, 15, rng))
    assert updater.last_flow == "full"
    twice = [v for v in range(1, 80) if not g.has_edge(0, v)][:12]
    twice = twice + twice[3:4]
    with pytest.raises(GraphEditError) as on_device:
        updater.apply(insert=(np.zeros(len(twice), dtype=np.int64), np.array(twice)))
    with pytest.raises(GraphEditError) as on_host:
        twin.apply_updates(insert=(np.zeros(len(twice), dtype=np.int64), np.array(twice)))
    assert str(on_device.value) == str(on_host.value) and "appears twice" in str(on_device.value)
    assert same_state(g, twin) and edge_dict(g) == edge_dict(twin)


def test_the_fused_launch_passes_the_same_objects_batch_after_batch(device_path, monkeypatch):
    # what changes every batch travels in the upload's header: a new per-batch argument would
    # make every planned launch repack it (FastKernel.launch_known), so between two batches'
    # fused launches only the index and the buffer it is written to may differ (they swap, and
    # grow)
    if device_path != "compact":
        pytest.skip("the fused launch")
    g, mirror, updater = _pair(random_graph(40, 160, 21), page_size=16)
    twin = g.copy()
    seen = []
    launch = DeviceUpdater._launch_fused

    def recording(self, kernel, grid, block, args):
        seen.append((args, self.mirror.index))
        return launch(self, kernel, grid, block, args)

    monkeypatch.setattr(DeviceUpdater, "_launch_fused", recording)
    rng = np.random.default_rng(4)
    written = []
    for size in (12, 5, 7, 6, 4, 6):        # the first batch sizes the buffers: no later one grows them
        _apply_both(g, updater, twin, **random_batch(g, size, size, rng))
        assert updater.last_flow == "fused"
        written.append(mirror.index)
    index_at = {next(i for i, a in enumerate(args) if a is index) for args, index in seen}
    index_at |= {next(i for i, a in enumerate(args) if a is new) for (args, _), new in zip(seen, written, strict=True)}
    assert len(index_at) == 2
    for (before, _), (after, _) in zip(seen[1:], seen[2:], strict=False):
        changed = {i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a is not b}
        assert changed == index_at, changed


def test_the_fused_launch_names_exactly_the_arguments_that_are_not_its_last_ones(device_path):
    if device_path != "compact":
        pytest.skip("the fused launch")
    from kernels.cuda.fast_launch import FastKernel

    class Recording(FastKernel):
        def __init__(self):
            self.calls = []

        def launch(self, griddim, blockdim, stream, sharedmem, args, owner=None):
            self.calls.append(("launch", args, owner))

        def launch_known(self, griddim, blockdim, args, changed, owner):
            self.calls.append(("known", args, changed, owner))

    g, mirror, updater = _pair(random_graph(20, 40, 2))
    k, other = Recording(), Recording()
    a, b, b2, c = object(), object(), object(), object()
    updater._launch_fused(k, 1, 32, (a, b, 5, c))
    updater._launch_fused(k, 1, 32, (a, b2, 5, c))
    updater._launch_fused(k, 1, 32, (a, b2, 5, c))
    updater._launch_fused(k, 1, 32, (c, b, 5, a))
    updater._launch_fused(other, 1, 32, (c, b, 5, a))                  # another kernel: a full launch
    updater._launch_fused(other, 1, 32, (c, b, 5))                     # other arguments: a full launch
    token = k.calls[0][2]
    assert token is not None and all(call[-1] is token for call in k.calls + other.calls)
    assert [call[0] for call in k.calls] == ["launch", "known", "known", "known"]
    assert [call[2] for call in k.calls[1:]] == [[1], [], [0, 1, 3]]
    assert [call[0] for call in other.calls] == ["launch", "launch"]
