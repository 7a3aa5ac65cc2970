"""The ``sssp`` family: single-source shortest-path distances.

Output: float64 distance of every vertex (+inf where unreachable) along the stored entries,
with their weights (finite, non-negative; 1 per edge when the input is unweighted).
Verification against SciPy's ``dijkstra``: the same unreachable set, and distances equal
within a relative 1e-9 (sums in a different order may round differently). Metrics: GTEPS
(see :mod:`.common`) and the time.

Variants: ``cpu-serial`` (Dijkstra, binary heap), ``cpu-parallel`` (frontier Bellman–Ford,
numba prange), ``scipy`` (the reference), ``graphblas`` (SuiteSparse:GraphBLAS, the CPU
baseline; optional), ``gpu-nearfar`` / ``gpu-nearfar-slotted`` (near-far buckets with a ``delta``
parameter, :mod:`.frontier_loop`), ``gpu-csr`` and ``gpu-slotted`` (frontier
Bellman–Ford with atomic min, built from :mod:`kernels.operators`).
"""

from __future__ import annotations

import numpy as np

from kernels.algorithms import graphblas_support
from kernels.algorithms.execution import HostExecution
from kernels.algorithms.registry import (
    Family,
    Metric,
    Problem,
    Variant,
    Verification,
    lazy_make,
    register_family,
)
from kernels.algorithms.traversal.common import SOURCE_PARAM, gteps, milliseconds, prepare_traversal
from kernels.algorithms.traversal.variants import (
    BALANCE,
    BLOCK,
    DELTA,
    HOPS,
    LOOP,
    PAGE_SIZE,
    frontier_launch,
    gpu_maker,
    loop_launch,
)

RELATIVE_TOLERANCE = 1e-9


def _prepare(graph, params, seed) -> Problem:
    return prepare_traversal(graph, params, weighted=True, what="SSSP")


def _reference(problem: Problem, params) -> np.ndarray:
    from kernels.algorithms.traversal.reference import sssp_distances

    d = problem.data
    return sssp_distances(d["graph"], d["weights"], d["source"])


def _verify(output, ref, problem: Problem, params) -> Verification:
    got = np.asarray(output, dtype=np.float64)
    if got.shape != ref.shape:
        return Verification(False, "scipy", f"output has shape {got.shape}, expected {ref.shape}")
    finite = np.isfinite(ref)
    wrong_reach = np.flatnonzero(np.isfinite(got) != finite)
    err = np.zeros(len(ref))
    err[finite] = np.abs(got[finite] - ref[finite]) / np.maximum(1.0, np.abs(ref[finite]))
    wrong_value = np.flatnonzero(~(err <= RELATIVE_TOLERANCE) & finite)
    bad = np.union1d(wrong_reach, wrong_value)
    if len(bad) == 0:
        return Verification(True, "scipy", f"all {len(ref)} distances equal the reference ({int(finite.sum())} "
                            f"reachable, max relative error {float(err.max()) if len(err) else 0.0:.1e})")
    order = bad[np.argsort(-np.where(np.isin(bad, wrong_reach), np.inf, err[bad]))][:5]
    worst = [{"vertex": int(v), "got": float(got[v]), "expected": float(ref[v])} for v in order]
    return Verification(False, "scipy", f"{len(bad)} of {len(ref)} distances differ ({len(wrong_reach)} in "
                        f"reachability, tolerance {RELATIVE_TOLERANCE:g} relative)", worst)


def _summarize(output, problem: Problem) -> dict:
    dist = np.asarray(output, dtype=np.float64)
    finite = dist[np.isfinite(dist)]
    return {"source": problem.data["source"], "reached": int(len(finite)),
            "max_distance": float(finite.max()) if len(finite) else 0.0,
            "sum_distance": float(finite.sum())}


FAMILY = register_family(Family(
    name="sssp",
    title="Single-source shortest paths (distances)",
    description="SSSP distances from a source with non-negative weights: Dijkstra on the CPU, SciPy, and "
                "frontier Bellman-Ford with atomic min from GPU operators on CSR or on the slotted page pool.",
    needs="a square adjacency matrix with finite non-negative weights (unweighted: 1 per edge)",
    prepare=_prepare,
    reference=_reference,
    verify=_verify,
    summarize=_summarize,
    metrics=(Metric("GTEPS", "GTEPS", gteps, "edges of the part of the graph the source reaches / time "
                    "(Graph500; undirected edges once)"),
             Metric("time", "ms", milliseconds, "median time of a whole SSSP")),
    reference_name="scipy",
    params=(SOURCE_PARAM,),
    reference_key=lambda params: (params["source"],),
    vertex_params=("source",),
))


def _host(fn_name: str):
    def make(problem: Problem, params, target):
        from kernels.algorithms.traversal import cpu

        d = problem.data
        g = d["graph"]
        extra = (cpu.parallel_chunks(),) if fn_name.endswith("parallel") else ()
        return HostExecution(getattr(cpu, fn_name), g.indptr, g.indices, d["weights"], d["source"], *extra)
    return make


def _scipy(problem: Problem, params, target):
    from kernels.algorithms.traversal.reference import sssp_distances

    d = problem.data
    return HostExecution(sssp_distances, d["graph"], d["weights"], d["source"])


FAMILY.add(Variant("cpu-serial", "cpu-serial", "Dijkstra with a binary heap and lazy deletion (numba)",
                   _host("dijkstra_serial")))
FAMILY.add(Variant("cpu-parallel", "cpu-parallel", "frontier Bellman-Ford: relaxations computed in parallel "
                   "(numba prange), improvements applied in one thread", _host("sssp_parallel")))
FAMILY.add(Variant("scipy", "library", "scipy.sparse.csgraph.dijkstra with indices=source (the reference)", _scipy))
FAMILY.add(Variant(
    "gpu-csr", "gpu", "frontier Bellman-Ford on a CSR snapshot: advance with an atomic-min relax functor",
    gpu_maker("sssp", "csr"), params=(BALANCE, BLOCK, LOOP), launch=loop_launch(False)))
FAMILY.add(Variant(
    "gpu-slotted", "gpu", "frontier Bellman-Ford on the device page pool of a slotted graph (weights in the "
    "parallel weight pool)", gpu_maker("sssp", "slotted"), params=(PAGE_SIZE, BALANCE, BLOCK, LOOP), live_pages=True,
    launch=loop_launch(True)))
FAMILY.add(Variant(
    "gpu-nearfar", "gpu", "near-far SSSP (Davidson et al.; delta-stepping's GPU form) in one cooperative launch on a "
    "CSR snapshot: the current bucket's vertices relaxed level by level, later ones parked in a far pile; delta a "
    "run-time argument; the record counts relaxations per edge",
    gpu_maker("sssp", "csr"), params=(DELTA, HOPS, BALANCE, BLOCK), launch=frontier_launch(False)))
FAMILY.add(Variant(
    "gpu-nearfar-slotted", "gpu", "gpu-nearfar on the device page pool of a slotted graph (weights in the parallel "
    "weight pool)", gpu_maker("sssp", "slotted"), params=(PAGE_SIZE, DELTA, HOPS, BALANCE, BLOCK), live_pages=True,
    launch=frontier_launch(True)))
FAMILY.add(Variant(
    "graphblas", "library", "SuiteSparse:GraphBLAS through python-graphblas, the CPU baseline: frontier Bellman-Ford "
    "over "
    "the min_plus semiring: f·A, min with the distances, the improved entries are the next frontier",
    lazy_make("kernels.algorithms.traversal.graphblas:make_sssp"), available=graphblas_support.unavailable))
