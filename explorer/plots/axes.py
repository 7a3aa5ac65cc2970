"""Axes for the result plots that say their real unit and never cut their title.

pyqtgraph's ``AxisItem`` scales its labels by an SI prefix of the *coordinates* and appends
"(x0.001)" to the title. Our log plots draw ``log10`` of the values, so a 5 s bar sits at 0.7 and
the axis wrote "median kernel time (s) (x0.001)", which reads as milliseconds. These axes switch
that scaling off and label a log axis themselves: the coordinate is ``log10(value in the axis's
unit)``, labels 1-2-5 per decade in that unit, as many as the axis's own length leaves room for.

Their title is the longest of a list of choices that fits along the axis at its current size
(checked on every resize), so a short plot shows "time (s)" or "s" rather than a title cut at
both ends.
"""

from __future__ import annotations

import math

import pyqtgraph as pg

from explorer.plots.format import UNITS, log_ticks, time_unit

TICK_LABEL_SPACING = 24          # pixels per tick label on a vertical axis
TITLE_MARGIN = 6                 # pixels left free at the ends of a fitted title
OWN_UNITS_BELOW = 0.1            # a fastest value below this, in the chosen unit: each tick gets its own unit


def axis_length(axis: pg.AxisItem) -> float:
    """Pixels along ``axis`` (its height for a vertical one)."""
    size = axis.size()
    return float(size.height() if axis.orientation in ("left", "right") else size.width())


def title_fits(axis: pg.AxisItem) -> bool:
    """Whether the axis's title, as drawn (rotated on a vertical axis), fits along the axis."""
    if not axis.labelText:
        return True
    return axis.label.boundingRect().width() <= max(axis_length(axis) - 2 * TITLE_MARGIN, 0.0)


def fit_axis_title(axis: pg.AxisItem, choices: list[str]) -> None:
    """Give ``axis`` the first (longest) of ``choices`` that fits along it, or no title."""
    for choice in choices:
        if axis.labelText != choice:
            axis.setLabel(choice)
        if title_fits(axis):
            return
    axis.setLabel("")


class FittedTitleAxis(pg.AxisItem):
    """An axis whose title is the longest of :meth:`set_titles`' choices that fits its length."""

    def __init__(self, orientation: str = "left", **kwargs):
        super().__init__(orientation, **kwargs)
        self.enableAutoSIPrefix(False)     # the title names the unit; no "(x0.001)" of pyqtgraph's
        self.titles: list[str] = [""]

    def set_titles(self, choices: list[str]) -> None:
        """Titles from the longest to the shortest; an empty last choice hides the title."""
        self.titles = list(choices) or [""]
        self.fit_title()

    def fit_title(self) -> None:
        fit_axis_title(self, self.titles)

    def resizeEvent(self, ev=None) -> None:  # noqa: N802 - Qt override
        # AxisItem's constructor resizes before our titles exist; the label is None once closed
        if self.label is not None and hasattr(self, "titles"):
            self.fit_title()
        super().resizeEvent(ev)


class LogAxis(FittedTitleAxis):
    """A log axis over coordinates ``log10(value)``: 1-2-5 labels per decade (decades only when
    they crowd), minor ticks at the other integers, at most one label per
    :data:`TICK_LABEL_SPACING` pixels of the axis. Subclasses say how a value is written."""

    def __init__(self, orientation: str = "left", **kwargs):
        super().__init__(orientation, **kwargs)
        self.log_scale = True
        self.empty = False                  # nothing plotted: no ticks (an empty chart showed "2" and "5")
        self._labels: dict[float, str] = {}

    def label_for(self, value: float) -> str:
        return f"{value:g}"

    def tickValues(self, minVal, maxVal, size):  # noqa: N802,N803 - pyqtgraph's names
        if self.empty:
            return []
        if not self.log_scale:
            return super().tickValues(minVal, maxVal, size)
        lo, hi = sorted((minVal, maxVal))
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo > 60:
            return []
        major, minor = log_ticks(10 ** lo, 10 ** hi, max_labels=max(2, int(size // TICK_LABEL_SPACING)))
        self._labels = {round(pos, 9): self.label_for(10 ** pos) for pos, _text in major}
        return [(1.0, [pos for pos, _t in major]), (0.1, [pos for pos, _t in minor])]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph's name
        if not self.log_scale:
            return super().tickStrings(values, scale, spacing)
        return [self._labels.get(round(v, 9), "") for v in values]

    def labelled_ticks(self) -> list[tuple[float, str]]:
        """(coordinate, label) of every labelled tick at the current range and length: what is
        drawn (for tests and for anyone reading the axis)."""
        lo, hi = self.range
        levels = self.tickValues(lo, hi, axis_length(self))
        if not levels:
            return []
        _spacing, values = levels[0]
        return list(zip(values, self.tickStrings(values, 1.0, levels[0][0]), strict=True))


class TimeAxis(LogAxis):
    """Kernel times: :meth:`set_times` chooses ns, µs, ms or s from the data. On a log scale a
    range that reaches far below that unit (1 ns beside 100 s) labels each tick with its own unit
    and drops the unit from the title, so no label reads "1e-09"."""

    def __init__(self, orientation: str = "left", title: str = "median kernel time", **kwargs):
        super().__init__(orientation, **kwargs)
        self.title = title
        self.unit, self.scale = "s", 1.0
        self.own_units = False

    def set_times(self, seconds, log_scale: bool = True) -> tuple[str, float]:
        """Choose the unit for ``seconds`` (the largest one shown with 1-3 digits) and the titles;
        returns ``(unit, scale)``: the plot draws ``value * scale`` (its log10 on a log scale)."""
        values = [s for s in seconds if s is not None and math.isfinite(s) and s > 0]
        self.empty = not values
        self.unit, self.scale = time_unit(values)
        self.log_scale = bool(log_scale)
        smallest = min(values) * self.scale if values else 1.0
        # the ticks reach half a decade below the fastest value: past 0.1 of the unit they would read
        # 0.002 or 1e-09, so each says its own unit instead
        self.own_units = self.log_scale and smallest < OWN_UNITS_BELOW
        self.set_titles(self.title_choices())
        self.picture = None
        self.update()
        return self.unit, self.scale

    def set_percent(self, titles: list[str]) -> None:
        """A linear axis of percentages (the chart shows a fraction of a measured limit, not time)."""
        self.empty, self.own_units, self.log_scale = False, False, False
        self.unit, self.scale = "%", 1.0
        self.set_titles(titles)
        self.picture = None
        self.update()

    def title_choices(self) -> list[str]:
        if self.empty:
            return [""]
        if self.own_units:
            return [self.title, "time", ""]
        return [f"{self.title} ({self.unit})", f"time ({self.unit})", self.unit]

    def label_for(self, value: float) -> str:
        if not self.own_units:
            return f"{value:g}"
        seconds = value / self.scale
        for name, scale in UNITS:
            if seconds * scale >= 1.0 - 1e-9:
                return f"{seconds * scale:g} {name}"
        name, scale = UNITS[-1]
        return f"{seconds * scale:.3g} {name}"


class RatioAxis(LogAxis):
    """Speedups on a log scale, labelled "2×", "10×", "0.5×"; far from 1 "100,000×" and
    "1/100,000×" rather than "1e+05×" and "1e-05×"."""

    def label_for(self, value: float) -> str:
        if value >= 1e4:
            return f"{value:,.0f}×"
        if value < 1e-2:
            return f"1/{1 / value:,.0f}×"
        return f"{value:g}×"
