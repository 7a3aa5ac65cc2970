"""All-pairs shortest paths (the Czech report): Dijkstra from every source and Floyd–Warshall.

Input: any square graph, directed or not, weighted or not (unweighted edges weigh 1).
Dijkstra variants need non-negative weights; Floyd–Warshall variants and ``scipy`` accept
negative ones and report a negative cycle as :class:`NegativeCycleError`. Output: the n x n
distance matrix (``inf`` for unreachable pairs) in the run's ``dtype`` (fp64 by default, fp32
on request for CPU and GPU alike), or with ``predecessors=true`` the dict
``{"dist": D, "pred": P}`` where ``P[i][j]`` is the vertex before j on a shortest path from i
(int32, -1 for none). See ``docs/apsp.md``.

Metric: relaxations per second, counting n³ for Floyd–Warshall and n·m (every edge once per
source) for Dijkstra; ``time`` is the median kernel time.
"""

from __future__ import annotations

from kernels.algorithms.apsp.errors import NegativeCycleError
from kernels.algorithms.registry import (
    Constraint,
    Family,
    LaunchShape,
    Metric,
    Param,
    Variant,
    block_param,
    ceil_div,
    register_family,
)

__all__ = ["FAMILY", "NegativeCycleError"]

WARPS_SWEEP = (1, 2, 4, 8, 16, 32)
TILES = (8, 16, 32, 64)
# shared memory a block may declare statically (the 48 KiB limit of numba's static arrays)
SHARED_LIMIT = 48 * 1024
# at most this many tile elements per thread, kept in registers by the two-dependent phase
MAX_ELEMENTS_PER_THREAD = 64


# The modules with numba code are imported on first use: listing algorithms stays light.

def prepare(graph, params, seed):
    from kernels.algorithms.apsp.problem import prepare as prepare_problem

    return prepare_problem(graph, params, seed)


def reference(problem, params):
    from kernels.algorithms.apsp.verification import reference as scipy_reference

    return scipy_reference(problem, params)


def verify(output, ref, problem, params):
    from kernels.algorithms.apsp.verification import verify as check

    return check(output, ref, problem, params)


def summarize(output, problem):
    from kernels.algorithms.apsp.verification import summarize as summary

    return summary(output, problem)


def _dijkstra_input(problem, name: str) -> None:
    from kernels.algorithms.apsp.problem import count_dijkstra_relaxations, refuse_negative_weights

    refuse_negative_weights(problem, name)
    count_dijkstra_relaxations(problem)


def _relaxations_per_second(problem, seconds):
    return problem.size["relaxations"] / seconds / 1e9


FAMILY = register_family(Family(
    name="apsp",
    title="All-pairs shortest paths (Dijkstra, Floyd-Warshall)",
    description="The Czech report's all-pairs shortest paths: Dijkstra from every source (binary heap, "
                "array priority, one GPU thread per source) and Floyd-Warshall (serial, rows in parallel, "
                "naive GPU, blocked 3-phase tiles, staged tiles). Output: the n x n distance matrix.",
    needs="a square graph, directed or undirected; unweighted edges weigh 1; duplicate edges count with their "
          "smallest weight; Dijkstra variants need non-negative weights",
    prepare=prepare,
    reference=reference,
    verify=verify,
    summarize=summarize,
    metrics=(Metric("relaxations/s", "G relaxations/s", _relaxations_per_second,
                    "Floyd-Warshall: n^3 / t; Dijkstra: n*m / t (every edge relaxed once per source)"),
             Metric("time", "s", lambda problem, seconds: seconds, "median kernel time")),
    reference_name="scipy",
    params=(
        Param("dtype", str, "fp64", "precision of weights and distances (SciPy, the reference, always "
              "computes in fp64 on the rounded weights)", choices=("fp64", "fp32")),
        Param("predecessors", bool, False, "also return the predecessor matrix (int32): output "
              "{'dist': D, 'pred': P}"),
        Param("max_vertices", int, 0, "use only the subgraph induced by the first N vertices (0: all)",
              minimum=0),
    ),
    reference_key=lambda params: (params["dtype"], params["max_vertices"]),
))


