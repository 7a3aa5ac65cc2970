"""``graph-kernels sweep FAMILY VARIANT INPUT --grid NAME=V1,V2 ... --out SWEEP.json``."""

from __future__ import annotations

import logging
import math
import sys

from kernels.cli.common import positive_int, positive_seconds, progress_of
from kernels.cli.run import add_run_options

logger = logging.getLogger(__name__)


def register(sub) -> None:
    p = sub.add_parser("sweep", help="run every combination of parameter values, timed and verified")
    p.add_argument("family")
    p.add_argument("variant")
    p.add_argument("input", help="graph file, or gen:KIND:opt=value,...")
    p.add_argument("--grid", action="append", required=True, metavar="NAME=V1,V2,...",
                   help="values of one swept parameter (repeatable; NAME= alone uses its default grid)")
    add_run_options(p)
    p.add_argument("--time-limit", type=positive_seconds, default=300.0,
                   help="seconds one configuration may take before it is recorded as failed (> 0, default 300)")
    p.add_argument("--out", required=True, metavar="SWEEP.json",
                   help="the sweep's file, written as it runs: a header, then a line per finished cell")
    p.add_argument("--resume", action="store_true",
                   help="continue --out: run only the cells it lacks (refused, with the reason, if it is a sweep "
                        "of another input, variant, grid, target, device or strategy); a missing file starts anew")
    p.add_argument("--strategy", choices=("grid", "random", "local", "bayes"), default="grid",
                   help="which cells to run: every combination (default), a random sample, a local search "
                        "from the best of a random sample, or a model-based search proposing as many cells at "
                        "once as the backend has GPUs (Optuna; a third of the grid unless --budget-cells); "
                        "--seed sets the random order")
    p.add_argument("--budget-cells", type=positive_int, metavar="N",
                   help="measure at most N cells (cells that break a constraint are free)")
    p.add_argument("--budget-seconds", type=positive_seconds, metavar="S",
                   help="start no cell after S seconds")
    p.add_argument("--csv", metavar="FILE.csv", help="also write one CSV row per configuration")
    p.add_argument("--confirm", type=positive_int, metavar="N",
                   help="run the leading cells again in N fresh processes and say whether the best holds "
                        "(kernel times differ between processes; docs/results.md, 'How sure')")
    p.set_defaults(func=run)


class SweepProgress:
    """``run_sweep``'s ``progress`` callback: the task shows cells done, failed and the best so far
    (with its estimate of the time left); each cell is also a line at INFO (``-v``)."""

    def __init__(self, task, remote: bool):
        self.task, self.remote = task, remote
        self.failed = self.wrong = self.lost = 0
        self.best: dict | None = None

    def seed(self, cells: list[dict]) -> None:
        """The cells a resumed file holds already: the best so far counts them."""
        for cell in cells:
            self._consider(cell)

    def _consider(self, cell: dict) -> None:
        if cell["status"] == "ok" and cell.get("median_s") and (self.best is None
                                                                 or cell["median_s"] < self.best["median_s"]):
            params = " ".join(f"{k}={v}" for k, v in cell["params"].items())
            self.best = {"params": params, "median_s": cell["median_s"]}

    def __call__(self, done: int, total: int, cell: dict) -> None:
        params = " ".join(f"{k}={v}" for k, v in cell["params"].items())
        if cell["status"] == "failed":
            self.failed += 1
        elif cell["status"] == "wrong":
            self.wrong += 1
        elif cell["status"] == "lost":
            self.lost += 1
        self._consider(cell)
        median = f"{cell['median_s'] * 1e3:.4g} ms" if cell.get("median_s") else cell.get("reason", "")
        where = f" on {cell['worker']}" if cell.get("worker") and self.remote else ""
        logger.info("[%d/%d] %s: %s %s%s", done, total, params, cell["status"], median, where)
        best = (f"best {self.best['params']} {self.best['median_s'] * 1e3:.4g} ms" if self.best
                else "no best yet")
        wrong = f", {self.wrong} wrong" if self.wrong else ""
        lost = f", {self.lost} lost" if self.lost else ""
        self.task.update(completed=done, postfix=f"{self.failed} failed{wrong}{lost}, {best}")


def previous_cells(path) -> list[dict]:
    """The cells of the sweep file ``--resume`` continues (none when it is missing or unreadable:
    the sweep itself then says why, or starts anew)."""
    from kernels.errors import GraphKernelsError
    from kernels.results import load_sweep

    try:
        return load_sweep(path)["cells"]
    except (GraphKernelsError, OSError):
        return []


