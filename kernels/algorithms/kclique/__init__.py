"""The k-clique counting family (the Polish report, after Almasri et al., "Parallel K-Clique
Counting on GPUs", ICS 2022).

Input: an undirected simple graph (a directed input is symmetrized, self-loops and duplicate
entries are dropped, each with a notice) and k >= 3. Output: the number of k-cliques, or with
``per_vertex=true`` a dict ``{"cliques": total, "per_vertex": counts}`` where every clique
counts once at each of its k vertices (so the counts sum to k x total).

Variants: ``networkx`` (clique enumeration, small graphs), ``cpu-reference`` (plain-Python
kClist with bitsets, the family's reference), ``cpu-serial`` / ``cpu-parallel`` (numba kClist
with list intersections), ``gpu`` (gpu-vertex, gpu-edge or gpu-list and the group size chosen from the
graph and k: ``docs/defaults.md``), ``gpu-vertex`` (the report's binary-encoded, sub-warp-partitioned
kernel, one block per vertex), ``gpu-edge`` (the same, one block per oriented edge) and
``gpu-list`` (vertex-centric with sorted lists instead of bitmaps). Metrics: cliques/s and
edges/s. See ``docs/kclique.md``.
"""

from __future__ import annotations

import numpy as np

from kernels.algorithms import auto_rules
from kernels.algorithms.execution import Execution, HostExecution
from kernels.algorithms.registry import (
    AUTO,
    Constraint,
    Family,
    LaunchShape,
    Metric,
    Param,
    Problem,
    Variant,
    Verification,
    block_param,
    register_family,
)
from kernels.cuda.device import NOMINAL
from kernels.errors import InputRequirementError

NETWORKX_EDGE_LIMIT = 5000


def _prepare(graph, params, seed) -> Problem:
    from kernels.algorithms.kclique.prepare import orient, simple_undirected

    simple = simple_undirected(graph)
    dag = orient(simple, params.get("orientation", "degree"))
    notices = [n for n in simple.notices if n not in graph.notices]
    size = {"k": params["k"], "vertices": simple.n_rows, "edges": simple.num_edges,
            "orientation": dag.orientation, "max_out_degree": dag.max_out_degree,
            "bytes": int(dag.indptr.nbytes + dag.indices.nbytes)}
    return Problem(graph=simple, data={"oriented": dag}, size=size, notices=notices)


def _total(output) -> int:
    return int(output["cliques"]) if isinstance(output, dict) else int(output)


def _reference(problem: Problem, params):
    from kernels.algorithms.kclique.reference import count_kclist

    total, per_vertex = count_kclist(problem.graph, params["k"], params["per_vertex"])
    return {"cliques": total, "per_vertex": per_vertex} if params["per_vertex"] else total


def _verify(output, ref, problem: Problem, params) -> Verification:
    k = params["k"]
    got, expected = _total(output), _total(ref)
    if got != expected:
        return Verification(False, "cpu-reference", f"counted {got} {k}-cliques, expected {expected}")
    if not params["per_vertex"]:
        return Verification(True, "cpu-reference", f"{got} {k}-cliques, exact")
    counts = np.asarray(output["per_vertex"])
    ref_counts = ref["per_vertex"]
    if counts.shape != ref_counts.shape:
        return Verification(False, "cpu-reference", f"per-vertex output has shape {counts.shape}, "
                            f"expected {ref_counts.shape}")
    wrong = np.flatnonzero(counts != ref_counts)
    if len(wrong):
        worst = [{"vertex": int(v), "got": int(counts[v]), "expected": int(ref_counts[v])} for v in wrong[:5]]
        return Verification(False, "cpu-reference", f"{len(wrong)} of {len(counts)} per-vertex counts differ",
                            worst)
    if int(counts.sum()) != k * got:
        return Verification(False, "cpu-reference", f"per-vertex counts sum to {int(counts.sum())}, "
                            f"not k x total = {k * got}")
    return Verification(True, "cpu-reference", f"{got} {k}-cliques and all {len(counts)} per-vertex counts exact")


def _summarize(output, problem: Problem) -> dict:
    out = {"k": problem.size["k"], "cliques": _total(output)}
    if isinstance(output, dict):
        counts = np.asarray(output["per_vertex"])
        out["max_at_one_vertex"] = int(counts.max()) if len(counts) else 0
        out["vertices_in_cliques"] = int(np.count_nonzero(counts))
    return out


def _cliques_per_second(problem: Problem, seconds: float) -> float:
    return problem.size.get("cliques", 0) / seconds


def _edges_per_second(problem: Problem, seconds: float) -> float:
    return problem.size["edges"] / seconds


