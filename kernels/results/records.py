"""The typed shapes of what the project writes: one builder for run records, one for sweeps.

Every run record comes from :class:`RunRecord` and every sweep file from :class:`SweepHeader`,
:class:`SweepCell` and :class:`SweepEnd`; their ``to_json`` give the plain dicts that
``kernels/results/schemas/*.schema.json`` describe (field by field in ``docs/results.md``). Code that
reads results keeps working on plain dicts: a file made elsewhere is data, not these objects.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field

RECORD_SCHEMA = 2           # version 1: before non-finite numbers were written as null
SWEEP_SCHEMA = 2            # version 1: one JSON document written at the end of the sweep


def utc_now(timespec: str = "seconds") -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec=timespec)


def _without_none(d: dict) -> dict:
    return {k: v for k, v in d.items() if v is not None}


@dataclass
class RunRecord:
    """One run of one variant on one input (a line of a ``.jsonl`` file, or a sweep cell's record)."""

    timestamp: str
    family: str
    variant: str
    kind: str
    target: str | None
    params: dict
    seed: int
    input: dict
    notices: list
    result: dict
    verified: bool
    verification: dict
    timing: dict
    metrics: list
    environment: dict
    #: the parameters that ran, when some of ``params`` were ``"auto"`` (else left out)
    resolved_params: dict | None = None

    def to_json(self) -> dict:
        out = {
            "schema": RECORD_SCHEMA,
            "timestamp": self.timestamp,
            "family": self.family,
            "variant": self.variant,
            "kind": self.kind,
            "target": self.target,
            "params": dict(self.params),
            "seed": self.seed,
            "input": dict(self.input),
            "notices": list(self.notices),
            "result": self.result,
            "verified": bool(self.verified),
            "verification": self.verification,
            "timing": self.timing,
            "metric": self.metrics[0] if self.metrics else {"name": "", "unit": "", "value": None},
            "metrics": list(self.metrics),
            "environment": self.environment,
            "status": "ok" if self.verified else "wrong",
        }
        if self.resolved_params is not None:
            out["resolved_params"] = dict(self.resolved_params)
        return out


def input_description(graph) -> dict:
    """What a sweep header says about its input before any cell has run."""
    return {"name": graph.name, "fingerprint": graph.fingerprint, "rows": graph.n_rows, "cols": graph.n_cols,
            "nnz": graph.nnz}


@dataclass
class Strategy:
    """How a sweep chooses its cells (see :mod:`kernels.compute.strategies`)."""

    name: str = "grid"                      # grid | random | local | imported
    budget_cells: int | None = None         # at most this many measured cells (invalid ones are free)
    budget_seconds: float | None = None     # stop starting cells after this many seconds
    seed: int = 0                           # of the random order (random, local)
    source: str | None = None               # imported: the format the cells came from

    def to_json(self) -> dict:
        return _without_none({"name": self.name, "budget_cells": self.budget_cells,
                              "budget_seconds": self.budget_seconds,
                              "seed": self.seed if self.name in ("random", "local", "bayes") else None,
                              "source": self.source})

    @classmethod
    def from_json(cls, d: dict | None) -> Strategy:
        d = d or {}
        return cls(d.get("name", "grid"), d.get("budget_cells"), d.get("budget_seconds"), d.get("seed", 0),
                   d.get("source"))


@dataclass
class SweepHeader:
    """The first line of a sweep file: what was swept, on what, where, and how cells are chosen."""

    family: str
    variant: str
    grid: dict
    input: dict
    target: str | None = None
    device: str | None = None               # the device name cells run on (compared on --resume)
    fixed: dict = field(default_factory=dict)
    repeat: int = 5
    warmup: int = 1
    launch: str = "auto"                    # the requested launch mode (each cell's record says what ran)
    seed: int = 0
    time_limit: float | None = None
    strategy: Strategy = field(default_factory=Strategy)
    total_cells: int = 0
    started: str = field(default_factory=utc_now)
    environment: dict | None = None
    backend: dict | None = None
    notices: list = field(default_factory=list)

    def to_json(self) -> dict:
        return _without_none({
            "kind": "sweep", "schema": SWEEP_SCHEMA,
            "family": self.family, "variant": self.variant, "target": self.target, "device": self.device,
            "input": dict(self.input), "grid": {k: list(v) for k, v in self.grid.items()},
            "fixed": dict(self.fixed), "repeat": self.repeat, "warmup": self.warmup, "launch": self.launch,
            "seed": self.seed,
            "time_limit": self.time_limit, "strategy": self.strategy.to_json(),
            "total_cells": self.total_cells, "started": self.started, "environment": self.environment,
            "backend": self.backend, "notices": list(self.notices) or None,
        })


@dataclass
class SweepCell:
    """One finished cell: its parameters (the swept ones), what became of it, and its record."""

    params: dict
    status: str                             # ok | invalid | failed | wrong | lost
    median_s: float | None = None
    reason: str | None = None
    record: dict | None = None
    worker: str | None = None
    device: str | None = None
    finished: str | None = None
    elapsed_s: float | None = None          # seconds from the sweep run's start to this cell's end

    @classmethod
    def from_record(cls, params: dict, record: dict, **where) -> SweepCell:
        cell = cls(params, "ok" if record["verified"] else "wrong", record=record,
                   median_s=record["timing"]["kernel"]["median_s"], **where)
        if not record["verified"]:
            cell.reason = "verification failed: " + record["verification"]["detail"]
        return cell

    def to_json(self) -> dict:
        return _without_none({"kind": "cell", "params": dict(self.params), "status": self.status,
                              "median_s": self.median_s, "reason": self.reason, "record": self.record,
                              "worker": self.worker or None, "device": self.device or None,
                              "finished": self.finished, "elapsed_s": self.elapsed_s})


@dataclass
class SweepEnd:
    """The last line of a sweep that stopped on its own (all cells, a budget, a cancel, or the
    cluster lost: cells are then ``lost`` and ``--resume`` runs them)."""

    finished: str = field(default_factory=utc_now)
    cancelled: bool = False                 # stopped by the user: cells are missing
    stopped: str = "complete"               # complete | budget | cancelled | lost
    time: dict | None = None                # where this run's time went (sweep_time)

    def to_json(self) -> dict:
        out = {"kind": "end", "finished": self.finished, "cancelled": self.cancelled, "stopped": self.stopped}
        if self.time is not None:
            out["time"] = self.time
        return out


def sweep_time(cells: list[dict], wall_s: float, compile_ahead: dict | None = None) -> dict:
    """Where a sweep run's time went, from the cells it ran (not those a resumed file held):
    the wall clock, the GPU time of the timed launches, compiling (in the measuring processes,
    and ahead of them) and the kernels found in the disk cache."""
    ran = [c for c in cells if isinstance(c.get("record"), dict)]
    timed = compile_stage = compile_s = 0.0
    hits = compiled = 0
    for cell in ran:
        timing = cell["record"].get("timing") or {}
        kernel = timing.get("kernel") or {}
        per = kernel.get("launches_per_sample") or 1
        timed += sum(s * per for s in kernel.get("samples") or [] if isinstance(s, (int, float)))
        compile_stage += timing.get("compile_s") or 0.0
        cache = timing.get("cache") or {}
        compile_s += cache.get("compile_s", 0.0)
        hits += cache.get("hits", 0)
        compiled += cache.get("compiled", 0)
    firsts = [c["elapsed_s"] for c in ran if isinstance(c.get("elapsed_s"), (int, float))]
    out = {"wall_s": round(wall_s, 3), "cells": len(ran),
           "cells_per_s": round(len(ran) / wall_s, 3) if wall_s > 0 else None,
           "timed_gpu_s": round(timed, 6), "compile_stage_s": round(compile_stage, 3),
           "compiled_here": compiled, "compile_here_s": round(compile_s, 3), "cache_hits": hits}
    if firsts:
        out["first_cell_s"] = round(min(firsts), 3)      # the start-up a sweep pays before its first result
    if compile_ahead:
        out["compile_ahead"] = compile_ahead
    return out


def describe_sweep_time(t: dict) -> str:
    """One line of :func:`sweep_time` for people."""
    rate = f" ({t['cells_per_s']:.2f} cells/s)" if t.get("cells_per_s") else ""
    first = f", the first after {t['first_cell_s']:.1f} s" if t.get("first_cell_s") is not None else ""
    text = (f"{t['wall_s']:.1f} s for {t['cells']} cells{rate}{first}; timed launches {t['timed_gpu_s'] * 1e3:.1f} ms; "
            f"compile stage {t['compile_stage_s']:.1f} s ({t['compiled_here']} kernels compiled here in "
            f"{t['compile_here_s']:.1f} s, {t['cache_hits']} from the kernel cache)")
    ahead = t.get("compile_ahead")
    if ahead:
        text += (f"; compiled ahead: {ahead.get('cells', 0)} cells in {ahead.get('compile_s', 0):.1f} s by "
                 f"{ahead.get('processes', 0)} processes")
    return text


@dataclass
class SweepResume:
    """A line written when ``--resume`` continues the file: when, and how many cells it found."""

    started: str = field(default_factory=utc_now)
    cells_found: int = 0

    def to_json(self) -> dict:
        return {"kind": "resume", "started": self.started, "cells_found": self.cells_found}
