"""Which sweep cells cannot be told apart from the best: a stated statistical rule, not a fixed 10 %.

A cell's time is its median over the timed samples of one process. Two things move it: the
spread of its own samples (known: the record keeps them), and where the process happened to
place its memory (unknown inside one run: kernel times differ by up to ±15 % between processes
on one GPU). The rule therefore adds both, on a log scale:

* ``u_cell² = (1.2533 · s / √n)² + ρ²``, where ``s`` is the standard deviation of the logs of
  the cell's ``n`` samples (``1.2533 · s / √n``: the standard error of a median of normal
  samples) and ``ρ`` the relative spread of one cell's median between processes;
* a cell is **tied with the best** when ``ln(m_cell / m_best) ≤ 1.96 · √(u_cell² + u_best²)``:
  the two medians are within the 95 % band of their difference.

``ρ`` defaults to :data:`PROCESS_SPREAD`, measured on an H100 (issue 25): the same 132-cell SpMV
sweep run twice gave per-cell ratios with 125–127 of 132 within 5 %, a spread of the ratio of
about 0.025 on a log scale, 0.018 for one run (rounded up to 0.02). ``graph-kernels sweep
--confirm N`` measures ``ρ`` for the leading cells instead, by running them again in ``N`` fresh
processes (:mod:`kernels.compute.confirm`). ``docs/results.md`` states the rule for users.
"""

from __future__ import annotations

import math
import statistics

PROCESS_SPREAD = 0.02
Z95 = 1.96
MEDIAN_SE = 1.2533            # the standard error of a median: 1.2533 σ/√n (normal samples)


def cell_uncertainty(cell: dict, process_spread: float = PROCESS_SPREAD) -> float:
    """``u_cell`` (see the module): the log-scale uncertainty of the cell's median time."""
    kernel = ((cell.get("record") or {}).get("timing") or {}).get("kernel") or {}
    samples = [s for s in kernel.get("samples") or [] if isinstance(s, (int, float)) and s > 0]
    within = 0.0
    if len(samples) >= 2:
        logs = [math.log(s) for s in samples]
        within = MEDIAN_SE * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.sqrt(within * within + process_spread * process_spread)


def tied_with_best(cells: list[dict], process_spread: float = PROCESS_SPREAD) -> list[dict]:
    """The parameters of the verified cells that cannot be told apart from the fastest one (the
    fastest included), by the module's rule."""
    ok = [c for c in cells if c.get("status") == "ok" and c.get("median_s")]
    if not ok:
        return []
    best = min(ok, key=lambda c: c["median_s"])
    u_best = cell_uncertainty(best, process_spread)
    tied = []
    for cell in ok:
        u = cell_uncertainty(cell, process_spread)
        if math.log(cell["median_s"] / best["median_s"]) <= Z95 * math.sqrt(u * u + u_best * u_best):
            tied.append(cell["params"])
    return tied


def process_spread_of(medians: dict) -> float | None:
    """``ρ`` measured: the pooled standard deviation of the log medians each cell got in several
    processes (``{cell: [median, ...]}``); ``None`` with fewer than two per cell."""
    squares, dof = 0.0, 0
    for values in medians.values():
        logs = [math.log(v) for v in values if v and v > 0]
        if len(logs) >= 2:
            mean = statistics.fmean(logs)
            squares += sum((x - mean) ** 2 for x in logs)
            dof += len(logs) - 1
    return math.sqrt(squares / dof) if dof else None
