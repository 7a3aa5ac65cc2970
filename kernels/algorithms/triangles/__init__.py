"""The triangle-counting family (the Greek course report, and a kernel that beats it).

Input: any graph with a square adjacency matrix; directed inputs are symmetrized, self-loops
and repeated entries dropped, each with a notice (:mod:`.prepare`). Output: the number of
triangles (``np.int64``), or with ``per_vertex=true`` the triangles at each vertex (int64
array; each triangle counted at its three corners, as NetworkX's ``triangles``).
Verification: exact equality with the reference (:mod:`.reference`).

Variants: ``cpu-serial`` and ``cpu-parallel`` (the report's algorithm 6), ``scipy`` (the
library reference), ``gpu-row-block`` and ``gpu-row-shared`` (algorithms 8 and 9),
``gpu-spgemm`` (the report's rejected cuSPARSE method, through CuPy) and ``gpu-oriented``
(degree orientation + shared-memory hashing; see ``docs/triangles.md``); ``graphblas``
(SuiteSparse:GraphBLAS with LAGraph's methods, the CPU baseline; optional).
Metrics: undirected edges per second, and the time.
"""

from __future__ import annotations

import numpy as np

from kernels.algorithms import auto_rules, graphblas_support
from kernels.algorithms.execution import HostExecution
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
    lazy_make,
    register_family,
)
from kernels.algorithms.triangles.prepare import prepare
from kernels.cuda.simulator import ORIENTED_TRIANGLE_BLOCKS

BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)
GROUP_SIZES = (1, 2, 4, 8, 16, 32)
NO_PER_VERTEX = Constraint("not per_vertex", "this variant counts the total only")


def _reference(problem: Problem, params) -> dict:
    from kernels.algorithms.triangles.reference import reference_counts

    value, method = reference_counts(problem.graph, bool(params["per_vertex"]))
    return {"value": value, "method": method}


def _verify(output, ref, problem: Problem, params) -> Verification:
    expected = ref["value"]
    method = ref["method"]
    if not params["per_vertex"]:
        if np.ndim(output) != 0:
            return Verification(False, method, f"expected one count, got an array of shape {np.shape(output)}")
        got, want = int(output), int(expected)
        if got == want:
            return Verification(True, method, f"{got} triangles, equal to the reference")
        return Verification(False, method, f"counted {got} triangles, the reference has {want} "
                            f"(off by {got - want:+d})", [{"got": got, "expected": want}])
    got = np.asarray(output)
    if got.shape != expected.shape:
        return Verification(False, method, f"output has shape {got.shape}, expected {expected.shape}")
    bad = np.flatnonzero(got != expected)
    if len(bad) == 0:
        return Verification(True, method, f"all {len(got)} per-vertex counts equal the reference")
    worst = [{"vertex": int(v), "got": int(got[v]), "expected": int(expected[v])} for v in bad[:5]]
    return Verification(False, method, f"{len(bad)} of {len(got)} vertices have a wrong count", worst)


def _summarize(output, problem: Problem) -> dict:
    if np.ndim(output) == 0:
        summary = {"triangles": int(output)}
    else:
        counts = np.asarray(output)
        summary = {"triangles": int(counts.sum()) // 3, "per_vertex": True,
                   "max_at_a_vertex": int(counts.max()) if len(counts) else 0}
    summary.update(problem.data.get("stats", {}))
    return summary


def _edges_per_second(problem: Problem, seconds: float) -> float:
    return problem.size["edges"] / seconds


def _milliseconds(problem: Problem, seconds: float) -> float:
    return seconds * 1e3


def _end_to_end_edges_per_second(problem: Problem, seconds: float) -> float | None:
    """Edges / (preprocessing + kernel) for variants that preprocess apart from the kernel
    (``gpu-oriented``: ``preprocess_s`` on the device or the host); None for the others."""
    pre = problem.data.get("stats", {}).get("preprocess_s")
    return None if pre is None else problem.size["edges"] / (seconds + pre)


FAMILY = register_family(Family(
    name="triangles",
    title="Triangle counting",
    description="Count the triangles (3-cliques) of an undirected graph: the Greek course report's CPU, "
                "SpGEMM and row-per-block GPU methods, and a degree-oriented hashing GPU kernel that beats them.",
    needs="a square adjacency matrix; directed inputs are symmetrized, self-loops and repeated edges ignored",
    prepare=prepare,
    reference=_reference,
    verify=_verify,
    summarize=_summarize,
    metrics=(Metric("edges/s", "edges/s", _edges_per_second, "undirected edges / kernel time"),
             Metric("time", "ms", _milliseconds, "median kernel time"),
             Metric("end-to-end edges/s", "edges/s", _end_to_end_edges_per_second,
                    "undirected edges / (preprocessing + kernel time), for gpu-oriented")),
    reference_name="scipy",
    params=(Param("per_vertex", bool, False, "output the triangles at each vertex instead of the total"),),
    reference_key=lambda params: (bool(params["per_vertex"]),),
))


