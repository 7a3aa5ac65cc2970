"""Kernel Tuner cache files, both ways: our sweeps exported for KTdashboard and Kernel Tuner's
simulation mode, and Kernel Tuner's caches imported as sweeps (the heatmap, the GUI).

A Kernel Tuner cache file (``kernel_tuner/util.py``: ``process_cache``, ``store_cache``,
``read_cache``; its published schema ``kernel_tuner/schema/cache/1.1.0``) is one JSON object:
``device_name``, ``kernel_name``, ``problem_size``, ``tune_params_keys`` (the parameters' order),
``tune_params`` (each parameter's values), ``objective`` and ``cache``, which maps a key — the
configuration's values joined by commas, in ``tune_params_keys`` order — to an entry holding the
parameters, ``time`` (milliseconds, or an error marker such as ``"InvalidConfig"``), ``times`` (the
samples, ms), ``compile_time``, ``verification_time``, ``benchmark_time``, ``strategy_time``,
``framework_time`` (ms) and a ``timestamp``. Kernel Tuner writes the file as it tunes and leaves
it unterminated when killed; its reader closes such a file, and so does ours.

The mapping (every field in ``docs/results.md``): the grid is ``tune_params``; a cell is an
entry; ``ok`` ↔ a time in ms, ``invalid`` ↔ ``InvalidConfig``, ``failed`` and ``wrong`` ↔
``RuntimeFailedConfig`` (with ``gge_status`` and ``gge_reason`` so our import restores them);
a cell not measured has no entry. ``kernel_name`` is ``family/variant``. A grid value ``auto``
(``docs/defaults.md``) is exported as the string ``"auto"``; the value it chose on the sweep's
input is the entry's ``gge_resolved``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from kernels import json_input
from kernels.errors import GraphFormatError
from kernels.results.records import SWEEP_SCHEMA, utc_now
from kernels.results.schema import (
    MAX_GRID_VALUES,
    MAX_SWEEP_CELLS,
    check_cells_match_grid,
    check_size,
    check_sweep_header,
)
from kernels.results.sweep_file import assemble

# Kernel Tuner's error markers (the names of its ErrorConfig classes in kernel_tuner.util)
INVALID = "InvalidConfig"
COMPILATION_FAILED = "CompilationFailedConfig"
RUNTIME_FAILED = "RuntimeFailedConfig"
ERROR = "ErrorConfig"
CACHE_SCHEMA_VERSION = "1.1.0"      # the published cache schema our exports follow

_MS = 1e3


def _ms(seconds):
    return seconds * _MS if isinstance(seconds, (int, float)) and math.isfinite(seconds) else None


def _config_key(values) -> str:
    # Kernel Tuner's key: str() of each value, joined by commas (kernel_tuner.util / runners)
    return ",".join(str(v) for v in values)


def _problem_size(inp: dict) -> list[int]:
    sizes = [inp.get(k) for k in ("rows", "cols", "nnz")]
    return [s for s in sizes if isinstance(s, int) and not isinstance(s, bool)] or [0]


def _cell_entry(cell: dict, names: list[str], when: str) -> dict:
    record = cell.get("record") or {}
    timing = record.get("timing") or {}
    kernel = timing.get("kernel") or {}
    samples = [_ms(s) for s in kernel.get("samples") or []]
    samples = [s for s in samples if s is not None]
    status = cell["status"]
    if status == "ok" and _ms(cell.get("median_s")) is not None:
        time = _ms(cell["median_s"])
    else:
        time = INVALID if status == "invalid" else RUNTIME_FAILED
    entry = {name: cell["params"][name] for name in names}
    entry.update({
        "time": time,
        "times": samples,
        "compile_time": _ms(timing.get("compile_s")) or 0.0,
        "verification_time": 0,
        "benchmark_time": sum(samples),
        "strategy_time": 0,
        "framework_time": 0,
        "timestamp": cell.get("finished") or record.get("timestamp") or when,
        "gge_status": status,
    })
    if "verified" in record:
        entry["gge_verified"] = bool(record["verified"])
    if isinstance(record.get("resolved_params"), dict):
        # a grid value "auto" stays the string "auto" (Kernel Tuner keeps string-valued parameters);
        # what it chose for this cell's input travels beside it
        entry["gge_resolved"] = {name: record["resolved_params"].get(name) for name in names}
    if cell.get("reason"):
        entry["gge_reason"] = cell["reason"]
    metric = record.get("metric") or {}
    value = metric.get("value")
    if metric.get("name") and metric["name"] not in entry and isinstance(value, (int, float)) and math.isfinite(value):
        entry[metric["name"]] = value
    return entry


def to_kernel_tuner(sweep: dict) -> dict:
    """The sweep as a Kernel Tuner cache document (measured and invalid cells; unmeasured
    cells, and lost ones, which were never measured, have no entry)."""
    names = list(sweep["grid"])
    when = sweep.get("finished") or sweep.get("started") or utc_now()
    device = sweep.get("device") or ((sweep.get("environment") or {}).get("device") or {}).get("name") or "unknown"
    cache = {}
    for cell in sweep["cells"]:
        if cell["status"] != "lost":
            cache[_config_key(cell["params"][n] for n in names)] = _cell_entry(cell, names, when)
    return {
        "schema_version": CACHE_SCHEMA_VERSION,
        "device_name": device,
        "kernel_name": f"{sweep['family']}/{sweep['variant']}",
        "problem_size": _problem_size(sweep.get("input") or {}),
        "tune_params_keys": names,
        "tune_params": {n: list(v) for n, v in sweep["grid"].items()},
        "objective": "time",
        "cache": cache,
        "gge_sweep": {k: sweep[k] for k in ("input", "target", "fixed", "repeat", "strategy", "started")
                      if k in sweep},
    }


def write_kernel_tuner(sweep: dict, path) -> None:
    from kernels.results import dumps
    from kernels.results.sweep_file import _replace_atomically

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _replace_atomically(path, dumps(to_kernel_tuner(sweep), indent=1) + "\n")


# ---- reading ------------------------------------------------------------------------------------

def looks_like_kernel_tuner(text: str) -> bool:
    """Whether a file's beginning is a Kernel Tuner cache's (its header names tune_params_keys)."""
    head = text[:65536]
    return head.lstrip().startswith("{") and '"tune_params_keys"' in head and '"cache"' in head


def _closed(text: str) -> str:
    """A cache Kernel Tuner left open (killed while tuning: no closing braces, maybe a trailing
    comma) closed as its own ``correct_open_cache`` does."""
    body = text.strip()
    if body and body[-3:] not in ("}\n}", "}}}") and not body.endswith("}}"):
        if body.endswith(","):
            body = body[:-1]
        body += "}\n}"
    return body


def _refuse(path, problem: str) -> GraphFormatError:
    return GraphFormatError(f"not a valid Kernel Tuner cache file: {problem}", path)


def _scalar(value) -> bool:
    return value is None or isinstance(value, (str, bool, int)) or (isinstance(value, float) and math.isfinite(value))


def _status_of(entry: dict, objective: str):
    """(status, median seconds, reason) of one cache entry."""
    errors = [v for v in entry.values() if isinstance(v, str) and v in (INVALID, COMPILATION_FAILED,
                                                                         RUNTIME_FAILED, ERROR)]
    ours = entry.get("gge_status")
    reason = entry.get("gge_reason") if isinstance(entry.get("gge_reason"), str) else None
    if errors:
        status = ours if ours in ("invalid", "failed", "wrong") else ("invalid" if errors[0] == INVALID else "failed")
        return status, None, reason or f"Kernel Tuner: {errors[0]}"
    time = entry.get("time", entry.get(objective))
    if isinstance(time, (int, float)) and not isinstance(time, bool) and math.isfinite(time) and time >= 0:
        status = "wrong" if ours == "wrong" else "ok"
        return status, time / _MS, reason
    return "failed", None, reason or "Kernel Tuner: no time recorded"


def read_kernel_tuner(path, text: str | None = None) -> dict:
    """A Kernel Tuner cache file (complete, or left open by a killed run) as a sweep; every
    refusal is one line naming the file."""
    path = Path(path)
    if text is None:
        check_size(path, "Kernel Tuner cache")
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise GraphFormatError(f"cannot read: {exc.strerror}", path) from None
        except UnicodeDecodeError:
            raise _refuse(path, "not UTF-8 text") from None
    try:
        doc = json_input.loads(_closed(text))
    except json_input.IntegerTooLong as exc:
        raise _refuse(path, json_input.describe(exc)) from None
    except json.JSONDecodeError as exc:
        raise _refuse(path, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise _refuse(path, "JSON nested too deeply") from None
    if not isinstance(doc, dict):
        raise _refuse(path, "expected a JSON object")
    keys, params, cache = doc.get("tune_params_keys"), doc.get("tune_params"), doc.get("cache")
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and 0 < len(k) <= 200 for k in keys):
        raise _refuse(path, "tune_params_keys must be a non-empty list of parameter names")
    if len(keys) > 16 or len(set(keys)) != len(keys):
        raise _refuse(path, f"tune_params_keys has {len(keys)} names ({len(set(keys))} different), "
                            "at most 16 different ones are read")
    if not isinstance(params, dict) or any(not isinstance(params.get(k), list) or not params[k] for k in keys):
        raise _refuse(path, "tune_params must give a non-empty list of values for each of tune_params_keys")
    if not isinstance(cache, dict):
        raise _refuse(path, "cache must be an object of configurations")
    grid = {}
    for k in keys:
        values = params[k]
        if len(values) > MAX_GRID_VALUES:
            raise _refuse(path, f"tune_params.{k[:40]} has {len(values):,} values, at most {MAX_GRID_VALUES:,} allowed")
        if not all(_scalar(v) for v in values):
            raise _refuse(path, f"tune_params.{k[:40]} holds a value that is not a finite number, string or boolean")
        grid[k] = values
    if math.prod(len(v) for v in grid.values()) > MAX_SWEEP_CELLS or len(cache) > MAX_SWEEP_CELLS:
        raise _refuse(path, f"more than {MAX_SWEEP_CELLS:,} configurations")
    objective = doc.get("objective") if isinstance(doc.get("objective"), str) else "time"
    kernel = doc.get("kernel_name") if isinstance(doc.get("kernel_name"), str) and doc.get("kernel_name") else "kernel"
    device = doc.get("device_name") if isinstance(doc.get("device_name"), str) else None
    ours = doc.get("gge_sweep") if isinstance(doc.get("gge_sweep"), dict) else {}
    family, _, variant = kernel.partition("/") if ours else ("kernel-tuner", "", kernel)
    cells = []
    for config, entry in cache.items():
        if not isinstance(entry, dict) or any(k not in entry for k in keys):
            raise _refuse(path, f"cache[{json.dumps(config)[:40]}] does not give every tune parameter")
        combo = {k: entry[k] for k in keys}
        status, median, reason = _status_of(entry, objective)
        cell = {"params": combo, "status": status}
        if median is not None:
            cell["median_s"] = median
        if reason:
            cell["reason"] = reason[:2000]
        if isinstance(entry.get("timestamp"), str):
            cell["finished"] = entry["timestamp"][:64]
        cells.append(cell)
    header = {
        "kind": "sweep", "schema": SWEEP_SCHEMA, "family": family[:200] or "kernel-tuner",
        "variant": (variant or kernel)[:200], "target": ours.get("target") if isinstance(ours.get("target"), str)
        else None, "device": device[:200] if device else None,
        "input": ours.get("input") if isinstance(ours.get("input"), dict) else {"name": path.name},
        "grid": grid, "fixed": ours.get("fixed") if isinstance(ours.get("fixed"), dict) else {},
        "strategy": {"name": "imported", "source": "kernel-tuner"}, "total_cells": math.prod(map(len, grid.values())),
        "environment": {"device": {"name": device or "unknown"}},
        "notices": [f"imported from the Kernel Tuner cache {path.name} (objective {objective[:40]})"],
    }
    header = {k: v for k, v in header.items() if v is not None}
    check_sweep_header(header, path)
    end = {"kind": "end", "finished": utc_now(), "cancelled": False, "stopped": "complete"}
    return check_cells_match_grid(assemble(header, cells, [], end), path)
