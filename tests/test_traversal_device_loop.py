"""The device loop of the BFS and SSSP GPU variants (``loop=device``: the whole traversal in one
cooperative launch, :mod:`kernels.algorithms.traversal.device_loop`) equals SciPy: on a long
path, a hub whose list spans pages and is split into chunks, a disconnected graph, a directed
graph, a weighted graph whose shortest path is not the BFS-shortest one, direction-optimizing
BFS that takes bottom-up steps, both views, and a live-pages document after edits. Refusals:
a bad ``loop`` value, a cooperative launch the driver refuses. GPU tests (``-m gpu``): real
graphs from tests/data and a 300 x 300 grid.

Under the simulator the persistent grid is one block (its grid sync is the block's
``syncthreads``), so inputs stay at tens of vertices."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.algorithms.traversal import device_loop
from kernels.errors import DeviceLoopError, ParameterError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph
from kernels.measure.targets import simulator_enabled
from kernels.run.runner import run_variant
from tests.conftest import data_path

SMALL = 32          # threads per block under the simulator
VIEWS = [("gpu-csr", {}), ("gpu-slotted", {"page_size": 16})]
VIEW_IDS = ["csr", "slotted"]


def run(graph, family, variant, *, block=SMALL, **params):
    params = {"loop": "device", "block": block, **params}
    result = run_variant(graph, family, variant, params, repeat=1, warmup=0)
    assert result.record["verified"], result.record["verification"]
    assert result.record["params"]["loop"] == "device"
    return result


def undirected(n, src, dst, w=None, name="g"):
    return CSRGraph.from_edges(n, np.asarray(src), np.asarray(dst), None if w is None else np.asarray(w, float),
                               directed=False, both_directions=True, name=name)


def path(n: int) -> CSRGraph:
    return undirected(n, np.arange(n - 1), np.arange(1, n), np.linspace(0.5, 2.0, n - 1), name=f"path-{n}")


def hub_and_tail() -> CSRGraph:
    """0 - {1..20} - hub 21 - {22..40}, then a tail 40-41-42: the hub's 39 neighbours are a large
    list spanning 16-word pages and are cut into chunks; the leaves are small lists."""
    src = np.concatenate([np.zeros(20, np.int64), np.full(39, 21), [40, 41]])
    dst = np.concatenate([np.arange(1, 21), np.arange(1, 21), np.arange(22, 41), [41, 42]])
    return undirected(43, src, dst, np.linspace(0.25, 3.0, len(src)), name="hub-and-tail")


@pytest.mark.parametrize("variant,extra", VIEWS, ids=VIEW_IDS)
def test_a_long_path_takes_one_level_per_vertex(variant, extra):
    g = path(30)
    bfs = run(g, "bfs", variant, source=0, direction="push", **extra)
    assert bfs.record["input"]["last_levels"] == 30          # 29 levels that grow, one that finds nothing
    assert bfs.record["input"]["last_loop"] == "device"
    sssp = run(g, "sssp", variant, source=29, **extra)
    assert sssp.record["input"]["last_levels"] == 30


@pytest.mark.parametrize("balance", ["lb", "tpv"])
@pytest.mark.parametrize("variant,extra", VIEWS, ids=VIEW_IDS)
def test_a_hub_list_is_split_into_chunks_and_reaches_everything(variant, extra, balance):
    g = hub_and_tail()
    run(g, "bfs", variant, source=22, balance=balance, direction="push", **extra)
    run(g, "sssp", variant, source=21, balance=balance, **extra)


def layered(sizes, seed=3) -> CSRGraph:
    """Layers of the given sizes, each vertex linked to two or three of the next layer (every
    vertex of the next layer has a parent), a few links inside layers, random weights."""
    rng = np.random.default_rng(seed)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    src, dst = [], []
    for i in range(len(sizes) - 1):
        here, there = np.arange(starts[i], starts[i + 1]), np.arange(starts[i + 1], starts[i + 2])
        for k, u in enumerate(there):                       # a parent for each
            src.append(here[k % len(here)])
            dst.append(u)
        for v in here:                                      # and a couple more links
            for u in rng.choice(there, size=min(2, len(there)), replace=False):
                src.append(v)
                dst.append(u)
        if len(here) > 1:
            src.append(here[0])
            dst.append(here[-1])
    return undirected(int(starts[-1]), src, dst, rng.uniform(0.1, 2.0, len(src)), name="layered")


@pytest.mark.parametrize("variant,extra", VIEWS, ids=VIEW_IDS)
def test_frontiers_of_every_width_use_as_many_lanes_per_list_as_fit(variant, extra):
    """With 32 threads, frontiers of 1-4, 5-8, 9-16 and more small lists are walked with 8, 4,
    2 and 1 threads per list: each width is a layer here, and every level must equal SciPy."""
    g = layered([1, 3, 6, 12, 40, 9, 2])
    run(g, "bfs", variant, source=0, direction="push", **extra)
    run(g, "sssp", variant, source=0, **extra)
    run(g, "sssp", variant, source=int(g.n_rows - 1), **extra)


def test_a_traced_run_gives_the_same_levels_and_ordered_phase_stamps():
    """The diagnostic trace (``trace_levels``): the traced kernel's output equals the untraced
    one, every level is stamped by the block, a level's stamps come in phase order, and the
    summary's durations are non-negative."""
    from numba import cuda

    from kernels.operators.views import upload_csr

    g = path(12)
    view = upload_csr(g)
    outs = []
    for trace_levels in (0, 20):
        loop = device_loop.DeviceLoopTraversal("bfs", "csr", block=SMALL, trace_levels=trace_levels)
        out = cuda.device_array(g.n_rows, np.int32)
        loop.run(view, 0, out)
        outs.append(out.copy_to_host())
    assert np.array_equal(outs[0], outs[1]) and outs[1].max() == 11
    levels = loop.last_run["levels"]
    trace = loop.trace
    assert trace.shape == (20, 1, device_loop.STAMPS)
    stamped = trace[:levels, 0]
    assert (stamped[:, [0, 1, 5]] > 0).all() and not trace[levels + 1:].any()   # the last: empty, stamps 0-1
    assert (stamped[:, 1] >= stamped[:, 0]).all() and (stamped[:, 5] >= stamped[:, 1]).all()
    assert (stamped[:, 2] > 0).all()               # the one block expands every level
    claimed = stamped[:, 3] > 0                    # all but the last, whose vertex has no new neighbour
    assert claimed[: levels - 1].all() and not claimed[levels - 1]
    assert (stamped[claimed, 2] <= stamped[claimed, 3]).all() and (stamped[claimed, 3] <= stamped[claimed, 4]).all()
    phases = device_loop.trace_phases(trace, levels)
    assert {"period", "expand", "sync", "t0_neighbours"} <= phases.keys()
    assert all(v >= 0 for v in phases.values())


