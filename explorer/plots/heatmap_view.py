"""The sweep heatmap (the SpMV paper's table 6, live): one cell per configuration.

A pyqtgraph ``ImageItem`` shows ``log10`` of each cell's median kernel time through a
``ColorBarItem`` (viridis; the bar's ticks are labelled in real times, so the colours are
read on a log scale without the labels lying). Rows and columns carry the parameter values
as categorical ticks. Cells without a time are transparent: *invalid* combinations (a broken
constraint) show "–", failed or wrong ones say so in red, cells still to run are blank. The
best cell is outlined in thick red with a star; the cells noise cannot separate from it (tied at
95 %, :mod:`kernels.results.noise`) get a dashed red outline. Hovering a cell shows its parameters, time and status.

It draws a :class:`~kernels.results.heatmap.HeatmapTable`, so it shows exactly what ``graph-kernels
heatmap`` prints, and redraws from scratch on every update (tables are small). Like the command's
``--metric``, it can show another figure of each cell's run instead of its time: the percentage
of the device's measured bandwidth or roofline bound (linear 0-100 %; a cell above the roofline is
tinted blue and reads "L2", its input L2-resident, never over 100 %), or the energy per launch.

A short view keeps its rows readable (at least :data:`MIN_ROW_PX` pixels each) instead of
overlapping labels and numbers: when the height does not hold every row at that size with the
full surroundings, the hover line goes (the tooltip still says it) and the title keeps one line;
when even that is not enough, only every second (third...) row is labelled and the cells'
numbers go (hovering reads them).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPen
from PySide6.QtWidgets import QGraphicsRectItem

from explorer.plots.axes import fit_axis_title
from explorer.plots.format import format_seconds, log_ticks, time_unit
from explorer.plots.hover import HoverLayoutWidget
from kernels.results.heatmap import HeatmapTable, column_labels, heatmap_table, shown_unit
from kernels.roofline.percent import L2_TEXT

MAX_TEXT_CELLS = 400            # beyond this, cell values are read by hovering only
MIN_ROW_PX = 14                 # a row's label and number need this much height
HOVER_HEIGHT = 24
FULL_CHROME_PX = 130            # a full view besides its rows: two title lines, the top axis, the hover line
COMPACT_SAVES_PX = HOVER_HEIGHT + 16    # what a compact view gives the rows: the hover line, a title line
INVALID_BRUSH = QBrush(QColor(0, 0, 0, 40), Qt.BrushStyle.BDiagPattern)
L2_BRUSH = QBrush(QColor(223, 232, 251))        # above the roofline: the input stayed in L2
L2_TEXT_COLOUR = (31, 58, 147)
SHORT_WORDS = {"pct-bandwidth": "% of measured bandwidth", "pct-bound": "% of roofline bound",
               "energy": "energy per launch"}


def _status_text(status: str) -> str:
    return {"invalid": "–", "failed": "failed", "wrong": "✗ wrong", "lost": "lost", "missing": ""}.get(status, "")


class HeatmapView(HoverLayoutWidget):
    """Draws one sweep; :meth:`set_sweep` again whenever cells arrive."""

    cellHovered = Signal(object)            # (row, col) or None

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setBackground("w")
        self.ci.setContentsMargins(6, 6, 6, 6)
        self.title_label = self.addLabel("", row=0, col=0, colspan=2, size="11pt")
        self.plot = self.addPlot(row=1, col=0)
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.invertY(True)             # the first row on top, as in a table
        self.plot.showAxis("top")
        self.plot.hideAxis("bottom")
        self.plot.getViewBox().setDefaultPadding(0.0)
        self.image = pg.ImageItem()
        self.plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(colorMap="viridis", interactive=False, width=18, colorMapMenu=False)
        # the bar's axis holds log10(time) with explicit real-time ticks: pyqtgraph's SI prefix
        # would add a "(x0.001)" of its own to a label that already names the unit
        self.colorbar.axis.enableAutoSIPrefix(False)
        self.addItem(self.colorbar, row=1, col=1)
        self.colorbar.setImageItem(self.image)
        self.hover_label = self.addLabel("", row=2, col=0, colspan=2, size="10pt")
        self.hover_label.setFixedHeight(HOVER_HEIGHT)   # hovering must not move the plot under the mouse
        self.compact = False                # one title line, no hover line (a short view)
        self.row_label_step = 1             # every n-th row labelled (a very short view)
        self.row_ticks: list[tuple[float, str]] = []
        self._cell_texts: list = []
        self._title_html = ("", "")         # (title, legend line)
        self._fit_timer = QTimer(self)
        self._fit_timer.setSingleShot(True)
        self._fit_timer.setInterval(0)
        self._fit_timer.timeout.connect(self._fit)
        self.table: HeatmapTable | None = None
        self.sweep: dict | None = None
        self.unit, self.scale = "s", 1.0
        self.hovered: tuple[int, int] | None = None
        self.best_item: QGraphicsRectItem | None = None
        self.flat_items: list[QGraphicsRectItem] = []
        self._overlays: list = []
        # a colour scale shared with other views (seconds, lo to hi): side-by-side sweeps (compare_view.py)
        self.shared_range: tuple[float, float] | None = None
        self.heading: str | None = None     # the title's first line in place of the sweep's (HTML)
        self.legend: str | None = None      # the line under it in place of the sweep's legend
        # every move, not the scene's sigMouseMoved: it drops moves closer than 10 ms apart, which
        # can leave the label describing the cell the mouse just left
        self.viewport().installEventFilter(self)
        self.setMinimumSize(200, 120)
        # the colour bar's title shortens to what fits its height (it was cut at both ends on a small screen)
        self.colorbar.axis.geometryChanged.connect(self._fit_colorbar_title)
        self._show_empty("no sweep yet: choose parameters in the Run dock and press Sweep")

    # ---- drawing ---------------------------------------------------------------------------
    def clear_sweep(self, message: str = "") -> None:
        self.sweep = None
        self.table = None
        self._show_empty(message or "no sweep")

    def _show_empty(self, message: str) -> None:
        self._remove_overlays()
        self.image.clear()
        self.compact = False
        self.hover_label.setVisible(True)
        self.hover_label.setFixedHeight(HOVER_HEIGHT)
        self.title_label.setText(message)
        self.hover_label.setText("")
        self.plot.getAxis("left").setTicks([[]])
        self.plot.getAxis("top").setTicks([[]])

    def _remove_overlays(self) -> None:
        for item in self._overlays:
            self.plot.removeItem(item)
        self._overlays = []
        self.best_item = None
        self.flat_items = []
        self._cell_texts = []

    def set_sweep(self, sweep: dict, rows: str | None = None, cols: str | None = None,
                  metric: str = "time") -> HeatmapTable:
        """Draw ``sweep`` (complete, partial or loaded from a file) with ``rows`` × ``cols``, each
        cell showing ``metric`` (:data:`kernels.roofline.percent.METRICS`: time by default)."""
        table = heatmap_table(sweep, rows, cols, metric)
        self.sweep = sweep
        self.table = table
        self._draw(table)
        return table

    def clone(self) -> HeatmapView:
        """A new view of the same sweep and axes (exports draw it at a fixed size, offscreen)."""
        copy = HeatmapView()
        copy.shared_range, copy.heading, copy.legend = self.shared_range, self.heading, self.legend
        if self.sweep is not None and self.table is not None:
            copy.set_sweep(self.sweep, self.table.row_param, self.table.col_param, self.table.metric)
        return copy

    def _draw(self, t: HeatmapTable) -> None:
        self._remove_overlays()
        n_rows, n_cols = t.shape
        values = self.values(t)                         # what the cells show, in seconds, joules or %
        finite = values[np.isfinite(values)]
        if self.percent:                                # a fraction of a limit: 0-100 %, linear
            self.unit, self.scale = "%", 1.0
            self.image.setImage(values.T, autoLevels=False)
            self.colorbar.setLevels((0.0, 100.0))
            self.colorbar.axis.setTicks([[(v, f"{v:g}") for v in (0, 25, 50, 75, 100)]])
        elif finite.size:
            shared = self.shared_range if t.metric == "time" else None
            self.unit, self.scale = (time_unit(list(shared or finite.tolist())) if t.metric == "time"
                                     else shown_unit(t)[:2])
            with np.errstate(divide="ignore", invalid="ignore"):
                logs = np.log10(values * self.scale)    # NaN stays NaN: drawn transparent
            lo, hi = (float(x) * self.scale for x in (shared or (finite.min(), finite.max())))
            if hi <= lo * 1.0001:
                lo, hi = lo / 1.5, hi * 1.5
            self.image.setImage(logs.T, autoLevels=False)   # ImageItem's first axis is x (columns)
            self.colorbar.setLevels((math.log10(lo), math.log10(hi)))
            self.colorbar.axis.setTicks(log_ticks(lo, hi))
        else:
            self.image.setImage(np.full((n_cols, n_rows), np.nan), autoLevels=False)
            self.colorbar.setLevels((0.0, 1.0))
            self.colorbar.axis.setTicks([[]])
        self.image.setRect(QRectF(0, 0, n_cols, n_rows))
        self._fit_colorbar_title()

        top = self.plot.getAxis("top")
        left = self.plot.getAxis("left")
        top.setTicks([[(c + 0.5, text) for c, text in enumerate(column_labels(t))]])
        left.setTicks([[(r + 0.5, str(v)) for r, v in enumerate(t.row_values)]])
        top.setLabel(t.col_param or "")
        left.setLabel(t.row_param)
        self.row_ticks = [(r + 0.5, str(v)) for r, v in enumerate(t.row_values)]
        self.plot.setXRange(0, n_cols, padding=0)
        self.plot.setYRange(0, n_rows, padding=0)

        for r in range(n_rows):
            for c in range(n_cols):
                status = t.status[r][c]
                if status == "invalid":
                    self._add_rect(r, c, QPen(Qt.PenStyle.NoPen), INVALID_BRUSH, z=1)
                elif t.above is not None and t.above[r, c]:     # above the roofline: L2, not "over 100 %"
                    self._add_rect(r, c, QPen(Qt.PenStyle.NoPen), L2_BRUSH, z=1)
        if n_rows * n_cols <= MAX_TEXT_CELLS:
            self._draw_cell_texts(t, finite, values)
        if t.best is not None:
            r, c = t.best
            region = t.tied if t.tied is not None else t.within_5pct   # tied: noise cannot separate it from the best
            for rr, cc in zip(*np.nonzero(region), strict=True):
                if (rr, cc) != (r, c):
                    pen = QPen(QColor(220, 0, 0), 2)
                    pen.setCosmetic(True)
                    pen.setStyle(Qt.PenStyle.DashLine)
                    self.flat_items.append(self._add_rect(int(rr), int(cc), pen, None, z=3, inset=0.06))
            pen = QPen(QColor(220, 0, 0), 4)
            pen.setCosmetic(True)
            self.best_item = self._add_rect(r, c, pen, None, z=4, inset=0.04)
        self._update_title(t)
        self._fit()
        if self.hovered is not None:
            self._describe_hover(*self.hovered)

    # ---- fitting the view to its height ----------------------------------------------------------
    def _fit(self) -> None:
        """Keep rows at least MIN_ROW_PX tall (see the module's docstring); called on resize."""
        if self.table is None:
            return
        n_rows = max(self.table.shape[0], 1)
        height = self.height()
        self.compact = height < FULL_CHROME_PX + n_rows * MIN_ROW_PX
        self.hover_label.setVisible(not self.compact)
        self.hover_label.setFixedHeight(0 if self.compact else HOVER_HEIGHT)
        row_px = (height - FULL_CHROME_PX + (COMPACT_SAVES_PX if self.compact else 0)) / n_rows
        self.row_label_step = max(1, math.ceil(MIN_ROW_PX / max(row_px, 1.0)))
        step = self.row_label_step
        self.plot.getAxis("left").setTicks([list(zip((pos for pos, _t in self.row_ticks), self.row_labels(),
                                                     strict=True))])
        for item in self._cell_texts:
            item.setVisible(step == 1)
        title, legend = self._title_html
        self.title_label.setText(title if self.compact else f"{title}<br><small>{legend}</small>")
        self.fit_layout_to_view()

    def row_labels(self) -> list[str]:
        """The row labels as drawn ("" for a row left unlabelled in a very short view)."""
        return [text if r % self.row_label_step == 0 else "" for r, (_pos, text) in enumerate(self.row_ticks)]

    def cell_texts(self) -> list:
        """The numbers (and status words) written in the cells."""
        return list(self._cell_texts)

    @property
    def percent(self) -> bool:
        return self.table is not None and self.table.metric.startswith("pct")

    @staticmethod
    def values(t: HeatmapTable) -> np.ndarray:
        """The cells' values in base units (seconds, joules, %): the times, or the metric's."""
        return t.times if t.metric == "time" or t.shown is None else t.shown

    def colorbar_titles(self) -> list[str]:
        if self.table is None:
            return [""]
        if self.percent:
            what = "bandwidth" if self.table.metric == "pct-bandwidth" else "roofline bound"
            return [f"% of the measured {what}", f"% of {what}", "%"]
        if self.table.metric == "energy":
            return [f"energy per launch ({self.unit}, log scale)", f"energy ({self.unit})", self.unit]
        return [f"median kernel time ({self.unit}, log scale)", f"time ({self.unit}, log scale)", self.unit]

    def _fit_colorbar_title(self) -> None:
        if not getattr(self, "closed", False):
            fit_axis_title(self.colorbar.axis, self.colorbar_titles())

    def close(self) -> bool:
        # close() clears the scene, which moves the colour bar's axis while it is being deleted
        self.colorbar.axis.geometryChanged.disconnect(self._fit_colorbar_title)
        self._fit_timer.stop()
        return super().close()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if getattr(self, "_fit_timer", None) is not None and not getattr(self, "closed", False):
            # after the event, not inside it: items changed within this resize made a later close()
            # (an export's offscreen copy) crash in QGraphicsScene.clear()
            self._fit_timer.start()

    def _draw_cell_texts(self, t: HeatmapTable, finite: np.ndarray, values: np.ndarray) -> None:
        n_rows, n_cols = t.shape
        font = QFont()
        font.setPointSizeF(9.0 if n_rows * n_cols <= 100 else 7.5)
        if self.percent:
            mid = 50.0
        elif self.shared_range is not None and t.metric == "time":
            mid = math.sqrt(self.shared_range[0] * self.shared_range[1])
        else:
            mid = math.sqrt(float(finite.min()) * float(finite.max())) if finite.size else 0.0
        for r in range(n_rows):
            for c in range(n_cols):
                status = t.status[r][c]
                v = values[r, c]
                if t.above is not None and t.above[r, c]:
                    text = L2_TEXT + (" ★" if t.best == (r, c) else "")
                    colour = L2_TEXT_COLOUR
                elif math.isfinite(v):
                    text = f"{v * self.scale:.3g}" + (" ★" if t.best == (r, c) else "")
                    colour = "w" if v <= mid else "k"        # dark viridis cells
                else:
                    text = _status_text(status)
                    colour = (200, 0, 0) if status in ("failed", "wrong") else (120, 120, 120)
                if not text:
                    continue
                item = pg.TextItem(text, color=colour, anchor=(0.5, 0.5))
                item.setFont(font)
                item.setPos(c + 0.5, r + 0.5)
                item.setZValue(5)
                self.plot.addItem(item)
                self._overlays.append(item)
                self._cell_texts.append(item)

    def add_mark(self, r: int, c: int, pen: QPen, inset: float = 0.16, z: float = 6) -> QGraphicsRectItem:
        """Frame cell (r, c) with ``pen`` (another view's best, say); gone at the next redraw."""
        return self._add_rect(r, c, pen, None, z=z, inset=inset)

    def remove_mark(self, item: QGraphicsRectItem) -> None:
        """Take away a mark of :meth:`add_mark` (nothing when a redraw already did)."""
        if item in self._overlays:
            self._overlays.remove(item)
            self.plot.removeItem(item)

    def _add_rect(self, r: int, c: int, pen: QPen, brush, z: float, inset: float = 0.0) -> QGraphicsRectItem:
        item = QGraphicsRectItem(QRectF(c + inset, r + inset, 1 - 2 * inset, 1 - 2 * inset))
        item.setPen(pen)
        item.setBrush(brush if brush is not None else QBrush(Qt.BrushStyle.NoBrush))
        item.setZValue(z)
        self.plot.addItem(item)
        self._overlays.append(item)
        return item

    def _update_title(self, t: HeatmapTable) -> None:
        done = sum(1 for row in t.status for s in row if s != "missing")
        total = t.shape[0] * t.shape[1]
        state = ""
        if self.sweep is not None:
            if self.sweep.get("live"):
                state = f" — running, {done} of {total} cells"
                rate = self.sweep.get("cells_per_s")
                if rate:
                    state += f", {rate:.2f} cells/s"
            elif self.sweep.get("cancelled"):
                state = f" — cancelled, {done} of {total} cells"
            elif isinstance(self.sweep.get("time"), dict) and self.sweep["time"].get("cells_per_s"):
                state = f" — {self.sweep['time']['cells_per_s']:.2f} cells/s"
        extra = f"; each cell: the best over {', '.join(t.reduced_over)}" if t.reduced_over else ""
        timing = f", {t.timing_words()}" if t.timing_words() else ""
        if t.metric == "time":
            legend = f"median kernel time ({self.unit}){timing}; ★ best, dashed: tied with it (95 %), – invalid"
        else:
            # short words: a legend wider than the view widened the layout and pushed the columns off it
            legend = (f"{SHORT_WORDS[t.metric]} ({self.unit}){timing}; ★ fastest, dashed: tied with it in time, "
                      "– invalid" + ("; L2: above the roof, the input stayed in L2" if self.percent else ""))
        self._title_html = (self.heading or f"<b>{t.title}</b>{state}", self.legend or legend + extra)
        title, legend = self._title_html
        self.title_label.setText(title if self.compact else f"{title}<br><small>{legend}</small>")

    # ---- reading cells ---------------------------------------------------------------------------
    def describe_cell(self, r: int, c: int) -> str:
        t = self.table
        if t is None or not (0 <= r < t.shape[0] and 0 <= c < t.shape[1]):
            return ""
        where = f"{t.row_param}={t.row_values[r]}"
        if t.col_param is not None:
            where += f", {t.col_param}={t.col_values[c]}"
        status = t.status[r][c]
        v = t.times[r, c]
        if math.isfinite(v) and t.metric != "time":
            shown = self.values(t)[r, c]
            if t.above is not None and t.above[r, c]:
                what = "above the roofline: the input stayed in L2 (faster than the measured bandwidth allows)"
            elif math.isfinite(shown):
                what = f"{shown * self.scale:.3g} {self.unit}"
            else:
                what = f"no {t.metric} figure"
            return f"{where}: {what} ({format_seconds(v)})"
        if math.isfinite(v):
            text = f"{where}: {v * self.scale:.4g} {self.unit}"
            if t.best == (r, c):
                text += " — the best"
            elif t.best is not None:
                best = t.times[t.best]
                text += f" — {100 * (v / best - 1):.1f} % slower than the best"
                if t.cell_mode_note(r, c):           # the cells were timed differently: say so
                    text += f" ({t.cell_mode_note(r, c)})"
            if len(t.launch_modes) > 1 and t.modes is not None:
                text += f" [{t.modes[r][c]}]"
            return text
        reason = self._reason(r, c)
        words = {"invalid": "invalid", "failed": "failed", "wrong": "wrong result", "missing": "not run yet",
                 "lost": "lost to the cluster (Resume Sweep runs it again)"}
        return f"{where}: {words.get(status, status)}" + (f" ({reason})" if reason else "")

    def _reason(self, r: int, c: int) -> str:
        t = self.table
        if self.sweep is None or t is None:
            return ""
        for cell in self.sweep.get("cells", []):
            p = cell["params"]
            here = p.get(t.row_param) == t.row_values[r] and (t.col_param is None
                                                               or p.get(t.col_param) == t.col_values[c])
            if here and cell.get("reason"):
                return cell["reason"]
        return ""

    def cell_center(self, r: int, c: int) -> QPointF:
        """The scene position of a cell's centre (to hover it from tests)."""
        return self.plot.getViewBox().mapViewToScene(QPointF(c + 0.5, r + 0.5))

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        if self.table is None or not self.plot.sceneBoundingRect().contains(scene_pos):
            return None
        p = self.plot.getViewBox().mapSceneToView(scene_pos)
        r, c = math.floor(p.y()), math.floor(p.x())
        n_rows, n_cols = self.table.shape
        return (r, c) if 0 <= r < n_rows and 0 <= c < n_cols else None

    def _on_mouse_moved(self, scene_pos) -> None:
        cell = self.cell_at(scene_pos)
        if cell == self.hovered:
            return
        self.hovered = cell
        if cell is None:
            self.hover_label.setText("")
            self.setToolTip("")
        else:
            self._describe_hover(*cell)
        self.cellHovered.emit(cell)

    def _describe_hover(self, r: int, c: int) -> None:
        text = self.describe_cell(r, c)
        self.hover_label.setText(text)
        self.setToolTip(text)
