"""Parameter sweeps: combinations of a grid, each run, timed and verified.

Which combinations run is the strategy's choice (:mod:`kernels.compute.strategies`: the whole
grid by default, a random sample, a local search, within a budget of cells or seconds).
Combinations that break a constraint are recorded as *invalid* and not run. Valid ones run
through a compute backend (:mod:`kernels.compute.backend`: the local worker process, or the
workers of a Dask cluster) with a time limit: a configuration that crashes or hangs is
recorded as *failed* (the worker is restarted) and the sweep goes on. Each finished cell is
appended to the sweep's file at once (:class:`kernels.results.sweep_file.SweepWriter`), so a
killed sweep keeps what finished, and ``resume=True`` runs only the cells the file lacks,
after checking that the file is a sweep of the same thing. Progress is reported after each
cell, in the order cells finish; a sweep can be cancelled and keeps what finished. The sweep
names the best configuration and the sets within 5 % and 10 % of it (the paper's flat region).
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from kernels.algorithms.registry import get_variant
from kernels.compute.resume import check_resumable
from kernels.compute.strategies import SearchSpace, check_strategy, search, unique_values
from kernels.errors import ConstraintError, GraphKernelsError, ParameterError
from kernels.measure.cuda_graphs import check_launch_mode
from kernels.measure.environment import environment
from kernels.measure.targets import needs_gpu
from kernels.results.records import (
    Strategy,
    SweepCell,
    SweepEnd,
    SweepHeader,
    SweepResume,
    input_description,
    sweep_time,
    utc_now,
)
from kernels.results.sweep_file import (  # noqa: F401  (FLAT_REGIONS, summarize_best: re-exported)
    FLAT_REGIONS,
    SweepWriter,
    assemble,
    is_sweep_lines,
    summarize_best,
    write_sweep,
)
from kernels.run.runner import check_repetitions


def parse_grid(family: str, variant: str, grid_items: list[str]) -> dict[str, list]:
    """``["wg=32,64", "rows=1,2"]`` → typed, validated value lists (an empty value list
    means "the parameter's default sweep values")."""
    fam, var = get_variant(family, variant)
    declared = {p.name: p for p in fam.all_params(var)}
    grid: dict[str, list] = {}
    for item in grid_items:
        name, _, values = item.partition("=")
        name = name.strip()
        if name not in declared:
            raise ParameterError(name, values, f"parameters of {family}/{variant}: {', '.join(declared)}",
                                 detail="unknown parameter")
        p = declared[name]
        texts = [v for v in values.split(",") if v.strip()]
        grid[name] = [p.parse(v) for v in texts] if texts else p.grid_values()
    if not grid:
        raise GraphKernelsError("a sweep needs at least one --grid NAME=V1,V2,...")
    return grid


def _device_name(backend, target: str) -> str | None:
    """The device this sweep's cells will run on: for ``cuda``, the GPU kind(s) of the workers
    that will run them (a cluster's, not the client's CPU), else the first worker's device."""
    try:
        workers = backend.describe()
    except GraphKernelsError:
        workers = []
    if needs_gpu(target) and workers:
        chosen = None
        if hasattr(backend, "choose_workers"):
            with contextlib.suppress(GraphKernelsError):
                chosen, _ = backend.choose_workers(target)
        kinds = Counter(w.gpu["name"] for w in workers
                        if w.can_run_gpu and (chosen is None or w.address in chosen))
        if kinds:
            return " + ".join(name if len(kinds) == 1 else f"{n} x {name}" for name, n in kinds.most_common())
    if workers:
        return workers[0].device_kind(target)
    return environment(target)["device"].get("name")


