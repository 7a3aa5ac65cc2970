"""Sweep files as JSON lines, written a cell at a time so a killed sweep keeps what finished.

HPC jobs are killed when their reservation ends; Kernel Tuner appends each measured
configuration to its cache file for that reason, and so do we. A sweep file is:

- line 1, the header (``SweepHeader``): what is swept, on which input and device, how cells
  are chosen;
- one line per finished cell (``SweepCell``), in the order cells finish;
- a ``resume`` line each time ``--resume`` continued the file;
- an ``end`` line once the sweep stopped on its own (all cells, its budget, or a cancel).

A file without an end line was killed (``interrupted``); a last line cut short by the kill is
ignored, and the reader says so. Each line is one ``os.write`` to a file opened for appending,
so a line is either written or, at worst, torn at the end of the file. The best cell and the
flat regions are computed on reading, from the cells. ``docs/results.md`` describes every field.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from kernels import json_input
from kernels.errors import GraphFormatError
from kernels.results.migrate import check_version, migrate_record, migrate_sweep_document
from kernels.results.records import SWEEP_SCHEMA
from kernels.results.schema import (
    MAX_SWEEP_LINES,
    check_cells_match_grid,
    check_size,
    check_sweep,
    check_sweep_header,
    check_sweep_line,
    parse_json,
)

FLAT_REGIONS = (0.05, 0.10)
# what a loaded sweep holds beyond its header: these never go into a header line
DERIVED_FIELDS = ("cells", "best", "within_5pct", "within_10pct", "cancelled", "finished", "stopped", "interrupted",
                  "resumed", "live", "time", "ran_here", "cells_per_s", "tied_with_best", "confirmation")


def summarize_best(cells: list[dict]) -> dict:
    """The fastest verified cell, the cells that cannot be told apart from it (``tied_with_best``:
    the statistical rule of :mod:`kernels.results.noise`), and the cells within 5 % and 10 % of
    it (the paper's flat region, a description, not a test)."""
    from kernels.results.noise import tied_with_best

    ok = [c for c in cells if c["status"] == "ok" and c.get("median_s")]
    if not ok:
        return {"best": None, "tied_with_best": [], **{f"within_{int(f * 100)}pct": [] for f in FLAT_REGIONS}}
    best = min(ok, key=lambda c: c["median_s"])
    out = {"best": {"params": best["params"], "median_s": best["median_s"]}, "tied_with_best": tied_with_best(ok)}
    for f in FLAT_REGIONS:
        out[f"within_{int(f * 100)}pct"] = [c["params"] for c in ok if c["median_s"] <= best["median_s"] * (1 + f)]
    return out


def grid_order(grid: dict, cells: list[dict]) -> list[dict]:
    """``cells`` sorted as the grid enumerates its combinations (first parameter slowest)."""
    index = {name: {(type(v) is bool, v): i for i, v in enumerate(values)} for name, values in grid.items()}

    def position(cell):
        return tuple(index[n].get((type(cell["params"].get(n)) is bool, cell["params"].get(n)), 0) for n in grid)
    return sorted(cells, key=position)


def assemble(header: dict, cells: list[dict], resumed: list[str] | None = None, end: dict | None = None,
             notices: list[str] | None = None) -> dict:
    """The sweep as one dict (what :func:`kernels.results.load_sweep` returns and the heatmap draws)."""
    sweep = {k: v for k, v in header.items() if k not in DERIVED_FIELDS}
    sweep["cells"] = grid_order(header["grid"], [{k: v for k, v in c.items() if k != "kind"} for c in cells])
    sweep["resumed"] = list(resumed or [])
    sweep["interrupted"] = end is None
    sweep["cancelled"] = bool(end["cancelled"]) if end else True
    sweep["stopped"] = end.get("stopped", "cancelled" if end["cancelled"] else "complete") if end else "cancelled"
    if end:
        sweep["finished"] = end["finished"]
        if isinstance(end.get("time"), dict):
            sweep["time"] = end["time"]
    if notices:
        sweep["notices"] = [*sweep.get("notices", []), *notices]
    if not isinstance(sweep.get("environment"), dict):      # a cluster's: its first record says it
        first = next((c["record"] for c in sweep["cells"] if isinstance(c.get("record"), dict)), None)
        if first is not None and isinstance(first.get("environment"), dict):
            sweep["environment"] = first["environment"]
    sweep.update(summarize_best(sweep["cells"]))
    return sweep


# ---- writing ------------------------------------------------------------------------------------

class SweepWriter:
    """Appends a sweep's lines to its file as they happen."""

    def __init__(self, path: Path):
        from kernels.results import dumps

        self.path, self._dumps = Path(path), dumps
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)

    @classmethod
    def create(cls, path, header: dict) -> SweepWriter:
        """A new file holding only ``header`` (written beside it, then renamed: a kill leaves
        the old file or the new header, never an empty file)."""
        from kernels.results import dumps

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        _replace_atomically(path, dumps(header) + "\n")
        return cls(path)

    @classmethod
    def reopen(cls, path) -> SweepWriter:
        """The existing file, its torn last line (if the kill cut one) cut off before appending."""
        path = Path(path)
        with open(path, "rb+") as fh:
            data = fh.read()
            if data and not data.endswith(b"\n"):
                fh.truncate(data.rfind(b"\n") + 1)
        return cls(path)

    def write(self, line: dict) -> None:
        data = (self._dumps(line) + "\n").encode("utf-8")
        written = os.write(self._fd, data)
        while written < len(data):          # a regular file takes it in one write; be sure anyway
            written += os.write(self._fd, data[written:])

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _replace_atomically(path: Path, text: str) -> None:
    from kernels.results import share_like_other_files

    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        share_like_other_files(fd)          # 0644 like other new files, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def sweep_lines(sweep: dict) -> list[dict]:
    """A whole sweep dict as the lines of its file: header, cells, end (a version 1 dict is
    brought to the current schema first)."""
    sweep = migrate_sweep_document(sweep, "the sweep")
    header = {k: v for k, v in sweep.items() if k not in DERIVED_FIELDS}
    header.update(kind="sweep", schema=SWEEP_SCHEMA)
    header.setdefault("strategy", {"name": "grid"})
    lines = [header, *({"kind": "cell", **c} for c in sweep.get("cells", []))]
    lines += [{"kind": "resume", "started": when} for when in sweep.get("resumed", [])]
    if not sweep.get("interrupted"):
        cancelled = bool(sweep.get("cancelled"))
        end = {"kind": "end", "finished": sweep.get("finished") or sweep.get("started") or "",
               "cancelled": cancelled, "stopped": sweep.get("stopped") or ("cancelled" if cancelled else "complete")}
        if isinstance(sweep.get("time"), dict):
            end["time"] = sweep["time"]
        lines.append(end)
    if isinstance(sweep.get("confirmation"), dict):
        lines.append({"kind": "confirm", **sweep["confirmation"]})
    return lines