@pytest.mark.parametrize("variant,extra", VIEWS, ids=VIEW_IDS)
def test_unreachable_vertices_stay_minus_one_and_infinite(variant, extra):
    g = undirected(10, [0, 1, 2, 4, 5, 6, 6], [1, 2, 3, 5, 6, 4, 7], [0.5, 0.0, 2.0, 1.0, 1.5, 4.0, 0.25])
    levels = run(g, "bfs", variant, source=5, **extra).output
    assert np.array_equal(levels, [-1, -1, -1, -1, 1, 0, 1, 2, -1, -1])
    dist = run(g, "sssp", variant, source=0, **extra).output
    assert np.isinf(dist[4:]).all() and np.array_equal(dist[:4], [0.0, 0.5, 0.5, 2.5])


@pytest.mark.parametrize("variant,extra", VIEWS, ids=VIEW_IDS)
def test_a_directed_graph_follows_out_edges_only(variant, extra):
    rng = np.random.default_rng(4)
    src, dst = rng.integers(0, 30, 80), rng.integers(0, 30, 80)
    keep = src != dst
    pairs = np.unique(src[keep] * 30 + dst[keep])
    g = CSRGraph.from_edges(30, pairs // 30, pairs % 30, rng.uniform(0, 4, len(pairs)).round(1), directed=True,
                            name="directed")
    bfs = run(g, "bfs", variant, source=3, direction="optimizing", **extra)
    assert bfs.record["input"]["last_bottom_up_steps"] == 0       # directed: top-down only
    run(g, "sssp", variant, source=3, **extra)