# ---- CPU and library variants ----------------------------------------------------------

def _make_cpu(parallel: bool):
    def make(problem: Problem, params, target):
        from kernels.algorithms.triangles import cpu

        g = problem.graph
        run = cpu.run_parallel if parallel else cpu.run_serial
        return HostExecution(run, g.indptr, g.indices, bool(params["per_vertex"]),
                             warm_args=(*_empty_csr(), bool(params["per_vertex"])))
    return make


def _empty_csr() -> tuple[np.ndarray, np.ndarray]:
    """A one-vertex CSR with the graph arrays' types (read-only), so that numba's compilation
    is timed on its own, without a full run."""
    indptr, indices = np.zeros(2, dtype=np.int64), np.zeros(0, dtype=np.int32)
    indptr.setflags(write=False)
    indices.setflags(write=False)
    return indptr, indices


def _make_scipy(problem: Problem, params, target):
    from kernels.algorithms.triangles.reference import scipy_per_vertex, scipy_total
    from kernels.graph.csr import CSRGraph

    fn = scipy_per_vertex if params["per_vertex"] else scipy_total
    tiny = CSRGraph(*_empty_csr(), name="warm-up")
    return HostExecution(fn, problem.graph, warm_args=(tiny,))


FAMILY.add(Variant(
    "cpu-serial", "cpu-serial",
    "the report's algorithm 6: for each entry (i, k) with k > i, merge the sorted rows i and k and count "
    "the common j > k (numba)", _make_cpu(False), per_vertex=True))
FAMILY.add(Variant(
    "cpu-parallel", "cpu-parallel",
    "algorithm 6 over rows with numba prange (chunks of 16 rows, for skewed rows); per-vertex counts "
    "from each vertex's own merges", _make_cpu(True), per_vertex=True))
FAMILY.add(Variant(
    "scipy", "library",
    "SciPy sparse products over blocks of rows: sum((Uᵀ·U)∘U) with U the degree-oriented adjacency "
    "(the report's (L·L)∘L in degree order); per vertex rowsum((A·A)∘A)/2. The reference",
    _make_scipy, per_vertex=True))


# ---- GPU variants ------------------------------------------------------------------------

def _spgemm_unavailable():
    from kernels.algorithms.triangles.vendor import unavailable
    return unavailable()


def _group_size_rule(problem: Problem, params: dict, target: str) -> auto_rules.AutoChoice:
    """``group_size=auto`` of gpu-oriented: :func:`~kernels.algorithms.auto_rules.triangles_group_size`
    on this input's orientation (here, beside the family, since it reads the family's own
    orientation module; the rules module stays below the families)."""
    from kernels.algorithms.triangles.orientation import ownership_summary

    derived = problem.data.get("derived", {})
    if "oriented" in derived:                # already built for this input: read it
        og = derived["oriented"]
        probes, partners, owners = og.total_work, len(og.part_idx), len(og.owners)
    else:                                    # two passes over the adjacency, no lists built
        probes, partners, owners = ownership_summary(problem.graph.indptr, problem.graph.indices)
    mean = probes / partners if partners else 1.0
    return auto_rules.triangles_group_size(mean, owners, int(problem.graph.n_rows))


def _block_size(default: int, minimum: int = 32) -> Param:
    return Param("block_size", int, default, "threads per block", minimum=minimum, maximum=1024,
                 power_of_two=True, sweep_values=tuple(b for b in BLOCK_SIZES if b >= minimum))


def _one_block_per_row(graph, params: dict, simulator: bool) -> int:
    return max(1, int(graph.n_rows))


def _oriented_grid(graph, params: dict, simulator: bool) -> int:
    """Resident blocks striding over the rounds of work: ORIENTED_TRIANGLE_BLOCKS on the simulator;
    on a GPU one wave of them (about one block per owner on a graph too small to fill it)."""
    return min(ORIENTED_TRIANGLE_BLOCKS, max(1, int(graph.n_rows))) if simulator else max(1, int(graph.n_rows))


ROW_PTX = "kernels.algorithms.triangles.gpu_rows:ptx_kernels"


FAMILY.add(Variant(
    "gpu-row-block", "gpu",
    "the report's algorithm 8: one block per row, its threads stride over the row's entries (i, k), "
    "k > i, each merging rows i and k; atomicAdd of each thread's count",
    lazy_make("kernels.algorithms.triangles.gpu_rows:make_row_block"), params=(_block_size(256),), per_vertex=True,
    launch=LaunchShape(block_param("block_size"), _one_block_per_row, sim_params={"block_size": 32}, ptx=ROW_PTX,
                       text="one block of block_size threads per row")))