class _Session:
    """One sweep run: the cells known so far (from a resumed file, then new ones), the budget,
    the file each finished cell is appended to, and :meth:`evaluate`, which the strategy calls."""

    def __init__(self, *, fam, var, family, variant, space, fixed, strategy, backend, key, target, repeat, warmup,
                 seed, time_limit, progress, cancel, writer, known, total, launch="auto", energy=False):
        import time

        self.fam, self.var, self.family, self.variant = fam, var, family, variant
        self.space, self.fixed, self.strategy, self.backend, self.key = space, fixed, strategy, backend, key
        self.target, self.repeat, self.warmup, self.seed, self.time_limit = target, repeat, warmup, seed, time_limit
        self.progress, self.user_cancel, self.writer, self.total = progress, cancel, writer, total
        self.launch, self.energy = launch, energy
        # a lost cell (infrastructure, not the kernel) stays in the sweep until it is run again, and
        # is not "known": the strategy asks for it again, so --resume runs it
        self.cells = list(known)
        self.known = {space.key(c["params"]): c for c in known if c["status"] != "lost"}
        self.measured = sum(1 for c in known if c["status"] not in ("invalid", "lost"))
        self.deadline = None if strategy.budget_seconds is None else time.monotonic() + strategy.budget_seconds
        self.graph_added = False
        self.cancelled = False
        self.lost: str | None = None    # why the backend was lost for good (the sweep stops)
        self.lost_keys = {space.key(c["params"]) for c in known if c["status"] == "lost"}
        self.new_cells: list[dict] = []     # the cells this run finished (for its time summary)
        self.started = time.monotonic()     # a cell's elapsed_s counts from here (the run's start)

    def valid(self, combo: dict) -> bool:
        """Whether the combination keeps the variant's constraints (a search proposes only those)."""
        return self.fam.constraint_violation(self.var, {**self.fixed, **combo}) is None

    def out_of_time(self) -> bool:
        import time

        return self.deadline is not None and time.monotonic() >= self.deadline

    def budget_spent(self) -> bool:
        cells = self.strategy.budget_cells
        return (cells is not None and self.measured >= cells) or self.out_of_time()

    def exhausted(self) -> bool:
        return self.cancelled or self.lost is not None or self.budget_spent()

    def _stop_now(self) -> bool:
        if self.user_cancel is not None and self.user_cancel():
            self.cancelled = True
        return self.cancelled or self.out_of_time()

    def _finished(self, cell: SweepCell) -> dict:
        import time

        cell.finished = utc_now(timespec="milliseconds")
        cell.elapsed_s = round(time.monotonic() - self.started, 3)
        line = cell.to_json()
        if self.writer is not None:
            self.writer.write(line)
        out = {k: v for k, v in line.items() if k != "kind"}
        key = self.space.key(cell.params)
        if key in self.lost_keys:       # run again after it was lost: this answer replaces that line's
            self.lost_keys.discard(key)
            self.cells = [c for c in self.cells if not (c["status"] == "lost" and self.space.key(c["params"]) == key)]
        if cell.status == "lost":
            self.lost_keys.add(key)
        self.cells.append(out)
        self.new_cells.append(out)
        if cell.status == "lost":
            self.known.pop(key, None)
        else:
            self.known[key] = out
        if cell.status not in ("invalid", "lost"):
            self.measured += 1
        if self.progress is not None:
            self.progress(len(self.cells), self.total, out)
        return out

    def evaluate(self, combos, limit: int | None = None) -> list[dict]:
        """The cells of ``combos``: known ones as they are, invalid ones recorded, and at most
        ``limit`` (and the budget's remainder) new valid ones run as one batch."""
        from kernels.compute.backend import CANCELLED, BackendLost, Job

        if self.exhausted():
            return [self.known[k] for k in map(self.space.key, combos) if k in self.known]
        room = None if self.strategy.budget_cells is None else self.strategy.budget_cells - self.measured
        if limit is not None:
            room = limit if room is None else min(room, limit)
        out, jobs, queued = [], [], set()
        for combo in combos:
            key = self.space.key(combo)
            if key in self.known:
                out.append(self.known[key])
                continue
            if key in queued:
                continue
            if room is not None and len(jobs) >= room:
                break
            params = {**self.fixed, **combo}
            try:
                self.fam.resolve_params(self.var, params)
            except (ConstraintError, ParameterError) as exc:
                out.append(self._finished(SweepCell(combo, "invalid", reason=str(exc))))
                continue
            queued.add(key)
            jobs.append(Job(self.key, self.family, self.variant, params, target=self.target, repeat=self.repeat,
                            warmup=self.warmup, seed=self.seed, time_limit=self.time_limit, tag=combo,
                            launch=self.launch, energy=self.energy))
        if not jobs:
            return out
        if not self.graph_added:
            self.backend.add_graph(self.key, self.graph)
            self.graph_added = True
        answered = set()
        try:
            for outcome in self.backend.run_many(jobs, cancel=self._stop_now):
                combo = outcome.job.tag
                answered.add(id(outcome.job))
                if outcome.ok:
                    cell = SweepCell.from_record(combo, outcome.record, worker=outcome.worker, device=outcome.device)
                elif outcome.failure == CANCELLED:
                    continue
                elif outcome.lost:      # the status says it: the reason says only why
                    cell = SweepCell(combo, "lost", reason=outcome.message, worker=outcome.worker,
                                     device=outcome.device)
                else:
                    cell = SweepCell(combo, "failed", reason=outcome.reason, worker=outcome.worker,
                                     device=outcome.device)
                out.append(self._finished(cell))
        except GraphKernelsError as exc:
            if self.backend.usable() and not isinstance(exc, BackendLost):
                raise
            # the cluster went away between the jobs' outcomes: the rest are lost, not failed
            self.lost = str(exc)
            for job in jobs:
                if id(job) not in answered:
                    out.append(self._finished(SweepCell(job.tag, "lost", reason=str(exc))))
        if not self.backend.usable():
            lost = [c for c in out if c["status"] == "lost"]
            self.lost = lost[-1]["reason"] if lost else f"the backend at {self.backend.address} was lost"
        self._stop_now()
        return out


