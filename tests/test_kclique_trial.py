"""k-clique ``work=auto`` by a measured trial (kernels/algorithms/kclique/trial.py), on the CUDA
simulator in CI (and on a GPU with GRAPH_KERNELS_TARGET=cuda): the sampled kernels count exactly the
cliques rooted at the sampled work items, the trial picks its fastest candidate and skips refusals,
and compile-ahead never runs one."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from kernels.algorithms import auto_rules
from kernels.algorithms.kclique import trial
from kernels.algorithms.kclique.gpu_exec import GpuCliqueExecution
from kernels.algorithms.kclique.prepare import orient, simple_undirected
from kernels.algorithms.registry import Problem, get_variant
from kernels.errors import ParameterError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph
from kernels.run.runner import run_variant
from tests.conftest import data_path

SIM = {"block_size": 32, "group_size": 4, "max_blocks": 4}


@pytest.fixture(autouse=True)
def _forget_trials():
    trial._chosen.clear()
    yield
    trial._chosen.clear()


def clique_graph(seed: int = 3) -> CSRGraph:
    """A random graph with planted cliques: every k = 3..5 has cliques on many roots."""
    g = nx.gnp_random_graph(60, 0.12, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(6):
        members = rng.choice(60, size=6, replace=False)
        g.add_edges_from(itertools.combinations(members.tolist(), 2))
    return CSRGraph.from_networkx(g, weight=None, name=f"planted-{seed}")


def rooted_counts(graph: CSRGraph, dag, k: int) -> tuple[dict, dict]:
    """Cliques of size k counted at their lowest-ranked vertex and at their lowest oriented edge
    (its two lowest-ranked vertices: the edge-centric kernel's item), from NetworkX's enumeration."""
    g = nx.Graph()
    g.add_nodes_from(range(graph.n_rows))
    src = np.repeat(np.arange(graph.n_rows), np.diff(graph.indptr))
    g.add_edges_from(zip(src.tolist(), graph.indices.tolist(), strict=True))
    by_vertex, by_edge = {}, {}
    for clique in nx.enumerate_all_cliques(g):
        if len(clique) < k:
            continue
        if len(clique) > k:
            break
        ids = sorted(int(dag.rank[v]) for v in clique)
        v, u = ids[0], ids[1]
        e = int(dag.indptr[v] + np.searchsorted(dag.indices[dag.indptr[v]:dag.indptr[v + 1]], u))
        by_vertex[v] = by_vertex.get(v, 0) + 1
        by_edge[e] = by_edge.get(e, 0) + 1
    return by_vertex, by_edge


@pytest.mark.parametrize("kind", ["vertex", "edge", "list"])
def test_a_sampled_search_counts_exactly_the_cliques_rooted_at_its_items(kind):
    graph = simple_undirected(clique_graph())
    dag = orient(graph, "degree")
    problem = Problem(graph, data={"oriented": dag})
    for k, step in ((3, 3), (4, 2), (5, 4)):
        by_vertex, by_edge = rooted_counts(graph, dag, k)
        rooted = by_edge if kind == "edge" else by_vertex
        total = dag.num_edges if kind == "edge" else dag.n
        execution = GpuCliqueExecution(problem, {"k": k, "per_vertex": False, **SIM}, "sim", kind, sample_step=step)
        first = (step - 1) // 2
        sampled = range(first, total, step)
        assert execution.items == len(sampled)
        execution.compile()
        execution.upload()
        execution.launch()
        got = execution.download()
        want = sum(rooted.get(i, 0) for i in sampled)
        assert want > 0 and want < sum(rooted.values())       # the sample is a real part of the work
        assert got == want, (kind, k, step)


def test_the_probe_and_decision_steps():
    assert trial.probe_step(2047) == 1                                       # under 2,048 vertices: whole
    assert trial.probe_step(2048) == 2
    assert trial.probe_step(32 * 1024) == trial.PROBE_MAX_STEP == 32         # 1/32 from 32,768 vertices
    assert trial.probe_step(10 ** 9) == 32
    assert trial.decision_step(0.9 * trial.WHOLE_BUDGET_S) == 1             # within the budget: whole
    assert trial.decision_step(4.5 * trial.WHOLE_BUDGET_S) == 5             # the largest sample within it


def prepared(k: int = 4, graph: CSRGraph | None = None):
    fam, var = get_variant("kclique", "gpu")
    graph = graph or clique_graph()
    params = fam.resolve_params(var, {"k": k, **SIM, "group_size": "auto"})
    return fam, var, fam.prepare(graph, params, 0), params


def fixed_times(table: dict):
    def seconds(execution, target, repeat):
        return table[execution.kind]
    return seconds


def test_every_candidate_searches_the_same_share_of_its_work():
    _, _, problem, params = prepared()
    times = trial.measure(problem, params, "sim", trial.KINDS, 7, 1, seconds=lambda execution, target, repeat: 1e-3)
    assert {t.step for t in times} == {7}
    for t in times:
        assert t.items == len(range(3, t.total, 7))


def test_the_probe_prunes_and_the_whole_search_decides(monkeypatch):
    monkeypatch.setattr(trial, "PROBE_MIN_ITEMS", 8)          # the 60-vertex graph: a probe of every 7th vertex
    _, _, problem, params = prepared()
    asked = []

    def seconds(execution, target, repeat):
        asked.append((execution.kind, execution.root_step, repeat))
        if execution.root_step == 7:        # the probe: edge looks fastest, list over 10x it, too costly all three
            return {"vertex": 2e-3, "edge": 1e-3, "list": 2e-2}[execution.kind]
        return {"vertex": 1e-3, "edge": 2e-3}[execution.kind]       # whole: vertex is faster
    choice = trial.choose(problem, params, "sim", seconds=seconds)
    assert choice.value == "vertex"
    assert {a for a in asked if a[1] == 1} == {("vertex", 1, trial.TRIAL_REPEAT), ("edge", 1, trial.TRIAL_REPEAT)}
    assert "list out" in choice.reason and "vertex 1.000 ms (whole)" in choice.reason


def test_nothing_is_pruned_when_every_candidate_fits_the_budget(monkeypatch):
    monkeypatch.setattr(trial, "PROBE_MIN_ITEMS", 8)
    _, _, problem, params = prepared()

    def seconds(execution, target, repeat):
        if execution.root_step == 7:        # the probe says list is 50x slower: it is not, and it is cheap
            return {"vertex": 1e-5, "edge": 1e-5, "list": 5e-4}[execution.kind]
        return {"vertex": 2e-3, "edge": 3e-3, "list": 1e-3}[execution.kind]
    assert trial.choose(problem, params, "sim", seconds=seconds).value == "list"


def test_expensive_contenders_are_decided_on_the_largest_sample_within_the_budget(monkeypatch):
    monkeypatch.setattr(trial, "PROBE_MIN_ITEMS", 2)           # a probe of every 30th vertex
    _, _, problem, params = prepared()
    steps = []

    def seconds(execution, target, repeat):
        steps.append((execution.root_step, repeat))
        return 0.01 if execution.kind != "list" else 0.012      # estimated 0.3-0.36 s each in full
    trial.choose(problem, params, "sim", seconds=seconds)
    assert steps[:3] == [(30, 1)] * 3
    assert steps[3:] == [(10, 1)] * 3                            # 0.96 s estimated: a tenth of it each


def test_the_trial_picks_the_fastest_candidate_and_says_every_time():
    _, _, problem, params = prepared()
    choice = trial.choose(problem, params, "sim", seconds=fixed_times({"vertex": 3e-3, "edge": 1e-3, "list": 2e-3}))
    assert choice.value == "edge"
    assert "vertex 3.000 ms" in choice.reason and "edge 1.000 ms" in choice.reason and "list 2.000 ms" in choice.reason
    other = trial.choose(problem, dict(params, k=5), "sim",
                         seconds=fixed_times({"vertex": 1e-3, "edge": 3e-3, "list": 2e-3}))
    assert other.value == "vertex"


def test_a_choice_is_remembered_for_the_same_input_and_parameters():
    _, _, problem, params = prepared()
    calls = []

    def seconds(execution, target, repeat):
        calls.append(execution.kind)
        return {"vertex": 2e-3, "edge": 3e-3, "list": 1e-3}[execution.kind]

    assert trial.choose(problem, params, "sim", seconds=seconds).value == "list"
    first = len(calls)
    assert first == 6                   # three probes, three whole searches (all within 3x of the fastest)
    again = trial.choose(problem, params, "sim", seconds=seconds)
    assert again.value == "list" and "remembered" in again.reason
    assert len(calls) == first
    trial.choose(problem, dict(params, block_size=64), "sim", seconds=seconds)   # another launch: a new trial
    assert len(calls) == 2 * first


def test_a_candidate_that_refuses_the_input_is_skipped(monkeypatch):
    from kernels.algorithms.kclique import gpu_bitmap

    _, _, problem, params = prepared()
    monkeypatch.setattr(gpu_bitmap, "MAX_OUT_DEGREE", 2)    # the bitmap kernels refuse this graph
    choice = trial.choose(problem, params, "sim", seconds=fixed_times({"vertex": 1e-6, "edge": 1e-6, "list": 5e-3}))
    assert choice.value == "list"
    assert "vertex refused" in choice.reason and "edge refused" in choice.reason and "above the 2" in choice.reason
    assert trial._chosen                          # the input's own refusal: remembered, the next run need not measure


def test_a_decision_no_larger_than_the_probe_is_made_on_the_probe(monkeypatch):
    monkeypatch.setattr(trial, "PROBE_MIN_ITEMS", 2)           # a probe of every 30th vertex
    _, _, problem, params = prepared()
    calls = []

    def seconds(execution, target, repeat):
        calls.append(execution.root_step)
        return {"vertex": 0.2, "edge": 0.1, "list": 0.3}[execution.kind]   # 18 s estimated in all
    choice = trial.choose(problem, params, "sim", seconds=seconds)
    assert choice.value == "edge" and calls == [30, 30, 30]
    assert "decided on the probe" in choice.reason


class CudaAPIError(RuntimeError):
    """numba-cuda's driver error, as far as the trial reads it: its class name and ``code``."""

    def __init__(self, code, msg):
        super().__init__(f"[{code}] {msg}")
        self.code = code


def test_out_of_memory_refuses_one_candidate_and_the_choice_is_not_remembered():
    _, _, problem, params = prepared()

    def seconds(execution, target, repeat):
        if execution.kind == "vertex":
            raise CudaAPIError(2, "Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY")
        return {"edge": 2e-3, "list": 1e-3}[execution.kind]
    choice = trial.choose(problem, params, "sim", seconds=seconds)
    assert choice.value == "list" and "vertex refused (the GPU refused it" in choice.reason
    assert not trial._chosen                                    # memory may free: the next run chooses again


def test_a_kernel_that_does_not_compile_refuses_its_candidate():
    from numba.core.errors import TypingError

    _, _, problem, params = prepared()

    def seconds(execution, target, repeat):
        if execution.kind == "list":
            raise TypingError("cannot type this")
        return {"vertex": 2e-3, "edge": 1e-3}[execution.kind]
    choice = trial.choose(problem, params, "sim", seconds=seconds)
    assert choice.value == "edge" and "list refused (its kernel could not be compiled" in choice.reason


def test_any_other_device_error_propagates():
    _, _, problem, params = prepared()

    def seconds(execution, target, repeat):
        raise CudaAPIError(700, "CUDA_ERROR_ILLEGAL_ADDRESS")
    with pytest.raises(CudaAPIError, match="ILLEGAL_ADDRESS"):
        trial.choose(problem, params, "sim", seconds=seconds)


def test_a_failed_trial_is_the_runs_failure_in_words(monkeypatch):
    from kernels.run.runner import KernelFailure

    monkeypatch.setenv(trial.AUTO_ENV, "trial")

    def broken(*args, **kwargs):
        raise CudaAPIError(700, "CUDA_ERROR_ILLEGAL_ADDRESS")
    monkeypatch.setattr(trial, "choose", broken)
    with pytest.raises(KernelFailure, match="ILLEGAL_ADDRESS"):
        run_variant(clique_graph(), "kclique", "gpu", {"k": 4, **SIM}, repeat=1, warmup=0)    # sim, or a GPU


def test_if_every_whole_search_is_refused_the_probes_decide_among_the_rest(monkeypatch):
    monkeypatch.setattr(trial, "PROBE_MIN_ITEMS", 8)          # a probe of every 7th vertex
    _, _, problem, params = prepared()

    def seconds(execution, target, repeat):
        if execution.root_step == 7:        # too costly for all three; list 20x the fastest: pruned
            return {"vertex": 2e-3, "edge": 1e-3, "list": 2e-2}[execution.kind]
        raise CudaAPIError(2, "CUDA_ERROR_OUT_OF_MEMORY")          # the whole searches' larger grids
    choice = trial.choose(problem, params, "sim", seconds=seconds)
    assert choice.value == "list"                                  # the one candidate not refused whole
    assert "vertex refused" in choice.reason and "edge refused" in choice.reason
    assert "decided on the probe" in choice.reason
    assert not trial._chosen


def test_a_rule_bug_is_not_reported_as_a_kernel_failure(monkeypatch):
    monkeypatch.setenv(trial.AUTO_ENV, "trial")

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a rule's own bug")
    monkeypatch.setattr(trial, "choose", broken)
    with pytest.raises(ZeroDivisionError):
        run_variant(clique_graph(), "kclique", "gpu", {"k": 4, **SIM}, repeat=1, warmup=0)


def test_the_simulator_uses_the_rule_unless_a_trial_is_asked_for(monkeypatch):
    monkeypatch.delenv(trial.AUTO_ENV, raising=False)
    assert trial.auto_mode("sim") == "rule"
    assert trial.auto_mode("cpu") == "rule"
    monkeypatch.setenv(trial.AUTO_ENV, "trial")
    assert trial.auto_mode("sim") == "trial"
    with auto_rules.device_trials_off():          # a compile-ahead process: never a trial
        assert trial.auto_mode("sim") == "rule"
    assert trial.auto_mode("sim") == "trial"
    monkeypatch.setenv(trial.AUTO_ENV, "fastest")
    with pytest.raises(ParameterError, match="GRAPH_KERNELS_KCLIQUE_AUTO.*trial or rule"):
        trial.auto_mode("sim")


def test_compile_ahead_resolves_auto_without_a_trial(monkeypatch):
    from kernels.run.runner import resolved_ahead

    monkeypatch.setenv(trial.AUTO_ENV, "trial")
    fam, var, problem, params = prepared()

    def no_trial(*args, **kwargs):
        raise AssertionError("a trial ran where none may")

    monkeypatch.setattr(trial, "choose", no_trial)
    resolved = resolved_ahead(fam, var, problem, params, "sim")    # what compile_variant resolves with
    assert resolved["work"] in ("vertex", "edge", "list")
    with pytest.raises(AssertionError, match="a trial ran"):       # the same resolution outside it measures
        fam.resolve_auto(var, problem, params, "sim")


def test_a_run_with_a_trial_is_verified_and_its_record_says_what_was_measured(monkeypatch):
    monkeypatch.setenv(trial.AUTO_ENV, "trial")
    monkeypatch.setattr(trial, "TRIAL_REPEAT", 1)      # every simulated launch costs seconds
    result = run_variant(read_graph(data_path("karate.mtx")), "kclique", "gpu", {"k": 4, **SIM, "group_size": "auto"},
                         repeat=1, warmup=0)                                  # the simulator, or a GPU
    assert result.record["verified"], result.record["verification"]
    notices = " ".join(result.record["notices"])
    assert "auto: work = " in notices and "measured" in notices
    assert result.record["timing"]["stages"]["auto_s"] > 0
