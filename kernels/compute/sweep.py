"""Parameter sweeps: every combination of a grid, each run, timed and verified.

Combinations that break a constraint are recorded as *invalid* and not run. Valid ones run
through a compute backend (:mod:`kernels.compute.backend`: the local worker process, or the
workers of a Dask cluster) with a time limit: a configuration that crashes or hangs is
recorded as *failed* (the worker is restarted) and the sweep goes on. Progress is reported
after each cell, in the order cells finish; a sweep can be cancelled and keeps what finished.
The saved sweep names the best configuration and the sets within 5 % and 10 % of it (the paper's flat region).
"""

from __future__ import annotations

import datetime as _dt
import itertools
import math
import time
from collections.abc import Callable

from kernels.algorithms.registry import get_variant
from kernels.errors import ConstraintError, GraphKernelsError, ParameterError
from kernels.measure.environment import environment
from kernels.measure.runner import check_repetitions

FLAT_REGIONS = (0.05, 0.10)
CHECKPOINT_EVERY_S = 1.0


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


def _cells(grid: dict[str, list]):
    names = list(grid)
    for combo in itertools.product(*(grid[n] for n in names)):
        yield dict(zip(names, combo, strict=True))


def summarize_best(cells: list[dict]) -> dict:
    ok = [c for c in cells if c["status"] == "ok" and c.get("median_s")]
    if not ok:
        return {"best": None, **{f"within_{int(f * 100)}pct": [] for f in FLAT_REGIONS}}
    best = min(ok, key=lambda c: c["median_s"])
    out = {"best": {"params": best["params"], "median_s": best["median_s"]}}
    for f in FLAT_REGIONS:
        out[f"within_{int(f * 100)}pct"] = [c["params"] for c in ok if c["median_s"] <= best["median_s"] * (1 + f)]
    return out


def _sweep_dict(graph, family, variant, grid, fixed, target, repeat, combos, cells, cancelled, started,
                backend) -> dict:
    ordered = sorted(cells, key=lambda c: c["position"])
    cells_out = [{k: v for k, v in c.items() if k != "position"} for c in ordered]
    first = next((c["record"] for c in cells_out if c.get("record")), None)
    sweep = {
        "kind": "sweep",
        "schema": 1,
        "family": family,
        "variant": variant,
        "target": first["target"] if first else target,
        "input": first["input"] if first else {"name": graph.name, "fingerprint": graph.fingerprint,
                                               "rows": graph.n_rows, "cols": graph.n_cols,
                                               "nnz": graph.nnz},
        "grid": grid,
        "fixed": fixed,
        "repeat": repeat,
        "cells": cells_out,
        "total_cells": len(combos),
        "cancelled": cancelled,
        "started": started,
        "finished": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "environment": first["environment"] if first else environment(target or "cpu"),
        "backend": {"kind": backend.kind, "address": backend.address},
        **summarize_best(cells_out),
    }
    if backend.notices:
        sweep["notices"] = list(backend.notices)
    return sweep


class _Checkpoint:
    """The sweep-so-far written atomically to ``path`` as cells finish, at most every ``every_s``."""

    def __init__(self, path, every_s: float = CHECKPOINT_EVERY_S):
        self.path, self.every_s, self.last = path, every_s, 0.0

    def __call__(self, make_sweep, force: bool = False) -> None:
        if self.path is None:
            return
        now = time.monotonic()
        if force or now - self.last >= self.every_s:
            from kernels.results import save_sweep

            save_sweep(make_sweep(), self.path)
            self.last = now


def run_sweep(graph, family: str, variant: str, grid: dict[str, list], *, fixed: dict | None = None,
              target: str | None = None, repeat: int = 5, warmup: int = 1, seed: int = 0,
              time_limit: float = 300.0, progress: Callable[[int, int, dict], None] | None = None,
              cancel: Callable[[], bool] | None = None, client=None, backend=None,
              checkpoint=None) -> dict:
    """Run the sweep and return it as a dict ready for :func:`kernels.results.save_sweep`.

    Valid cells go to ``backend`` (a :class:`~kernels.compute.backend.ComputeBackend`; by
    default a local one, or one around the given local ``client``) as one batch; cells arrive
    as they finish, possibly out of grid order (``progress(done, total, cell)`` is called for
    each, invalid cells first), and the saved sweep lists them in grid order. Each run cell
    names the ``worker`` and the ``device`` that ran it. ``checkpoint`` (a path) receives the
    sweep-so-far as cells finish (at most once a second) and the final sweep."""
    from kernels.compute.backend import CANCELLED, Job

    fam, var = get_variant(family, variant)
    check_repetitions(repeat, warmup)
    if not isinstance(time_limit, (int, float)) or not math.isfinite(time_limit) or time_limit <= 0:
        raise ParameterError("time_limit", time_limit, "a finite number of seconds > 0")
    fixed = dict(fixed or {})
    for name in fixed:
        if name in grid:
            raise GraphKernelsError(f"parameter '{name}' is both fixed (--param) and swept (--grid)")
    combos = list(_cells(grid))
    own_backend = backend is None
    if own_backend:
        from kernels.compute.local.backend import LocalBackend

        backend = LocalBackend(client=client) if client is not None else LocalBackend()
    key = f"sweep-{graph.fingerprint}"
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    cells: list[dict] = []
    jobs: list = []
    cancelled = False
    save = _Checkpoint(checkpoint)

    def snapshot() -> dict:
        return _sweep_dict(graph, family, variant, grid, fixed, target, repeat, combos, cells, cancelled,
                           started, backend)

    def finished(cell: dict) -> None:
        cells.append(cell)
        if progress is not None:
            progress(len(cells), len(combos), {k: v for k, v in cell.items() if k != "position"})
        save(snapshot)

    try:
        for position, combo in enumerate(combos):
            params = {**fixed, **combo}
            try:
                fam.resolve_params(var, params)
            except (ConstraintError, ParameterError) as exc:
                finished({"position": position, "params": combo, "status": "invalid", "reason": str(exc)})
            else:
                jobs.append(Job(key, family, variant, params, target=target, repeat=repeat, warmup=warmup,
                                seed=seed, time_limit=time_limit, tag=(position, combo)))
        if jobs:
            backend.add_graph(key, graph)
            for outcome in backend.run_many(jobs, cancel=cancel):
                position, combo = outcome.job.tag
                cell = {"position": position, "params": combo}
                if outcome.ok:
                    rec = outcome.record
                    cell.update(status="ok" if rec["verified"] else "wrong", record=rec,
                                median_s=rec["timing"]["kernel"]["median_s"])
                    if not rec["verified"]:
                        cell["reason"] = "verification failed: " + rec["verification"]["detail"]
                elif outcome.failure == CANCELLED:
                    continue
                else:
                    cell.update(status="failed", reason=outcome.reason)
                cell.update(worker=outcome.worker, device=outcome.device)
                finished(cell)
        cancelled = len(cells) < len(combos)
    except KeyboardInterrupt:
        cancelled = True
    finally:
        if own_backend:
            backend.close()
    sweep = snapshot()
    save(lambda: sweep, force=True)
    return sweep
