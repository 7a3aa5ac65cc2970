"""The CUDA simulator's budgets, in one place: how many simulated threads the kernels' launches
may have under ``NUMBA_ENABLE_CUDASIM`` (each simulated thread is a Python thread costing
milliseconds, so launches there are capped and the kernels grid-stride over the rest).

The launch shapes read them, and so does the simulator pre-check (:mod:`kernels.run.sim_estimate`),
which must model the very grids the kernels launch there. No imports: the pre-check stays light.
"""

from __future__ import annotations

#: simulated threads per launch of the SpMV kernels (``kernels.algorithms.spmv``)
SPMV_THREADS = 256
#: simulated threads per launch of the operators and host-loop traversals (``kernels.operators``)
OPERATOR_THREADS = 64
#: threads of ``spmv gpu-merge``'s merge-path partition kernel on the simulator (256 on a GPU)
MERGE_PARTITION_THREADS = 32
#: blocks of ``triangles gpu-oriented``'s main kernel on the simulator (each strides over the rounds)
ORIENTED_TRIANGLE_BLOCKS = 2


def capped_blocks(work_items: int, block: int, budget: int) -> int:
    """Blocks of a simulated launch of ``block`` threads per block for ``work_items`` items (one
    block each), capped at ``budget`` threads in all; at least 1."""
    return max(1, min(max(int(work_items), 1), max(1, budget // max(int(block), 1))))
