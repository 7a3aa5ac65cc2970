"""Run records and sweeps as plain files: JSON lines for runs, JSON lines for sweeps (a header,
then a line per finished cell: :mod:`kernels.results.sweep_file`), CSV export of both, Kernel
Tuner cache files both ways (:mod:`kernels.results.kerneltuner`). Files made on one machine open
anywhere (the GUI reads them too); everything written is standard JSON built by the typed
builders of :mod:`kernels.results.records`; every file read is checked first
(:mod:`kernels.results.schema`) and brought to the current schema
(:mod:`kernels.results.migrate`); every CSV written is safe to open in a spreadsheet
(:mod:`kernels.results.spreadsheet`). ``docs/results.md`` describes every field."""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

from kernels.errors import GraphFormatError
from kernels.results.kerneltuner import looks_like_kernel_tuner, read_kernel_tuner
from kernels.results.migrate import migrate_record
from kernels.results.records import RECORD_SCHEMA, SWEEP_SCHEMA  # noqa: F401  (the versions written)
from kernels.results.schema import MAX_RECORDS, check_record, check_size, parse_json
from kernels.results.spreadsheet import SafeWriter
from kernels.results.sweep_file import (  # noqa: F401
    read_sweep_text,
    summarize_best,
    sweep_from_text,
    text_is_sweep_lines,
    write_sweep,
)


def plain(obj, depth: int = 0):
    """``obj`` as standard JSON values: NumPy scalars and arrays as numbers and lists, tuples and
    sets as lists, and every number that is not finite (NaN, ±infinity) as ``null`` — JSON has
    no such numbers, and other readers (jq, browsers, Kernel Tuner) refuse the literals."""
    import numpy as np

    if depth > 200:
        raise ValueError("result nested too deeply to write")
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, (str, type(None))):
        return obj
    if isinstance(obj, dict):
        return {str(k): plain(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [plain(v, depth + 1) for v in obj]
    if isinstance(obj, np.ndarray):
        return plain(obj.tolist(), depth + 1)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def dumps(obj, indent=None) -> str:
    return json.dumps(plain(obj), indent=indent, allow_nan=False)


def append_record(path, record: dict) -> None:
    """Append one run record as a JSON line (the file is created if needed)."""
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(dumps(record) + "\n")


def read_records(path) -> list[dict]:
    """The run records of a JSON-lines file; each line is checked against ``record.schema.json``
    (:mod:`kernels.results.schema`), and the first bad one refuses the file, naming its line."""
    path = Path(path)
    check_size(path, "run record")
    out = []
    try:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                if len(out) == MAX_RECORDS:
                    raise GraphFormatError(f"more than {MAX_RECORDS:,} run records in one file", path, lineno)
                record = migrate_record(parse_json(line, path, lineno, "run record"), path, lineno)
                out.append(check_record(record, path, lineno))
    except OSError as exc:
        raise GraphFormatError(f"cannot read: {exc.strerror}", path) from None
    except UnicodeDecodeError:
        raise GraphFormatError("not a run record file (not UTF-8 text)", path) from None
    return out


def new_file_mode() -> int:
    """The mode an ordinary new file gets here (0666 less the umask, usually 0644).

    ``tempfile.mkstemp`` creates its file 0600; a result renamed into place from it would be
    the only file of an export that others cannot read."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def share_like_other_files(fd: int) -> None:
    """Give a temporary file (from ``mkstemp``) the mode of an ordinary new file, before the rename."""
    os.fchmod(fd, new_file_mode())


def write_json_atomic(path, data) -> None:
    """Write to a temporary file beside the target, then rename: never a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        share_like_other_files(fd)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(dumps(data, indent=1))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_sweep(path) -> dict:
    """A sweep file of any version: JSON lines (schema 2) or one JSON document (schema 1, or a
    schema 2 sweep kept whole), checked and migrated (:mod:`kernels.results.sweep_file`); a
    Kernel Tuner cache file is imported (:mod:`kernels.results.kerneltuner`)."""
    text = read_sweep_text(path)
    if not text_is_sweep_lines(text) and looks_like_kernel_tuner(text):
        return read_kernel_tuner(Path(path), text)  # Open Results and heatmap take Kernel Tuner caches as they are
    return sweep_from_text(text, path)


def save_sweep(sweep: dict, path) -> None:
    """Write a whole sweep (a header, its cells, an end line) at once, atomically. Sweeps that
    run write their file a cell at a time instead (:class:`~kernels.results.sweep_file.SweepWriter`)."""
    write_sweep(sweep, path)


def load_sweep(path) -> dict:
    """A sweep file of any version, checked against ``sweep.schema.json`` and the grid bounds
    (:mod:`kernels.results.schema`) and brought to the current schema before anything uses it;
    a file cut short by a kill opens with what it holds (``interrupted``, and a notice)."""
    return read_sweep(path)


RECORD_COLUMNS = ("timestamp", "family", "variant", "kind", "target", "params", "input", "fingerprint",
                  "verified", "status", "median_s", "min_s", "max_s", "cv", "compile_s", "h2d_s",
                  "d2h_s", "launch_bound", "launch", "metric", "metric_value", "metric_unit", "device", "error")


def record_row(rec: dict) -> dict:
    timing = rec.get("timing") or {}
    kernel = timing.get("kernel") or {}
    metric = rec.get("metric") or {}
    return {
        "timestamp": rec.get("timestamp"), "family": rec.get("family"), "variant": rec.get("variant"),
        "kind": rec.get("kind"), "target": rec.get("target"),
        "params": " ".join(f"{k}={v}" for k, v in (rec.get("params") or {}).items()),
        "input": (rec.get("input") or {}).get("name"),
        "fingerprint": (rec.get("input") or {}).get("fingerprint"),
        "verified": rec.get("verified"), "status": rec.get("status"),
        "median_s": kernel.get("median_s"), "min_s": kernel.get("min_s"), "max_s": kernel.get("max_s"),
        "cv": kernel.get("cv"), "compile_s": timing.get("compile_s"), "h2d_s": timing.get("h2d_s"),
        "d2h_s": timing.get("d2h_s"), "launch_bound": timing.get("launch_bound"),
        "launch": timing.get("launch", "direct"),
        "metric": metric.get("name"), "metric_value": metric.get("value"), "metric_unit": metric.get("unit"),
        "device": ((rec.get("environment") or {}).get("device") or {}).get("name"),
        "error": rec.get("error"),
    }


def records_to_csv(records: list[dict], path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = SafeWriter(fh)
        w.writerow(RECORD_COLUMNS)
        for rec in records:
            row = record_row(rec)
            w.writerow([row[c] for c in RECORD_COLUMNS])


def sweep_to_csv(sweep: dict, path) -> None:
    """One row per grid cell: its parameters, status, median time and metric."""
    names = list(sweep["grid"])
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = SafeWriter(fh)
        w.writerow([*names, "status", "median_s", "min_s", "max_s", "metric_value", "verified", "reason"])
        for cell in sweep["cells"]:
            rec = cell.get("record") or {}
            kernel = (rec.get("timing") or {}).get("kernel") or {}
            w.writerow([*(cell["params"].get(n) for n in names), cell["status"], cell.get("median_s"),
                        kernel.get("min_s"), kernel.get("max_s"), (rec.get("metric") or {}).get("value"),
                        rec.get("verified"), cell.get("reason", "")])


def finite(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)
