"""The sweep's sensitivity table (the SpMV paper's table 6): rows are one parameter, columns
another, each cell the median time; ``-`` for invalid cells, the best cell marked.

A table can show another metric of each cell's run instead of its time (``metric``): the
percentage of the measured bandwidth or of the roofline bound (:mod:`kernels.roofline.percent`;
a cell above the roofline reads ``L2``, its input L2-resident, never over 100 %), or the energy
per launch. The marks stay the fastest cell and those tied with it.

Qt-free: text and CSV are written here; PNG and SVG pictures are drawn by
:mod:`kernels.results.heatmap_figure` (``write_png``, ``write_svg``) with matplotlib's non-GUI
canvases (Agg, SVG). That module stands above this one and imports matplotlib, so a caller
that wants only the text or the CSV never loads it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kernels.errors import GraphKernelsError
from kernels.results.launch_modes import DESCRIPTIONS, cross_mode_note, describe_modes, launch_mode
from kernels.results.spreadsheet import SafeWriter


@dataclass
class HeatmapTable:
    row_param: str
    col_param: str | None
    row_values: list
    col_values: list
    times: np.ndarray        # median seconds; NaN where not run successfully
    status: list[list[str]]  # ok / invalid / failed / wrong / missing per cell
    best: tuple[int, int] | None
    within_5pct: np.ndarray  # bool mask
    reduced_over: list[str]  # other swept parameters (the best over them is shown)
    title: str
    subtitle: str = ""       # input, device, how the cells were timed and date: where, how and when the sweep ran
    modes: list[list[str]] | None = None    # launch mode of each drawn cell's time ("" for none)
    tied: np.ndarray | None = None   # bool mask: cannot be told apart from the best (kernels.results.noise)
    metric: str = "time"             # what the cells show (kernels.roofline.percent.METRICS)
    shown: np.ndarray | None = None  # the metric per cell (seconds, %, joules); None: the times
    above: np.ndarray | None = None  # bool mask: above the roofline (L2-resident input), no percentage

    @property
    def launch_modes(self) -> list[str]:
        """The launch modes of the times shown, in the order of ``DESCRIPTIONS``."""
        found = {m for row in (self.modes or []) for m in row if m}
        return [m for m in DESCRIPTIONS if m in found]

    def timing_words(self) -> str:
        """How the times were taken ("timed as CUDA-graph replays (device time)"), '' if unknown."""
        return describe_modes(self.launch_modes)

    def cell_mode_note(self, r: int, c: int) -> str:
        """For a cell compared with the best one: why that is not like with like ('' when it is)."""
        if self.modes is None or self.best is None:
            return ""
        return cross_mode_note(self.modes[r][c], self.modes[self.best[0]][self.best[1]]) \
            if self.modes[r][c] and self.modes[self.best[0]][self.best[1]] else ""

    @property
    def shape(self) -> tuple[int, int]:
        return self.times.shape


def heatmap_table(sweep: dict, rows: str | None = None, cols: str | None = None,
                  metric: str = "time") -> HeatmapTable:
    names = list(sweep["grid"])
    if not names:
        raise GraphKernelsError("the sweep has no swept parameter")
    rows = rows or names[0]
    if cols is None and len(names) > 1:
        cols = next(n for n in names if n != rows)
    for n in (rows, cols):
        if n is not None and n not in names:
            raise GraphKernelsError(f"'{n}' is not a swept parameter of this sweep (swept: {', '.join(names)})")
    row_values = list(sweep["grid"][rows])
    col_values = list(sweep["grid"][cols]) if cols else [None]
    times = np.full((len(row_values), len(col_values)), np.nan)
    status = [["missing"] * len(col_values) for _ in row_values]
    modes = [[""] * len(col_values) for _ in row_values]
    chosen: list[list[dict | None]] = [[None] * len(col_values) for _ in row_values]   # each drawn cell's record
    asked = sweep.get("launch", "direct")          # a cell without its record: the mode the sweep asked for
    rank = {"ok": 5, "wrong": 4, "failed": 3, "lost": 2, "invalid": 1, "missing": 0}
    for cell in sweep["cells"]:
        p = cell["params"]
        r = row_values.index(p[rows])
        c = col_values.index(p[cols]) if cols else 0
        m = cell.get("median_s")
        # with more than two swept parameters a cell shows the best over the others
        # (a time of 0 has no place on a log scale: such a cell counts as run, not drawn)
        if cell["status"] == "ok" and m is not None and m > 0 and not (times[r, c] <= m):
            times[r, c] = m
            record = cell.get("record")
            chosen[r][c] = record if isinstance(record, dict) else None
            modes[r][c] = launch_mode(record) if isinstance(record, dict) else \
                (asked if asked in DESCRIPTIONS else "")
        if rank[cell["status"]] > rank[status[r][c]]:
            status[r][c] = cell["status"]
    best = None
    if np.isfinite(times).any():
        idx = int(np.nanargmin(times))
        best = divmod(idx, len(col_values))
    with np.errstate(invalid="ignore"):
        within = np.isfinite(times) & (times <= np.nanmin(times) * 1.05) if best else np.zeros_like(times, bool)
    tied = np.zeros_like(times, bool)
    tied_params = sweep.get("tied_with_best")
    if tied_params is None:                 # a sweep dict not assembled by the reader: compute it
        from kernels.results.noise import tied_with_best

        tied_params = tied_with_best(sweep["cells"])
    for p in tied_params:
        if p.get(rows) in row_values and (cols is None or p.get(cols) in col_values):
            r, c = row_values.index(p[rows]), col_values.index(p[cols]) if cols else 0
            tied[r, c] = status[r][c] == "ok"        # a shown cell that is not a verified time is never "tied"
    shown, above = _metric_cells(metric, chosen, times) if metric != "time" else (None, None)
    inp = sweep.get("input", {}).get("name", "")
    shown_modes = [m for m in DESCRIPTIONS if any(m in row for row in modes)]
    return HeatmapTable(rows, cols, row_values, col_values, times, status, best, within,
                        [n for n in names if n not in (rows, cols)],
                        f"{sweep['family']}/{sweep['variant']} on {inp} ({sweep.get('target', '')})",
                        _provenance(sweep, describe_modes(shown_modes)), modes, tied, metric, shown, above)


def _metric_cells(metric: str, chosen, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``metric`` of each drawn cell's record, and the mask of cells above the roofline; a
    table with no value at all is refused with the first reason."""
    from kernels.roofline.percent import METRICS, metric_value

    if metric not in METRICS:
        raise GraphKernelsError(f"unknown metric {metric!r}: use one of {', '.join(METRICS)}")
    shown = np.full(times.shape, np.nan)
    above = np.zeros(times.shape, bool)
    reasons = []
    for r, row in enumerate(chosen):
        for c, record in enumerate(row):
            if record is None or not math.isfinite(times[r, c]):
                continue
            value, over, why = metric_value(record, metric)
            above[r, c] = over
            if value is not None:
                shown[r, c] = value
            elif why and not over:
                reasons.append(why)
    if not (np.isfinite(shown).any() or above.any()):
        raise GraphKernelsError(f"no cell of this sweep has a value for {metric}: "
                                + (reasons[0] if reasons else "no cell's record was kept"))
    return shown, above


