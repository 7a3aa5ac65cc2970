"""How long a GPU variant will take on numba's CUDA simulator, said before it runs.

The simulator runs one Python thread per CUDA thread, one block after another, and a
``syncthreads`` (a grid sync in the traversals' device loop) is a round in which its manager
polls every thread of the block, each hand-over of the interpreter lock costing up to its switch
interval. So what a run costs depends on the variant's launch shape, not only on its thread
count: ``spmv gpu-naive`` (no barrier) costs ~0.3 ms a simulated thread, a ``gpu-tunable`` row
block ~0.1 s whatever its width, a BFS level of the device loop a few ms per thread of its one
block, and every kernel also pays for each stored entry it walks in interpreted Python.

:func:`estimate` reads the variant's launch shape, declared where the variant is registered
(``Variant.launch``: its block and its grid on the simulator, capped as they are there), counts
the work its fitted model (:data:`WORK_MODELS`) says a run costs, and turns the counts into
seconds with that variant's costs (:data:`SIM_COSTS`), for the warm-up plus the timed runs, plus
the job's own overhead. Traversals count levels: the BFS depth from the run's ``source`` (a SciPy
BFS on the host, milliseconds), which is why a deep graph takes longer than a wide one of the
same size.

**Where the costs come from.** ``benchmarks/bench_sim_estimate.py`` runs every GPU variant on
small and medium inputs of ``tests/data`` under the simulator and fits, per variant, the seconds
of a run as ``base + Σ cost_k × count_k`` (non-negative least squares on relative error); the
costs below were measured on this project's 2-core development VM (2026-11-27, numba-cuda 0.30.4,
Python 3.11; 144 cases in two sessions, the raw cases in
``benchmarks/results/sim-estimate-vm.jsonl``). Over those cases the estimate of a whole job lay
within 0.29-6.4x of its measured time, median 0.99, 92 % of them within 0.5-2x (93 % of the jobs
of 2 s or more; the ratios above 2 are jobs of a tenth of a second, the overhead's) (the old rule, 3 ms
a simulated thread: 0.08-16.6x, median 1.41, 38 % within 0.5-2x). The simulator's speed depends on
the host's scheduler as much as on its processor: between the two sessions barrier-heavy kernels
(the traversals' device loop) ran up to 3x slower and barrier-free ones (``gpu-naive``,
``gpu-row-block``) up to 4x faster, so the costs sit between, and an estimate is a warning, not a
promise.

A GPU variant whose costs are not fitted yet (a new one, a plug-in) is costed by its declared
launch: the simulated threads of its launch shape on this input, at
:data:`ROUGH_SECONDS_PER_THREAD`. One without a launch shape (a plug-in's) gets the old rough
rule: one thread per row and per stored entry, in blocks of 128.

Qt-free: the Run dock asks the user above a limit, ``graph-kernels run --target sim`` prints it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from kernels.cuda.simulator import MERGE_PARTITION_THREADS, OPERATOR_THREADS, SPMV_THREADS, capped_blocks

ROUGH_SECONDS_PER_THREAD = 3e-3     # no launch model: the old conservative rule per simulated thread
JOB_OVERHEAD_S = 0.3                # prepare, upload, verification and the worker's round trip, once a job
ROUGH_BLOCK = 128                   # no launch shape declared: blocks of this many threads
DEPTH_BFS_LIMIT = 5_000_000         # entries above which the traversal depth is not measured but assumed
ASSUMED_LEVELS = 64


@dataclass(frozen=True)
class SimCost:
    """Seconds of one run on the simulator: ``base_s`` plus ``per[count]`` for each work count."""

    base_s: float
    per: dict[str, float]
    job_s: float = 0.0              # once a job besides JOB_OVERHEAD_S (device preprocessing run simulated)

    def run_seconds(self, counts: dict[str, float]) -> float:
        return self.base_s + sum(self.per.get(k, 0.0) * v for k, v in counts.items())


@dataclass(frozen=True)
class SimWork:
    """One run's launch shape: simulated threads (for the message) and the counts costs apply to."""

    threads: int
    counts: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class SimEstimate:
    threads: int              # simulated threads per run (all its launches)
    runs: int                 # warm-up + repetitions
    basis: str                # how the time was counted (for the message)
    run_s: float = 0.0        # seconds of one run
    job_s: float = JOB_OVERHEAD_S
    counts: dict[str, float] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return self.job_s + self.runs * self.run_s

    def describe(self) -> str:
        return (f"about {format_duration(self.seconds)} on the CUDA simulator ({self.threads:,} simulated threads "
                f"x {self.runs} runs, ~{format_duration(self.run_s, precise=True)} each; {self.basis})")