@pytest.mark.parametrize("variant,extra", VIEWS, ids=VIEW_IDS)
def test_a_weighted_shortcut_that_is_not_bfs_shortest(variant, extra):
    """0-1 weighs 10; 0-2-3-4-1 weighs 4: the distance to 1 needs a later iteration to drop."""
    g = undirected(5, [0, 0, 2, 3, 4], [1, 2, 3, 4, 1], [10.0, 1.0, 1.0, 1.0, 1.0])
    result = run(g, "sssp", variant, source=0, **extra)
    assert np.array_equal(result.output, [0.0, 4.0, 1.0, 2.0, 3.0])
    assert result.record["input"]["last_improvements"] >= 5       # 1 improved twice


@pytest.mark.parametrize("variant,extra", VIEWS, ids=VIEW_IDS)
def test_direction_optimizing_takes_bottom_up_steps_on_an_undirected_graph(variant, extra):
    result = run(hub_and_tail(), "bfs", variant, source=0, direction="optimizing", **extra)
    size = result.record["input"]
    assert size["last_bottom_up_steps"] >= 1 and size["last_top_down_steps"] >= 2


@pytest.mark.skipif(not simulator_enabled(), reason="the CUDA simulator is off (a real-GPU run)")
def test_live_pages_after_edits_run_in_the_device_loop():
    from kernels.compute.live import LiveDocument
    from tests.test_live_documents import Editor, check_run, edit_rounds, expected_dirty, karate

    ed = Editor(karate())
    arrays, revision = ed.journal.snapshot()
    doc = LiveDocument("doc", arrays, revision, name="karate", verify_deltas=True)
    params = {"block": SMALL, "source": 0, "loop": "device"}
    doc.run("bfs", "gpu-slotted", params, target="sim", repeat=1, warmup=0)
    ed.graph.mark_synced()
    _, split_a_page = next(edit_rounds(ed))
    split_a_page()
    expected = expected_dirty(ed.unsynced, ed.graph)
    doc.apply(ed.unsynced, ed.journal.revision)
    result = doc.run("sssp", "gpu-slotted", params, target="sim", repeat=1, warmup=0)
    assert result.record["input"]["last_loop"] == "device"
    check_run(result.record, result.output, ed, "sssp", 0, expected)


def test_a_bad_loop_value_is_refused_naming_the_choices():
    with pytest.raises(ParameterError, match=r"'loop'.*one of host, device"):
        run_variant(path(4), "bfs", "gpu-csr", {"loop": "gpu", "block": SMALL}, repeat=1, warmup=0)


def test_a_refused_cooperative_launch_is_one_line_naming_the_host_loop(monkeypatch):
    class Refusing:
        def __getitem__(self, config):
            def launch(*args):
                raise device_loop.CudaAPIError(720, "Call to cuLaunchCooperativeKernel results in "
                                                    "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE")
            return launch

    monkeypatch.setattr(device_loop, "device_loop_kernel", lambda *a: Refusing())
    with pytest.raises(DeviceLoopError) as info:
        run_variant(path(4), "sssp", "gpu-slotted", {"loop": "device", "block": SMALL, "page_size": 16},
                    repeat=1, warmup=0)
    text = str(info.value)
    assert "\n" not in text and "loop=device" in text and "use loop=host" in text and "TOO_LARGE" in text


# ---- real GPU ----------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("name", ["delaunay_n15.mtx", "as-caida20071105.mtx", "power.mtx"])
@pytest.mark.parametrize("variant,extra", [("gpu-csr", {}), ("gpu-slotted", {"page_size": 1024})], ids=VIEW_IDS)
def test_device_loop_on_real_graphs_on_the_gpu(name, variant, extra):
    g = read_graph(data_path(name))
    source = int(np.argmax(g.degrees()))
    for direction in ("push", "optimizing"):
        bfs = run(g, "bfs", variant, block=256, source=source, direction=direction, **extra)
        assert bfs.record["input"]["last_grid_blocks"] >= 1
    for balance in ("lb", "tpv"):
        run(g, "sssp", variant, block=256, source=source, balance=balance, **extra)


@pytest.mark.gpu
def test_device_loop_bfs_on_a_300_by_300_grid_on_the_gpu():
    from kernels.graph.generators import grid2d

    g = grid2d(300, 300)
    for variant, extra in VIEWS:
        result = run(g, "bfs", variant, block=256, source=0, direction="push", **extra)
        assert result.record["input"]["last_levels"] == 2 * 299 + 1      # depth 598, and the step finding nothing