class _RecordsCount(Execution):
    """Passes every stage through and notes the count in ``problem.size`` for the cliques/s metric."""

    def __init__(self, inner: Execution, problem: Problem):
        self.inner, self.problem = inner, problem
        self.needs_reset = inner.needs_reset
        self.device_bytes = inner.device_bytes

    @property
    def capturable(self) -> bool:  # the wrapper adds no device work: capturable if the inner launch is
        return self.inner.capturable

    @property
    def stream(self):
        return self.inner.stream

    @stream.setter
    def stream(self, value) -> None:
        self.inner.stream = value

    def compile(self):
        self.inner.compile()

    def upload(self):
        self.inner.upload()

    def preprocess(self):
        self.inner.preprocess()

    def launch(self):
        self.inner.launch()

    def reset(self):
        self.inner.reset()

    def synchronize(self):
        self.inner.synchronize()

    def download(self):
        output = self.inner.download()
        self.problem.size["cliques"] = _total(output)
        return output

    def release(self):
        self.inner.release()


def _counted(make):
    def wrapped(problem: Problem, params, target):
        return _RecordsCount(make(problem, params, target), problem)
    return wrapped


def _host_result(total, per_vertex):
    return {"cliques": total, "per_vertex": per_vertex} if per_vertex is not None else total


def _make_networkx(problem: Problem, params, target):
    from kernels.algorithms.kclique.reference import count_networkx

    graph = problem.graph
    if graph.num_edges > NETWORKX_EDGE_LIMIT:
        raise InputRequirementError(
            f"networkx: '{graph.name}' has {graph.num_edges} edges; NetworkX clique enumeration is kept to "
            f"graphs of at most {NETWORKX_EDGE_LIMIT} edges (it lists every smaller clique too): "
            "use cpu-reference, the exact reference for larger graphs")
    return HostExecution(lambda: _host_result(*count_networkx(graph, params["k"], params["per_vertex"])))


def _make_reference(problem: Problem, params, target):
    from kernels.algorithms.kclique.reference import count_kclist

    return HostExecution(lambda: _host_result(*count_kclist(problem.graph, params["k"], params["per_vertex"])))


def _make_cpu(parallel: bool):
    def make(problem: Problem, params, target):
        from kernels.algorithms.kclique.cpu import run_parallel, run_serial, tiny_dag

        fn = run_parallel if parallel else run_serial
        args = (params["k"], params["per_vertex"])
        # the warm-up call compiles on a triangle, so compile time is not a full run
        return HostExecution(fn, problem.data["oriented"], *args, warm_args=(tiny_dag(), *args))
    return make


def _make_gpu(kind: str):
    def make(problem: Problem, params, target):
        from kernels.algorithms.kclique.gpu_exec import GpuCliqueExecution

        return GpuCliqueExecution(problem, params, target, kind)
    return make


FAMILY = register_family(Family(
    name="kclique",
    title="k-clique counting",
    description="Number of k-cliques (optionally per vertex) of an undirected graph: kClist on the CPU and the "
                "binary-encoded, sub-warp-partitioned GPU search of Almasri et al. (ICS 2022).",
    needs="an undirected simple graph (directed inputs are symmetrized; self-loops and duplicates dropped)",
    prepare=_prepare,
    reference=_reference,
    verify=_verify,
    summarize=_summarize,
    metrics=(Metric("cliques/s", "cliques/s", _cliques_per_second, "k-cliques counted / t"),
             Metric("edges/s", "edges/s", _edges_per_second, "undirected edges / t")),
    reference_name="cpu-reference",
    params=(Param("k", int, 4, "clique size", minimum=3, maximum=16, sweep_values=(3, 4, 5, 6, 7, 8)),
            Param("per_vertex", bool, False, "also count, at every vertex, the k-cliques containing it")),
    reference_key=lambda params: (params["k"], params["per_vertex"]),
))

ORIENTATION = Param("orientation", str, "degree", "edge orientation: lower to higher degree, or along the "
                    "degeneracy (core-peeling) order", choices=("degree", "degeneracy"))
BLOCK_SIZE = Param("block_size", int, 128, "threads per block", minimum=1, maximum=1024, power_of_two=True,
                   sweep_values=(32, 64, 128, 256, 512, 1024))
#: a sweep's max_blocks: whole waves of the nominal GPU's SMs, 1 to 32 blocks per SM
MAX_BLOCKS_SWEEP = tuple(NOMINAL.multiprocessors * m for m in (1, 2, 4, 8, 16, 32))
MAX_BLOCKS = Param("max_blocks", int, 1024, "blocks in flight (each owns global scratch and loops over the work)",
                   minimum=1, maximum=1 << 20, sweep_values=MAX_BLOCKS_SWEEP)
GROUP_SIZES = (1, 2, 4, 8, 16, 32)
GROUP_HELP = "threads per group (a sub-warp partition exploring one subtree)"


def _group_size(rule) -> Param:
    """``group_size`` with an ``auto`` rule (docs/defaults.md), or the fixed default 8 without one."""
    if rule is None:
        return Param("group_size", int, 8, GROUP_HELP, choices=GROUP_SIZES)
    return Param("group_size", int, AUTO, GROUP_HELP + "; auto: from k and the work decomposition "
                 "(docs/defaults.md)", choices=GROUP_SIZES, auto=rule)


def _gpu_params(group_rule) -> tuple[Param, ...]:
    return (ORIENTATION, BLOCK_SIZE, _group_size(group_rule), MAX_BLOCKS)