def write_sweep(sweep: dict, path) -> None:
    """Write a whole sweep at once (exports, benchmarks), atomically."""
    from kernels.results import dumps

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _replace_atomically(path, "".join(dumps(line) + "\n" for line in sweep_lines(sweep)))


# ---- reading ------------------------------------------------------------------------------------

def _first_line(text: str):
    head = text.split("\n", 1)[0]
    try:
        return json_input.loads(head)
    except (ValueError, RecursionError):  # the caller then reads the file whole, and refuses it in words
        return None


def is_sweep_lines(path) -> bool:
    """Whether ``path`` is a JSON-lines sweep (schema 2) that cells can be appended to."""
    try:
        with open(path, encoding="utf-8") as fh:
            head = _first_line(fh.readline(1 << 20))
    except (OSError, UnicodeDecodeError):
        return False
    return isinstance(head, dict) and head.get("kind") == "sweep" and "cells" not in head


def read_sweep_text(path) -> str:
    """A sweep file's text, its size checked first; unreadable or not UTF-8 is one line."""
    path = Path(path)
    check_size(path, "sweep")
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise GraphFormatError(f"cannot read: {exc.strerror}", path) from None
    except UnicodeDecodeError:
        raise GraphFormatError("not a sweep file (not UTF-8 text)", path) from None


def text_is_sweep_lines(text: str) -> bool:
    """Whether ``text`` is a sweep as JSON lines (its first line a sweep header)."""
    head = _first_line(text)
    return isinstance(head, dict) and head.get("kind") == "sweep" and "cells" not in head


def sweep_from_text(text: str, path) -> dict:
    """A sweep of any version of ours: JSON lines (schema 2) or one JSON document (schema 1, or
    a schema 2 sweep kept whole), checked and migrated; see the module's docstring. Kernel Tuner
    caches are told apart and imported above this module
    (:func:`kernels.results.read_sweep`, :mod:`kernels.results.kerneltuner`), which builds on it."""
    path = Path(path)
    if text_is_sweep_lines(text):
        return _read_lines(text, path)
    document = parse_json(text, path, None, "sweep file")
    return check_sweep(migrate_sweep_document(document, path), path)


def _params_key(params) -> tuple | None:
    """A hashable key of a cell's parameters as the grid compares them (``True`` is not ``1``);
    ``None`` for parameters that are not a dict of scalars (the checks after reading refuse them)."""
    if not isinstance(params, dict):
        return None
    try:
        key = tuple(sorted((str(k), type(v) is bool, v) for k, v in params.items()))
        hash(key)
    except TypeError:
        return None
    return key


def _read_lines(text: str, path) -> dict:
    lines = text.split("\n")
    torn = not text.endswith("\n")          # the last piece was cut short, or is the last line unended
    if len(lines) > MAX_SWEEP_LINES + 1:
        raise GraphFormatError(f"more than {MAX_SWEEP_LINES:,} lines in one sweep file", path, MAX_SWEEP_LINES + 1)
    header = parse_json(lines[0], path, 1, "sweep header")
    check_version(header, "sweep", SWEEP_SCHEMA, path, 1)
    check_sweep_header(header, path)
    cells, resumed, end, notices, confirmation = [], [], None, [], None
    lost_at: dict = {}          # a lost cell's parameters -> its place in cells, until a later line answers it
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        try:
            item = parse_json(line, path, number, "sweep line")
        except GraphFormatError:
            if torn and number == len(lines):
                notices.append(f"line {number} was cut short (the sweep was stopped while writing it) "
                               "and is ignored")
                break
            raise
        check_sweep_line(item, path, number)
        kind = item["kind"]
        if kind == "cell":
            if "record" in item:
                item = dict(item, record=migrate_record(item["record"], path, number))
            key = _params_key(item.get("params"))
            if key in lost_at:          # --resume ran the lost cell again: the later line is the answer
                cells[lost_at.pop(key)] = None
            if item.get("status") == "lost" and key is not None:
                lost_at[key] = len(cells)
            cells.append(item)
            end = None                  # cells after an end line: the sweep was resumed
        elif kind == "resume":
            resumed.append(item["started"])
            end = None
        elif kind == "confirm":
            confirmation = item
        else:
            end = item
    sweep = assemble(header, [c for c in cells if c is not None], resumed, end, notices)
    if confirmation is not None:
        sweep["confirmation"] = {k: v for k, v in confirmation.items() if k != "kind"}
    return check_cells_match_grid(sweep, path)
