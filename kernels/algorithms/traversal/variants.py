"""Variant declarations shared by the ``bfs`` and ``sssp`` families (parameters, makers)."""

from __future__ import annotations

from kernels.algorithms.auto_rules import (
    bfs_alpha_rule,
    bfs_beta_rule,
    slotted_page_size_rule,
    sssp_delta_rule,
    sssp_hops_rule,
)
from kernels.algorithms.registry import AUTO, LaunchShape, Param, ceil_div
from kernels.cuda.simulator import OPERATOR_THREADS, capped_blocks

BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)

BALANCE = Param("balance", str, "lb", "how the advance spreads neighbours over threads: 'lb' (load-balanced: "
                "scan of degrees + binary search, one neighbour per thread) or 'tpv' (a thread per vertex); in the "
                "device loop, lists longer than 8 are cut into chunks taken by a warp ('lb') or a thread ('tpv')",
                choices=("lb", "tpv"))
BLOCK = Param("block", int, 256, "threads per block of the advance and the other operators",
              minimum=32, maximum=1024, power_of_two=True, sweep_values=(64, 128, 256, 512))
PAGE_SIZE = Param("page_size", int, AUTO, "words per slotted page (the structure's page size; auto: by the "
                  "graph's size, as info, pages, dynamic and the GUI choose)",
                  minimum=16, maximum=4096, power_of_two=True, sweep_values=(256, 512, 1024, 2048),
                  auto=slotted_page_size_rule)
DIRECTION = Param("direction", str, "optimizing", "'push' (top-down only) or 'optimizing' (switch to "
                  "bottom-up steps while the frontier is large; undirected graphs)",
                  choices=("push", "optimizing"))

LOOP = Param("loop", str, "device", "'device' (the whole traversal in one cooperative launch: a persistent grid "
             "loops over the levels, synchronising with a grid sync) or 'host' (a host loop: several launches and "
             "one counter read-back per level)", choices=("host", "device"))

# gpu-do / gpu-nearfar: run-time arguments of the kernel (a sweep over them compiles nothing)
ALPHA = Param("alpha", float, AUTO, "Beamer's alpha: go bottom-up once the next frontier's edges exceed 1/alpha of "
              "the edges of the vertices not yet reached (larger: earlier; 0: never)", minimum=0.0, maximum=1e6,
              sweep_values=(2.0, 4.0, 8.0, 14.0, 32.0, 64.0, 128.0), auto=bfs_alpha_rule)
BETA = Param("beta", float, AUTO, "Beamer's beta: back to top-down once a shrinking frontier holds fewer than "
             "1/beta of the vertices (larger: later)", minimum=0.0, maximum=1e6,
             sweep_values=(3.0, 6.0, 12.0, 24.0, 48.0, 96.0, 192.0), auto=bfs_beta_rule)
DELTA = Param("delta", float, AUTO, "near-far bucket width (delta-stepping's delta): vertices whose distance is in "
              "the current bucket are relaxed level by level, the others wait in the far pile (large: Bellman-Ford; "
              "small: Dijkstra-like, more buckets)", minimum=1e-9, maximum=1e15,
              sweep_values=(1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0), auto=sssp_delta_rule)
HOPS = Param("hops", int, AUTO, "near-far's block-local hops: a block relaxes the edges of the vertices it improved "
             "into the current bucket itself, up to this many rounds a level with only block barriers between them, "
             "before the grid's next level (0: off, every hop a grid-wide level; lists longer than 8 always go to the "
             "grid)",
             minimum=0, maximum=1 << 20, sweep_values=(0, 1, 2, 4, 8, 16, 32), auto=sssp_hops_rule)


def gpu_maker(algorithm: str, kind: str):
    def make(problem, params, target):
        from kernels.algorithms.traversal.gpu_exec import GpuTraversalExecution

        return GpuTraversalExecution(problem, params, target, algorithm, kind)
    return make


# ---- launch shapes ---------------------------------------------------------------------------

#: threads of a gpu-do / gpu-nearfar block on the simulator, whatever ``block`` says: one warp
#: (``kernels.cuda.warp.WARP``), since its warp votes are block-wide exchanges there
SIM_WARP = 32
TRAVERSAL_PTX = "kernels.algorithms.traversal.gpu_exec:ptx_kernels"


def _sim_params(slotted: bool) -> dict:
    return {"block": 32, **({"page_size": 16} if slotted else {})}


def _loop_block(params: dict, simulator: bool) -> int:
    return int(params["block"])


def _loop_grid(graph, params: dict, simulator: bool) -> int:
    """loop=device: one persistent cooperative grid (one block on the simulator, whose grid sync is
    the block's syncthreads); loop=host: the operators' launches, a thread per vertex at most
    (capped at OPERATOR_THREADS on the simulator)."""
    wanted = ceil_div(max(int(graph.n_rows), 1), params["block"])
    if params.get("loop", "device") == "device":
        return 1 if simulator else wanted
    return capped_blocks(wanted, params["block"], OPERATOR_THREADS) if simulator else wanted


def loop_launch(slotted: bool) -> LaunchShape:
    """gpu-csr / gpu-slotted."""
    return LaunchShape(_loop_block, _loop_grid, sim_params=_sim_params(slotted), ptx=TRAVERSAL_PTX,
                       text="loop=device: one cooperative launch of resident blocks of block threads looping over "
                            "the levels; loop=host: the operators' launches, each level")


def _frontier_block(params: dict, simulator: bool) -> int:
    return SIM_WARP if simulator else int(params["block"])


def _frontier_grid(graph, params: dict, simulator: bool) -> int:
    return 1 if simulator else ceil_div(max(int(graph.n_rows), 1), params["block"])


def frontier_launch(slotted: bool) -> LaunchShape:
    """gpu-do / gpu-nearfar and their slotted forms."""
    return LaunchShape(_frontier_block, _frontier_grid, sim_params=_sim_params(slotted), ptx=TRAVERSAL_PTX,
                       text="one cooperative launch of resident blocks of block threads looping over the levels "
                            "(one block of one warp on the simulator)")
