"""The timing chart: one bar per chosen run, its median kernel time, min–max error bars,
and below it the speedup of each run against a chosen baseline variant.

Log scale, done correctly: pyqtgraph's log mode transforms curve data but not bars, so the
chart plots ``log10`` of the times itself and labels the axis with real times
(:class:`~explorer.plots.axes.TimeAxis`: 1-2-5 per decade in a unit chosen from the data, never
pyqtgraph's "(x0.001)"); bars start one step below the fastest run, so a bar's length shows the
ratio between runs, as on paper. The speedup view uses the same rule around 1×: bars up are
faster than the baseline, bars down slower. A run whose result failed verification is drawn
hatched red with "✗" above it: its time means nothing.

Every number says how it was timed (``timing.launch``, :mod:`kernels.results.launch_modes`): the
title names the launch mode the runs share, or each bar's label its own when they differ. A
speedup compares a run with the fastest baseline run timed in a comparable mode (``graph`` and
``queued`` are both device time; ``direct`` includes the host's launch overhead); when there is
none, the speedup is still drawn but hatched grey and labelled "×N (graph vs direct: not like with
like)", never as a plain speedup.

Simulator runs stand apart: numba's CUDA simulator runs one Python thread per CUDA thread, so
its times say nothing about a GPU. They are drawn to the right of a dashed line, and a
speedup is only computed between runs on the same side of it (a simulator run against a
simulator baseline, anything else against a non-simulator one).

The chart can show, instead of time, each GPU run's fraction of its device's measured limits
(:meth:`TimingChart.set_metric`: ``pct-bandwidth`` or ``pct-bound``, :mod:`kernels.roofline.percent`,
linear 0-100 %): a run faster than the roof is drawn as a pale blue dotted bar labelled "L2" (its
input stayed in L2), never as a number over 100 %; a run without a figure (a CPU or simulator
run, a device without measured peaks) has no bar, a "–", and its hover says why.

A short chart degrades instead of overlapping: below :data:`SPEED_ROW_MIN_HEIGHT` the
speedup row is left out (the title says so; hovering still gives the speedup), below
:data:`VALUE_LABELS_MIN_HEIGHT` the numbers above the bars go, axis titles shorten to what
fits, and log axes label only as many decades as there is room for.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics

from explorer.plots.axes import RatioAxis, TimeAxis
from explorer.plots.format import format_seconds, params_text, shown_params
from explorer.plots.hover import HoverLayoutWidget
from kernels.measure.targets import Target
from kernels.results.launch_modes import DESCRIPTIONS, comparable, cross_mode_note, describe_modes, launch_mode

PERCENT_TITLES = {             # the axis's titles, longest first (explorer.plots.axes fits one)
    "pct-bandwidth": ["% of the measured copy bandwidth", "% of bandwidth", "%"],
    "pct-bound": ["% of the roofline bound", "% of bound", "%"],
}
L2_COLOUR = QColor(160, 185, 235)   # above the roof: the input stayed in L2
KIND_COLOURS = {
    "cpu-serial": QColor(140, 140, 150), "cpu-parallel": QColor(70, 120, 190), "library": QColor(140, 90, 170),
    "gpu": QColor(40, 150, 90), "vendor": QColor(220, 130, 30),
}
WRONG_COLOUR = QColor(210, 30, 30)
CROSS_MODE_COLOUR = QColor(150, 150, 150)      # a speedup between launch modes that do not compare
BAR_WIDTH = 0.62
SPEED_ROW_MIN_HEIGHT = 420     # widget pixels: the speedup row needs ~100 px of plot besides the times
VALUE_LABELS_MIN_HEIGHT = 230  # below this, the numbers above the bars cover the bars and the ticks
HOVER_HEIGHT = 24
VALUE_LABEL_PX = 18            # a value label's height above its bar
SIM_NOTE = ("simulator runs (right of the dashed line) are not compared with others: the CUDA simulator runs "
            "one Python thread per CUDA thread, its times are not GPU times")


def is_simulated(record: dict) -> bool:
    target = Target.read(record.get("target"))
    return target is not None and target.simulated


def kernel_times(record: dict) -> tuple[float, float, float] | None:
    """(median, min, max) kernel seconds of a record, or ``None`` when it has none."""
    kernel = (record.get("timing") or {}).get("kernel") or {}
    try:
        med, lo, hi = float(kernel["median_s"]), float(kernel["min_s"]), float(kernel["max_s"])
    except (KeyError, TypeError, ValueError):
        return None
    if not all(math.isfinite(x) and x > 0 for x in (med, lo, hi)):
        return None
    return med, min(lo, med), max(hi, med)


LABEL_LINE_CHARS = 18          # parameters wrap so neighbouring bars' labels do not collide
MIN_LINE_CHARS = 7
HIDDEN_PARAMS = ("per_vertex",)


def common_params(records: list[dict]) -> dict:
    """Parameters every record has, with the same value (said once in the title, not per bar)."""
    if len(records) < 2:
        return {}
    first = shown_params(records[0])
    rest = [shown_params(r) for r in records[1:]]
    return {k: v for k, v in first.items() if all(k in p and p[k] == v for p in rest)}


def run_label(record: dict, with_input: bool = False, skip: dict | None = None,
              line_chars: int = LABEL_LINE_CHARS, max_lines: int | None = None, with_mode: bool = False) -> str:
    skip = skip or {}
    lines = [str(record.get("variant", "?")) + (f" [{launch_mode(record)}]" if with_mode else "")]
    line = ""
    for k, v in shown_params(record).items():
        if k in HIDDEN_PARAMS or k in skip:
            continue
        item = f"{k}={v}"
        if line and len(line) + 1 + len(item) > line_chars:
            lines.append(line)
            line = item
        else:
            line = f"{line} {item}".strip()
    if line:
        lines.append(line)
    if with_input:
        lines.append(str((record.get("input") or {}).get("name", "")))
    if max_lines is not None and len(lines) > max_lines:       # a short chart: the rest is in the hover text
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: max(line_chars - 1, 1)] + "…"
    return "\n".join(lines)


def _ratio(x: float) -> str:
    return f"{x:,.0f}" if 1000 <= x < 1e9 else f"{x:.3g}"


def baseline_for(record: dict, candidates: list[dict], variant: str) -> dict | None:
    """The fastest run of ``variant`` on the same family and input as ``record``, timed in a launch
    mode that compares with the record's if there is one (else the fastest at all: the speedup is
    then marked as a cross-mode comparison)."""
    fp = (record.get("input") or {}).get("fingerprint")
    same = [c for c in candidates if c.get("variant") == variant and c.get("family") == record.get("family")
            and (c.get("input") or {}).get("fingerprint") == fp and c.get("verified", True)
            and is_simulated(c) == is_simulated(record) and kernel_times(c) is not None]
    fair = [c for c in same if comparable(launch_mode(record), launch_mode(c))]
    pool = fair or same
    return min(pool, key=lambda c: kernel_times(c)[0]) if pool else None


class TimingChart(HoverLayoutWidget):
    """Bars of run times (and speedups); :meth:`set_records` redraws."""

    barHovered = Signal(object)             # index or None

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setBackground("w")
        self.ci.setContentsMargins(6, 6, 6, 6)
        self.title_label = self.addLabel("", row=0, col=0, size="11pt")
        self.time_axis = TimeAxis("left")
        self.speed_axis = RatioAxis("left")
        self.time_plot = self.addPlot(row=1, col=0, axisItems={"left": self.time_axis})
        self.speed_plot = self.addPlot(row=2, col=0, axisItems={"left": self.speed_axis})
        for plot in (self.time_plot, self.speed_plot):
            plot.setMenuEnabled(False)
            plot.hideButtons()
            plot.setMouseEnabled(x=False, y=False)
            plot.showGrid(y=True, alpha=0.25)
        self.speed_plot.setXLink(self.time_plot)
        # the room above the bars for their value labels is in pixels: kept as the plot's height changes
        self.time_plot.getViewBox().sigResized.connect(lambda *_: self._fit_value_label_room())
        for plot in (self.time_plot, self.speed_plot):
            plot.getAxis("left").setWidth(72)              # the two plots' bars line up
        self.ci.layout.setRowStretchFactor(1, 3)
        self.ci.layout.setRowStretchFactor(2, 2)
        self.hover_label = self.addLabel("", row=3, col=0, size="10pt")
        self.hover_label.setFixedHeight(HOVER_HEIGHT)   # hovering must not move the plot under the mouse
        self.log_scale = True
        # what the bars show: time, pct-bandwidth or pct-bound (kernels.roofline.percent); not "metric",
        # which would hide QPaintDevice.metric() (rendering the widget into an SVG crashed)
        self.bar_metric = "time"
        self.percents: list[tuple[float | None, bool, str | None]] = []   # (value, above the roof, why none)
        self.records: list[dict] = []
        self.pool: list[dict] | None = None
        self.baseline: str | None = None
        self.compact = False                 # value labels hidden, short axis titles (a short chart)
        self.speed_row_fits = True
        self._value_labels: list = []
        self._notes: list[str] = []
        self._title_html = ""
        self.medians: list[float] = []
        self.speedups: list[float | None] = []
        self.speedup_notes: list[str] = []   # per bar: why its speedup is not like with like ('' when it is)
        self.unit, self.scale = "s", 1.0
        self.hovered: int | None = None
        # every move, not the scene's sigMouseMoved: it drops moves closer than 10 ms apart, which
        # can leave the label describing the cell the mouse just left
        self.viewport().installEventFilter(self)
        self.setMinimumSize(200, 120)
        self.set_records([])

    def set_log_scale(self, on: bool) -> None:
        self.log_scale = bool(on)
        self.set_records(self.records, self.baseline, self.pool)

    def set_metric(self, metric: str) -> None:
        """``time`` (the default), or ``pct-bandwidth`` / ``pct-bound``: the bars show each run's
        fraction of its device's measured copy bandwidth or roofline bound."""
        if metric not in ("time", *PERCENT_TITLES):
            raise ValueError(f"unknown metric {metric!r}")
        self.bar_metric = metric
        self.set_records(self.records, self.baseline, self.pool)

    def set_records(self, records: list[dict], baseline: str | None = None, pool: list[dict] | None = None) -> None:
        """Draw ``records`` (runs without a kernel time are left out); speedups against the
        fastest run of ``baseline`` on the same input, looked up in ``pool`` (default: the
        records shown)."""
        kept = [r for r in records if kernel_times(r) is not None]
        self.records = [r for r in kept if not is_simulated(r)] + [r for r in kept if is_simulated(r)]
        self.baseline = baseline or None
        self.pool = pool
        self._value_labels = []
        for plot in (self.time_plot, self.speed_plot):
            plot.clear()
        self.medians = [kernel_times(r)[0] for r in self.records]
        if not self.records:
            self._title_html = "no runs to show:<br>run a variant in the Run dock, or select runs in the history"
            self.title_label.setText(self._title_html)
            self._show_speed_plot(False)
            self.time_plot.getAxis("bottom").setTicks([[]])
            self.time_axis.set_times([], self.log_scale)          # an empty axis: no ticks, no title
            self.speedups = []
            self.speedup_notes = []
            return
        if self.bar_metric == "time":
            self._draw_times()
        else:
            self._draw_percentages()
        self._draw_speedups(pool if pool is not None else self.records)
        families = sorted({r.get("family", "?") for r in self.records})
        inputs = sorted({str((r.get("input") or {}).get("name", "?")) for r in self.records})
        targets = sorted({r.get("target", "?") for r in self.records})
        notes = ([f"median kernel time, min–max bars, {'log' if self.log_scale else 'linear'} scale"]
                 if self.bar_metric == "time" else
                 [f"{PERCENT_TITLES[self.bar_metric][0]} (docs/roofline.md); "
                  "L2: above the roof, the input stayed in L2"])
        common = {k: v for k, v in common_params(self.records).items() if k not in HIDDEN_PARAMS}
        if common:
            notes.append("all runs: " + params_text(common))
        notes.append(describe_modes(launch_mode(r) for r in self.records))
        simulated = any(is_simulated(r) for r in self.records)
        if simulated and len(targets) > 1:
            notes.append("simulator times (right of the dashed line) are not GPU times: compared only with each other")
        elif simulated:
            notes.append("simulator times are not GPU times")
        self._notes = notes
        self._title_html = (f"<b>{', '.join(families)}</b> on {', '.join(inputs[:3])}"
                            f"{' …' if len(inputs) > 3 else ''}")
        self._fit()

    def clone(self) -> TimingChart:
        """A new chart showing the same runs (exports draw it at a fixed size, offscreen)."""
        copy = TimingChart()
        copy.log_scale = self.log_scale
        copy.bar_metric = self.bar_metric
        copy.set_records(self.records, self.baseline, self.pool)
        return copy

    # ---- fitting the chart to its height -----------------------------------------------------------
    def _fit(self) -> None:
        """Show what fits the current height (see the module's docstring); called on resize."""
        if not self.records:
            return
        height = self.height()
        self.speed_row_fits = height >= SPEED_ROW_MIN_HEIGHT
        self._show_speed_plot(bool(self.baseline) and self.speed_row_fits)
        self.compact = height < VALUE_LABELS_MIN_HEIGHT
        for item in self._value_labels:
            item.setVisible(not self.compact)
        # the hover line's room goes to the plot in a short chart (the tooltip says the same)
        self.hover_label.setFixedHeight(0 if self.compact else HOVER_HEIGHT)
        self.hover_label.setVisible(not self.compact)
        # the axes fit their titles and ticks to their own length (explorer.plots.axes)
        self._fit_value_label_room()
        notes = list(self._notes)
        if self.baseline and not self.speed_row_fits:
            notes.append("speedups: make the chart taller, or hover a bar")
        # short lines: a label wider than the view would widen the layout and clip the bars
        text = self._title_html if self.compact else f"{self._title_html}<br><small>{self._fit_notes(notes)}</small>"
        self.title_label.setText(text)
        self.fit_layout_to_view()

    def _fit_value_label_room(self) -> None:
        """Room above the tallest bar for its value label, in pixels of the plot as it is: a fixed
        share of the range left the label cut off at the top of a short chart."""
        extent = getattr(self, "_y_extent", None)
        if extent is None or not self.records or getattr(self, "closed", False):
            return
        bottom, top, pad = extent
        px = self.time_plot.getViewBox().height()
        if not self.compact and px > 2 * VALUE_LABEL_PX:
            span = top - bottom
            pad = max(pad, VALUE_LABEL_PX * span / (px - VALUE_LABEL_PX))
        self.time_plot.setYRange(bottom, top + pad, padding=0)

    def _fit_notes(self, notes: list[str]) -> str:
        """The notes on one line if it fits the width, else one per line, each cut to fit."""
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 0.83)          # <small>
        metrics = QFontMetrics(font)
        room = max(self.width() - 40, 120)
        joined = "; ".join(notes)
        if metrics.horizontalAdvance(joined) <= room:
            return html.escape(joined)
        return "<br>".join(html.escape(metrics.elidedText(n, Qt.TextElideMode.ElideRight, room)) for n in notes)

    # ---- drawing --------------------------------------------------------------------------------
    def _show_speed_plot(self, on: bool) -> None:
        # a hidden item keeps its row in a QGraphicsGridLayout: give the room back explicitly
        self.speed_plot.setVisible(on)
        self.speed_plot.setMaximumHeight(1e6 if on else 0)
        self.ci.layout.setRowStretchFactor(2, 2 if on else 0)

    def _set_x_ticks(self, plot) -> None:
        with_input = len({(r.get("input") or {}).get("fingerprint") for r in self.records}) > 1
        common = common_params(self.records)
        chars = self._line_chars()
        max_lines = self._label_lines()
        # the runs' launch modes differ: each label says its own (the title says a shared one)
        with_mode = len({launch_mode(r) for r in self.records}) > 1
        ticks = [(i, run_label(r, with_input, common, chars, max_lines, with_mode)) for i, r in enumerate(self.records)]
        axis = plot.getAxis("bottom")
        axis.setTicks([ticks])
        self._bar_labels = [text for _i, text in ticks]
        # multi-line labels (variant, parameters, input): make room for every line
        lines = max((t.count("\n") + 1 for _, t in ticks), default=1)
        metrics = QFontMetrics(axis.style["tickFont"] or axis.font())
        axis.setHeight(int(metrics.height() * lines * 1.05) + 14)
        # pyqtgraph skips a label that reaches more than `hideOverlappingLabels` pixels past the
        # axis's ends (15 by default): the first or last bar's label, centred under a bar near
        # the edge, vanished when it was wider than its bar. Allow half the widest label.
        widest = max((metrics.horizontalAdvance(line) for _, t in ticks for line in t.split("\n")), default=0)
        axis.setStyle(hideOverlappingLabels=max(15, widest // 2 + 4))

    def _label_lines(self) -> int | None:
        """Lines of a bar's label that the height allows (a short chart keeps the plot instead)."""
        height = self.height()
        return 1 if height < VALUE_LABELS_MIN_HEIGHT else 2 if height < SPEED_ROW_MIN_HEIGHT else None

    def _line_chars(self) -> int:
        """Characters per label line that fit under one bar at the current width."""
        metrics = QFontMetrics(self.time_plot.getAxis("bottom").font())
        per_bar = max(self.width() - 110, 100) / max(len(self.records), 1)
        return max(MIN_LINE_CHARS, min(LABEL_LINE_CHARS, int(per_bar / max(metrics.averageCharWidth(), 1)) - 1))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if getattr(self, "closed", False):          # close() has deleted the plots already
            return
        shape = (self._line_chars(), self._label_lines()) if getattr(self, "records", None) else None
        if getattr(self, "records", None) and getattr(self, "_drawn_chars", None) != shape:
            self._drawn_chars = shape
            self._set_x_ticks(self.time_plot)
            if self.baseline:
                self._set_x_ticks(self.speed_plot)
        if getattr(self, "records", None):
            self._fit()

    def _draw_times(self) -> None:
        times = np.array([kernel_times(r) for r in self.records])     # n x (median, min, max)
        # the axis chooses the unit from the data and labels its ticks in it
        self.unit, self.scale = self.time_axis.set_times(times.ravel().tolist(), self.log_scale)
        t = times * self.scale
        x = np.arange(len(t), dtype=float)
        if self.log_scale:
            y, lo, hi = np.log10(t[:, 0]), np.log10(t[:, 1]), np.log10(t[:, 2])
            floor = math.floor(float(lo.min()) * 2) / 2 - 0.25   # half a decade below the fastest
            base = np.full_like(y, floor)
            top_pad = 0.1 * (float(hi.max()) - floor) + 0.15     # room for the value above the bar
        else:
            y, lo, hi = t[:, 0], t[:, 1], t[:, 2]
            base = np.zeros_like(y)
            top_pad = float(hi.max()) * 0.12
        brushes, pens = [], []
        for r in self.records:
            colour = KIND_COLOURS.get(r.get("kind"), QColor(90, 90, 90))
            if r.get("verified") is False:
                brushes.append(QBrush(WRONG_COLOUR, Qt.BrushStyle.BDiagPattern))
                pens.append(pg.mkPen(WRONG_COLOUR, width=2))
            else:
                brushes.append(QBrush(colour))
                pens.append(pg.mkPen(colour.darker(130), width=1))
        bars = pg.BarGraphItem(x=x, y0=base, y1=y, width=BAR_WIDTH, brushes=brushes, pens=pens)
        self.time_plot.addItem(bars)
        errors = pg.ErrorBarItem(x=x, y=y, top=hi - y, bottom=y - lo, beam=BAR_WIDTH * 0.35,
                                 pen=pg.mkPen((30, 30, 30), width=1.5))
        self.time_plot.addItem(errors)
        font = QFont()
        font.setPointSizeF(8.5)
        for i, r in enumerate(self.records):
            wrong = r.get("verified") is False
            text = ("✗ wrong  " if wrong else "") + (format_seconds(times[i, 0]) if self.time_axis.own_units
                                                      else f"{t[i, 0]:.3g}")
            label = pg.TextItem(text, color=WRONG_COLOUR if wrong else (30, 30, 30), anchor=(0.5, 1.0))
            label.setFont(font)
            label.setPos(x[i], hi[i])
            self.time_plot.addItem(label)
            self._value_labels.append(label)
        sims = [i for i, r in enumerate(self.records) if is_simulated(r)]
        if sims and len(sims) < len(self.records):           # simulator runs stand apart
            pen = pg.mkPen((120, 120, 120), width=1, style=Qt.PenStyle.DashLine)
            self.time_plot.addItem(pg.InfiniteLine(sims[0] - 0.5, angle=90, pen=pen))
        self._set_x_ticks(self.time_plot)
        self.time_plot.setXRange(-0.6, len(t) - 0.4, padding=0)
        self._y_extent = (float(base.min()), float(hi.max()), top_pad)
        self.time_plot.setYRange(float(base.min()), float(hi.max()) + top_pad, padding=0)

    def _draw_percentages(self) -> None:
        """Bars of each run's percentage of its device's measured limit (see the module)."""
        from kernels.roofline.percent import metric_value

        self.percents = [metric_value(r, self.bar_metric) for r in self.records]
        self.time_axis.set_percent(PERCENT_TITLES[self.bar_metric])
        x = np.arange(len(self.records), dtype=float)
        font = QFont()
        font.setPointSizeF(8.5)
        shown, brushes, pens, l2 = [], [], [], []
        for i, (r, (value, above, _why)) in enumerate(zip(self.records, self.percents, strict=True)):
            if above:
                l2.append(i)
                continue
            if value is None:
                continue
            colour = KIND_COLOURS.get(r.get("kind"), QColor(90, 90, 90))
            wrong = r.get("verified") is False
            shown.append((i, value))
            brushes.append(QBrush(WRONG_COLOUR, Qt.BrushStyle.BDiagPattern) if wrong else QBrush(colour))
            pens.append(pg.mkPen(WRONG_COLOUR if wrong else colour.darker(130), width=1))
        if shown:
            xs, ys = zip(*shown, strict=True)
            self.time_plot.addItem(pg.BarGraphItem(x=np.array(xs), y0=np.zeros(len(ys)), y1=np.array(ys),
                                                   width=BAR_WIDTH, brushes=brushes, pens=pens))
        if l2:          # above the roof: the input stayed in L2; a full pale bar, never a number over 100 %
            dotted = QBrush(L2_COLOUR, Qt.BrushStyle.Dense5Pattern)
            self.time_plot.addItem(pg.BarGraphItem(x=x[l2], y0=np.zeros(len(l2)), y1=np.full(len(l2), 100.0),
                                                   width=BAR_WIDTH, brush=dotted,
                                                   pen=pg.mkPen(L2_COLOUR.darker(150), width=1)))
        for i, (value, above, _why) in enumerate(self.percents):
            text = "L2" if above else (f"{value:.0f} %" if value is not None else "–")
            label = pg.TextItem(text, color=(31, 58, 147) if above else (30, 30, 30), anchor=(0.5, 1.0))
            label.setFont(font)
            label.setPos(x[i], 100.0 if above else (value if value is not None else 0.0))
            self.time_plot.addItem(label)
            self._value_labels.append(label)
        self.time_plot.addItem(pg.InfiniteLine(100.0, angle=0, pen=pg.mkPen((60, 60, 60), width=1,
                                                                            style=Qt.PenStyle.DashLine)))
        self._set_x_ticks(self.time_plot)
        self.time_plot.setXRange(-0.6, len(self.records) - 0.4, padding=0)
        self._y_extent = (0.0, 100.0, 4.0)
        self.time_plot.setYRange(0.0, 104.0, padding=0)

    def _draw_speedups(self, pool: list[dict]) -> None:
        self.speedups = []
        self.speedup_notes = []
        self._show_speed_plot(bool(self.baseline))
        if not self.baseline:
            return
        baseline_sim = [is_simulated(c) for c in pool if c.get("variant") == self.baseline]
        x, s = [], []
        for i, r in enumerate(self.records):
            ref = baseline_for(r, pool, self.baseline)
            value = kernel_times(ref)[0] / kernel_times(r)[0] if ref is not None else None
            self.speedups.append(value)
            self.speedup_notes.append(cross_mode_note(launch_mode(r), launch_mode(ref)) if ref is not None else "")
            if value is not None:
                x.append(i)
                s.append(value)
        self.speed_axis.set_titles([f"speedup vs {self.baseline}", "speedup", "×"])
        self._set_x_ticks(self.speed_plot)
        if not s:
            mixed = any(is_simulated(r) != (baseline_sim[0] if baseline_sim else False) for r in self.records)
            text = f"no run of {self.baseline} on these inputs"
            if mixed and baseline_sim:
                text = f"no run of {self.baseline} on the same kind of target (simulator or not) to compare with"
            label = pg.TextItem(text, color=(120, 120, 120), anchor=(0.5, 0.5))
            label.setPos((len(self.records) - 1) / 2, 0)
            self.speed_plot.addItem(label)
            self.speed_plot.setYRange(-1, 1)
            return
        s = np.array(s)
        logs = np.log10(s)
        cross = [bool(self.speedup_notes[i]) for i in x]
        colours = [CROSS_MODE_COLOUR if c else QColor(40, 150, 90) if v >= 1 else QColor(220, 130, 30)
                   for v, c in zip(s, cross, strict=True)]
        # a cross-mode speedup is hatched: it must not read as a plain one
        bars = pg.BarGraphItem(x=np.array(x, float), y0=np.zeros_like(logs), y1=logs, width=BAR_WIDTH,
                               brushes=[QBrush(c, Qt.BrushStyle.BDiagPattern) if cr else QBrush(c)
                                        for c, cr in zip(colours, cross, strict=True)],
                               pens=[pg.mkPen(c.darker(130), width=1,
                                              style=Qt.PenStyle.DashLine if cr else Qt.PenStyle.SolidLine)
                                     for c, cr in zip(colours, cross, strict=True)])
        self.speed_plot.addItem(bars)
        one = pg.mkPen((60, 60, 60), width=1, style=Qt.PenStyle.DashLine)
        self.speed_plot.addItem(pg.InfiniteLine(0, angle=0, pen=one))
        font = QFont()
        font.setPointSizeF(8.5)
        for xi, lv in zip(x, logs, strict=True):
            text = self.speedup_text(xi)
            label = pg.TextItem(text, color=(110, 110, 110) if self.speedup_notes[xi] else (30, 30, 30),
                                anchor=(0.5, 1.0 if lv >= 0 else 0.0))
            label.setFont(font)
            label.setPos(xi, lv)
            self.speed_plot.addItem(label)
            self._value_labels.append(label)
        missing = [i for i, v in enumerate(self.speedups) if v is None]
        if missing and any(is_simulated(self.records[i]) != is_simulated(self.records[x[0]]) for i in missing):
            for i in missing:                  # say why a bar has no speedup instead of leaving a gap
                why = pg.TextItem("sim: not\ncompared" if is_simulated(self.records[i]) else "not\ncompared",
                                  color=(120, 120, 120), anchor=(0.5, 0.5))
                why.setFont(font)
                why.setPos(i, 0)
                why.setToolTip(SIM_NOTE)
                self.speed_plot.addItem(why)
                self._value_labels.append(why)
        lo, hi = min(float(logs.min()), 0.0), max(float(logs.max()), 0.0)
        pad = max(0.4, (hi - lo) * 0.3)                      # room for the labels beyond the bars
        self.speed_plot.setYRange(lo - pad, hi + pad, padding=0)

    def value_texts(self) -> list[str]:
        """The numbers (and words) drawn at the bars and speedups, in drawing order."""
        return [item.toPlainText() for item in self._value_labels]

    def bar_labels(self) -> list[str]:
        """The label under each bar (variant, parameters; its launch mode when the runs' differ)."""
        return list(getattr(self, "_bar_labels", []))

    def speedup_text(self, i: int) -> str:
        """The label of bar ``i``'s speedup: "12×", "3× slower", or with the cross-mode warning
        ("12× (graph vs direct: not like with like)", on two lines); '' without a speedup."""
        if not self.speedups or i >= len(self.speedups) or self.speedups[i] is None:
            return ""
        v = self.speedups[i]
        text = f"{_ratio(v)}×" if v >= 1 else f"{_ratio(1 / v)}× slower"
        note = self.speedup_notes[i]
        return f"{text}\n({note})" if note else text

    # ---- hovering ---------------------------------------------------------------------------------
    def describe_bar(self, i: int) -> str:
        if not 0 <= i < len(self.records):
            return ""
        r = self.records[i]
        med, lo, hi = kernel_times(r)
        text = (f"{r.get('family')}/{r.get('variant')} ({params_text(shown_params(r))}) on "
                f"{(r.get('input') or {}).get('name')}, {r.get('target')}: median {format_seconds(med)}, "
                f"min {format_seconds(lo)}, max {format_seconds(hi)}, {DESCRIPTIONS[launch_mode(r)]}")
        if r.get("verified") is False:
            text += " — VERIFICATION FAILED"
        if self.bar_metric != "time" and i < len(self.percents):
            value, above, why = self.percents[i]
            text += ("; above the roof: the input stayed in L2" if above else
                     f"; {value:.1f} {PERCENT_TITLES[self.bar_metric][0]}" if value is not None else f"; {why}")
        if self.speedups and self.speedups[i] is not None:
            text += f"; {self.speedups[i]:.3g}× vs {self.baseline}"
            if self.speedup_notes[i]:
                text += f" ({self.speedup_notes[i]})"
        elif self.baseline and is_simulated(r):
            text += f"; no speedup: {SIM_NOTE}"
        return text

    def bar_center(self, i: int) -> QPointF:
        vb = self.time_plot.getViewBox()
        y0, y1 = vb.viewRange()[1]
        return vb.mapViewToScene(QPointF(i, (y0 + y1) / 2))

    def _on_mouse_moved(self, scene_pos) -> None:
        index = None
        for plot in (self.time_plot, self.speed_plot):
            if plot.isVisible() and plot.sceneBoundingRect().contains(scene_pos):
                xv = plot.getViewBox().mapSceneToView(scene_pos).x()
                i = round(xv)
                if 0 <= i < len(self.records) and abs(xv - i) <= BAR_WIDTH / 2:
                    index = i
        if index == self.hovered:
            return
        self.hovered = index
        text = self.describe_bar(index) if index is not None else ""
        self.hover_label.setText(text)
        self.setToolTip(text)
        self.barHovered.emit(index)