# ---- CPU and library variants -------------------------------------------------------------

def _make_dijkstra_cpu(parallel: bool, name: str):
    def make(problem, params, target):
        from kernels.algorithms.apsp.host import DijkstraCPU

        _dijkstra_input(problem, name)
        return DijkstraCPU(problem, parallel)
    return make


def _make_fw_cpu(parallel: bool, name: str):
    def make(problem, params, target):
        from kernels.algorithms.apsp.host import FloydWarshallCPU

        return FloydWarshallCPU(problem, parallel, name)
    return make


def _make_scipy(problem, params, target):
    from kernels.algorithms.apsp.host import ScipyAPSP

    return ScipyAPSP(problem)


FAMILY.add(Variant("cpu-dijkstra", "cpu-serial",
                   "Dijkstra from every source, binary heap in arrays with lazy deletion (report 3.2)",
                   _make_dijkstra_cpu(False, "cpu-dijkstra")))
FAMILY.add(Variant("cpu-dijkstra-parallel", "cpu-parallel",
                   "sources in parallel (prange), array priority: linear scan for the closest vertex "
                   "(report 4.1.2)", _make_dijkstra_cpu(True, "cpu-dijkstra-parallel")))
FAMILY.add(Variant("cpu-fw", "cpu-serial", "Floyd-Warshall, serial triple loop",
                   _make_fw_cpu(False, "cpu-fw")))
FAMILY.add(Variant("cpu-fw-parallel", "cpu-parallel", "Floyd-Warshall, rows in parallel for each k "
                   "(report 4.2.1)", _make_fw_cpu(True, "cpu-fw-parallel")))
FAMILY.add(Variant("scipy", "library", "scipy.sparse.csgraph.shortest_path (the reference): Dijkstra on "
                   "sparse inputs, Floyd-Warshall on dense ones, Johnson with negative weights", _make_scipy))


# ---- GPU variants ---------------------------------------------------------------------------

def _warps(default: int) -> Param:
    return Param("warps_per_block", int, default, "warps per block (threads per block = 32 x this)",
                 minimum=1, maximum=32, sweep_values=WARPS_SWEEP)


def _tile_warps(default: int) -> Param:
    # tile elements are split evenly over the block's threads, so the block size is a power of two
    return Param("warps_per_block", int, default, "warps per block (threads per block = 32 x this)",
                 minimum=1, maximum=32, power_of_two=True, sweep_values=WARPS_SWEEP)


_TILE_CONSTRAINTS = (
    Constraint("32 * warps_per_block <= tile * tile", "every thread needs at least one tile element"),
    Constraint(f"tile * tile <= {MAX_ELEMENTS_PER_THREAD} * 32 * warps_per_block",
               f"at most {MAX_ELEMENTS_PER_THREAD} tile elements per thread (they live in registers)"),
    Constraint(f"2 * tile * (tile + 1) * (8 if dtype == 'fp64' else 4) * (2 if predecessors else 1) <= {SHARED_LIMIT}",
               "the diagonal and the own tile (and their predecessors) must fit in 48 KiB of shared memory"),
)


def _vertices(graph, params: dict) -> int:
    """The vertices the run computes (``max_vertices`` keeps the first ones)."""
    limit = int(params.get("max_vertices") or 0)
    return min(int(graph.n_rows), limit) if limit > 0 else int(graph.n_rows)


WARPS = block_param("warps_per_block", per_unit=32)


def _fw_naive_grid(graph, params: dict, simulator: bool) -> int:
    """(ceil(n / block), n) blocks, launched once per k (grid.y at most 65535, striding)."""
    n = _vertices(graph, params)
    return ceil_div(n, WARPS(params, simulator)) * max(1, min(n, 65535))


def _fw_tiled_grid(graph, params: dict, simulator: bool) -> int:
    """One block per tile of the two-independent phase: rounds x rounds (the diagonal tile's one
    block alone when the matrix is one tile)."""
    rounds = ceil_div(_vertices(graph, params), params["tile"])
    return max(1, rounds * rounds)


