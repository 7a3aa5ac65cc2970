"""The GPU operators (scan, advance, filter, compute, segmented intersection) against NumPy,
under the CUDA simulator, on slotted graphs with tiny pages (lists span pages, large lists)
and on CSR, before and after edits."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

from kernels.graph.csr import CSRGraph
from kernels.graph.device import DeviceMirror
from kernels.graph.slotted import SlottedGraph
from kernels.operators.advance import Advance
from kernels.operators.compute import Compute
from kernels.operators.filter import Filter
from kernels.operators.intersection import segmented_intersection
from kernels.operators.launch import Workspace
from kernels.operators.scan import scan_array
from kernels.operators.views import slotted_view, upload_csr


def random_graph(n: int, m: int, seed: int, *, directed: bool, hub_degree: int = 0) -> CSRGraph:
    """Random simple graph; vertex 0 is a hub when ``hub_degree`` > 0 (a large list at page size 16)."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    if hub_degree:
        src = np.concatenate([src, np.zeros(hub_degree, dtype=np.int64)])
        dst = np.concatenate([dst, rng.choice(np.arange(1, n), hub_degree, replace=False)])
    keep = src != dst
    src, dst = src[keep], dst[keep]
    if not directed:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    pairs = np.unique(src * n + dst)
    return CSRGraph.from_edges(n, pairs // n, pairs % n, directed=directed, both_directions=not directed)


@pytest.fixture(scope="module")
def slotted_pair():
    """A directed graph with a hub of degree 40 on 16-word pages (10 entries per large-list page)."""
    g = random_graph(40, 90, 1, directed=True, hub_degree=30)
    s = SlottedGraph.from_csr(g, page_size=16)
    assert s.page_stats()["large"].any()
    return g, s


def neighbours(s: SlottedGraph, v: int) -> np.ndarray:
    return s.neighbors(v) if s.has_vertex(v) else np.zeros(0, dtype=np.int32)


def expected_expansion(s: SlottedGraph, frontier) -> tuple[np.ndarray, np.ndarray]:
    lists = [neighbours(s, int(v)) for v in frontier]
    dst = np.concatenate(lists) if lists else np.zeros(0, np.int32)
    src = np.concatenate([np.full(len(x), v, dtype=np.int32) for v, x in zip(frontier, lists, strict=True)])
    return dst, src


def advance_positions(view, frontier: np.ndarray, balance: str, block: int = 16):
    adv = Advance(view.kind, balance=balance, block=block, output="positions", with_sources=True)
    out = cuda.device_array(max(view.n_entries * 2, 1), np.int32)
    out_src = cuda.device_array(max(view.n_entries * 2, 1), np.int32)
    total = adv(view, cuda.to_device(frontier), len(frontier), (), out, out_src=out_src)
    return out.copy_to_host()[:total], out_src.copy_to_host()[:total]


@pytest.mark.parametrize("n", [1, 5, 32, 33, 100])
def test_scan_matches_numpy_cumsum(n):
    values = np.random.default_rng(n).integers(0, 50, n).astype(np.int64)
    out = cuda.device_array(n, np.int64)
    total = cuda.device_array(1, np.int64)
    scan_array(cuda.to_device(values), n, out, total, Workspace())
    expected = np.concatenate([[0], np.cumsum(values)[:-1]])
    assert np.array_equal(out.copy_to_host(), expected)
    assert total.copy_to_host()[0] == values.sum()


def test_scan_of_nothing_gives_a_zero_total():
    total = cuda.to_device(np.array([7], np.int64))
    scan_array(cuda.to_device(np.zeros(1, np.int64)), 0, cuda.device_array(1, np.int64), total, Workspace())
    assert total.copy_to_host()[0] == 0


@pytest.mark.parametrize("balance", ["lb", "tpv"])
def test_advance_on_pages_lists_every_neighbour_in_frontier_order(slotted_pair, balance):
    g, s = slotted_pair
    view = slotted_view(DeviceMirror(s))
    rng = np.random.default_rng(2)
    # repeats, the hub (a list spanning pages), and vertices without out-edges
    isolated = np.flatnonzero(g.degrees() == 0)[:2]
    frontier = np.concatenate([rng.integers(0, 40, 6), [0, 0], isolated]).astype(np.int32)
    dst, src = advance_positions(view, frontier, balance)
    want_dst, want_src = expected_expansion(s, frontier)
    assert np.array_equal(dst, want_dst)
    assert np.array_equal(src, want_src)


@pytest.mark.parametrize("balance", ["lb", "tpv"])
def test_advance_on_csr_equals_the_csr_rows(slotted_pair, balance):
    g, _ = slotted_pair
    frontier = np.array([3, 0, 17, 39, 0], dtype=np.int32)
    dst, src = advance_positions(upload_csr(g), frontier, balance)
    assert np.array_equal(dst, np.concatenate([g.neighbors(int(v)) for v in frontier]))
    assert np.array_equal(src, np.repeat(frontier, g.degrees()[frontier]))


@cuda.jit(device=True)
def keep_even_targets(src, dst, edge, g, state):
    if dst % 2 == 0:
        cuda.atomic.add(state[0], 0, 1)   # the functor may update state
        return True
    return False


@pytest.mark.parametrize("balance", ["lb", "tpv"])
def test_advance_append_emits_what_the_functor_accepts(slotted_pair, balance):
    g, s = slotted_pair
    view = slotted_view(DeviceMirror(s))
    frontier = np.array([0, 5, 9, 12, 31], dtype=np.int32)
    adv = Advance("slotted", keep_even_targets, balance=balance, block=16, output="append", with_degrees=True)
    out = cuda.device_array(view.n_entries, np.int32)
    counters = cuda.to_device(np.array([0, 99, 0, 99], np.int64))
    accepted = cuda.to_device(np.zeros(1, np.int64))
    adv(view, cuda.to_device(frontier), len(frontier), (accepted,), out, counters=counters, slot=0, reset_slot=1)
    count, other, degrees, other_degrees = counters.copy_to_host()
    want, _ = expected_expansion(s, frontier)
    want = want[want % 2 == 0]
    assert other == 0 and other_degrees == 0            # the other level's counters are zeroed for the next level
    assert count == len(want) == accepted.copy_to_host()[0]
    assert sorted(out.copy_to_host()[:count]) == sorted(want)
    assert degrees == sum(s.degree(int(v)) for v in want)   # the emitted vertices' degrees (a repeat counts twice)


def test_advance_follows_the_pages_after_edits():
    g = random_graph(30, 70, 3, directed=False, hub_degree=12)
    s = SlottedGraph.from_csr(g, page_size=16)
    mirror = DeviceMirror(s)
    rng = np.random.default_rng(4)
    s.add_edges(np.zeros(9, np.int64), np.setdiff1d(np.arange(1, 30), s.neighbors(0))[:9])   # the hub grows
    victims = s.neighbors(5)[:2]
    s.remove_edges(np.full(len(victims), 5), victims)
    for _ in range(6):
        u, v = rng.integers(0, 30, 2)
        if u != v and not s.has_edge(int(u), int(v)):
            s.add_edge(int(u), int(v))
    s.check_invariants()
    mirror.sync()
    frontier = np.array([0, 5, 7, 29, 0], dtype=np.int32)
    for balance in ("lb", "tpv"):
        dst, _ = advance_positions(slotted_view(mirror), frontier, balance)
        assert np.array_equal(dst, expected_expansion(s, frontier)[0])


@cuda.jit(device=True)
def divisible(item, state):
    return item % state[0] == 0


@pytest.mark.parametrize("over_range", [False, True])
def test_filter_keeps_accepted_items_in_order(over_range):
    rng = np.random.default_rng(5)
    items = rng.integers(0, 1000, 70).astype(np.int32)
    out = cuda.device_array(70, np.int32)
    f = Filter(divisible, block=16)
    if over_range:
        count = f(None, 70, (3,), out)
        want = np.arange(70)[np.arange(70) % 3 == 0]
    else:
        count = f(cuda.to_device(items), 70, (3,), out)
        want = items[items % 3 == 0]
    assert count == len(want)
    assert np.array_equal(out.copy_to_host()[:count], want)


@cuda.jit(device=True)
def square_into(item, state):
    state[0][item] = item * item + state[1]


def test_compute_applies_the_function_to_every_item():
    values = cuda.to_device(np.full(40, -1, np.int64))
    Compute(square_into, block=16)(cuda.to_device(np.arange(0, 40, 2, dtype=np.int32)), 20, (values, 1))
    got = values.copy_to_host()
    assert np.array_equal(got[::2], np.arange(0, 40, 2) ** 2 + 1)
    assert (got[1::2] == -1).all()


@pytest.mark.parametrize("kind", ["slotted", "csr"])
def test_segmented_intersection_counts_common_neighbours(kind):
    g = random_graph(30, 120, 6, directed=False, hub_degree=20)
    s = SlottedGraph.from_csr(g, page_size=16)
    s.remove_edges([0, 3], [s.neighbors(0)[0], s.neighbors(3)[0]])    # unsorted lists after edits
    s.add_edge(3, int(np.setdiff1d(np.arange(4, 30), s.neighbors(3))[0]))
    view = slotted_view(DeviceMirror(s)) if kind == "slotted" else upload_csr(s.to_csr())
    rng = np.random.default_rng(7)
    f1 = np.concatenate([[0, 3, 0], rng.integers(0, 30, 12)]).astype(np.int32)
    f2 = np.concatenate([[3, 0, 0], rng.integers(0, 30, 12)]).astype(np.int32)
    counts = cuda.device_array(len(f1), np.int64)
    total = segmented_intersection(view, cuda.to_device(f1), cuda.to_device(f2), len(f1), counts, block=16)
    want = np.array([len(np.intersect1d(s.neighbors(int(a)), s.neighbors(int(b))))
                     for a, b in zip(f1, f2, strict=True)])
    assert np.array_equal(counts.copy_to_host(), want)
    assert total == want.sum()


def test_workspace_upload_puts_the_parts_one_after_another_and_download_reads_them_back():
    import numpy as np

    from kernels.operators.launch import Workspace

    ws = Workspace()
    d = ws.upload("ids", np.array([3, 1], dtype=np.int64), [7], np.array([], dtype=np.int64), [9, 2], dtype=np.int32)
    assert d.dtype == np.int32 and d.size >= 5
    assert ws.download("ids", d, 5).tolist() == [3, 1, 7, 9, 2]
    again = ws.upload("ids", [5], dtype=np.int32)                # the same buffer, its start rewritten
    assert again is d and ws.download("ids", d, 2).tolist() == [5, 1]
    assert ws.upload("empty", np.zeros(0, dtype=np.float64)).size >= 1
    assert ws.download("empty", d, 0).size == 0


def test_workspace_get_answers_a_repeat_with_the_same_buffer_and_grows_or_retypes_it():
    import numpy as np

    from kernels.operators.launch import Workspace

    ws = Workspace()
    a = ws.get("x", np.int64, 10)
    assert a.dtype == np.int64 and a.size >= 10
    assert ws.get("x", np.int64, a.size) is a and ws.get("x", np.dtype("int64"), 3) is a
    assert ws.get("x", "int64", 0) is a
    b = ws.get("x", np.int64, a.size + 1)                       # grown: a new buffer, the old one forgotten
    assert b is not a and b.size > a.size and ws.get("x", np.int64, 1) is b and ws.get("x", "int64", 1) is b
    c = ws.get("x", np.int32, 1)                                # another dtype under the name
    assert c.dtype == np.int32 and ws.get("x", np.int32, 1) is c
    d = ws.get("x", np.int64, 1)
    assert d.dtype == np.int64 and d is not b and ws.get("x", np.int32, 1) is not c
    ws.release()
    assert ws.get("x", np.int64, 1) is not d


def test_workspace_held_span_is_the_same_object_while_buffer_offset_and_shape_stay():
    import numpy as np

    from kernels.operators.launch import Workspace

    ws = Workspace()
    buf = ws.get("y", np.int64, 64)
    s = ws.held_span("s", buf, 4, (2, 3))
    assert ws.held_span("s", buf, 4, (2, 3)) is s
    assert ws.held_span("s", buf, 5, (2, 3)) is not s
    t = ws.held_span("s", buf, 4, (3, 2))
    assert t is not s and ws.held_span("s", buf, 4, [3, 2]) is t
    other = ws.get("z", np.int64, 64)
    assert ws.held_span("s", other, 4, (3, 2)) is not t
    assert ws.held_span("n", buf, 0, 5) is ws.held_span("n", buf, 0, (5,))