def run(args) -> int:
    from kernels.algorithms.registry import parse_param_assignments
    from kernels.cli.cluster_options import open_backend_from_args
    from kernels.cli.common import load_input_shown
    from kernels.compute.sweep import parse_grid

    grid = parse_grid(args.family, args.variant, args.grid)
    fixed = parse_param_assignments(args.param)
    cells = math.prod(len(values) for values in grid.values())
    with open_backend_from_args(args) as backend:
        # this machine's worker, or --scheduler's cluster; the measuring process starts (imports
        # numba, opens the GPU) while the input is read
        backend.prestart(args.target or backend.default_target(args.family, args.variant))
        graph = load_input_shown(args, args.input, format=args.format)
        with progress_of(args).task(f"sweep {args.family}/{args.variant}", total=cells, unit="cells") as task:
            sweep = _run_sweep(args, backend, task, graph, grid, fixed)
        if args.confirm and sweep.get("best") and not sweep["cancelled"]:
            sweep["confirmation"] = _confirm(args, backend, graph, sweep)
    return _report(args, sweep)


def _confirm(args, backend, graph, sweep: dict) -> dict:
    """``--confirm N``: the leaders in N fresh processes; the verdict is appended to the file."""
    from kernels.compute.confirm import confirm_best
    from kernels.results.sweep_file import SweepWriter

    with progress_of(args).task("confirm the best", total=args.confirm, unit="processes") as task:
        confirmation = confirm_best(graph, sweep, backend, args.confirm,
                                    progress=lambda done, total: task.update(completed=done))
    with SweepWriter.reopen(args.out) as writer:
        writer.write(confirmation)
    return {k: v for k, v in confirmation.items() if k != "kind"}


def _run_sweep(args, backend, task, graph, grid: dict, fixed: dict) -> dict:
    from kernels.compute.sweep import run_sweep
    from kernels.results.records import Strategy

    progress = SweepProgress(task, remote=backend.kind != "local")   # cells done, failed and the best so far
    if args.resume:
        progress.seed(previous_cells(args.out))
    return run_sweep(graph, args.family, args.variant, grid, fixed=fixed, target=args.target, repeat=args.repeat,
                     warmup=args.warmup, seed=args.seed, launch=args.launch, energy=args.energy,
                     time_limit=args.time_limit,
                     progress=progress, backend=backend, out=args.out, resume=args.resume,
                     strategy=Strategy(args.strategy, args.budget_cells, args.budget_seconds, args.seed))


def _report(args, sweep: dict) -> int:
    """The heatmap as text, the counts and best, where the time went; the exit status."""
    from kernels.results import sweep_to_csv
    from kernels.results.heatmap import heatmap_table, to_text
    from kernels.results.records import describe_sweep_time

    for notice in sweep.get("notices", []):
        print(f"note: {notice}", file=sys.stderr)
    if args.csv:
        sweep_to_csv(sweep, args.csv)
    print(to_text(heatmap_table(sweep)))
    counts = {}
    for c in sweep["cells"]:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    best = sweep["best"]
    print(f"{summary}; best: {best['params'] if best else 'none'}"
          + (f" at {best['median_s'] * 1e3:.4g} ms" if best else "")
          + (" (cancelled: partial sweep saved)" if sweep["cancelled"] else "")
          + (" (budget spent)" if sweep["stopped"] == "budget" else ""))
    if isinstance(sweep.get("time"), dict):
        print(f"time: {describe_sweep_time(sweep['time'])}")
    tied = [p for p in sweep.get("tied_with_best") or [] if best is None or p != best["params"]]
    if tied:
        print("cannot be told apart from the best (95 %, docs/results.md): "
              + "; ".join(" ".join(f"{k}={v}" for k, v in p.items()) for p in tied[:8])
              + (f" and {len(tied) - 8} more" if len(tied) > 8 else ""))
    if isinstance(sweep.get("confirmation"), dict):
        from kernels.compute.confirm import describe

        print(describe(sweep["confirmation"], best["params"]))
    print(f"saved {args.out}")
    lost = [c for c in sweep["cells"] if c["status"] == "lost"]
    if lost:
        print(f"graph-kernels: error: {lost_sentence(sweep, lost, args.out)}", file=sys.stderr)
        return EXIT_LOST
    return 130 if sweep["cancelled"] else 0


EXIT_LOST = 75      # EX_TEMPFAIL (sysexits.h): nothing is wrong with the request; run it again (--resume)


def lost_sentence(sweep: dict, lost: list[dict], out) -> str:
    """What was lost, why (the last lost cell's reason) and how to get it back, in one sentence."""
    answered = sum(1 for c in sweep["cells"] if c["status"] != "lost")
    reason = lost[-1].get("reason") or "the cluster was lost"
    return (f"{len(lost)} cell(s) were lost ({reason}); the {answered} other cell(s) are saved in {out}: "
            "run the same command with --resume to run the lost ones again")