def format_duration(seconds: float, precise: bool = False) -> str:
    if seconds < 1:
        return f"{seconds:.1f} s" if precise and seconds >= 0.05 else "under a second"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _ceil(a: float, b: float) -> int:
    return int(math.ceil(a / max(b, 1)))


def _degrees(graph):
    import numpy as np

    return np.diff(np.asarray(graph.indptr, dtype=np.int64))


def traversal_reach(graph, source) -> tuple[int, int]:
    """(levels, entries) of a traversal from ``source``: the BFS depth in hops plus the last,
    empty level, and the stored entries of the vertices it reaches (the edges it walks).
    Unweighted, so for weighted SSSP a lower bound of its rounds."""
    n = int(graph.n_rows)
    if n == 0:
        return 1, 0
    if graph.nnz > DEPTH_BFS_LIMIT:
        return ASSUMED_LEVELS, int(graph.nnz)
    try:
        source = int(source)
    except (TypeError, ValueError):
        source = 0
    if not 0 <= source < n:          # refused before the run; the form says so (estimate what the fix gives)
        source = 0
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path

    m = csr_matrix((np.ones(graph.nnz, dtype=np.int8), graph.indices, graph.indptr), shape=(n, graph.n_cols))
    hops = shortest_path(m[:, :n], unweighted=True, indices=source, directed=bool(graph.directed))
    reached = np.isfinite(hops)
    entries = int(_degrees(graph)[:n][reached].sum())
    return (int(hops[reached].max()) + 2 if reached.any() else 2), entries


def _traversal(graph, p: dict, shape) -> SimWork:
    block = shape.block(p, True)
    threads = shape.threads(graph, p, True)
    levels, entries = traversal_reach(graph, p.get("source", 0))
    # direction-optimizing BFS takes bottom-up steps over the unvisited vertices on large frontiers
    scans = {"vertex-levels": levels * graph.n_rows} if p.get("direction", "push") == "optimizing" else {}
    if p.get("loop", "device") == "device":
        # one block on the simulator (its grid sync is the block's syncthreads): every level is a
        # few barrier rounds of all its threads, plus a warp's worth of fixed work
        return SimWork(threads, {"thread-levels": levels * (block + 32), "entries": entries, **scans})
    # the host loop's launches per level, counted as the costs were fitted: at most the operators' budget
    return SimWork(threads, {"launch-levels": levels * min(block, OPERATOR_THREADS), "entries": entries, **scans})


def _frontier_loop(graph, p: dict, shape) -> SimWork:
    """``gpu-do`` / ``gpu-nearfar`` (:mod:`kernels.algorithms.traversal.frontier_loop`): one block
    of one warp on the simulator whatever ``block`` says (its warp votes are block-wide exchanges
    there: the launch shape says so); a bottom-up step visits every vertex. Near-far's buckets add
    levels the BFS depth does not show: counted as twice the depth, an estimate high rather than
    low."""
    threads = shape.threads(graph, p, True)
    levels, entries = traversal_reach(graph, p.get("source", 0))
    if "delta" in p:
        levels *= 2
    scans = {"vertex-levels": levels * graph.n_rows} if "alpha" in p else {}
    return SimWork(threads, {"thread-levels": levels * (threads + 32), "entries": entries, **scans})


