"""All-pairs shortest paths: CPU and SciPy variants, input rules, negative cycles, memory refusals.

Every run goes through ``run_variant``, which verifies the output against SciPy; SciPy itself
is checked against NetworkX here, and paths are rebuilt from predecessor matrices by hand.
GPU variants under the simulator are in ``test_apsp_gpu_sim.py``.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from kernels.algorithms.apsp import NegativeCycleError
from kernels.algorithms.apsp import memory as apsp_memory
from kernels.algorithms.apsp import verification as apsp_verification
from kernels.algorithms.registry import get_family, get_variant
from kernels.cli import main
from kernels.errors import ConstraintError, InputRequirementError, ResourceLimitError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph
from kernels.run.runner import run_variant
from tests.conftest import data_path

CPU_VARIANTS = ("cpu-dijkstra", "cpu-dijkstra-parallel", "cpu-fw", "cpu-fw-parallel")
FW_HOST_VARIANTS = ("cpu-fw", "cpu-fw-parallel", "scipy")
DIJKSTRA_HOST_VARIANTS = ("cpu-dijkstra", "cpu-dijkstra-parallel")


def load(name: str, *, absolute: bool = False) -> CSRGraph:
    g = read_graph(data_path(name))
    if absolute:
        g = g.with_(weights=np.abs(g.weights), name=f"{g.name}-abs")
    return g


def random_graph(n: int, p: float, *, directed: bool, seed: int, zero_fraction: float = 0.1) -> CSRGraph:
    """G(n, p) with weights uniform in [0, 10), some exactly zero; both directions of an
    undirected edge carry the same weight."""
    rng = np.random.default_rng(seed)
    upper = rng.random((n, n)) < p
    np.fill_diagonal(upper, False)
    if not directed:
        upper = np.triu(upper)
    src, dst = np.nonzero(upper)
    w = rng.uniform(0.0, 10.0, len(src))
    w[rng.random(len(src)) < zero_fraction] = 0.0
    return CSRGraph.from_edges(n, src, dst, w, directed=directed, both_directions=not directed,
                               name=f"random_n{n}_p{p}_{'d' if directed else 'u'}{seed}")


def networkx_distances(g: CSRGraph) -> np.ndarray:
    """Floyd–Warshall of NetworkX on the same graph (parallel edges: the lightest counts)."""
    nxg = nx.DiGraph()
    nxg.add_nodes_from(range(g.n_rows))
    weights = g.weights if g.weights is not None else np.ones(g.nnz)
    for u, v, w in zip(g.row_of_entry().tolist(), g.indices.tolist(), weights.tolist(), strict=True):
        if u == v and w >= 0:
            continue
        if not nxg.has_edge(u, v) or w < nxg[u][v]["weight"]:
            nxg.add_edge(u, v, weight=w)
    return nx.floyd_warshall_numpy(nxg, nodelist=range(g.n_rows))


def run(graph, variant, **params):
    result = run_variant(graph, "apsp", variant, params, repeat=1, warmup=0)
    assert result.record["verified"], result.record["verification"]
    return result


def rebuild_lengths(dist: np.ndarray, pred: np.ndarray, graph: CSRGraph) -> np.ndarray:
    """Walk every predecessor chain back to its source, summing the lightest edge weights."""
    n = dist.shape[0]
    lightest = {}
    weights = graph.weights if graph.weights is not None else np.ones(graph.nnz)
    for u, v, w in zip(graph.row_of_entry().tolist(), graph.indices.tolist(), weights.tolist(), strict=True):
        lightest[u, v] = min(w, lightest.get((u, v), np.inf))
    lengths = np.full((n, n), np.inf)
    for i in range(n):
        for j in range(n):
            if not np.isfinite(dist[i, j]):
                assert pred[i, j] == -1
                continue
            total, v, hops = 0.0, j, 0
            while v != i:
                p = int(pred[i, v])
                total += lightest[p, v]  # KeyError: the predecessor is not joined to v by an edge
                v = p
                hops += 1
                assert hops <= n, f"predecessor chain from {j} does not reach source {i}"
            lengths[i, j] = total
    return lengths


# ---- the reference and the CPU variants on real graphs -------------------------------------

@pytest.mark.parametrize("name,absolute", [("karate.mtx", False), ("USAir97.mtx", False),
                                           ("west0067.mtx", True)])
def test_scipy_reference_equals_networkx(name, absolute):
    g = load(name, absolute=absolute)
    result = run(g, "scipy")
    np.testing.assert_allclose(result.output, networkx_distances(g), rtol=1e-12)


@pytest.mark.parametrize("name,absolute", [("karate.mtx", False), ("dolphins.mtx", False),
                                           ("USAir97.mtx", False), ("LFAT5.mtx", True), ("west0067.mtx", True)])
@pytest.mark.parametrize("variant", CPU_VARIANTS)
def test_cpu_variants_equal_scipy_on_real_graphs(name, absolute, variant):
    g = load(name, absolute=absolute)
    result = run(g, variant)
    dist = result.output
    assert dist.shape == (g.n_rows, g.n_rows) and dist.dtype == np.float64
    assert np.all(np.diagonal(dist) == 0)
    if name == "LFAT5.mtx":  # three components: some pairs stay unreachable
        assert np.isinf(dist).any()
        assert any("self-loop" in n for n in result.record["notices"])


@pytest.mark.parametrize("n,p", [(60, 0.5), (150, 0.01)])
@pytest.mark.parametrize("directed", [True, False])
def test_cpu_variants_on_random_graphs_with_zero_weights(n, p, directed):
    g = random_graph(n, p, directed=directed, seed=n + directed)
    expected = networkx_distances(g)
    if p == 0.01:
        assert np.isinf(expected).any(), "the sparse case should be disconnected"
    for variant in CPU_VARIANTS + ("scipy",):
        np.testing.assert_allclose(run(g, variant).output, expected, rtol=1e-12, err_msg=variant)


def test_fp32_runs_return_float32_within_the_documented_tolerance():
    g = random_graph(80, 0.1, directed=True, seed=5)
    for variant in ("cpu-dijkstra", "cpu-fw-parallel", "scipy"):
        result = run(g, variant, dtype="fp32")
        assert result.output.dtype == np.float32
        if variant != "scipy":
            assert "tolerance 3.8e-05" in result.record["verification"]["detail"]  # 4 * 79 * eps32


def test_negative_edges_without_negative_cycle_work_for_floyd_warshall():
    # a DAG: negative weights but no cycle at all
    rng = np.random.default_rng(3)
    n = 40
    src, dst = np.nonzero(np.triu(rng.random((n, n)) < 0.2, k=1))
    w = rng.uniform(-5, 5, len(src))
    g = CSRGraph.from_edges(n, src, dst, w, directed=True, name="dag")
    expected = networkx_distances(g)
    for variant in FW_HOST_VARIANTS:
        np.testing.assert_allclose(run(g, variant).output, expected, rtol=1e-12, atol=1e-12)
    for variant in DIJKSTRA_HOST_VARIANTS:
        with pytest.raises(InputRequirementError, match="non-negative"):
            run_variant(g, "apsp", variant, repeat=1)


# ---- input rules ---------------------------------------------------------------------------

def test_duplicates_take_the_lightest_weight_and_loops_are_ignored():
    src = [0, 0, 1, 1, 2]
    dst = [1, 1, 2, 1, 0]
    w = [5.0, 2.0, 1.0, 3.0, 4.0]  # 0->1 twice (5 and 2), a self-loop 1->1
    g = CSRGraph.from_edges(3, src, dst, w, directed=True, name="dups")
    for variant in ("cpu-fw", "cpu-dijkstra", "scipy"):
        result = run(g, variant)
        assert result.output[0, 1] == 2.0 and result.output[0, 2] == 3.0 and result.output[1, 1] == 0.0
    notices = " ".join(result.record["notices"])
    assert "1 duplicate entry merged" in notices and "smallest weight" in notices
    assert "1 self-loop of non-negative weight ignored" in notices


def test_unweighted_edges_weigh_one():
    g = CSRGraph.from_edges(4, [0, 1, 2], [1, 2, 3], directed=True, name="path")
    result = run(g, "cpu-dijkstra")
    assert result.output[0].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert np.isinf(result.output[3, 0])
    assert "every edge weighs 1" in " ".join(result.record["notices"])


def test_max_vertices_uses_the_induced_subgraph_with_a_notice():
    g = load("USAir97.mtx")
    result = run(g, "cpu-fw", max_vertices=50)
    sub = g.to_scipy()[:50, :50]
    expected = networkx_distances(CSRGraph.from_scipy(sub, directed=True, name="sub"))
    np.testing.assert_allclose(result.output, expected, rtol=1e-12)
    assert any("first 50 of 332 vertices" in n for n in result.record["notices"])


# ---- predecessors --------------------------------------------------------------------------

@pytest.mark.parametrize("variant", CPU_VARIANTS + ("scipy",))
def test_predecessors_rebuild_paths_of_the_reported_length(variant):
    g = random_graph(40, 0.08, directed=True, seed=11)
    result = run(g, variant, predecessors=True)
    dist, pred = result.output["dist"], result.output["pred"]
    assert pred.dtype == np.int32 and np.all(np.diagonal(pred) == -1)
    lengths = rebuild_lengths(dist, pred, g)
    np.testing.assert_allclose(lengths, dist, rtol=1e-12, atol=1e-12)


def test_verification_catches_a_wrong_distance_and_a_wrong_predecessor():
    g = random_graph(30, 0.2, directed=True, seed=2)
    fam = get_family("apsp")
    good = run(g, "cpu-fw", predecessors=True)
    params = fam.resolve_params(fam.variant("cpu-fw"), {"predecessors": True})
    problem = fam.prepare(g, params, 0)
    ref = fam.reference(problem, params)
    assert fam.verify(good.output, ref, problem, params).ok

    wrong = {"dist": good.output["dist"].copy(), "pred": good.output["pred"].copy()}
    i, j = np.argwhere(np.isfinite(wrong["dist"]) & (wrong["dist"] > 0))[0]
    wrong["dist"][i, j] *= 1.001
    check = fam.verify(wrong, ref, problem, params)
    assert not check.ok and check.worst[0]["source"] == i and check.worst[0]["target"] == j

    wrong = {"dist": good.output["dist"], "pred": good.output["pred"].copy()}
    far = np.argwhere(np.isfinite(wrong["dist"]) & (wrong["pred"] >= 0) & (wrong["pred"] != np.arange(30)[:, None]))
    i, j = far[0]
    wrong["pred"][i, j] = j  # not an edge j -> j, and a cycle
    check = fam.verify(wrong, ref, problem, params)
    assert not check.ok and "predecessor" in check.detail

    unreachable = {"dist": good.output["dist"].copy(), "pred": good.output["pred"]}
    finite = np.argwhere(np.isfinite(unreachable["dist"]) & (unreachable["dist"] > 0))[0]
    unreachable["dist"][tuple(finite)] = np.inf
    assert not fam.verify(unreachable, ref, problem, params).ok


def test_reference_samples_rows_when_the_full_reference_is_too_costly(monkeypatch):
    monkeypatch.setattr(apsp_verification, "REFERENCE_BUDGET_S", 1e-9)
    monkeypatch.setattr(apsp_verification, "MIN_SAMPLED_ROWS", 8)
    g = random_graph(60, 0.1, directed=True, seed=4)
    fam = get_family("apsp")
    params = fam.resolve_params(fam.variant("cpu-fw"), {})
    problem = fam.prepare(g, params, 0)
    ref = fam.reference(problem, params)
    assert ref["rows"] is not None and 8 <= len(ref["rows"]) < 60
    out = run_variant(g, "apsp", "cpu-fw", repeat=1).output
    check = fam.verify(out, ref, problem, params)
    assert check.ok and "sampled source rows" in check.detail
    bad = out.copy()
    bad[ref["rows"][1], :] += 1.0
    assert not fam.verify(bad, ref, problem, params).ok


# ---- negative cycles -----------------------------------------------------------------------

def _assert_real_negative_cycle(err: NegativeCycleError, g: CSRGraph):
    cycle = err.cycle
    assert cycle, "a cycle is named"
    total = 0.0
    for a, b in zip(cycle, cycle[1:] + cycle[:1], strict=True):
        row = slice(g.indptr[a], g.indptr[a + 1])
        hits = g.indices[row] == b
        assert hits.any(), f"{a} -> {b} is not an edge"
        total += g.weights[row][hits].min()
    assert total < 0 and np.isclose(total, err.weight)
    assert str(cycle[0]) in str(err)


@pytest.mark.parametrize("variant", FW_HOST_VARIANTS)
def test_negative_cycle_is_reported_with_a_real_cycle(variant):
    g = load("west0067.mtx")
    with pytest.raises(NegativeCycleError) as info:
        run_variant(g, "apsp", variant, repeat=1)
    _assert_real_negative_cycle(info.value, g)


def test_negative_cycle_named_even_when_the_first_negative_diagonal_is_off_the_cycle():
    # 0 <-> 1 (weight 1 each way), 1 <-> 2 is the negative cycle (-5 + 1); 0 only leads to it
    g = CSRGraph.from_edges(3, [0, 1, 1, 2], [1, 0, 2, 1], [1.0, 1.0, -5.0, 1.0], directed=True, name="lead-in")
    with pytest.raises(NegativeCycleError) as info:
        run_variant(g, "apsp", "cpu-fw", repeat=1)
    assert info.value.cycle == [1, 2] and info.value.weight == -4.0
    assert "1 -> 2 -> 1" in str(info.value)


def test_negative_self_loop_and_negative_undirected_edge_are_negative_cycles():
    loop = CSRGraph.from_edges(3, [0, 1, 1], [1, 1, 2], [1.0, -0.5, 1.0], directed=True, name="loop")
    with pytest.raises(NegativeCycleError, match=r"1 -> 1"):
        run_variant(loop, "apsp", "cpu-fw-parallel", repeat=1)
    with pytest.raises(NegativeCycleError, match=r"1 -> 1"):
        run_variant(loop, "apsp", "scipy", repeat=1)
    edge = CSRGraph.from_edges(3, [0, 1], [1, 2], [2.0, -1.0], directed=False, both_directions=True, name="u")
    with pytest.raises(NegativeCycleError, match="undirected edge of negative weight"):
        run_variant(edge, "apsp", "cpu-fw", repeat=1)


def test_cli_reports_a_negative_cycle_in_one_line_and_exits_1(capsys):
    code = main(["run", "apsp", "cpu-fw", str(data_path("west0067.mtx"))])
    err = capsys.readouterr().err.strip()
    assert code == 1
    assert len(err.splitlines()) == 1 and "negative cycle" in err and " -> " in err


def test_cli_writes_distances_and_predecessors(tmp_path, capsys):
    out = tmp_path / "apsp.npz"
    code = main(["run", "apsp", "cpu-dijkstra", str(data_path("karate.mtx")), "--predecessors",
                 "--output", str(out), "--repeat", "1"])
    assert code == 0 and "verified  yes" in capsys.readouterr().out
    saved = np.load(out)
    assert saved["dist"].shape == (34, 34) and saved["pred"].shape == (34, 34)


# ---- memory refusals -----------------------------------------------------------------------

def _empty_graph(n: int) -> CSRGraph:
    return CSRGraph(np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int32), directed=True, name="huge")


def test_a_matrix_that_cannot_fit_is_refused_before_allocation():
    n = 3_000_000  # 72 TB of fp64 distances
    with pytest.raises(ResourceLimitError, match=r"needs 65\.5 TiB of host memory.*max_vertices"):
        run_variant(_empty_graph(n), "apsp", "cpu-fw", repeat=1)


def test_host_memory_refusal_names_a_cap_that_fits(monkeypatch):
    monkeypatch.setattr(apsp_memory, "available_host_bytes", lambda: 10 * 2**20)
    with pytest.raises(ResourceLimitError) as info:
        run_variant(_empty_graph(5000), "apsp", "cpu-dijkstra", {"predecessors": True}, repeat=1)
    text = str(info.value)
    assert "286.1 MiB" in text and "predecessor" in text  # 5000² x (8 + 4) bytes
    cap = int(text.split("N <= ")[1].split(" ")[0].replace(",", ""))
    assert cap == 886  # sqrt(0.9 x 10 MiB / 12 bytes)
    run_variant(_empty_graph(5000), "apsp", "cpu-dijkstra", {"max_vertices": cap, "predecessors": True}, repeat=1)


def test_floyd_warshall_counts_its_working_copy(monkeypatch):
    # enough for the result (8 n² bytes) but not for the initial + working matrices (16 n²)
    n = 2000
    monkeypatch.setattr(apsp_memory, "available_host_bytes", lambda: int(12 * n * n / apsp_memory.HOST_HEADROOM))
    with pytest.raises(ResourceLimitError, match="cpu-fw.*initial and the working"):
        run_variant(_empty_graph(n), "apsp", "cpu-fw", repeat=1)


# ---- registry metadata ---------------------------------------------------------------------

def test_tile_constraints_are_declared():
    fam, blocked = get_variant("apsp", "gpu-fw-blocked")
    with pytest.raises(ConstraintError, match="at least one tile element"):
        fam.resolve_params(blocked, {"tile": 8, "warps_per_block": 4})
    with pytest.raises(ConstraintError, match="registers"):
        fam.resolve_params(blocked, {"tile": 64, "warps_per_block": 1})
    with pytest.raises(ConstraintError, match="shared memory"):
        fam.resolve_params(blocked, {"tile": 64, "warps_per_block": 8, "dtype": "fp64"})
    assert fam.resolve_params(blocked, {"tile": 64, "warps_per_block": 8, "dtype": "fp32"})["tile"] == 64
    fam, staged = get_variant("apsp", "gpu-fw-staged")
    with pytest.raises(ConstraintError, match="stage <= tile"):
        fam.resolve_params(staged, {"tile": 16, "stage": 32, "warps_per_block": 1})
