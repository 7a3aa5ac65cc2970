"""The device mirror's vertex directory (kernels/graph/directory.py) under the CUDA simulator:
after a full upload, after host edits and a sync (lists growing past a page into large lists,
vertices added and removed, pages freed), it names every vertex's list as the pages do -- the
same handle and degree as the search over the index and slots (``slotted_search``) -- and the
device pool read through it holds the host's lists."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

from kernels.graph.device import DeviceMirror
from kernels.graph.slotted import SlottedGraph
from kernels.operators.views import slotted_locate, slotted_search, slotted_view
from tests.batch_helpers import directory_problems, random_graph


@cuda.jit
def _both(g, n, out):
    for v in range(cuda.grid(1), n, cuda.gridsize(1)):
        a, b = slotted_locate(g, v)
        c, d = slotted_search(g, v)
        out[0, v] = a
        out[1, v] = b
        out[2, v] = c
        out[3, v] = d


def directory_against_search(mirror) -> tuple[np.ndarray, np.ndarray]:
    view = slotted_view(mirror)
    n = view.n_vertices + 2                         # two ids past the last: (0, 0) from both
    out = cuda.to_device(np.full((4, n), -7, dtype=np.int64))
    _both[1, 32](view.args, n, out)
    got = out.copy_to_host()
    return got[:2], got[2:]


def check(mirror) -> None:
    assert not directory_problems(mirror)
    direct, searched = directory_against_search(mirror)
    assert np.array_equal(direct, searched)


@pytest.mark.parametrize("directed", [False, True])
def test_the_directory_names_every_list_after_an_upload(directed):
    g = SlottedGraph.from_csr(random_graph(60, 200, 3, directed=directed), page_size=16)
    mirror = DeviceMirror(g)
    check(mirror)


def test_the_directory_follows_host_edits_through_a_sync():
    g = SlottedGraph.from_csr(random_graph(50, 90, 5), page_size=16)
    mirror = DeviceMirror(g)
    rng = np.random.default_rng(1)
    hub_targets = [v for v in range(1, 50) if not g.has_edge(0, v)][:30]
    g.add_edges(np.zeros(len(hub_targets), dtype=np.int64), np.array(hub_targets))   # vertex 0 spans pages
    assert g.index.large_pages.max() >= 2
    new = g.add_vertex()
    g.add_edges(np.array([new, new]), np.array([3, 7]))
    g.remove_vertex(9)
    pairs = [(int(u), int(v)) for u, v in zip(*np.nonzero(np.triu(rng.random((50, 50)) < 0.02)), strict=True)
             if u != v and g.has_vertex(int(u)) and g.has_vertex(int(v)) and not g.has_edge(int(u), int(v))]
    g.add_edges(np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]))
    mirror.sync()
    check(mirror)
    assert mirror.directory[1].copy_to_host()[9] == 0          # the removed vertex has no list


def test_a_vertex_added_past_the_directory_grows_it():
    g = SlottedGraph.from_csr(random_graph(20, 30, 7), page_size=16)
    mirror = DeviceMirror(g, headroom=1.0)
    before = len(mirror.directory[0])
    for _ in range(5):
        v = g.add_vertex()
        g.add_edges(np.array([v]), np.array([1]))
    mirror.sync()
    assert len(mirror.directory[0]) >= g.next_vertex_id > before
    check(mirror)


def test_a_graph_emptied_of_every_vertex_leaves_no_stale_entry():
    # the index shrinks to no columns: nothing to upload, but the directory must still follow
    g = SlottedGraph.from_csr(random_graph(6, 8, 2), page_size=16)
    mirror = DeviceMirror(g)
    for v in range(6):
        if g.has_vertex(v):
            g.remove_vertex(v)
    mirror.sync()
    assert not directory_problems(mirror)
    assert not mirror.directory[1].copy_to_host().any()
