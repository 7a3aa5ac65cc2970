"""Variant declarations shared by the ``bfs`` and ``sssp`` families (parameters, makers)."""

from __future__ import annotations

from kernels.algorithms.auto_rules import slotted_page_size_rule
from kernels.algorithms.registry import AUTO, Param

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


def gpu_maker(algorithm: str, kind: str):
    def make(problem, params, target):
        from kernels.algorithms.traversal.gpu_exec import GpuTraversalExecution

        return GpuTraversalExecution(problem, params, target, algorithm, kind)
    return make