def _launch(grid, sim_params: dict, kernels: str, text: str) -> LaunchShape:
    return LaunchShape(WARPS, grid, sim_params=sim_params, ptx=f"kernels.algorithms.apsp.{kernels}:ptx_kernels",
                       text=text)


def _make_gpu_dijkstra(problem, params, target):
    from kernels.algorithms.apsp.gpu_dijkstra import GpuDijkstra

    _dijkstra_input(problem, "gpu-dijkstra")
    return GpuDijkstra(problem, params)


def _make_gpu_fw(kind: str):
    def make(problem, params, target):
        from kernels.algorithms.apsp.gpu_fw import make_gpu_fw

        return make_gpu_fw(kind, problem, params)
    return make


FAMILY.add(Variant(
    "gpu-dijkstra", "gpu",
    "one thread per source (report 5.1), each with its own priority queue in global scratch (n² scratch "
    "in all, interleaved so that neighbouring threads touch neighbouring words); distances transposed at "
    "the end",
    _make_gpu_dijkstra,
    params=(_warps(4),
            Param("queue", str, "heap", "priority queue per thread: an indexed binary heap with decrease-key, "
                  "or an array scanned for the minimum (O(n²) per source, but the scans are coalesced)",
                  choices=("heap", "array"))),
    launch=_launch(lambda g, p, sim: max(1, ceil_div(_vertices(g, p), WARPS(p, sim))), {"warps_per_block": 1},
                   "gpu_dijkstra", "32 x warps_per_block threads a block, one source a thread; then a tiled "
                                   "transpose"),
))
FAMILY.add(Variant(
    "gpu-fw-naive", "gpu", "Floyd-Warshall, one launch per k over n² threads, each relaxing one (i, j) "
    "(report 5.2.1)", _make_gpu_fw("naive"), params=(_warps(8),),
    launch=_launch(_fw_naive_grid, {"warps_per_block": 1}, "gpu_fw_kernels",
                   "32 x warps_per_block threads a block, (ceil(n / block), n) blocks, n launches"),
))
FAMILY.add(Variant(
    "gpu-fw-blocked", "gpu",
    "3-phase tiled Floyd-Warshall (Katz & Kider; report 5.2.2): per round the diagonal tile, then its row "
    "and column tiles, then all other tiles; dependency tiles in shared memory, the working tile in "
    "registers",
    _make_gpu_fw("blocked"),
    params=(Param("tile", int, 32, "tile side (the matrix is padded to a multiple of it)", choices=TILES),
            _tile_warps(8)),
    constraints=_TILE_CONSTRAINTS,
    launch=_launch(_fw_tiled_grid, {"tile": 8, "warps_per_block": 1}, "gpu_fw_kernels",
                   "32 x warps_per_block threads a block; per round of ceil(n / tile): 1, 2 x rounds and "
                   "rounds x rounds blocks"),
))
FAMILY.add(Variant(
    "gpu-fw-staged", "gpu",
    "blocked Floyd-Warshall whose two-dependent phase loads the needed column of the row tile and row "
    "of the column tile a stage of s k-values at a time instead of whole tiles (report's \"shared & "
    "staged\")",
    _make_gpu_fw("staged"),
    params=(Param("tile", int, 32, "tile side (the matrix is padded to a multiple of it)", choices=TILES),
            Param("stage", int, 8, "k-values loaded per stage", minimum=1, maximum=64, power_of_two=True),
            _tile_warps(8)),
    constraints=_TILE_CONSTRAINTS + (Constraint("stage <= tile", "a stage cannot span more than one tile"),),
    launch=_launch(_fw_tiled_grid, {"tile": 8, "stage": 2, "warps_per_block": 1}, "gpu_fw_kernels",
                   "32 x warps_per_block threads a block; per round of ceil(n / tile): 1, 2 x rounds and "
                   "rounds x rounds blocks"),
))