def _spmv_naive(g, p, shape) -> SimWork:
    threads = shape.threads(g, p, True)
    return SimWork(threads, {"threads": threads, "entries": g.nnz})


def _spmv_tunable(g, p, shape) -> SimWork:
    """Row blocks run one after another; each is ``1 + log2(threads per row)`` barrier rounds (the
    reduction tree's steps) of its ``wg`` threads, and a round costs about ``sqrt(wg)`` times a
    few ms (measured: 5 ms a round for 1 thread, ~30 ms for 32, ~50 ms for 128)."""
    from kernels.algorithms.spmv import tunable_rows

    wg = shape.block(p, True)
    rows = tunable_rows(p)
    rounds = _ceil(g.n_rows, rows) * (1 + math.log2(max(wg // max(rows, 1), 1)))
    return SimWork(shape.threads(g, p, True), {"rounds x sqrt(wg)": rounds * math.sqrt(wg), "entries": g.nnz})


def _spmv_merge(g, p, shape) -> SimWork:
    tiles = _ceil(g.n_rows + g.nnz, shape.block(p, True) * int(p.get("ipt", 7)))
    partition = capped_blocks(_ceil(tiles + 1, MERGE_PARTITION_THREADS), MERGE_PARTITION_THREADS,
                              SPMV_THREADS) * MERGE_PARTITION_THREADS
    return SimWork(shape.threads(g, p, True) + partition, {"tiles": tiles, "entries": g.n_rows + g.nnz})


def _spmv_adaptive(g, p, shape) -> SimWork:
    """Pieces as the variant bins rows (approximately, from the degrees: the launch shape's grid
    on a GPU, one block a piece)."""
    pieces = shape.grid(g, p, False)
    return SimWork(shape.threads(g, p, True), {"pieces": pieces, "entries": g.nnz})


def _row_merges(g) -> float:
    """Work of merging each row with its neighbours' rows: the sum of squared degrees."""
    deg = _degrees(g).astype(float)
    return float((deg * deg).sum())


def _triangle_rows(g, p, shape) -> SimWork:
    threads = shape.threads(g, p, True)        # one block per row, uncapped
    return SimWork(threads, {"threads": threads, "merges": _row_merges(g)})


def _triangle_oriented(g, p, shape) -> SimWork:
    return SimWork(shape.threads(g, p, True), {"merges": _row_merges(g)})   # its grid strides over the work


def _apsp_n(graph, params: dict) -> int:
    limit = int(params.get("max_vertices") or 0)
    return min(graph.n_rows, limit) if limit > 0 else graph.n_rows


def _apsp_dijkstra(g, p, shape) -> SimWork:
    threads = shape.threads(g, p, True)
    return SimWork(threads, {"thread-sources": threads * _apsp_n(g, p)})


def _apsp_fw_naive(g, p, shape) -> SimWork:
    per_launch = shape.threads(g, p, True)          # grid (ceil(n / b), n) of b threads, n launches
    launches = _apsp_n(g, p)
    return SimWork(per_launch * launches, {"thread-launches": per_launch * launches})


def _apsp_fw_tiled(g, p, shape) -> SimWork:
    tile = int(p.get("tile", 32))
    rounds = _ceil(_apsp_n(g, p), tile)
    blocks = shape.grid(g, p, True) * rounds     # per round: 1 + 2(R-1) + (R-1)^2 = R^2 tiles
    b = shape.block(p, True)
    return SimWork(blocks * b, {"block-steps": blocks * tile, "threads": blocks * b})


def _kclique(g, p, shape) -> SimWork:
    # a bounded grid of blocks loops over the work: at most max_blocks, never more blocks than items
    threads = shape.threads(g, p, True)
    return SimWork(threads, {"threads": threads, "entries": g.nnz})


# the costs, in seconds: fitted by ``benchmarks/bench_sim_estimate.py --fit`` to the 144 cases of
# benchmarks/results/sim-estimate-vm.jsonl (2026-11-27, this project's 2-core VM, measured in two
# sessions: one while other test suites ran, one on a quiet machine); in the comment, how far the
# job estimates lay from the measured jobs over those cases
_KCLIQUE = SimCost(0.37, {"threads": 2.3e-3, "entries": 2.1e-2})        # the four variants fitted together
_FW_TILED = SimCost(0.0, {"threads": 5.9e-3})                           # blocked and staged fitted together
SIM_COSTS: dict[tuple[str, str], SimCost] = {
    ("spmv", "gpu-naive"): SimCost(0.0033, {"threads": 9.3e-5, "entries": 5.5e-6}),             # tiny: overhead
    ("spmv", "gpu-tunable"): SimCost(0.003, {"rounds x sqrt(wg)": 3.6e-3}),                      # 0.53-1.60
    ("spmv", "gpu-merge"): SimCost(0.13, {"entries": 1.3e-4}),                                   # 0.63-2.20
    ("spmv", "gpu-adaptive"): SimCost(0.044, {"pieces": 0.17, "entries": 1.1e-3}),               # 0.29-1.40
    ("triangles", "gpu-row-block"): SimCost(0.078, {"threads": 1.3e-4, "merges": 2.2e-6}),       # 0.32-1.41
    ("triangles", "gpu-row-shared"): SimCost(0.63, {"threads": 6.7e-4, "merges": 2.0e-4}),       # 0.75-1.26
    # its device preprocessing (orientation, work bins) runs once a job, simulated too: ~3 s measured
    ("triangles", "gpu-oriented"): SimCost(1.45, {"merges": 3.7e-5}, job_s=3.0),                 # 0.78-1.18
    ("apsp", "gpu-dijkstra"): SimCost(0.19, {"thread-sources": 2.4e-4}),                         # 0.37-1.66
    ("apsp", "gpu-fw-naive"): SimCost(0.0, {"thread-launches": 2.0e-4}),                         # 0.63-1.03
    ("apsp", "gpu-fw-blocked"): _FW_TILED,                                                       # 0.80-1.16
    ("apsp", "gpu-fw-staged"): _FW_TILED,
    ("kclique", "gpu"): _KCLIQUE,                                                                # 0.58-1.52
    ("kclique", "gpu-vertex"): _KCLIQUE,
    ("kclique", "gpu-edge"): _KCLIQUE,
    ("kclique", "gpu-list"): _KCLIQUE,
    ("bfs", "gpu-csr"): SimCost(0.039, {"thread-levels": 4.6e-4, "launch-levels": 4.4e-3,       # 0.54-1.67
                                        "vertex-levels": 2.5e-5, "entries": 1.0e-3}),
    ("bfs", "gpu-slotted"): SimCost(0.063, {"thread-levels": 4.0e-4, "launch-levels": 3.5e-3,   # 0.49-1.66
                                            "vertex-levels": 2.0e-4, "entries": 5.2e-5}),
    ("sssp", "gpu-csr"): SimCost(0.094, {"thread-levels": 5.8e-4, "launch-levels": 6.0e-3,      # 0.72-1.60
                                         "entries": 4.2e-4}),
    ("sssp", "gpu-slotted"): SimCost(0.0065, {"thread-levels": 4.6e-4, "launch-levels": 8.7e-3,  # 0.55-1.73
                                              "entries": 3.2e-4}),
    # not fitted yet: the device loop's costs of the same view (the same kind of level loop)
    ("bfs", "gpu-do"): SimCost(0.039, {"thread-levels": 4.6e-4, "vertex-levels": 2.5e-5, "entries": 1.0e-3}),
    ("bfs", "gpu-do-slotted"): SimCost(0.063, {"thread-levels": 4.0e-4, "vertex-levels": 2.0e-4, "entries": 5.2e-5}),
    ("sssp", "gpu-nearfar"): SimCost(0.094, {"thread-levels": 5.8e-4, "entries": 4.2e-4}),
    ("sssp", "gpu-nearfar-slotted"): SimCost(0.0065, {"thread-levels": 4.6e-4, "entries": 3.2e-4}),
}

#: the fitted variants' work counts: ``(graph, params, launch shape) -> SimWork``
WORK_MODELS: dict[tuple[str, str], Callable] = {
    ("spmv", "gpu-naive"): _spmv_naive,
    ("spmv", "gpu-tunable"): _spmv_tunable,
    ("spmv", "gpu-merge"): _spmv_merge,
    ("spmv", "gpu-adaptive"): _spmv_adaptive,
    ("triangles", "gpu-row-block"): _triangle_rows,
    ("triangles", "gpu-row-shared"): _triangle_rows,
    ("triangles", "gpu-oriented"): _triangle_oriented,
    ("apsp", "gpu-dijkstra"): _apsp_dijkstra,
    ("apsp", "gpu-fw-naive"): _apsp_fw_naive,
    ("apsp", "gpu-fw-blocked"): _apsp_fw_tiled,
    ("apsp", "gpu-fw-staged"): _apsp_fw_tiled,
    ("kclique", "gpu-vertex"): _kclique,
    ("kclique", "gpu-list"): _kclique,
    ("kclique", "gpu-edge"): _kclique,
    ("kclique", "gpu"): _kclique,
    ("bfs", "gpu-csr"): _traversal,
    ("bfs", "gpu-slotted"): _traversal,
    ("sssp", "gpu-csr"): _traversal,
    ("sssp", "gpu-slotted"): _traversal,
    ("bfs", "gpu-do"): _frontier_loop,
    ("bfs", "gpu-do-slotted"): _frontier_loop,
    ("sssp", "gpu-nearfar"): _frontier_loop,
    ("sssp", "gpu-nearfar-slotted"): _frontier_loop,
}


def _declared(family: str, variant: str, params: dict):
    """The variant's launch shape (None: not registered, or a plug-in that declares none) and its
    parameters with the defaults filled in (callers may pass only those they set)."""
    from kernels.algorithms.registry import get_variant
    from kernels.errors import GraphKernelsError

    try:
        fam, var = get_variant(family, variant)
    except GraphKernelsError:
        return None, dict(params)
    full = {p.name: p.default for p in fam.all_params(var)}
    full.update(params)
    return var.launch, full


def estimate(family: str, variant: str, graph, params: dict, repeat: int = 1, warmup: int = 1) -> SimEstimate:
    """The simulator time of one job: ``warmup`` untimed + ``repeat`` timed runs, and the job's
    overhead.

    ``graph`` needs ``n_rows``, ``n_cols``, ``nnz``, ``indptr``, ``indices`` and ``directed``
    (a :class:`~kernels.graph.csr.CSRGraph`)."""
    runs = max(int(repeat) + int(warmup), 1)
    shape, params = _declared(family, variant, params)
    work_of, cost = WORK_MODELS.get((family, variant)), SIM_COSTS.get((family, variant))
    if shape is None:
        # nothing declared: one thread per row or vertex and per stored entry, in blocks of ROUGH_BLOCK
        threads = max(_ceil(graph.n_rows + graph.nnz, ROUGH_BLOCK) * ROUGH_BLOCK, 1)
        return SimEstimate(threads=threads, runs=runs, run_s=threads * ROUGH_SECONDS_PER_THREAD,
                           basis="a rough count: one thread per row and per stored entry, ~3 ms each")
    if work_of is None or cost is None:
        threads = max(shape.threads(graph, params, True), 1)
        return SimEstimate(threads=threads, runs=runs, run_s=threads * ROUGH_SECONDS_PER_THREAD,
                           basis="its declared launch, ~3 ms a simulated thread (costs not fitted yet)")
    work = work_of(graph, params, shape)
    counts = ", ".join(f"{v:,.0f} {k}" for k, v in work.counts.items() if k != "entries")
    basis = f"the variant's launches: {counts}" if counts else "the variant's launches"
    return SimEstimate(threads=max(int(work.threads), 1), runs=runs, basis=basis,
                       run_s=cost.run_seconds(work.counts), job_s=JOB_OVERHEAD_S + cost.job_s,
                       counts=dict(work.counts))
