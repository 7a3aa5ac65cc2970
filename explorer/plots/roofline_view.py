"""The roofline view: each run (or sweep cell) as a point of arithmetic intensity against the rate
it achieved, under its device's measured limits.

Log-log. The x axis is the work model's operations per byte (:mod:`kernels.roofline`), the y
axis the operations per second the run achieved (the model's operations over its median kernel
time). The roof is the device's *measured* copy bandwidth (the diagonal, ``intensity ×
bandwidth``) bent flat at each measured peak rate of the operation kinds on show (fp64 fma,
add+min, int32...), so the distance under the roof is the fraction of what the machine does.
Points are coloured by family/variant. A point above its roof moved fewer DRAM bytes than the
model's compulsory count, so its input stayed in L2 between the timed replays: it is drawn as a
hollow orange square labelled "L2" and listed as L2-resident, never as "over 100 %".

It draws a :class:`~kernels.roofline.chart.RooflineChart` (Qt-free), the same data
``benchmarks/bench_roofline.py`` draws with matplotlib. Hovering a point says what it is.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QFont, QPen

from explorer.plots.hover import HoverLayoutWidget
from kernels.roofline import OP_KINDS
from kernels.roofline.chart import RooflineChart, roofline_chart

GIGA = 1e9
HOVER_HEIGHT = 24
HOVER_PX = 12                       # a point is hovered within this many pixels
PALETTE = [QColor(31, 119, 180), QColor(44, 160, 44), QColor(148, 103, 189), QColor(140, 86, 75),
           QColor(227, 119, 194), QColor(23, 190, 207), QColor(188, 189, 34), QColor(127, 127, 127)]
#: after eight series the colours come round again with the next symbol (the hollow square is L2's)
SYMBOLS = ["o", "t", "d", "star", "p", "h", "t1"]
L2_COLOUR = QColor(230, 120, 0)
ROOF_COLOURS = {"fma-fp64": QColor(200, 30, 30), "fma-fp32": QColor(230, 90, 90), "add+min-fp64": QColor(120, 40, 0),
                "add+min-fp32": QColor(170, 90, 40), "int32": QColor(60, 60, 60)}


def series_style(i: int) -> tuple[QColor, str]:
    """The ``i``-th series' colour and symbol: no two of the first 56 series look alike."""
    return PALETTE[i % len(PALETTE)], SYMBOLS[(i // len(PALETTE)) % len(SYMBOLS)]


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


class RooflineView(HoverLayoutWidget):
    """Draws records on their device's roofline; :meth:`set_records` again to redraw."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setBackground("w")
        self.ci.setContentsMargins(6, 6, 6, 6)
        self.title_label = self.addLabel("", row=0, col=0, colspan=2, size="11pt")
        self.plot = self.addPlot(row=1, col=0)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setLogMode(x=True, y=True)
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self.plot.setLabel("bottom", "arithmetic intensity (operations per DRAM byte, the work model's)")
        self.plot.setLabel("left", "achieved rate (G operations/s)")
        # the legend in its own column: inside the plot it covered the points it names
        self.legend = pg.LegendItem(labelTextSize="9pt", verSpacing=-4)
        self.addItem(self.legend, row=1, col=1)
        self.hover_label = self.addLabel("", row=2, col=0, colspan=2, size="10pt")
        self.hover_label.setFixedHeight(HOVER_HEIGHT)
        self.chart = RooflineChart()
        self.series_items: dict[str, pg.PlotDataItem] = {}
        self.roof_items: dict[str, pg.PlotDataItem] = {}
        self.l2_item: pg.PlotDataItem | None = None
        self.l2_labels: list[pg.TextItem] = []
        self.hovered = None
        self.viewport().installEventFilter(self)
        self.setMinimumSize(240, 160)
        self._show_empty("no GPU runs with a work model yet: run a GPU variant (its record carries the model)")

    # ---- drawing ---------------------------------------------------------------------------
    def _clear(self) -> None:
        self.plot.clear()
        self.legend.clear()
        self.series_items, self.roof_items, self.l2_item, self.l2_labels = {}, {}, None, []

    def _show_empty(self, message: str) -> None:
        self._clear()
        self.title_label.setText(message)
        self.hover_label.setText("")

    def set_records(self, records, what: str = "runs") -> RooflineChart:
        """Draw ``records`` (run records, or a sweep's cell records) on their device's roofline."""
        chart = roofline_chart(records)
        self.chart = chart
        self._clear()
        if not chart.points:
            why = "; ".join(chart.skipped[:2]) if chart.skipped else f"no {what} to show"
            self._show_empty(f"nothing on the roofline: {why}")
            return chart
        self._draw_roofs(chart)
        self._draw_points(chart)
        self._update_title(chart, what)
        lo, hi = chart.x_range()
        ys = [p.point.rate / GIGA for p in chart.points] + [chart.peaks["rates"][op] / GIGA for op in chart.ops]
        ys += [chart.roof(op, lo) / GIGA for op in chart.ops]
        self.plot.setXRange(math.log10(lo), math.log10(hi), padding=0)
        self.plot.setYRange(math.log10(max(min(ys), 1e-12)) - 0.3, math.log10(max(ys)) + 0.3, padding=0)
        return chart

    def _draw_roofs(self, chart: RooflineChart) -> None:
        lo, hi = chart.x_range()
        xs = np.logspace(math.log10(lo), math.log10(hi), 200)
        bw = chart.peaks["bandwidth_Bps"]
        # the diagonal is named in the legend: a label on the plot fell on the points beside it
        pen = QPen(QColor(60, 60, 60), 2)
        pen.setCosmetic(True)
        self.legend.addItem(pg.PlotDataItem([], [], pen=pen), f"diagonal: {bw / 1e9:,.0f} GB/s measured copy")
        for op in chart.ops:
            ridge = chart.peaks["rates"][op] / bw
            xs_op = np.unique(np.concatenate([xs, [ridge]]))
            ys = np.minimum(chart.peaks["rates"][op], xs_op * bw) / GIGA
            pen = QPen(ROOF_COLOURS.get(op, QColor(0, 0, 0)), 2)
            pen.setCosmetic(True)
            self.roof_items[op] = self.plot.plot(xs_op, ys, pen=pen)
            self.legend.addItem(self.roof_items[op], f"roof of {op}: {chart.peaks['rates'][op] / GIGA:,.0f} G/s")

    def _draw_points(self, chart: RooflineChart) -> None:
        series = sorted({p.series for p in chart.points})
        for i, name in enumerate(series):
            pts = [p for p in chart.points if p.series == name and not p.point.above]
            if not pts:
                continue
            colour, symbol = series_style(i)
            self.series_items[name] = self.plot.plot(
                [p.point.intensity for p in pts], [p.point.rate / GIGA for p in pts], pen=None, symbol=symbol,
                symbolSize=9, symbolBrush=colour, symbolPen=pg.mkPen(QColor(255, 255, 255), width=1))
            self.legend.addItem(self.series_items[name], name)
        above = chart.above
        if above:
            self.l2_item = self.plot.plot(
                [p.point.intensity for p in above], [p.point.rate / GIGA for p in above], pen=None, symbol="s",
                symbolSize=11, symbolBrush=None, symbolPen=pg.mkPen(L2_COLOUR, width=2))
            self.legend.addItem(self.l2_item, "above the roof: L2-resident")
            font = QFont()
            font.setPointSizeF(8.5)
            font.setBold(True)
            for p in above:
                label = pg.TextItem("L2", color=L2_COLOUR, anchor=(-0.25, 1.0))
                label.setFont(font)
                label.setPos(math.log10(p.point.intensity), math.log10(p.point.rate / GIGA))
                self.plot.addItem(label)
                self.l2_labels.append(label)

    def _update_title(self, chart: RooflineChart, what: str) -> None:
        n, l2 = len(chart.points), len(chart.above)
        note = f"; {l2} above the roof (L2-resident)" if l2 else ""
        skipped = f"; left out: {chart.skipped[0]}" if chart.skipped else ""
        when = (chart.peaks or {}).get("measured", "")[:10]
        self.title_label.setText(
            f"<b>Roofline on {chart.device}</b> — {n} {what}{note}<br><small>measured copy bandwidth "
            f"{chart.peaks['bandwidth_Bps'] / 1e9:,.0f} GB/s and peak rates (graph-kernels device-peaks"
            f"{', ' + when if when else ''}); x: the work model's operations per byte{skipped}</small>")

    # ---- reading points --------------------------------------------------------------------
    def describe(self, cp) -> str:
        p = cp.point
        where = ("above the roof: its input stayed in L2 (faster than the measured bandwidth allows)" if p.above
                 else f"{p.pct_bound:.0f} % of the {'bandwidth' if p.memory_bound else p.op} bound, "
                      f"{p.pct_bandwidth:.0f} % of the measured bandwidth")
        return (f"{cp.label}: {_fmt(p.rate / GIGA)} G {OP_KINDS.get(p.op, p.op)}/s at {p.intensity:.3g} ops/byte, "
                f"{_fmt(p.bandwidth / 1e9)} GB/s — {where}")

    def point_at(self, scene_pos):
        """The chart point within HOVER_PX pixels of ``scene_pos``, or ``None``."""
        if not self.chart.points:
            return None
        vb = self.plot.getViewBox()
        best, best_d = None, HOVER_PX
        for cp in self.chart.points:
            at = vb.mapViewToScene(QPointF(math.log10(cp.point.intensity), math.log10(cp.point.rate / GIGA)))
            d = math.hypot(at.x() - scene_pos.x(), at.y() - scene_pos.y())
            if d <= best_d:
                best, best_d = cp, d
        return best

    def point_center(self, cp) -> QPointF:
        return self.plot.getViewBox().mapViewToScene(QPointF(math.log10(cp.point.intensity),
                                                             math.log10(cp.point.rate / GIGA)))

    def _on_mouse_moved(self, scene_pos) -> None:
        cp = self.point_at(scene_pos)
        if cp is self.hovered:
            return
        self.hovered = cp
        text = self.describe(cp) if cp is not None else ""
        self.hover_label.setText(text)
        self.setToolTip(text)