FAMILY.add(Variant(
    "gpu-row-shared", "gpu",
    "the report's algorithm 9: algorithm 8 with row i staged in shared memory first (rows longer than "
    "shared_capacity read from global memory)",
    lazy_make("kernels.algorithms.triangles.gpu_rows:make_row_shared"),
    params=(_block_size(256),
            Param("shared_capacity", int, 1024, "int32 entries of the row staged in shared memory",
                  minimum=128, maximum=4096, power_of_two=True)),
    per_vertex=True,
    launch=LaunchShape(block_param("block_size"), _one_block_per_row,
                       sim_params={"block_size": 32, "shared_capacity": 128}, ptx=ROW_PTX,
                       text="one block of block_size threads per row")))
FAMILY.add(Variant(
    "gpu-oriented", "gpu",
    "degree-oriented edges (d⁺ ≤ √(2m)), each owned by the end with the longer out-list; the owner's "
    "out-list in a shared-memory hash table, groups of group_size threads stream each partner's out-list "
    "through it (min(d⁺a, d⁺b) probes per edge); owners binned by work, light ones one per group, heavy ones "
    "split into block-sized chunks; one atomicAdd per block",
    lazy_make("kernels.algorithms.triangles.gpu_oriented:make_oriented"),
    params=(_block_size(256),
            Param("group_size", int, AUTO, "threads cooperating on one out-list (a sub-warp group); auto: from "
                  "the mean partner out-list length and the number of owners (docs/defaults.md)",
                  minimum=1, maximum=32, power_of_two=True, sweep_values=GROUP_SIZES,
                  auto=_group_size_rule),
            Param("max_registers", int, 32, "cap on registers per thread (0: the compiler's choice, 54 on an H100: "
                  "4 blocks of 256 per SM); 32 lets 8 blocks of 256 stay resident, and the probe loop, bound by "
                  "load latency, runs 1.3x faster on R-MAT 22 (docs/triangles.md)", choices=(0, 32, 40, 48, 64)),
            Param("preprocess", str, "gpu", "where the orientation and the work schedule are built: gpu = on the "
                  "device from the uploaded CSR (timed: preprocess_s and the end-to-end rate), host = numba on "
                  "the CPU (cached per input, for comparison)", choices=("gpu", "host"))),
    per_vertex=True,
    launch=LaunchShape(block_param("block_size"), _oriented_grid, sim_params={"block_size": 32, "group_size": 4},
                       ptx="kernels.algorithms.triangles.gpu_oriented:ptx_kernels",
                       text="resident blocks of block_size threads striding over the owners' rounds, after the "
                            "device preprocessing's kernels")))
# gpu-oriented: group_size <= 32 <= block_size, so a group always lives inside one block
FAMILY.add(Variant(
    "gpu-spgemm", "vendor",
    "the report's rejected method: sum((L·L)∘L) by cuSPARSE SpGEMM through CuPy; records its memory use",
    lazy_make("kernels.algorithms.triangles.vendor:make_spgemm"),
    params=(Param("ordering", str, "natural", "which end of an edge L keeps it at: natural = by id "
                  "(L = tril(A), the report's), degree = by (degree, id)", choices=("natural", "degree")),),
    constraints=(NO_PER_VERTEX,),
    available=_spgemm_unavailable))


# ---- the CPU baseline (optional: python-graphblas) ----------------------------------------

FAMILY.add(Variant(
    "graphblas", "library",
    "SuiteSparse:GraphBLAS through python-graphblas, LAGraph's LAGr_TriangleCount: C⟨L⟩ = L·Uᵀ (Sandia_LUT, "
    "LAGraph's default) or L·L (Sandia_LL) over plus_pair, then sum(C); per vertex Burkhardt's "
    "rowsum(C⟨A⟩ = A·A)/2. The CPU baseline a performance engineer would use",
    lazy_make("kernels.algorithms.triangles.graphblas:make"),
    params=(Param("method", str, "sandia-lut", "LAGraph method for the total: sandia-lut = masked dot products "
                  "L·Uᵀ, sandia-ll = masked saxpy L·L", choices=("sandia-lut", "sandia-ll")),
            Param("ordering", str, "degree", "vertex ranking of L: degree = ascending (degree, id) (LAGraph's "
                  "presort for these methods), natural = by id (L = tril(A))", choices=("degree", "natural"))),
    per_vertex=True, available=graphblas_support.unavailable))
