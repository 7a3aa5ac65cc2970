"""The sweep's sensitivity table (the SpMV paper's table 6): rows are one parameter, columns
another, each cell the median time; ``-`` for invalid cells, the best cell marked.

Qt-free: text, CSV and SVG are written here. PNG is rendered by the GUI package's renderer
(pyqtgraph ``ImageItem`` + ``ColorBarItem``) in a child process, so this library never
imports Qt (``python -m explorer.render heatmap SWEEP.json OUT.png``).
"""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import dataclass
from html import escape

import numpy as np

from kernels.errors import GraphKernelsError
from kernels.spreadsheet import SafeWriter


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

    @property
    def shape(self) -> tuple[int, int]:
        return self.times.shape


def heatmap_table(sweep: dict, rows: str | None = None, cols: str | None = None) -> HeatmapTable:
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
    rank = {"ok": 4, "wrong": 3, "failed": 2, "invalid": 1, "missing": 0}
    for cell in sweep["cells"]:
        p = cell["params"]
        r = row_values.index(p[rows])
        c = col_values.index(p[cols]) if cols else 0
        m = cell.get("median_s")
        # with more than two swept parameters a cell shows the best over the others
        # (a time of 0 has no place on a log scale: such a cell counts as run, not drawn)
        if cell["status"] == "ok" and m is not None and m > 0 and not (times[r, c] <= m):
            times[r, c] = m
        if rank[cell["status"]] > rank[status[r][c]]:
            status[r][c] = cell["status"]
    best = None
    if np.isfinite(times).any():
        idx = int(np.nanargmin(times))
        best = divmod(idx, len(col_values))
    with np.errstate(invalid="ignore"):
        within = np.isfinite(times) & (times <= np.nanmin(times) * 1.05) if best else np.zeros_like(times, bool)
    inp = sweep.get("input", {}).get("name", "")
    return HeatmapTable(rows, cols, row_values, col_values, times, status, best, within,
                        [n for n in names if n not in (rows, cols)],
                        f"{sweep['family']}/{sweep['variant']} on {inp} ({sweep.get('target', '')})")


def _cell_text(t: HeatmapTable, r: int, c: int, unit_scale: float) -> str:
    if t.status[r][c] == "invalid":
        return "-"
    if t.status[r][c] in ("failed", "wrong"):
        return t.status[r][c]
    if not math.isfinite(t.times[r, c]):
        return ""
    mark = "*" if t.best == (r, c) else ""
    return f"{t.times[r, c] * unit_scale:.4g}{mark}"


def time_unit(t: HeatmapTable) -> tuple[str, float]:
    finite = t.times[np.isfinite(t.times)]
    top = float(finite.max()) if finite.size else 1.0
    if top >= 1.0:
        return "s", 1.0
    return ("ms", 1e3) if top >= 1e-3 else ("us", 1e6)


def to_text(t: HeatmapTable) -> str:
    unit, scale = time_unit(t)
    header = [f"{t.row_param} \\ {t.col_param or ''}"] + [str(v) for v in t.col_values]
    body = [[str(rv)] + [_cell_text(t, r, c, scale) for c in range(len(t.col_values))]
            for r, rv in enumerate(t.row_values)]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    lines = [f"{t.title}: median kernel time in {unit} ('-' invalid, '*' best)"]
    for row in [header, *body]:
        lines.append("  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)))
    if t.reduced_over:
        lines.append(f"(each cell is the best over {', '.join(t.reduced_over)})")
    return "\n".join(lines)


def write_csv(t: HeatmapTable, path) -> None:
    unit, scale = time_unit(t)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = SafeWriter(fh)
        w.writerow([f"{t.row_param} \\ {t.col_param or ''} (median {unit})"] + [str(v) for v in t.col_values])
        for r, rv in enumerate(t.row_values):
            w.writerow([rv] + [_cell_text(t, r, c, scale) for c in range(len(t.col_values))])


def _color(value: float, lo: float, hi: float) -> str:
    """A viridis-like ramp from dark (fast) to light (slow) on a log scale."""
    stops = [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)]
    x = 0.0 if hi <= lo else (math.log(value) - math.log(lo)) / (math.log(hi) - math.log(lo))
    x = min(max(x, 0.0), 1.0) * (len(stops) - 1)
    i = min(int(x), len(stops) - 2)
    f = x - i
    rgb = [round(a + (b - a) * f) for a, b in zip(stops[i], stops[i + 1], strict=True)]
    return "#{:02x}{:02x}{:02x}".format(*tuple(rgb))


def write_svg(t: HeatmapTable, path) -> None:
    unit, scale = time_unit(t)
    cw, ch, left, top = 78, 34, 110, 70
    n_r, n_c = t.shape
    width, height = left + cw * n_c + 30, top + ch * n_r + 50
    finite = t.times[np.isfinite(t.times)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (1.0, 1.0)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="20" font-size="14">{escape(t.title)}</text>',
           f'<text x="{left}" y="40">median kernel time ({unit}); columns: {escape(str(t.col_param))}, '
           f'rows: {escape(t.row_param)}; best cell outlined in red, within 5 % dashed</text>']
    for c, cv in enumerate(t.col_values):
        out.append(f'<text x="{left + c * cw + cw / 2}" y="{top - 6}" text-anchor="middle">{escape(str(cv))}</text>')
    for r, rv in enumerate(t.row_values):
        y = top + r * ch
        out.append(f'<text x="{left - 8}" y="{y + ch / 2 + 4}" text-anchor="end">{escape(str(rv))}</text>')
        for c in range(n_c):
            x = left + c * cw
            v = t.times[r, c]
            fill = _color(v, lo, hi) if math.isfinite(v) else "#ffffff"
            stroke = "#dddddd"
            extra = ""
            if t.best == (r, c):
                stroke, extra = "#e00000", ' stroke-width="3"'
            elif t.within_5pct[r, c]:
                stroke, extra = "#e00000", ' stroke-dasharray="4,3" stroke-width="2"'
            out.append(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="{fill}" stroke="{stroke}"{extra}/>')
            text = _cell_text(t, r, c, scale)
            color = "white" if math.isfinite(v) and v < math.sqrt(lo * hi) else "black"
            out.append(f'<text x="{x + cw / 2}" y="{y + ch / 2 + 4}" text-anchor="middle" fill="{color}">'
                       f'{escape(text)}</text>')
    if t.reduced_over:
        out.append(f'<text x="{left}" y="{height - 12}">each cell: best over '
                   f'{escape(", ".join(t.reduced_over))}</text>')
    out.append("</svg>")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(out))


def write_png(sweep_path: str, out_path: str, rows: str | None = None, cols: str | None = None) -> None:
    """Render through the GUI package in a child process (offscreen Qt)."""
    import os

    cmd = [sys.executable, "-m", "explorer.render", "heatmap", str(sweep_path), str(out_path)]
    if rows:
        cmd += ["--rows", rows]
    if cols:
        cmd += ["--cols", cols]
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()
        raise GraphKernelsError(f"PNG rendering failed: {tail[-1] if tail else 'no output'} "
                                "(SVG and CSV outputs work without Qt)")