def cell_of(t: HeatmapTable, params: dict) -> tuple[int, int] | None:
    """The (row, column) of a cell's parameters in the table, ``None`` when it does not show them
    (``True`` is not ``1`` here, as in the grid)."""
    def index(values, value):
        return next((i for i, v in enumerate(values) if (type(v) is bool) == (type(value) is bool)
                     and v == value), None)

    r = index(t.row_values, params.get(t.row_param))
    c = 0 if t.col_param is None else index(t.col_values, params.get(t.col_param))
    return None if r is None or c is None else (r, c)


def metric_words(t: HeatmapTable) -> str:
    from kernels.roofline.percent import METRICS

    return METRICS[t.metric][0]


def shown_unit(t: HeatmapTable) -> tuple[str, float, np.ndarray]:
    """(unit, scale, values in that unit) of what the cells show."""
    if t.metric == "time" or t.shown is None:
        unit, scale = time_unit(t)
        return unit, scale, t.times * scale
    if t.metric == "energy":
        finite = t.shown[np.isfinite(t.shown)]
        top = float(finite.max()) if finite.size else 1.0
        unit, scale = ("J", 1.0) if top >= 1 else (("mJ", 1e3) if top >= 1e-3 else ("uJ", 1e6))
        return unit, scale, t.shown * scale
    return "%", 1.0, t.shown


