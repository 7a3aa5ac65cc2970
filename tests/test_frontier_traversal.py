"""Direction-optimizing BFS (``gpu-do``, ``gpu-do-slotted``) and near-far SSSP (``gpu-nearfar``,
``gpu-nearfar-slotted``): :mod:`kernels.algorithms.traversal.frontier_loop`.

Every run is verified against SciPy by the runner (levels equal; distances within 1e-9) on real
graphs of tests/data, generated disconnected / directed / weighted graphs, isolated sources, zero
and equal weights, a ``delta`` far too small and far too large, and thresholds that force
bottom-up steps and the return to top-down (the record's ``last_steps`` says which levels went
bottom-up). Relaxation counts are checked where they are known exactly (a tree: each vertex
relaxed once). Bad ``alpha``/``beta``/``delta`` are refused naming the parameter and the allowed
values. GPU tests (``GRAPH_KERNELS_TARGET=cuda pytest -m gpu``): real graphs and a generated R-MAT.

Under the simulator the kernel runs one block of one warp, so inputs stay at tens of vertices."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.algorithms.auto_rules import (
    DO_ALPHA,
    DO_ALPHA_SHALLOW_WORK,
    DO_BETA,
    HOPS_DEEP,
    HOPS_MID,
    bfs_direction_thresholds,
    sssp_delta,
    sssp_hops,
)
from kernels.errors import ParameterError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph
from kernels.run.runner import run_variant
from tests.conftest import data_path

BFS_VARIANTS = [("gpu-do", {}), ("gpu-do-slotted", {"page_size": 16})]
SSSP_VARIANTS = [("gpu-nearfar", {}), ("gpu-nearfar-slotted", {"page_size": 16})]
IDS = ["csr", "slotted"]
ALWAYS_BOTTOM_UP = {"alpha": 1e6, "beta": 1e6}      # bottom-up from level 1 on, never back
BACK_AND_FORTH = {"alpha": 1e6, "beta": 0.0}        # bottom-up, then top-down as soon as a frontier shrinks


def run(graph, family, variant, **params):
    result = run_variant(graph, family, variant, params, repeat=1, warmup=0)
    assert result.record["verified"], result.record["verification"]
    return result.record


def undirected(n, src, dst, w=None, name="g"):
    return CSRGraph.from_edges(n, np.asarray(src), np.asarray(dst), None if w is None else np.asarray(w, float),
                               directed=False, both_directions=True, name=name)


def two_components_and_isolated() -> CSRGraph:
    """A hub (0) with 12 leaves, leaf 5 leading on to a path of 6; a separate triangle 30-31-32;
    vertices 20-29 isolated."""
    src = np.concatenate([np.zeros(12, np.int64), [5, 13, 14, 15, 16, 17], [30, 31, 32]])
    dst = np.concatenate([np.arange(1, 13), [13, 14, 15, 16, 17, 18], [31, 32, 30]])
    rng = np.random.default_rng(5)
    return undirected(33, src, dst, rng.uniform(1, 10, len(src)), name="two-components")


# ---- BFS ------------------------------------------------------------------------------------

@pytest.mark.parametrize("variant,extra", BFS_VARIANTS, ids=IDS)
@pytest.mark.parametrize("name", ["karate.mtx", "dolphins.mtx", "LFAT5.mtx"])
def test_do_bfs_equals_scipy_on_real_graphs_with_auto_thresholds(variant, extra, name):
    rec = run(read_graph(data_path(name)), "bfs", variant, source=1, **extra)
    assert rec["params"]["alpha"] == rec["params"]["beta"] == "auto"
    chosen = (rec["resolved_params"]["alpha"], rec["resolved_params"]["beta"])
    assert chosen[0] == DO_ALPHA_SHALLOW_WORK                           # small graphs: bottom-up late
    assert (rec["input"]["last_alpha"], rec["input"]["last_beta"]) == chosen   # what ran is what auto chose


@pytest.mark.parametrize("variant,extra", BFS_VARIANTS, ids=IDS)
def test_forced_bottom_up_steps_are_taken_and_recorded(variant, extra):
    rec = run(read_graph(data_path("dolphins.mtx")), "bfs", variant, source=0, **ALWAYS_BOTTOM_UP, **extra)
    steps = rec["input"]["last_steps"]
    assert steps[0] == "T" and set(steps[1:]) == {"B"}, steps
    assert rec["input"]["last_bottom_up_steps"] == len(steps) - 1


@pytest.mark.parametrize("variant,extra", BFS_VARIANTS, ids=IDS)
def test_switching_back_and_forth_converts_between_queue_and_bitmap(variant, extra):
    """Bottom-up -> top-down queues the bitmap frontier; top-down -> bottom-up writes the queue
    into a freshly cleared bitmap, again and again."""
    rec = run(read_graph(data_path("dolphins.mtx")), "bfs", variant, source=0, **BACK_AND_FORTH, **extra)
    steps = rec["input"]["last_steps"]
    assert "BTB" in steps, steps


@pytest.mark.parametrize("variant,extra", BFS_VARIANTS, ids=IDS)
@pytest.mark.parametrize("thresholds", [{}, ALWAYS_BOTTOM_UP, BACK_AND_FORTH, {"alpha": 0.0}])
def test_do_bfs_on_a_disconnected_graph_leaves_the_rest_unreached(variant, extra, thresholds):
    g = two_components_and_isolated()
    rec = run(g, "bfs", variant, source=5, **thresholds, **extra)
    assert rec["result"]["reached"] == 19
    if thresholds.get("alpha") == 0.0:
        assert "B" not in rec["input"]["last_steps"]


@pytest.mark.parametrize("variant,extra", BFS_VARIANTS, ids=IDS)
def test_an_isolated_source_reaches_itself_only(variant, extra):
    rec = run(two_components_and_isolated(), "bfs", variant, source=25, **ALWAYS_BOTTOM_UP, **extra)
    assert rec["result"]["reached"] == 1 and rec["input"]["last_levels"] == 1


@pytest.mark.parametrize("variant,extra", BFS_VARIANTS, ids=IDS)
def test_a_directed_graph_runs_top_down_with_a_notice(variant, extra):
    g = read_graph(data_path("rMatGraph_J_5_100.mtx"))
    assert g.directed
    rec = run(g, "bfs", variant, source=0, **ALWAYS_BOTTOM_UP, **extra)
    assert rec["input"]["last_bottom_up_steps"] == 0
    assert any("top-down only" in n for n in rec["notices"])


@pytest.mark.parametrize("variant,extra", BFS_VARIANTS, ids=IDS)
def test_a_hub_whose_list_spans_pages_is_scanned_by_the_whole_warp(variant, extra):
    """Vertex 0's 40 neighbours 1..40 are reached through vertex 41 only, at level 2, by a
    bottom-up step: 0 finds its parent 41 past the first SERIAL entries of its list."""
    src = np.concatenate([np.zeros(40, np.int64), [0, 41], np.arange(1, 40)])
    dst = np.concatenate([np.arange(1, 41), [41, 42], np.arange(2, 41)])
    g = undirected(43, src, dst, name="late-parent")
    rec = run(g, "bfs", variant, source=42, **ALWAYS_BOTTOM_UP, **extra)
    assert rec["input"]["last_steps"].startswith("TB")


# ---- SSSP -----------------------------------------------------------------------------------

@pytest.mark.parametrize("variant,extra", SSSP_VARIANTS, ids=IDS)
@pytest.mark.parametrize("name", ["USAir97.mtx", "chesapeake.mtx"])
def test_nearfar_equals_scipy_on_real_graphs_with_auto_delta(variant, extra, name):
    rec = run(read_graph(data_path(name)), "sssp", variant, source=2, **extra)
    assert rec["params"]["delta"] == "auto"
    assert rec["input"]["last_delta"] == rec["resolved_params"]["delta"] > 0
    assert rec["input"]["last_relaxations"] > 0


@pytest.mark.parametrize("variant,extra", SSSP_VARIANTS, ids=IDS)
@pytest.mark.parametrize("delta", [1e-9, 0.3, 3.0, 1e15])
def test_nearfar_is_exact_whatever_delta(variant, extra, delta):
    g = two_components_and_isolated()
    rec = run(g, "sssp", variant, source=5, delta=delta, **extra)
    assert rec["result"]["reached"] == 19
    advances = rec["input"]["last_bucket_advances"]
    if delta == 1e15:
        assert advances == 0                      # one bucket: Bellman-Ford
    if delta == 1e-9:
        assert advances >= 10                     # about a bucket per distinct distance


@pytest.mark.parametrize("variant,extra", SSSP_VARIANTS, ids=IDS)
@pytest.mark.parametrize("weights", ["zero", "equal", "none"])
def test_zero_equal_and_missing_weights(variant, extra, weights):
    g = two_components_and_isolated()
    w = {"zero": np.zeros(g.nnz), "equal": np.full(g.nnz, 2.5), "none": None}[weights]
    g = g.with_(weights=w)
    run(g, "sssp", variant, source=0, **extra)
    run(g, "sssp", variant, source=0, delta=0.5, **extra)


@pytest.mark.parametrize("variant,extra", SSSP_VARIANTS, ids=IDS)
def test_an_isolated_source_and_a_directed_graph(variant, extra):
    rec = run(two_components_and_isolated(), "sssp", variant, source=22, **extra)
    assert rec["result"]["reached"] == 1
    g = read_graph(data_path("rMatGraph_J_5_100.mtx"))
    rng = np.random.default_rng(2)
    run(g.with_(weights=rng.uniform(0, 3, g.nnz)), "sssp", variant, source=0, delta=0.7, **extra)


@pytest.mark.parametrize("variant,extra", SSSP_VARIANTS, ids=IDS)
@pytest.mark.parametrize("delta", [0.5, 1e15])
@pytest.mark.parametrize("hops", [0, 4])
def test_on_a_tree_every_reached_vertex_is_relaxed_once(variant, extra, delta, hops):
    """Unique shortest paths and near-far's buckets: every reached vertex is in exactly one
    frontier (or, with block-local hops, its edges are queued once), so the relaxations are
    exactly the degrees of the reached vertices."""
    rng = np.random.default_rng(11)
    n = 25
    parent = np.array([rng.integers(0, v) for v in range(1, n)])
    g = undirected(n + 3, parent, np.arange(1, n), rng.uniform(1, 4, n - 1), name="tree")   # 3 isolated
    rec = run(g, "sssp", variant, source=0, delta=delta, hops=hops, **extra)
    degrees = np.diff(g.indptr)[:n]
    assert rec["input"]["last_relaxations"] == int(degrees.sum())
    assert rec["input"]["last_relaxations_per_edge"] == pytest.approx(degrees.sum() / g.nnz)


# ---- near-far's block-local hops ------------------------------------------------------------

def weighted_grid(k: int = 7, seed: int = 3):
    """A k x k grid with weights in [1, 10), one long shortcut (0 to the far corner, weight 500)
    and two isolated vertices: every vertex has at most 5 neighbours, so the block-local rounds
    take them all (their buffers, 12 items on the simulator, overflow)."""
    rng = np.random.default_rng(seed)
    idx = np.arange(k * k).reshape(k, k)
    src = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel(), [0]])
    dst = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel(), [k * k - 1]])
    w = rng.uniform(1, 10, len(src))
    w[-1] = 500.0
    return undirected(k * k + 2, src, dst, w, name="grid")


@pytest.mark.parametrize("variant,extra", SSSP_VARIANTS, ids=IDS)
@pytest.mark.parametrize("hops", [0, 1, 3, 1000])
@pytest.mark.parametrize("delta", [2.0, 20.0, 1e15])
def test_block_local_hops_are_exact_and_counted(variant, extra, hops, delta):
    rec = run(weighted_grid(), "sssp", variant, source=24, hops=hops, delta=delta, **extra)
    last = rec["input"]
    assert rec["result"]["reached"] == 49 and last["last_hops"] == hops
    assert last["last_relaxations"] >= last["last_local_relaxations"] >= 0
    if hops == 0:
        assert last["last_local_rounds"] == last["last_local_relaxations"] == 0
    elif delta == 1e15:                     # one bucket: the rounds follow the wave
        assert last["last_local_rounds"] > 0 and last["last_local_relaxations"] > 0


@pytest.fixture
def wide_local_buffers(monkeypatch):
    """Buffers wider than the simulator's one warp: a round of items and the deferred publish take
    several passes, as on a GPU (1,024 items and 512 deferred vertices for 256 threads)."""
    from kernels.algorithms.traversal import frontier_loop

    monkeypatch.setattr(frontier_loop, "SIM_LOCAL_CAP", 70)
    monkeypatch.setattr(frontier_loop, "SIM_LOCAL_DEFER", 40)
    frontier_loop.frontier_loop_kernel.cache_clear()
    yield
    frontier_loop.frontier_loop_kernel.cache_clear()


@pytest.mark.parametrize("variant,extra", SSSP_VARIANTS, ids=IDS)
@pytest.mark.parametrize("hops,delta", [(3, 20.0), (1000, 1e15)])
def test_block_local_hops_with_rounds_of_several_passes(wide_local_buffers, variant, extra, hops, delta):
    rec = run(weighted_grid(9), "sssp", variant, source=40, hops=hops, delta=delta, **extra)
    assert rec["result"]["reached"] == 81 and rec["input"]["last_local_rounds"] > 0


def test_the_local_rounds_counted_include_the_last():
    """A path from one end, one bucket, hops 1, one block: each level's frontier vertex improves
    the next vertex (items), round 1 improves the one after, the last round the third, stamped
    for the next level: 2 rounds a level over 4 levels."""
    path = undirected(12, np.arange(11), np.arange(1, 12), np.ones(11), name="path")
    rec = run(path, "sssp", "gpu-nearfar", source=0, hops=1, delta=1e15)
    assert rec["input"]["last_local_rounds"] == 8


def test_the_level_synchronous_kernel_is_compiled_without_the_local_hops():
    """hops 0 runs a kernel without the rounds' shared buffers (as before they existed); any
    hops > 0 one other kernel, the same for every value (a sweep over hops compiles two)."""
    from numba import cuda

    from kernels.algorithms.traversal.frontier_loop import FrontierLoopTraversal
    from kernels.operators.views import upload_csr

    g = weighted_grid()
    view = upload_csr(g, weights=True)
    kernels = {}
    for hops in (0, 2, 9):
        runner = FrontierLoopTraversal("sssp", "csr", weighted=True, hops=hops, delta=20.0)
        out = cuda.device_array(view.n_vertices, np.float64)
        runner.run(view, 24, out)
        kernels[hops] = runner.last_kernel
        assert runner.last_run["hops"] == hops
        assert (runner.last_run["local_rounds"] > 0) == (hops > 0)
    assert kernels[0] is not kernels[2] and kernels[2] is kernels[9]


def test_block_local_hops_take_fewer_grid_levels():
    g = weighted_grid(9)
    flat = run(g, "sssp", "gpu-nearfar", source=40, hops=0, delta=1e15)["input"]["last_iterations"]
    hopped = run(g, "sssp", "gpu-nearfar", source=40, hops=1000, delta=1e15)["input"]["last_iterations"]
    assert hopped < flat


@pytest.mark.parametrize("variant,extra", SSSP_VARIANTS, ids=IDS)
def test_block_local_hops_on_a_directed_and_a_disconnected_graph(variant, extra):
    rec = run(two_components_and_isolated(), "sssp", variant, source=5, hops=5, delta=3.0, **extra)
    assert rec["result"]["reached"] == 19
    g = read_graph(data_path("rMatGraph_J_5_100.mtx"))
    rng = np.random.default_rng(4)
    run(g.with_(weights=rng.uniform(0, 3, g.nnz)), "sssp", variant, source=0, delta=0.7, hops=3, **extra)


@pytest.mark.parametrize("bad", [-1, "many", 1.5])
def test_a_bad_hops_is_refused_naming_it(bad):
    with pytest.raises(ParameterError) as err:
        run_variant(weighted_grid(), "sssp", "gpu-nearfar", {"hops": bad}, repeat=1, warmup=0)
    assert "hops" in str(err.value)


def test_the_hops_rule_follows_the_depth_of_the_search():
    assert sssp_hops(entries=6_000_000, hop_eccentricity=1250).value == HOPS_DEEP == 16   # a 2^20 mesh
    mid = sssp_hops(entries=200_000, hop_eccentricity=80)                                   # a 2^15 mesh
    assert mid.value == HOPS_MID == 4 and "80 levels deep" in mid.reason
    shallow = sssp_hops(entries=100_000, hop_eccentricity=13)                               # as-caida
    assert shallow.value == 0 and "under 20" in shallow.reason
    heavy = sssp_hops(entries=30_000_000, hop_eccentricity=600)                             # 50,000 entries a level
    assert heavy.value == HOPS_DEEP
    assert sssp_hops(entries=30_000_000, hop_eccentricity=6).value == 0                     # R-MAT: heavy levels
    assert sssp_hops(entries=10, hop_eccentricity=0).value == 0                             # the source alone


def test_the_hops_rule_reads_the_prepared_problem():
    from kernels.algorithms.auto_rules import sssp_hops_rule
    from kernels.algorithms.registry import get_variant
    from kernels.algorithms.traversal.common import prepare_traversal
    from kernels.graph.generators import grid2d

    fam, var = get_variant("sssp", "gpu-nearfar")
    params = fam.resolve_params(var, {"source": 0})
    for side, hops in ((30, HOPS_MID), (8, 0)):          # corner to corner: 58 and 14 levels
        g = grid2d(side, side, seed=1, weights="uniform", weight_range=(1.0, 10.0))
        problem = prepare_traversal(g, params, weighted=True, what="SSSP")
        assert sssp_hops_rule(problem, params, "sim").value == hops


# ---- parameters and auto rules ----------------------------------------------------------

@pytest.mark.parametrize("family,variant,name,bad", [
    ("bfs", "gpu-do", "alpha", -1.0), ("bfs", "gpu-do", "beta", "many"), ("bfs", "gpu-do", "alpha", float("nan")),
    ("sssp", "gpu-nearfar", "delta", 0.0), ("sssp", "gpu-nearfar", "delta", float("inf")),
    ("sssp", "gpu-nearfar-slotted", "delta", "-3")])
def test_a_bad_threshold_or_delta_is_refused_naming_it_and_what_is_allowed(family, variant, name, bad):
    g = read_graph(data_path("karate.mtx"))
    with pytest.raises(ParameterError) as err:
        run_variant(g, family, variant, {name: bad}, repeat=1, warmup=0)
    text = str(err.value)
    assert name in text and "auto" in text and "a number" in text


def test_the_direction_rule_follows_the_work_per_level_and_the_reach_and_says_why():
    power_law = dict(entries=1 << 24, hop_eccentricity=6)                # ~2.8 M entries a level
    alpha, beta = bfs_direction_thresholds(False, **power_law, reached=1000, with_edges=1000)
    assert (alpha.value, beta.value) == (DO_ALPHA, DO_BETA) == (8.0, 96.0)
    assert "1/8 " in alpha.reason and "1/96" in beta.reason
    mesh, _ = bfs_direction_thresholds(False, entries=6_000_000, hop_eccentricity=1000, reached=1000,
                                       with_edges=1000)                  # 6,000 entries a level
    assert mesh.value == DO_ALPHA_SHALLOW_WORK == 2.0 and "latency" in mesh.reason
    # a source that leaves 5 % unreached: bottom-up steps would rescan them, so back to top-down early
    _, early = bfs_direction_thresholds(False, **power_law, reached=950, with_edges=1000)
    assert early.value == 3.0 and "50 of 1,000" in early.reason
    _, few = bfs_direction_thresholds(False, **power_law, reached=990, with_edges=1000)
    assert few.value == 96.0                                              # 1 % unreached: the usual value
    assert "unused" in bfs_direction_thresholds(True, **power_law, reached=1000, with_edges=1000)[0].reason


def test_the_direction_rule_reads_the_prepared_problem():
    g = read_graph(data_path("karate.mtx"))
    rec = run_variant(g, "bfs", "gpu-do", {"source": 0}, repeat=1, warmup=0).record
    assert (rec["resolved_params"]["alpha"], rec["resolved_params"]["beta"]) == (2.0, 96.0)   # small, connected
    assert "per level of the source's BFS" in " ".join(rec["notices"])


def test_the_delta_rule_widens_buckets_where_levels_dominate_and_follows_the_weights():
    rng = np.random.default_rng(0)
    w = rng.uniform(1, 10, 6000)                                          # mean weight 5.5
    mesh = sssp_delta(w, entries=6_000_000, hop_eccentricity=1000)        # 6,000 entries a level
    power_law = sssp_delta(w, entries=30_000_000, hop_eccentricity=6)     # 5 M entries a level
    assert mesh.value == pytest.approx(5.5 * 64, rel=0.05) and "levels dominate" in mesh.reason
    assert power_law.value == pytest.approx(5.5 * 0.5, rel=0.05) and "relaxations dominate" in power_law.reason
    assert sssp_delta(w * 100, entries=6_000_000, hop_eccentricity=1000).value == pytest.approx(mesh.value * 100)
    assert sssp_delta(np.zeros(10), entries=10, hop_eccentricity=1).value == 1.0
    assert sssp_delta(w, entries=10, hop_eccentricity=0).value == pytest.approx(5.5 * 64, rel=0.05)  # source alone
    assert "mean positive weight" in mesh.reason


def test_the_delta_rule_reads_the_source_depth_prepare_measured():
    from kernels.graph.generators import grid2d

    g = grid2d(12, 12, seed=1, weights="uniform", weight_range=(1.0, 10.0))
    rec = run_variant(g, "sssp", "gpu-nearfar", {"source": 0}, repeat=1, warmup=0).record
    assert "depth 22" in " ".join(rec["notices"])                        # corner to corner of a 12 x 12 grid
    assert rec["verified"]


def test_a_sweep_grid_of_the_thresholds_is_seven_by_seven():
    from kernels.algorithms.registry import families

    var = families()["bfs"].variants["gpu-do"]
    params = {p.name: p for p in var.params}
    assert len(params["alpha"].grid_values()) == 7 and len(params["beta"].grid_values()) == 7
    assert DO_ALPHA in params["alpha"].grid_values() and DO_BETA in params["beta"].grid_values()


# ---- on a GPU -------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("name", ["delaunay_n15.mtx", "as-caida20071105.mtx", "power.mtx", "ca-HepTh.mtx"])
@pytest.mark.parametrize("variant,extra", [("gpu-do", {}), ("gpu-do-slotted", {})], ids=IDS)
@pytest.mark.parametrize("thresholds", [{}, ALWAYS_BOTTOM_UP, BACK_AND_FORTH, {"alpha": 0.0}])
def test_do_bfs_on_the_gpu(name, variant, extra, thresholds):
    run(read_graph(data_path(name)), "bfs", variant, source=3, **thresholds, **extra)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["delaunay_n15.mtx", "as-caida20071105.mtx", "USAir97.mtx"])
@pytest.mark.parametrize("variant", ["gpu-nearfar", "gpu-nearfar-slotted"])
@pytest.mark.parametrize("delta", ["auto", 1e-6, 1.0, 1e12])
def test_nearfar_on_the_gpu(name, variant, delta):
    g = read_graph(data_path(name))
    if g.weights is None:
        g = g.with_(weights=np.random.default_rng(1).uniform(1, 10, g.nnz))
    run(g, "sssp", variant, source=3, delta=delta)


@pytest.mark.gpu
@pytest.mark.parametrize("family,variant", [("bfs", "gpu-do"), ("bfs", "gpu-do-slotted"), ("sssp", "gpu-nearfar"),
                                            ("sssp", "gpu-nearfar-slotted")])
def test_generated_rmat_on_the_gpu(family, variant):
    from kernels.inputs import load_input

    g = load_input("gen:rmat:scale=14,weights=uniform")
    run(g, family, variant, source=int(np.argmax(np.diff(g.indptr))))


def test_the_command_line_shows_gteps_with_its_edge_count_and_time(capsys):
    from kernels.cli import main

    code = main(["run", "bfs", "gpu-do", str(data_path("karate.mtx")), "--target", "sim", "--repeat", "1",
                 "--warmup", "0", "--param", "source=0"])
    out = capsys.readouterr().out
    assert code == 0
    line = next(x for x in out.splitlines() if "(GTEPS)" in x)
    assert "78 input edges of the reached component (undirected edges once) / " in line and line.endswith(" ms")


@pytest.mark.parametrize("family,variant", [("bfs", "gpu-do-slotted"), ("sssp", "gpu-nearfar-slotted")])
def test_live_pages_after_a_split_and_a_vertex_removal(family, variant):
    """A document's live pages after edits (a page split, a removed vertex: an id no page holds,
    lists moved between pages): the bottom-up page filter and the near-far pile still agree with
    SciPy on the edited graph."""
    from kernels.compute.live import LiveDocument
    from tests.test_live_documents import Editor, check_run, edit_rounds, expected_dirty, karate

    ed = Editor(karate())
    arrays, revision = ed.journal.snapshot()
    doc = LiveDocument("doc", arrays, revision, name="karate", verify_deltas=True)
    params = {"source": 0, **(ALWAYS_BOTTOM_UP if family == "bfs" else {"delta": 0.7})}
    doc.run(family, variant, params, target="sim", repeat=1, warmup=0)
    ed.graph.mark_synced()
    rounds = edit_rounds(ed)
    for _ in range(2):                      # the split, then the removal of vertex 5 and a re-weighting
        _, edit = next(rounds)
        edit()
    expected = expected_dirty(ed.unsynced, ed.graph)
    doc.apply(ed.unsynced, ed.journal.revision)
    result = doc.run(family, variant, params, target="sim", repeat=1, warmup=0)
    assert result.record["verified"], result.record["verification"]
    check_run(result.record, result.output, ed, family, 0, expected)
    if family == "bfs":
        assert "B" in result.record["input"]["last_steps"]


@pytest.mark.parametrize("variant,extra", BFS_VARIANTS, ids=IDS)
def test_thread_per_vertex_balance_too(variant, extra):
    """balance=tpv: chunks of 8 neighbours a thread instead of a group's (the top-down steps)."""
    run(read_graph(data_path("dolphins.mtx")), "bfs", variant, source=3, balance="tpv", **BACK_AND_FORTH, **extra)
    far = SSSP_VARIANTS[IDS.index("slotted" if "slotted" in variant else "csr")]
    run(read_graph(data_path("USAir97.mtx")), "sssp", far[0], source=3, balance="tpv", delta=0.05, **far[1])