def run_sweep(graph, family: str, variant: str, grid: dict[str, list], *, fixed: dict | None = None,
              target: str | None = None, repeat: int = 5, warmup: int = 1, seed: int = 0,
              time_limit: float = 300.0, progress: Callable[[int, int, dict], None] | None = None,
              cancel: Callable[[], bool] | None = None, client=None, backend=None,
              out=None, resume: bool = False, strategy: Strategy | None = None, launch: str = "auto",
              energy: bool = False) -> dict:
    """Run the sweep and return it (a dict as :func:`kernels.results.load_sweep` returns).

    Valid cells go to ``backend`` (a :class:`~kernels.compute.backend.ComputeBackend`; by
    default a local one, or one around the given local ``client``) in batches (the whole grid
    is one batch); cells arrive as they finish, possibly out of grid order
    (``progress(done, total, cell)`` is called for each), and the returned sweep lists them in
    grid order. Each run cell names the ``worker`` and the ``device`` that ran it.

    ``out`` (a path) receives the sweep as it runs: its header first, then each cell as it
    finishes, then an end line. With ``resume=True`` an existing ``out`` is continued: it must
    be a sweep of the same input, variant, grid, fixed parameters, target, device and strategy
    (:func:`kernels.compute.resume.check_resumable` refuses it in one line otherwise), and only
    the cells it lacks are run. ``strategy`` chooses the cells (default: the whole grid).
    ``launch`` (auto, graph, direct) is every cell's launch mode (``run_variant``'s), kept in
    the header; each cell's record says which mode ran."""
    fam, var = get_variant(family, variant)
    check_repetitions(repeat, warmup)
    check_launch_mode(launch)
    if not isinstance(time_limit, (int, float)) or not math.isfinite(time_limit) or time_limit <= 0:
        raise ParameterError("time_limit", time_limit, "a finite number of seconds > 0")
    strategy = check_strategy(strategy or Strategy())
    fixed = dict(fixed or {})
    if strategy.name == "bayes" and strategy.budget_cells is None:
        # a model-based search is for measuring less than the grid: a third of its valid cells
        # unless told (an invalid cell costs nothing, so it does not count)
        valid = sum(fam.constraint_violation(var, {**fixed, **combo}) is None
                    for combo in SearchSpace(unique_values(grid)).combos())
        strategy = Strategy(strategy.name, max(4, -(-valid // 3)), strategy.budget_seconds, strategy.seed,
                            strategy.source)
    for name in fixed:
        if name in grid:
            raise GraphKernelsError(f"parameter '{name}' is both fixed (--param) and swept (--grid)")
    grid = unique_values(grid)
    space = SearchSpace(grid)
    own_backend = backend is None
    if own_backend:
        from kernels.compute.local_backend import LocalBackend

        backend = LocalBackend(client=client) if client is not None else LocalBackend()
    try:
        return _run(graph, fam, var, family, variant, grid, space, fixed, target, repeat, warmup, seed,
                    time_limit, progress, cancel, backend, out, resume, strategy, launch, energy)
    finally:
        if own_backend:
            backend.close()


def _planned(strategy: Strategy, space: SearchSpace) -> int:
    if strategy.budget_cells is not None:
        return min(strategy.budget_cells, len(space))
    return len(space)


def _run(graph, fam, var, family, variant, grid, space, fixed, target, repeat, warmup, seed, time_limit,
         progress, cancel, backend, out, resume, strategy, launch="auto", energy=False) -> dict:
    import time

    from kernels.results import load_sweep

    started = time.monotonic()
    resolved_target = target or backend.default_target(family, variant)
    header = SweepHeader(
        family=family, variant=variant, grid={k: list(v) for k, v in grid.items()}, input=input_description(graph),
        target=resolved_target, device=_device_name(backend, resolved_target),
        fixed=fixed, repeat=repeat, warmup=warmup, launch=launch, seed=seed, time_limit=time_limit,
        strategy=strategy, total_cells=len(space),
        # a cluster's environment is its workers': the cells' records say it (assemble takes the first)
        environment=environment(resolved_target) if backend.kind == "local" else None,
        backend={"kind": backend.kind, "address": backend.address}).to_json()
    known: list[dict] = []
    resumed: list[str] = []
    writer = None
    if out is not None and resume and Path(out).exists():
        previous = load_sweep(out)
        check_resumable(previous, header, out)
        known, resumed = previous["cells"], previous.get("resumed", [])
        header = {k: previous[k] for k in header if k in previous} | {"notices": previous.get("notices", [])}
        header = {k: v for k, v in header.items() if v not in (None, [])}
        if not is_sweep_lines(out):     # a version 1 file: rewritten as JSON lines before appending
            write_sweep(previous, out)
        writer = SweepWriter.reopen(out)
        line = SweepResume(cells_found=len(known)).to_json()
        writer.write(line)
        resumed = [*resumed, line["started"]]
    elif out is not None:
        writer = SweepWriter.create(out, header)
    session = _Session(fam=fam, var=var, family=family, variant=variant, space=space, fixed=fixed,
                       strategy=strategy, backend=backend, key=f"sweep-{graph.fingerprint}", target=target,
                       repeat=repeat, warmup=warmup, seed=seed, time_limit=time_limit, progress=progress,
                       cancel=cancel, writer=writer, known=known, total=_planned(strategy, space), launch=launch,
                       energy=energy)
    session.graph = graph
    session.started = started
    try:
        search(strategy, space, session.evaluate, session.exhausted, valid=session.valid,
               batch=backend.parallelism(header["target"]))
    except KeyboardInterrupt:
        session.cancelled = True
    except BaseException:
        if writer is not None:          # the file stays as it is: interrupted, every finished cell kept
            writer.close()
        raise
    if backend.notices:
        header["notices"] = list(dict.fromkeys([*header.get("notices", []), *backend.notices]))
    missing = strategy.name == "grid" and len(session.known) < len(space)
    if session.lost is not None or any(c["status"] == "lost" for c in session.cells):
        stopped = "lost"
    elif session.budget_spent() and (missing or strategy.name != "grid"):
        stopped = "budget"
    elif session.cancelled or missing:     # a grid left unfinished was cancelled, whoever asked
        stopped = "cancelled"
    else:
        stopped = "complete"
    ahead = getattr(backend, "compile_ahead_stats", lambda: None)()
    end = SweepEnd(cancelled=stopped == "cancelled", stopped=stopped,
                   time=sweep_time(session.new_cells, time.monotonic() - started, ahead)).to_json()
    if writer is not None:
        writer.write(end)
        writer.close()
    return assemble(header, session.cells, resumed, end)
