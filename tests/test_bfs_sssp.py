"""BFS and SSSP families: every variant equals SciPy on real graphs from tests/data and on
generated ones (disconnected, directed, weighted with zero weights, sources without edges),
the GPU variants under the CUDA simulator, also on slotted pages before and after random
edits; input and parameter refusals; ``graph-kernels run bfs ... --output levels.npy``."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

from kernels.algorithms.registry import get_family
from kernels.algorithms.traversal.gpu_bfs import GpuBfs
from kernels.algorithms.traversal.gpu_sssp import GpuSssp
from kernels.algorithms.traversal.reference import bfs_levels, sssp_distances
from kernels.cli import main
from kernels.dynamic import random_edit_batch
from kernels.errors import InputRequirementError, ParameterError
from kernels.graph.csr import CSRGraph
from kernels.graph.device import DeviceMirror
from kernels.graph.io import read_graph
from kernels.graph.slotted import SlottedGraph
from kernels.operators.views import slotted_view, upload_csr
from kernels.run.runner import run_variant
from tests.conftest import data_path

SMALL = 32   # threads per block under the simulator

# the default loop is the device loop (tests/test_traversal_device_loop.py); the host loop keeps
# a lb and a tpv case of each view here
BFS_GPU = [("gpu-csr", {"balance": "lb", "direction": "optimizing", "loop": "host"}),
           ("gpu-csr", {"balance": "tpv", "direction": "push"}),
           ("gpu-slotted", {"page_size": 16, "balance": "lb", "direction": "optimizing"}),
           ("gpu-slotted", {"page_size": 32, "balance": "tpv", "direction": "push", "loop": "host"})]
SSSP_GPU = [("gpu-csr", {"balance": "lb", "loop": "host"}), ("gpu-slotted", {"page_size": 16, "balance": "lb"}),
            ("gpu-slotted", {"page_size": 16, "balance": "tpv", "loop": "host"})]


def run(graph, family, variant, **params):
    if variant.startswith("gpu"):
        params.setdefault("block", SMALL)
    rec = run_variant(graph, family, variant, params, repeat=1, warmup=0).record
    assert rec["verified"], rec["verification"]
    return rec


def two_components_and_isolated(weighted: bool = False) -> CSRGraph:
    """A path 0-1-2-3, a triangle 4-5-6 with a tail 6-7, and isolated vertices 8, 9."""
    src = np.array([0, 1, 2, 4, 5, 6, 6])
    dst = np.array([1, 2, 3, 5, 6, 4, 7])
    w = np.array([0.5, 0.0, 2.0, 1.0, 1.5, 4.0, 0.25]) if weighted else None
    return CSRGraph.from_edges(10, src, dst, w, directed=False, both_directions=True, name="two-components")


def weighted_random(n: int, m: int, seed: int, *, directed: bool) -> CSRGraph:
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    if not directed:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    pairs = np.unique(src * n + dst)
    w = rng.uniform(0.0, 5.0, len(pairs)).round(2)   # rounded: zero weights happen
    w[::7] = 0.0
    return CSRGraph.from_edges(n, pairs // n, pairs % n, w, directed=directed, both_directions=not directed,
                               name=f"weighted-{'directed' if directed else 'undirected'}")


# ---- real graphs -----------------------------------------------------------------------------

@pytest.mark.parametrize("name,source", [("karate.mtx", 0), ("dolphins.mtx", 17), ("LFAT5.mtx", 3),
                                         ("chesapeake.mtx", 38), ("GD98_c.mtx", 50)])
@pytest.mark.parametrize("variant,params", BFS_GPU, ids=lambda x: x if isinstance(x, str) else "-".join(
    str(v) for v in x.values()))
def test_gpu_bfs_equals_scipy_on_real_graphs(name, source, variant, params):
    rec = run(read_graph(data_path(name)), "bfs", variant, source=source, **params)
    assert rec["result"]["reached"] == rec["input"]["reached"]


@pytest.mark.parametrize("name,source", [("karate.mtx", 5), ("rMatGraph_J_5_100.mtx", 1)])
@pytest.mark.parametrize("variant,params", SSSP_GPU, ids=lambda x: x if isinstance(x, str) else "-".join(
    str(v) for v in x.values()))
def test_gpu_sssp_equals_scipy_on_real_graphs(name, source, variant, params):
    run(read_graph(data_path(name)), "sssp", variant, source=source, **params)


def test_gpu_sssp_on_real_weights():
    rec = run(read_graph(data_path("USAir97.mtx")), "sssp", "gpu-slotted", source=0, page_size=64)
    assert rec["result"]["reached"] == 332


@pytest.mark.parametrize("family", ["bfs", "sssp"])
@pytest.mark.parametrize("variant", ["cpu-serial", "cpu-parallel", "scipy"])
@pytest.mark.parametrize("name", ["Erdos981.mtx", "rMatGraph_J_5_100.mtx", "USAir97.mtx"])
def test_cpu_variants_equal_scipy(family, variant, name):
    run(read_graph(data_path(name)), family, variant, source=2)


def test_gpu_bfs_on_a_directed_graph_falls_back_to_top_down():
    rec = run(read_graph(data_path("rMatGraph_J_5_100.mtx")), "bfs", "gpu-slotted", source=1, page_size=16)
    assert any("top-down only" in n for n in rec["notices"])
    assert rec["input"]["last_bottom_up_steps"] == 0


# ---- generated graphs ------------------------------------------------------------------------

@pytest.mark.parametrize("source", [0, 6, 9])   # 9 has no edges: only itself is reached
@pytest.mark.parametrize("variant,params", BFS_GPU[::2] + SSSP_GPU[1:2])
def test_disconnected_graphs_and_sources_without_edges(source, variant, params):
    family = "sssp" if "direction" not in params else "bfs"
    rec = run(two_components_and_isolated(weighted=family == "sssp"), family, variant, source=source, **params)
    assert rec["result"]["reached"] == {0: 4, 6: 4, 9: 1}[source]


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("variant", ["cpu-serial", "cpu-parallel", "gpu-csr", "gpu-slotted"])
def test_sssp_with_zero_weights(directed, variant):
    params = {"page_size": 16} if variant == "gpu-slotted" else {}
    run(weighted_random(40, 120, 1 + directed, directed=directed), "sssp", variant, source=3, **params)


def test_gpu_bfs_on_a_generated_rmat():
    from kernels.graph.generators import rmat

    g = rmat(7, 8, seed=3)
    for variant, params in BFS_GPU[:3]:
        rec = run(g, "bfs", variant, source=int(np.argmax(g.degrees())), **params)
        assert rec["metric"]["name"] == "GTEPS" and rec["metric"]["value"] > 0


def test_gteps_counts_the_edges_of_the_reached_part():
    g = two_components_and_isolated()
    rec = run(g, "bfs", "scipy", source=5)
    assert rec["input"]["traversed_edges"] == 4          # the triangle and its tail, each edge once
    assert rec["input"]["reached"] == 4


# ---- slotted pages before and after edits (the dynamic path) --------------------------------

@pytest.mark.parametrize("algorithm", ["bfs", "sssp"])
def test_live_pool_after_random_edit_rounds(algorithm):
    g = weighted_random(36, 90, 8, directed=False)
    s = SlottedGraph.from_csr(g, page_size=16)
    mirror = DeviceMirror(s)
    weighted = algorithm == "sssp"
    if algorithm == "bfs":
        runners = [GpuBfs("slotted", balance="lb", direction="optimizing", block=SMALL),
                   GpuBfs("csr", balance="tpv", direction="push", block=SMALL)]
    else:
        runners = [GpuSssp("slotted", weighted=True, balance="lb", block=SMALL),
                   GpuSssp("csr", weighted=True, balance="tpv", block=SMALL)]
    rng = np.random.default_rng(9)
    csr = s.to_csr()
    for _ in range(2 if weighted else 3):
        for runner in runners:
            view = slotted_view(mirror) if runner.kind == "slotted" else upload_csr(csr)
            out = cuda.device_array(view.n_vertices, np.float64 if weighted else np.int32)
            runner.run(view, 4, out)
            got = out.copy_to_host()
            if weighted:
                assert np.allclose(got, sssp_distances(csr, csr.weights, 4), rtol=1e-12, atol=0)
            else:
                assert np.array_equal(got, bfs_levels(csr, 4))
        rem_u, rem_v, add_u, add_v = random_edit_batch(csr, 12, rng)
        s.remove_edges(rem_u, rem_v)
        s.add_edges(add_u, add_v, rng.uniform(0, 3, len(add_u)))
        s.check_invariants()
        mirror.sync()
        csr = s.to_csr()


@pytest.mark.parametrize("kind", ["slotted", "csr"])
def test_alternating_directions_reach_a_hub_with_a_large_list(kind):
    """0 - {1..20} - hub 21 - {22..40}: the hub's list spans four 16-word pages; the BFS takes
    a bottom-up step for level 2 (the hub's lanes split its list) and top-down steps around it."""
    src = np.concatenate([np.zeros(20, np.int64), np.full(39, 21)])
    dst = np.concatenate([np.arange(1, 21), np.arange(1, 21), np.arange(22, 41)])
    g = CSRGraph.from_edges(41, src, dst, directed=False, both_directions=True)
    s = SlottedGraph.from_csr(g, page_size=16)
    assert s.page_stats()["large"].sum() >= 4
    view = slotted_view(DeviceMirror(s)) if kind == "slotted" else upload_csr(g)
    runner = GpuBfs(kind, balance="lb", direction="optimizing", block=SMALL)
    runner.alternate = True
    out = cuda.device_array(41, np.int32)
    runner.run(view, 0, out)
    assert np.array_equal(out.copy_to_host(), bfs_levels(g, 0))
    assert runner.last_run["bottom_up_steps"] >= 1 and runner.last_run["top_down_steps"] >= 2


# ---- refusals --------------------------------------------------------------------------------

def test_negative_weights_are_refused():
    with pytest.raises(InputRequirementError, match="non-negative"):
        run_variant(read_graph(data_path("LFAT5.mtx")), "sssp", "scipy", {"source": 0})


@pytest.mark.parametrize("family", ["bfs", "sssp"])
def test_source_out_of_range_names_the_allowed_range(family):
    with pytest.raises(ParameterError, match="from 0 to 33"):
        run_variant(read_graph(data_path("karate.mtx")), family, "cpu-serial", {"source": 34})


def test_rectangular_input_is_refused():
    with pytest.raises(InputRequirementError, match="square"):
        run_variant(read_graph(data_path("lp_afiro.mtx")), "bfs", "scipy", {})


def test_repeated_entries_are_dropped_keeping_the_lightest_for_sssp():
    g = CSRGraph.from_edges(3, [0, 0, 1], [1, 1, 2], [5.0, 2.0, 1.0], directed=True)
    result = run_variant(g, "sssp", "gpu-slotted", {"page_size": 16, "block": SMALL}, repeat=1, warmup=0)
    assert result.record["verified"]
    assert np.array_equal(result.output, [0.0, 2.0, 3.0])
    assert any("repeated" in n for n in result.record["notices"])


def test_family_parameters_are_declared_for_the_gui_and_the_cli():
    bfs = get_family("bfs").to_json()
    slotted = next(v for v in bfs["variants"] if v["name"] == "gpu-slotted")
    names = [p["name"] for p in slotted["params"]]
    assert names == ["page_size", "balance", "direction", "block", "loop"]
    assert [p["name"] for p in bfs["params"]] == ["source"]
    assert bfs["metrics"][0]["name"] == "GTEPS"


# ---- command line ----------------------------------------------------------------------------

def test_run_command_writes_the_levels(tmp_path):
    out = tmp_path / "levels.npy"
    code = main(["run", "bfs", "gpu-slotted", str(data_path("dolphins.mtx")), "--target", "sim", "--param",
                 "source=7", "--param", "block=32", "--param", "page_size=32", "--repeat", "1", "--warmup", "0",
                 "--output", str(out)])
    assert code == 0
    assert np.array_equal(np.load(out), bfs_levels(read_graph(data_path("dolphins.mtx")), 7))
