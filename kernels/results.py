"""Run records and sweeps as plain files: JSON lines for runs, one JSON file per sweep,
CSV export of both. Files made on one machine open anywhere (the GUI reads them too); every
file read is checked first (:mod:`kernels.results_schema`), every CSV written is safe to open in
a spreadsheet (:mod:`kernels.spreadsheet`)."""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

from kernels.errors import GraphFormatError
from kernels.results_schema import MAX_RECORDS, check_record, check_size, check_sweep, load_json_document, parse_json
from kernels.spreadsheet import SafeWriter

RECORD_SCHEMA = 1
SWEEP_SCHEMA = 1


def _json_default(obj):
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (set, tuple)):
        return list(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def dumps(obj, indent=None) -> str:
    return json.dumps(obj, default=_json_default, indent=indent, allow_nan=True)


def append_record(path, record: dict) -> None:
    """Append one run record as a JSON line (the file is created if needed)."""
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(dumps(record) + "\n")


def read_records(path) -> list[dict]:
    """The run records of a JSON-lines file; each line is checked against ``record.schema.json``
    (:mod:`kernels.results_schema`), and the first bad one refuses the file, naming its line."""
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
                out.append(check_record(parse_json(line, path, lineno, "run record"), path, lineno))
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


def save_sweep(sweep: dict, path) -> None:
    write_json_atomic(path, sweep)


def load_sweep(path) -> dict:
    """A sweep file, checked against ``sweep.schema.json`` and the grid bounds
    (:mod:`kernels.results_schema`) before anything uses it."""
    return check_sweep(load_json_document(path, "sweep"), path)


RECORD_COLUMNS = ("timestamp", "family", "variant", "kind", "target", "params", "input", "fingerprint",
                  "verified", "status", "median_s", "min_s", "max_s", "cv", "compile_s", "h2d_s",
                  "d2h_s", "launch_bound", "metric", "metric_value", "metric_unit", "device", "error")


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
