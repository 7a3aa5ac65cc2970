"""The ``graphblas`` variants (SuiteSparse:GraphBLAS, the CPU baseline of issue 18): each equals
its family's reference on real graphs from tests/data and on generated ones; wrong outputs are
caught; without python-graphblas they say why and how to install it, and importing the
families never imports it."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from kernels.algorithms.registry import get_family, get_variant
from kernels.errors import TargetUnavailableError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph
from kernels.inputs import load_input
from kernels.run.runner import run_variant
from tests.conftest import data_path

pytest.importorskip("graphblas")

FAMILIES = ("spmv", "triangles", "bfs", "sssp")


def run(graph, family, **params):
    result = run_variant(graph, family, "graphblas", params, target="cpu", repeat=2, warmup=1)
    rec = result.record
    assert rec["verified"], rec["verification"]
    return result


# ---- SpMV ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["fp64", "fp32"])
@pytest.mark.parametrize("spec", ["lp_afiro.mtx", "west0067.mtx", "gen:rmat:scale=7,edge_factor=6,seed=2",
                                  "gen:stencil:kind=7pt,nx=5,ny=4,nz=3"])
def test_spmv_equals_scipy_in_both_precisions(spec, dtype):
    graph = read_graph(data_path(spec)) if not spec.startswith("gen:") else load_input(spec)
    result = run(graph, "spmv", dtype=dtype)
    assert result.output.dtype == np.dtype({"fp64": np.float64, "fp32": np.float32}[dtype])
    assert len(result.output) == graph.n_rows
    assert any("OpenMP thread" in n for n in result.record["notices"])


def test_spmv_sums_repeated_entries_and_fills_empty_rows_with_zero():
    # row 0: (0, 2) twice, unsorted with (0, 1); row 1 empty; rectangular 3 x 4
    indptr = np.array([0, 3, 3, 4], dtype=np.int64)
    indices = np.array([2, 1, 2, 3], dtype=np.int32)
    weights = np.array([1.5, -2.0, 0.25, 4.0])
    graph = CSRGraph(indptr, indices, weights, n_cols=4, directed=True, name="repeats")
    result = run(graph, "spmv")
    assert result.output[1] == 0.0


def test_a_wrong_spmv_output_is_caught():
    fam = get_family("spmv")
    graph = read_graph(data_path("lp_afiro.mtx"))
    params = fam.resolve_params(get_variant("spmv", "graphblas")[1], {})
    problem = fam.prepare(graph, params, 0)
    ref = fam.reference(problem, params)
    wrong = ref["y"].copy()
    wrong[3] += 1e-3 * (1 + abs(wrong[3]))
    assert not fam.verify(wrong, ref, problem, params).ok


# ---- triangles ------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["sandia-lut", "sandia-ll"])
@pytest.mark.parametrize("ordering", ["degree", "natural"])
@pytest.mark.parametrize("spec", ["karate.mtx", "celegans_metabolic.mtx", "west0067.mtx",
                                  "gen:rmat:scale=8,edge_factor=8,seed=3"])
def test_triangle_total_equals_the_reference(spec, method, ordering):
    graph = read_graph(data_path(spec)) if not spec.startswith("gen:") else load_input(spec)
    result = run(graph, "triangles", method=method, ordering=ordering)
    if spec == "karate.mtx":
        assert int(result.output) == 45


@pytest.mark.parametrize("spec", ["karate.mtx", "west0067.mtx", "gen:rmat:scale=7,edge_factor=8,seed=5"])
def test_triangles_per_vertex_equal_the_reference(spec):
    graph = read_graph(data_path(spec)) if not spec.startswith("gen:") else load_input(spec)
    result = run(graph, "triangles", per_vertex=True)
    assert int(result.output.sum()) // 3 == result.record["result"]["triangles"]


def test_a_graph_without_triangles_counts_zero():
    star = CSRGraph.from_edges(5, np.zeros(4, dtype=np.int64), np.arange(1, 5), directed=False,
                               both_directions=True, name="star")
    assert int(run(star, "triangles").output) == 0
    assert not run(star, "triangles", per_vertex=True).output.any()


# ---- BFS and SSSP -----------------------------------------------------------------------------

@pytest.mark.parametrize("spec,source", [("karate.mtx", 0), ("west0067.mtx", 5), ("GD98_c.mtx", 50),
                                         ("gen:rmat:scale=8,edge_factor=4,seed=1", 3)])
def test_bfs_levels_equal_scipy(spec, source):
    graph = read_graph(data_path(spec)) if not spec.startswith("gen:") else load_input(spec)
    result = run(graph, "bfs", source=source)
    assert result.output.dtype == np.int32
    assert result.record["result"]["reached"] == result.record["input"]["reached"]


def test_bfs_marks_unreachable_vertices_minus_one():
    # a path 0-1-2 and an isolated vertex 3
    graph = CSRGraph.from_edges(4, np.array([0, 1]), np.array([1, 2]), directed=False, both_directions=True,
                                name="path")
    assert run(graph, "bfs", source=0).output.tolist() == [0, 1, 2, -1]


@pytest.mark.parametrize("spec,source", [("karate.mtx", 5), ("USAir97.mtx", 0), ("GD98_c.mtx", 2),
                                         ("rMatGraph_J_5_100.mtx", 1), ("gen:rmat:scale=8,edge_factor=4,seed=1", 0)])
def test_sssp_distances_equal_scipy(spec, source):
    graph = read_graph(data_path(spec)) if not spec.startswith("gen:") else load_input(spec)
    run(graph, "sssp", source=source)


def test_sssp_on_a_directed_weighted_random_graph():
    rng = np.random.default_rng(4)
    n, m = 200, 1200
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    pairs = np.unique(src * n + dst)
    w = rng.uniform(0.0, 5.0, len(pairs)).round(1)   # rounded: zero weights happen
    graph = CSRGraph.from_edges(n, pairs // n, pairs % n, w, directed=True, name="weighted-directed")
    rec = run(graph, "sssp", source=3).record
    assert 0 < rec["result"]["reached"] <= n


def test_sssp_with_zero_weights_and_unreachable_vertices():
    src, dst = np.array([0, 1, 2, 0]), np.array([1, 2, 3, 3])
    w = np.array([0.0, 0.5, 0.0, 2.0])
    graph = CSRGraph.from_edges(5, src, dst, w, directed=True, name="zeros")
    assert run(graph, "sssp", source=0).output.tolist() == [0.0, 0.0, 0.5, 0.5, np.inf]


def test_a_wrong_bfs_output_is_caught():
    fam = get_family("bfs")
    graph = read_graph(data_path("karate.mtx"))
    params = fam.resolve_params(get_variant("bfs", "graphblas")[1], {"source": 0})
    problem = fam.prepare(graph, params, 0)
    ref = fam.reference(problem, params)
    wrong = ref.copy()
    wrong[7] += 1
    assert not fam.verify(wrong, ref, problem, params).ok


# ---- without python-graphblas ---------------------------------------------------------------

@pytest.mark.parametrize("family", FAMILIES)
def test_without_graphblas_the_variant_says_how_to_install_it(family, monkeypatch):
    monkeypatch.setitem(sys.modules, "graphblas", None)   # `import graphblas` now fails
    _, variant = get_variant(family, "graphblas")
    reason = variant.available()
    assert reason == "python-graphblas is not installed: pip install 'gpu-graph-explorer[graphblas]'"
    graph = read_graph(data_path("karate.mtx"))
    with pytest.raises(TargetUnavailableError, match="python-graphblas is not installed"):
        run_variant(graph, family, "graphblas", {}, target="cpu", repeat=1, warmup=0)


def test_listing_the_families_does_not_import_graphblas():
    code = ("import sys; from kernels.algorithms.registry import families\n"
            "names = [v.name for f in families().values() for v in f.variants.values()]\n"
            "assert 'graphblas' in names, names\n"
            "assert 'graphblas' not in sys.modules, 'graphblas imported at module load'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
