"""The device mirror under the CUDA simulator (and on a real GPU with GRAPH_KERNELS_TARGET=cuda):
after random edits and a sync, the device pages and index equal the host's."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.graph.csr import CSRGraph
from kernels.graph.device import DeviceMirror, _runs
from kernels.graph.slotted import SlottedGraph


def _random_graph(n, m, seed, directed, weighted):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    if not directed:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    key = np.unique(src * n + dst)
    src, dst = key // n, key % n
    w = rng.integers(1, 50, len(src)).astype(float) if weighted else None
    return CSRGraph.from_edges(n, src, dst, w, directed=directed, both_directions=not directed)


def _random_edits(g: SlottedGraph, rng, count):
    """A mix of every edit, valid by construction (new vertices, hubs growing, removals)."""
    for _ in range(count):
        kind = rng.integers(0, 10)
        alive = g.vertices()
        u = int(rng.choice(alive))
        if kind == 0:
            g.add_vertex()
        elif kind == 1 and len(alive) > 10:
            g.remove_vertex(u)
        elif kind <= 3 and g.degree(u):
            g.remove_edge(u, int(g.neighbors(u)[0]))
        else:
            targets = [int(v) for v in rng.choice(alive, 5) if not g.has_edge(u, int(v))
                       and not g.has_edge(int(v), u)]
            targets = list(dict.fromkeys(targets))
            w = rng.integers(1, 9, len(targets)).astype(float) if g.weighted else None
            g.add_edges(np.full(len(targets), u), targets, w)


@pytest.mark.parametrize("page_size", [16, 64, 256])
@pytest.mark.parametrize("directed,weighted", [(False, False), (True, True), (False, True)])
def test_after_random_edits_a_sync_makes_the_device_equal_the_host(page_size, directed, weighted):
    rng = np.random.default_rng(page_size)
    g = SlottedGraph.from_csr(_random_graph(120, 500, page_size, directed, weighted), page_size=page_size)
    mirror = DeviceMirror(g)
    assert mirror.differences() == []
    for _round in range(4):
        _random_edits(g, rng, 15)
        dirty = len(g.dirty_physical_pages())
        report = mirror.sync()
        assert mirror.differences() == []
        assert report.pages >= dirty
        per_page = page_size * (4 + (8 if weighted else 0))
        if report.strategy == "staged":                # page numbers travel too
            per_page += 4
        if report.strategy != "span":                  # span also copies clean pages in between
            assert report.pages == dirty
        assert report.bytes == report.pages * per_page + report.index_bytes
        assert report.index_bytes in (0, 16 * g.num_pages)
        assert len(g.dirty_physical_pages()) == 0 and not g.index_dirty
    g.check_invariants()


def test_a_sync_without_edits_moves_nothing():
    g = SlottedGraph.from_csr(_random_graph(50, 100, 1, False, False), page_size=64)
    mirror = DeviceMirror(g)
    report = mirror.sync()
    assert (report.pages, report.bytes, report.copies) == (0, 0, 0)


def test_one_edit_uploads_one_page_instead_of_the_whole_pool():
    g = SlottedGraph.from_csr(_random_graph(400, 2000, 2, False, False), page_size=256)
    mirror = DeviceMirror(g)
    full = mirror.history[0]
    u = int(g.vertices()[5])
    v = next(int(x) for x in g.vertices() if x != u and not g.has_edge(u, int(x)))
    g.add_edge(u, v)
    report = mirror.sync()
    assert report.pages <= 2 and report.bytes < full.bytes / 4
    assert mirror.differences() == []


def test_the_device_pool_grows_with_headroom_when_pages_are_added():
    g = SlottedGraph(16, directed=True)
    for _ in range(4):
        g.add_vertex()
    mirror = DeviceMirror(g, headroom=1.5)
    cap = mirror.capacity_pages
    hub = 0
    for _ in range(60):                                 # a growing large list adds pages
        g.add_edges([hub], [g.add_vertex()])
    report = mirror.sync()
    assert report.reallocated and report.device_copy_bytes == cap * 16 * 4
    assert mirror.capacity_pages >= g.physical_pages_used
    assert mirror.differences() == []


def test_consecutive_dirty_pages_travel_in_one_copy():
    assert _runs(np.array([1, 2, 3, 7, 9, 10])) == [(1, 4), (7, 8), (9, 11)]
    g = SlottedGraph.from_csr(_random_graph(300, 600, 3, True, False), page_size=16, fill=1.0)
    mirror = DeviceMirror(g)
    for v in range(0, 40):                              # fills neighbouring pages one after another
        if not g.has_edge(v, 299 - v):
            g.add_edge(v, 299 - v)
    dirty = g.dirty_physical_pages()
    report = mirror.sync()
    assert report.copies - (4 if report.index_bytes else 0) == len(_runs(dirty)) < len(dirty)
    assert mirror.differences() == []


def test_rebuild_csr_and_upload_moves_the_whole_graph():
    g = SlottedGraph.from_csr(_random_graph(200, 800, 4, False, True), page_size=64)
    mirror = DeviceMirror(g)
    report = mirror.rebuild_csr_and_upload()
    csr = g.to_csr()
    assert report.kind == "csr" and report.bytes == csr.indptr.nbytes + csr.indices.nbytes + csr.weights.nbytes
    indptr, indices, weights = (a.copy_to_host() for a in mirror.csr)
    assert np.array_equal(indptr, csr.indptr) and np.array_equal(indices, csr.indices)
    assert np.array_equal(weights, csr.weights)
    assert 0 < report.rebuild_seconds <= report.seconds
    assert report.as_dict()["milliseconds"] == pytest.approx(report.seconds * 1e3)


def test_staged_sync_gathers_the_dirty_pages_and_scatters_them_with_a_kernel():
    g = SlottedGraph.from_csr(_random_graph(60, 200, 5, False, True), page_size=16)
    mirror = DeviceMirror(g)
    rng = np.random.default_rng(5)
    _random_edits(g, rng, 4)
    dirty = len(g.dirty_physical_pages())
    report = mirror.sync(strategy="staged")
    assert report.strategy == "staged" and report.pages == dirty
    # one copy of the page numbers, one of the pages, one of their weights (+ the index rows)
    assert report.copies == 3 + (4 if report.index_bytes else 0)
    assert report.bytes == dirty * (16 * 12 + 4) + report.index_bytes
    assert mirror.differences() == []


def test_every_strategy_leaves_the_same_device_pages():
    for strategy in ("runs", "span", "staged", "auto"):
        g = SlottedGraph.from_csr(_random_graph(80, 300, 8, True, True), page_size=16)
        mirror = DeviceMirror(g)
        _random_edits(g, np.random.default_rng(8), 6)
        spanned = g.dirty_physical_pages()
        report = mirror.sync(strategy=strategy)
        assert mirror.differences() == [], strategy
        if strategy == "span":
            assert report.pages == spanned[-1] - spanned[0] + 1


def test_an_unknown_sync_strategy_is_refused():
    from kernels.errors import ParameterError

    g = SlottedGraph.from_csr(_random_graph(10, 20, 6, True, False), page_size=16)
    with pytest.raises(ParameterError, match="strategy"):
        DeviceMirror(g).sync(strategy="fast")
