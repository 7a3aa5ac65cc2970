"""The ``bfs`` family: breadth-first search levels from a source.

Output: int32 level of every vertex (0 at the source, -1 where unreachable), along the stored
entries (out-edges of a directed graph). Verification: exact equality with SciPy's
``breadth_first_order``. Metrics: GTEPS (edges of the reached part / time, Graph500 style,
see :mod:`.common`) and the time.

Variants: ``cpu-serial`` (queue), ``cpu-parallel`` (level-synchronous, numba prange),
``scipy`` (the reference), ``graphblas`` (SuiteSparse:GraphBLAS, the CPU baseline;
optional), ``gpu-do`` / ``gpu-do-slotted`` (direction-optimizing with bitmap frontiers and
``alpha``/``beta`` parameters, :mod:`.frontier_loop`), ``gpu-csr`` and ``gpu-slotted`` (operators from
:mod:`kernels.operators`; load balancing, direction and block size are parameters; the
slotted variant runs on the device page pool of a slotted graph with the given page size, or
on a document's live pages, see :mod:`kernels.operators.live_pages`).
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
    ALPHA,
    BALANCE,
    BETA,
    BLOCK,
    DIRECTION,
    LOOP,
    PAGE_SIZE,
    frontier_launch,
    gpu_maker,
    loop_launch,
)


def _prepare(graph, params, seed) -> Problem:
    return prepare_traversal(graph, params, weighted=False, what="BFS")


def _reference(problem: Problem, params) -> np.ndarray:
    from kernels.algorithms.traversal.reference import bfs_levels

    return bfs_levels(problem.data["graph"], problem.data["source"])


def _verify(output, ref, problem: Problem, params) -> Verification:
    got = np.asarray(output)
    if got.shape != ref.shape:
        return Verification(False, "scipy", f"output has shape {got.shape}, expected {ref.shape}")
    bad = np.flatnonzero(got != ref)
    if len(bad) == 0:
        reached = int(np.count_nonzero(ref >= 0))
        return Verification(True, "scipy", f"all {len(ref)} levels equal the reference ({reached} reached, "
                            f"depth {int(ref.max())})")
    worst = [{"vertex": int(v), "got": int(got[v]), "expected": int(ref[v])} for v in bad[:5]]
    return Verification(False, "scipy", f"{len(bad)} of {len(ref)} levels differ", worst)


def _summarize(output, problem: Problem) -> dict:
    levels = np.asarray(output)
    return {"source": problem.data["source"], "reached": int(np.count_nonzero(levels >= 0)),
            "depth": int(levels.max()) if len(levels) else 0}


FAMILY = register_family(Family(
    name="bfs",
    title="Breadth-first search (levels)",
    description="BFS levels from a source: CPU, SciPy, and GPU operators (advance / filter / compute) on a CSR "
                "snapshot or on the slotted page pool (the Marrow-Graph thesis).",
    needs="a square adjacency matrix (directed: out-edges are followed); weights are ignored",
    prepare=_prepare,
    reference=_reference,
    verify=_verify,
    summarize=_summarize,
    metrics=(Metric("GTEPS", "GTEPS", gteps, "edges of the part of the graph the source reaches / time "
                    "(Graph500; undirected edges once)"),
             Metric("time", "ms", milliseconds, "median time of a whole BFS")),
    reference_name="scipy",
    params=(SOURCE_PARAM,),
    reference_key=lambda params: (params["source"],),
    vertex_params=("source",),
))


def _host(fn_name: str):
    def make(problem: Problem, params, target):
        from kernels.algorithms.traversal import cpu

        g = problem.data["graph"]
        extra = (cpu.parallel_chunks(),) if fn_name.endswith("parallel") else ()
        return HostExecution(getattr(cpu, fn_name), g.indptr, g.indices, problem.data["source"], *extra)
    return make


def _scipy(problem: Problem, params, target):
    from kernels.algorithms.traversal.reference import bfs_levels

    return HostExecution(bfs_levels, problem.data["graph"], problem.data["source"])


FAMILY.add(Variant("cpu-serial", "cpu-serial", "FIFO queue in an array (numba)", _host("bfs_serial")))
FAMILY.add(Variant("cpu-parallel", "cpu-parallel", "level-synchronous: frontier chunks expanded in parallel "
                   "(numba prange) into regions sized by their degree sums", _host("bfs_parallel")))
FAMILY.add(Variant("scipy", "library", "scipy.sparse.csgraph.breadth_first_order (the reference)", _scipy))
FAMILY.add(Variant(
    "gpu-csr", "gpu", "frontier BFS on a CSR snapshot: advance (load-balanced or thread per vertex) with a "
    "compare-and-swap visit, optional bottom-up steps (direction-optimizing)",
    gpu_maker("bfs", "csr"), params=(BALANCE, DIRECTION, BLOCK, LOOP), launch=loop_launch(False)))
FAMILY.add(Variant(
    "gpu-slotted", "gpu", "the same operators on the device page pool of a slotted graph: each frontier vertex "
    "found through the mirror's vertex directory (its list's handle and degree); bottom-up steps walk the pages",
    gpu_maker("bfs", "slotted"), params=(PAGE_SIZE, BALANCE, DIRECTION, BLOCK, LOOP), live_pages=True,
    launch=loop_launch(True)))
FAMILY.add(Variant(
    "gpu-do", "gpu", "direction-optimizing BFS (Beamer et al.) in one cooperative launch on a CSR snapshot: bitmap "
    "frontiers, bottom-up steps scanned warp-cooperatively up to the first parent, Beamer's alpha/beta as run-time "
    "arguments (a sweep over them compiles nothing)",
    gpu_maker("bfs", "csr"), params=(ALPHA, BETA, BALANCE, BLOCK), launch=frontier_launch(False)))
FAMILY.add(Variant(
    "gpu-do-slotted", "gpu", "gpu-do on the device page pool of a slotted graph: lists found through the mirror's "
    "vertex directory, two loads as on CSR, so both steps run gpu-do's code",
    gpu_maker("bfs", "slotted"), params=(PAGE_SIZE, ALPHA, BETA, BALANCE, BLOCK), live_pages=True,
    launch=frontier_launch(True)))
FAMILY.add(Variant(
    "graphblas", "library", "SuiteSparse:GraphBLAS through python-graphblas, the CPU baseline: level-synchronous push "
    "(LAGraph's LAGr_BreadthFirstSearch push step): q⟨¬visited⟩ = q·A over any_pair",
    lazy_make("kernels.algorithms.traversal.graphblas:make_bfs"), available=graphblas_support.unavailable))