def test_a_traced_frontier_run_gives_the_same_levels_and_a_row_per_level():
    """The diagnostic trace (``trace_levels``, benchmarks/diag/frontier_trace.py): the traced
    kernel labels as the untraced one, on CSR and on slotted pages, and ``level_trace`` gives
    every level a row, with a conversion time only where the direction switched."""
    from numba import cuda

    from kernels.algorithms.traversal.frontier_loop import FrontierLoopTraversal, level_trace
    from kernels.graph.device import DeviceMirror
    from kernels.graph.slotted import SlottedGraph
    from kernels.operators.views import slotted_view, upload_csr

    g = read_graph(data_path("karate.mtx"))
    views = {"csr": upload_csr(g), "slotted": slotted_view(DeviceMirror(SlottedGraph.from_csr(g, page_size=16)))}
    for kind, view in views.items():
        answers = []
        for trace_levels in (0, 40):
            loop = FrontierLoopTraversal("bfs", kind, alpha=1e6, beta=0.0, trace_levels=trace_levels)
            out = cuda.device_array(g.n_rows, np.int32)
            loop.run(view, 0, out)
            answers.append(out.copy_to_host())
        assert np.array_equal(answers[0], answers[1])
        run = loop.last_run
        rows = level_trace(loop.trace, run["levels"])
        assert [r["level"] for r in rows] == list(range(run["levels"]))
        assert all(r["period"] >= r["work"] >= 0 for r in rows)
        steps = run["steps"]
        switched = {lv for lv in range(1, len(steps)) if steps[lv] != steps[lv - 1]}
        assert switched and all((r["convert"] > 0) == (r["level"] in switched) for r in rows), (steps, rows)


def test_a_traced_nearfar_run_stamps_its_local_rounds():
    """With ``hops`` a traced near-far run stamps each block before its local rounds (slot 1,
    between the level's start and its arrival) and notes the block's rounds (slot 3), which add
    up to the record's ``local_rounds`` (benchmarks/diag/nearfar_rounds.py reads them)."""
    from numba import cuda

    from kernels.algorithms.traversal.frontier_loop import FrontierLoopTraversal
    from kernels.operators.views import upload_csr

    g = weighted_grid()
    view = upload_csr(g, weights=True)
    loop = FrontierLoopTraversal("sssp", "csr", weighted=True, hops=3, delta=20.0, trace_levels=60)
    out = cuda.device_array(view.n_vertices, np.float64)
    loop.run(view, 24, out)
    run = loop.last_run
    stamps = loop.trace[:run["levels"]]
    with_rounds = stamps[:, :, 1] > 0
    assert with_rounds.any() and run["local_rounds"] > 0
    assert (stamps[with_rounds][:, 0] <= stamps[with_rounds][:, 1]).all()
    assert (stamps[with_rounds][:, 1] <= stamps[with_rounds][:, 2]).all()
    assert int(stamps[:, :, 3].sum()) == run["local_rounds"]
