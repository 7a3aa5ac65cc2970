"""How long a GPU variant will take on numba's CUDA simulator, said before it runs.

The simulator runs one Python thread per CUDA thread, so its time grows with the number of
simulated threads the launches create, whatever the kernel does: a 582 k-edge graph "just runs"
for minutes. :func:`estimate` turns the variant's launch configuration (threads per launch ×
launches per run, from :data:`LAUNCH_MODELS` or a generic rule on the block-size parameter and
the number of rows) into seconds for the warm-up plus the timed repetitions. The cost per
simulated thread-launch, :data:`SECONDS_PER_THREAD_LAUNCH`, is conservative: measured here from
0.15 ms (one-thread-per-row SpMV) to 2.3 ms (k-clique: shared memory, ``syncthreads``,
stacks) per thread.

Qt-free: the Run dock asks the user above a limit, ``graph-kernels run --target sim`` prints it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

SECONDS_PER_THREAD_LAUNCH = 3e-3
BLOCK_PARAMS = ("wg", "block", "block_size")


@dataclass(frozen=True)
class SimEstimate:
    threads: int              # simulated threads per launch
    launches: int             # launches per timed run
    runs: int                 # warm-up + repetitions
    basis: str                # how the threads were counted (for the message)

    @property
    def seconds(self) -> float:
        return self.threads * self.launches * self.runs * SECONDS_PER_THREAD_LAUNCH

    def describe(self) -> str:
        return (f"about {format_duration(self.seconds)} on the CUDA simulator ({self.threads:,} simulated threads"
                f"{f' x {self.launches:,} launches' if self.launches > 1 else ''} x {self.runs} runs; {self.basis})")


def format_duration(seconds: float) -> str:
    if seconds < 1:
        return "under a second"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _ceil(a: float, b: float) -> int:
    return int(math.ceil(a / max(b, 1)))


def block_threads(params: dict) -> int:
    for name in BLOCK_PARAMS:
        if name in params:
            return int(params[name])
    if "warps_per_block" in params:
        return 32 * int(params["warps_per_block"])
    return 128


def _tunable_rows(params: dict) -> int:
    """``rows`` of gpu-tunable; ``auto`` (chosen after the estimate, from the input) is counted as
    its widest choice, 32 threads a row: an estimate may be high, never low."""
    rows = params.get("rows", 1)
    return max(int(params.get("wg", 128)) // 32, 1) if rows == "auto" else int(rows)


def _rows_grid(n: int, params: dict) -> int:
    """One thread per row (or vertex), in whole blocks."""
    b = block_threads(params)
    return _ceil(n, b) * b


def _apsp_n(graph, params: dict) -> int:
    limit = int(params.get("max_vertices") or 0)
    return min(graph.n_rows, limit) if limit > 0 else graph.n_rows


def _kclique(items: Callable) -> Callable:
    # a bounded grid of blocks loops over the work: at most max_blocks, never more blocks than items
    return lambda g, p: (max(1, min(int(p.get("max_blocks", 1024)), items(g))) * block_threads(p), 1)


# (family, variant) -> (graph, params) -> (threads per launch, launches per run)
LAUNCH_MODELS: dict[tuple[str, str], Callable] = {
    ("spmv", "gpu-naive"): lambda g, p: (_rows_grid(g.n_rows, p), 1),
    ("spmv", "gpu-tunable"): lambda g, p: (_ceil(g.n_rows, _tunable_rows(p)) * block_threads(p), 1),
    ("spmv", "gpu-merge"): lambda g, p: (_rows_grid(_ceil(g.n_rows + g.nnz, int(p.get("ipt", 7))), p), 2),
    ("triangles", "gpu-row-block"): lambda g, p: (g.n_rows * block_threads(p), 1),
    ("triangles", "gpu-row-shared"): lambda g, p: (g.n_rows * block_threads(p), 1),
    ("apsp", "gpu-dijkstra"): lambda g, p: (_rows_grid(_apsp_n(g, p), p), 1),
    ("apsp", "gpu-fw-naive"): lambda g, p: (_apsp_n(g, p) ** 2, _apsp_n(g, p)),
    ("apsp", "gpu-fw-blocked"): lambda g, p: (_apsp_n(g, p) ** 2, 3 * _ceil(_apsp_n(g, p), int(p.get("tile", 32)))),
    ("apsp", "gpu-fw-staged"): lambda g, p: (_apsp_n(g, p) ** 2, 3 * _ceil(_apsp_n(g, p), int(p.get("tile", 32)))),
    ("kclique", "gpu-vertex"): _kclique(lambda g: g.n_rows),
    ("kclique", "gpu-list"): _kclique(lambda g: g.n_rows),
    ("kclique", "gpu-edge"): _kclique(lambda g: max(g.nnz // 2, 1)),
    # work=auto may choose edges (the larger grid): counted so
    ("kclique", "gpu"): _kclique(lambda g: max(g.nnz // 2, 1)),
}


def estimate(family: str, variant: str, graph, params: dict, repeat: int = 1, warmup: int = 1) -> SimEstimate:
    """The simulator time of one run (``warmup`` untimed + ``repeat`` timed runs).

    ``graph`` needs ``n_rows`` and ``nnz`` (a :class:`~kernels.graph.csr.CSRGraph`)."""
    model = LAUNCH_MODELS.get((family, variant))
    if model is not None:
        threads, launches = model(graph, params)
        basis = "the variant's launch configuration"
    else:
        # no model: one thread per row or vertex and per stored entry, in blocks of the block-size parameter
        threads, launches = _rows_grid(graph.n_rows + graph.nnz, params), 1
        basis = "a rough count: one thread per row and per stored entry"
    return SimEstimate(threads=max(int(threads), 1), launches=max(int(launches), 1),
                       runs=max(int(repeat) + int(warmup), 1), basis=basis)