GPU_PARAMS = _gpu_params(None)


def _work_auto(problem: Problem, params: dict, target: str):
    """``work=auto``: measured on a real GPU (:mod:`.trial`), else the feature rule
    (:func:`kernels.algorithms.auto_rules.kclique_work_rule`)."""
    from kernels.algorithms.kclique import trial

    if trial.auto_mode(target) == "trial" and problem.data["oriented"].num_edges:
        return trial.choose(problem, params, target)
    return auto_rules.kclique_work_rule(problem, params, target)


WORK = Param("work", str, AUTO, "one block per vertex, binary-encoded (vertex), per oriented edge (edge), or per "
             "vertex with sorted lists (list); auto: on a GPU measured (each decomposition probed on a sample of its "
             "work, the contenders then searched whole within 0.1 s: the fastest; once per input), "
             "elsewhere from the search the degree-oriented graph implies at this k (docs/defaults.md)",
             choices=("vertex", "edge", "list"), auto=_work_auto)
GPU_CONSTRAINTS = (Constraint("group_size <= block_size", "a group is part of one block"),)


def _kclique_launch(work: str | None) -> LaunchShape:
    """A bounded grid of blocks looping over the work: at most max_blocks, never more blocks than
    work items (vertices, or oriented edges: half the stored entries). ``work=None``: ``gpu``'s
    ``work`` parameter says which; ``auto`` is counted as edges, the larger grid."""
    def grid(graph, params: dict, simulator: bool) -> int:
        kind = work or params.get("work", AUTO)
        items = int(graph.n_rows) if kind in ("vertex", "list") else int(graph.nnz) // 2
        return max(1, min(int(params["max_blocks"]), items))

    return LaunchShape(block_param("block_size"), grid,
                       sim_params={"block_size": 32, "group_size": 4, "max_blocks": 4},
                       ptx="kernels.algorithms.kclique.gpu_exec:ptx_kernels",
                       text="min(max_blocks, work items) blocks of block_size threads, looping over the "
                            f"{work or 'work'} items")


def _make_gpu_work(problem: Problem, params, target):
    """``gpu``: the gpu-vertex, gpu-edge or gpu-list execution, as ``work`` (resolved by then) says."""
    return _make_gpu(params["work"])(problem, params, target)


FAMILY.add(Variant("networkx", "library", "NetworkX clique enumeration, counting the cliques of size k "
                   f"(graphs of at most {NETWORKX_EDGE_LIMIT} edges)", _counted(_make_networkx), per_vertex=True))
FAMILY.add(Variant("cpu-reference", "library", "kClist in plain Python: degeneracy order, induced subgraphs as "
                   "Python-integer bitsets (the reference)", _counted(_make_reference), per_vertex=True))
FAMILY.add(Variant("cpu-serial", "cpu-serial", "kClist (numba): oriented graph, depth-first intersection of "
                   "sorted out-lists with an explicit stack", _counted(_make_cpu(False)), params=(ORIENTATION,),
                   per_vertex=True))
FAMILY.add(Variant("cpu-parallel", "cpu-parallel", "kClist (numba prange), vertices dealt out cyclically to the "
                   "threads", _counted(_make_cpu(True)), params=(ORIENTATION,), per_vertex=True))
FAMILY.add(Variant("gpu", "gpu", "the binary-encoded search (Almasri et al.) with its work decomposition and "
                   "group size chosen for the graph and k (work=auto: gpu-vertex, gpu-edge or gpu-list, measured on "
                   "the GPU; what it chose and each candidate's time are in the run's notices): the GPU variant to "
                   "try first",
                   _counted(_make_gpu_work), params=(WORK, *_gpu_params(auto_rules.kclique_group_rule(None))),
                   constraints=GPU_CONSTRAINTS, per_vertex=True, launch=_kclique_launch(None)))
FAMILY.add(Variant("gpu-vertex", "gpu", "one block per vertex, its out-neighbourhood binary-encoded, groups of "
                   "group_size threads searching subtrees with AND + popc (Almasri et al.)",
                   _counted(_make_gpu("vertex")), params=_gpu_params(auto_rules.kclique_group_rule("vertex")),
                   constraints=GPU_CONSTRAINTS, per_vertex=True, launch=_kclique_launch("vertex")))
FAMILY.add(Variant("gpu-edge", "gpu", "one block per oriented edge, the common out-neighbourhood binary-encoded "
                   "(edge-centric variant of Almasri et al.)", _counted(_make_gpu("edge")),
                   params=_gpu_params(auto_rules.kclique_group_rule("edge")),
                   constraints=GPU_CONSTRAINTS, per_vertex=True, launch=_kclique_launch("edge")))
FAMILY.add(Variant("gpu-list", "gpu", "one block per vertex like gpu-vertex, candidates as sorted lists "
                   "intersected by binary search + merge (no binary encoding)", _counted(_make_gpu("list")),
                   params=GPU_PARAMS, constraints=GPU_CONSTRAINTS, per_vertex=True, launch=_kclique_launch("list")))
