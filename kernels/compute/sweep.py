"""Parameter sweeps: every combination of a grid, each run, timed and verified.

Combinations that break a constraint are recorded as *invalid* and not run. Valid ones run
in the worker process with a time limit: a configuration that crashes or hangs is recorded
as *failed* (the worker is restarted) and the sweep goes on. Progress is reported after each
cell; a sweep can be cancelled and keeps what finished. The saved sweep names the best
configuration and the sets within 5 % and 10 % of it (the paper's flat region).
"""

from __future__ import annotations

import datetime as _dt
import itertools
import math
from collections.abc import Callable

from kernels.algorithms.registry import get_variant
from kernels.compute.local.client import WorkerClient, WorkerDied, WorkerError, WorkerTimeout
from kernels.errors import ConstraintError, GraphKernelsError, ParameterError
from kernels.measure.environment import environment
from kernels.measure.runner import check_repetitions

FLAT_REGIONS = (0.05, 0.10)


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


def run_sweep(graph, family: str, variant: str, grid: dict[str, list], *, fixed: dict | None = None,
              target: str | None = None, repeat: int = 5, warmup: int = 1, seed: int = 0,
              time_limit: float = 300.0, progress: Callable[[int, int, dict], None] | None = None,
              cancel: Callable[[], bool] | None = None, client: WorkerClient | None = None) -> dict:
    """Run the sweep and return it as a dict ready for :func:`kernels.results.save_sweep`."""
    fam, var = get_variant(family, variant)
    check_repetitions(repeat, warmup)
    if not isinstance(time_limit, (int, float)) or not math.isfinite(time_limit) or time_limit <= 0:
        raise ParameterError("time_limit", time_limit, "a finite number of seconds > 0")
    fixed = dict(fixed or {})
    for name in fixed:
        if name in grid:
            raise GraphKernelsError(f"parameter '{name}' is both fixed (--param) and swept (--grid)")
    combos = list(_cells(grid))
    own_client = client is None
    if own_client:
        client = WorkerClient(target=target if target in ("cuda", "sim") else None)
    key = f"sweep-{graph.fingerprint}"
    client.add_graph(key, graph)
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    cells: list[dict] = []
    cancelled = False
    try:
        for i, combo in enumerate(combos):
            if cancel is not None and cancel():
                cancelled = True
                break
            params = {**fixed, **combo}
            cell = {"params": combo}
            try:
                fam.resolve_params(var, params)
            except ConstraintError as exc:
                cell.update(status="invalid", reason=str(exc))
            except ParameterError as exc:
                cell.update(status="invalid", reason=str(exc))
            else:
                try:
                    reply = client.run(key, family, variant, params, target=target, repeat=repeat,
                                       warmup=warmup, seed=seed, timeout=time_limit, cancel=cancel)
                    rec = reply["record"]
                    cell.update(status="ok" if rec["verified"] else "wrong", record=rec,
                                median_s=rec["timing"]["kernel"]["median_s"])
                    if not rec["verified"]:
                        cell["reason"] = "verification failed: " + rec["verification"]["detail"]
                except WorkerDied as exc:
                    if cancel is not None and cancel():
                        cancelled = True
                        break
                    cell.update(status="failed", reason=f"crashed: {exc}")
                except WorkerTimeout as exc:
                    cell.update(status="failed", reason=f"timed out: {exc}")
                except WorkerError as exc:
                    cell.update(status="failed", reason=f"{exc.kind}: {exc}")
            cells.append(cell)
            if progress is not None:
                progress(i + 1, len(combos), cell)
    except KeyboardInterrupt:
        cancelled = True
    finally:
        if own_client:
            client.close()
    first = next((c["record"] for c in cells if c.get("record")), None)
    return {
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
        "cells": cells,
        "total_cells": len(combos),
        "cancelled": cancelled,
        "started": started,
        "finished": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "environment": first["environment"] if first else environment(target or "cpu"),
        **summarize_best(cells),
    }