def _provenance(sweep: dict, timing: str = "") -> str:
    """``input NAME (sizes) · device NAME (target) · timed as ... · DATE``, from whatever the sweep
    file holds (sweeps written by older versions or still running lack some of it)."""
    def field(d, key):
        return d.get(key) if isinstance(d, dict) else None

    parts = []
    inp = sweep.get("input")
    if field(inp, "name"):
        sizes = [f"{field(inp, k):,} {k}" for k in ("rows", "nnz") if isinstance(field(inp, k), int)]
        parts.append(f"input {field(inp, 'name')}" + (f" ({', '.join(sizes)})" if sizes else ""))
    device = field(field(sweep.get("environment"), "device"), "name")
    target = sweep.get("target")
    if device:
        parts.append(f"device {device}" + (f" ({target})" if target else ""))
    elif target:
        parts.append(f"target {target}")
    if timing:
        parts.append(timing)
    when = sweep.get("finished") or sweep.get("started")
    if isinstance(when, str) and len(when) >= 10:
        parts.append(when[:10])
    return " · ".join(parts)


ONE_PARAMETER_COLUMN = "median"    # a one-parameter sweep's single column: what its cells hold


def column_labels(t: HeatmapTable) -> list[str]:
    """The column headers: the column parameter's values, or ``median`` for a one-parameter sweep
    (its one column holds each value's median time; ``None`` was printed there before)."""
    if t.col_param is None:
        return [ONE_PARAMETER_COLUMN if t.metric == "time" else t.metric]
    return [str(v) for v in t.col_values]


def corner_label(t: HeatmapTable) -> str:
    """The table's corner: ``wg \\ rows`` names rows and columns, ``wg`` alone for one parameter."""
    return t.row_param if t.col_param is None else f"{t.row_param} \\ {t.col_param}"


def _cell_text(t: HeatmapTable, r: int, c: int, values: np.ndarray) -> str:
    from kernels.roofline.percent import L2_TEXT

    if t.status[r][c] == "invalid":
        return "-"
    if t.status[r][c] in ("failed", "wrong", "lost"):
        return t.status[r][c]
    mark = "*" if t.best == (r, c) else ("=" if t.tied is not None and t.tied[r, c] else "")
    if t.above is not None and t.above[r, c]:
        return f"{L2_TEXT}{mark}"
    if not math.isfinite(values[r, c]):
        return ""
    return f"{values[r, c]:.4g}{mark}"


def time_unit(t: HeatmapTable) -> tuple[str, float]:
    finite = t.times[np.isfinite(t.times)]
    top = float(finite.max()) if finite.size else 1.0
    if top >= 1.0:
        return "s", 1.0
    return ("ms", 1e3) if top >= 1e-3 else ("us", 1e6)


def to_text(t: HeatmapTable) -> str:
    unit, _, values = shown_unit(t)
    header = [corner_label(t)] + column_labels(t)
    body = [[str(rv)] + [_cell_text(t, r, c, values) for c in range(len(t.col_values))]
            for r, rv in enumerate(t.row_values)]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    timing = f", {t.timing_words()}" if t.timing_words() else ""
    what = f"median kernel time in {unit}" if t.metric == "time" else f"{metric_words(t)}, in {unit}"
    extra = "; 'L2': above the roofline, the input was L2-resident" if t.metric.startswith("pct") else ""
    best = "'*' best" if t.metric == "time" else "'*' fastest"
    lines = [f"{t.title}: {what}{timing} ('-' invalid, {best}, '=' cannot be told apart "
             "from the best at 95 %, docs/results.md; 'lost': to the cluster, --resume runs it; blank: not measured"
             f"{extra})"]
    for row in [header, *body]:
        lines.append("  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)))
    if t.reduced_over:
        lines.append(f"(each cell is the best over {', '.join(t.reduced_over)})")
    return "\n".join(lines)


def write_csv(t: HeatmapTable, path) -> None:
    unit, _, values = shown_unit(t)
    what = "median" if t.metric == "time" else t.metric
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = SafeWriter(fh)
        if t.col_param is None:                 # one parameter: a plain two-column table
            w.writerow([t.row_param, f"{ONE_PARAMETER_COLUMN if t.metric == 'time' else what} ({unit})"])
        else:
            w.writerow([f"{corner_label(t)} ({what} {unit})"] + column_labels(t))
        for r, rv in enumerate(t.row_values):
            w.writerow([rv] + [_cell_text(t, r, c, values) for c in range(len(t.col_values))])
