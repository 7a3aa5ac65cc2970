"""The timing chart's time axis states the data's real unit (issue 25): a 5.03 s bar read
"median kernel time (s) (x0.001)" with ticks 2 and 5, i.e. 5 ms, on screen and in the exports,
and at 1366 × 768 the title was cut to "ime (s) (x0.001)".

Checked on the widget through pyqtgraph's public axis API (``tickValues``/``tickStrings``, the
drawn label's text and size), for values from 1 ns to 100 s."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from explorer.plots.timing_chart import TimingChart
from tests.test_gui_results import record

pytestmark = pytest.mark.gui
UNIT_SECONDS = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
VALUES = [1e-9, 4.2e-8, 7e-7, 3e-5, 5e-4, 2.5e-2, 0.3, 5.03, 100.0]


def shown_chart(qtbot, records, size=(700, 500)) -> TimingChart:
    chart = TimingChart()
    qtbot.addWidget(chart)
    chart.resize(*size)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_records(records)
    QApplication.processEvents()
    return chart


def axis_title(axis) -> str:
    return axis.label.toPlainText().strip()


def labelled_ticks(chart) -> list[tuple[float, str]]:
    """(coordinate, text) of the labelled ticks the left axis draws at its range and length."""
    axis = chart.time_plot.getAxis("left")
    lo, hi = chart.time_plot.getViewBox().viewRange()[1]
    length = chart.time_plot.getViewBox().sceneBoundingRect().height()
    spacing, values = axis.tickValues(lo, hi, length)[0]
    texts = axis.tickStrings(values, 1.0, spacing)
    return [(v, t) for v, t in zip(values, texts, strict=True) if t]


def label_seconds(text: str, axis_unit: str | None) -> float:
    """A tick label in seconds: '5' on an axis titled in s, or '10 µs' with its own unit."""
    number, _, unit = text.partition(" ")
    unit = unit or axis_unit
    assert unit in UNIT_SECONDS, f"tick {text!r} has no unit (axis unit {axis_unit!r})"
    return float(number) * UNIT_SECONDS[unit]


def bar_top(chart) -> np.ndarray:
    bars = next(i for i in chart.time_plot.items if type(i).__name__ == "BarGraphItem")
    return np.asarray(bars.opts["y1"], float)


@pytest.mark.parametrize("seconds", VALUES)
def test_the_time_axis_labels_state_the_datas_real_unit(qtbot, seconds):
    chart = shown_chart(qtbot, [record("cpu-serial", seconds)])
    axis = chart.time_plot.getAxis("left")
    title = axis_title(axis)
    assert "(x" not in title                                  # no SI factor of pyqtgraph's on log10 coordinates
    unit = re.search(r"\((ns|µs|ms|s)\)$", title).group(1)
    assert 1 <= seconds / UNIT_SECONDS[unit] < 1000           # the unit chosen from the data
    ticks = labelled_ticks(chart)
    assert len(ticks) >= 2
    top = bar_top(chart)[0]
    for pos, text in ticks:             # every label, read in the title's unit, agrees with the bar
        assert label_seconds(text, unit) == pytest.approx(seconds * 10 ** (pos - top), rel=1e-6), text
    if seconds == 5.03:                                       # the case: 2 s and 5 s, not 2 ms and 5 ms
        assert unit == "s" and {"2", "5"} <= {t for _p, t in ticks}


def test_one_chart_from_1_ns_to_100_s_labels_each_tick_with_its_unit(qtbot):
    values = [1e-9, 3e-6, 100.0]
    chart = shown_chart(qtbot, [record(f"v{i}", v) for i, v in enumerate(values)], size=(700, 700))
    axis = chart.time_plot.getAxis("left")
    assert axis_title(axis) in ("median kernel time", "time")       # no unit for the whole axis
    ticks = labelled_ticks(chart)
    assert len(ticks) >= 4
    tops = bar_top(chart)
    for pos, text in ticks:
        assert label_seconds(text, None) == pytest.approx(values[0] * 10 ** (pos - tops[0]), rel=1e-6), text
    assert {"1 ns", "1 µs", "1 s"} <= {t for _p, t in ticks}
    assert "100 s" in chart.describe_bar(2) and "1 ns" in chart.describe_bar(0)


@pytest.mark.parametrize("height", [140, 200, 300, 500])
def test_the_axis_title_is_never_cut(qtbot, height):
    chart = shown_chart(qtbot, [record("cpu-serial", 5.03)], size=(600, height))
    axis = chart.time_plot.getAxis("left")
    title = axis_title(axis)
    assert axis.label.boundingRect().width() <= axis.size().height()      # the rotated title fits along the axis
    assert title in ("median kernel time (s)", "time (s)", "s", "")
    if height >= 300:
        assert title == "median kernel time (s)"


def test_the_exports_state_the_same_unit(qtbot, tmp_path):
    from explorer.plots.export import save_offscreen

    chart = shown_chart(qtbot, [record("cpu-serial", 5.03)])
    svg = tmp_path / "t.svg"
    save_offscreen(chart.clone(), svg)
    text = svg.read_text()
    assert "x0.001" not in text
    copy = chart.clone()
    qtbot.addWidget(copy)
    copy.resize(1200, 800)
    copy.show()
    QApplication.processEvents()
    assert axis_title(copy.time_plot.getAxis("left")) == "median kernel time (s)"
    assert {"2", "5"} <= {t for _p, t in labelled_ticks(copy)}
    assert not math.isnan(bar_top(copy)[0])


def test_an_empty_chart_has_no_time_ticks(qtbot):
    chart = shown_chart(qtbot, [])
    axis = chart.time_plot.getAxis("left")
    lo, hi = chart.time_plot.getViewBox().viewRange()[1]
    assert axis.tickValues(lo, hi, 300) == [] and axis_title(axis) == ""
    chart.set_records([record("cpu-serial", 5.03)])                # then runs come: ticks and title
    assert axis_title(axis) and axis.tickValues(lo, hi, 300)


def drawn_bar_labels(chart) -> list[str]:
    """The bottom axis's labels pyqtgraph actually paints (its public ``generateDrawSpecs``)."""
    from PySide6.QtGui import QImage, QPainter

    axis = chart.time_plot.getAxis("bottom")
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        _axis_spec, _ticks, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text for _rect, _flags, text in texts]


def test_the_first_and_last_bars_keep_labels_wider_than_their_bars(qtbot):
    # pyqtgraph skips a label reaching more than 15 px past the axis's ends: a first bar with a
    # long parameter list (spmv/gpu-adaptive among nine H100 runs) lost its whole label
    wide = {"threads_per_row": "auto→4", "long_row": "auto→16384", "short_mode": "auto", "dtype": "fp64"}
    records = [record("gpu-adaptive", 3e-4, params=wide, family="spmv")]
    records += [record(f"gpu-v{i}", 1e-3 * (i + 1), family="spmv") for i in range(7)]
    records += [record("gpu-last", 2e-3, params={**wide, "loads": "auto"}, family="spmv")]
    chart = shown_chart(qtbot, records, size=(1000, 700))      # a bar's slot narrower than "threads_per_row=auto→4"
    drawn = drawn_bar_labels(chart)
    assert len(drawn) == len(records)
    assert drawn[0].startswith("gpu-adaptive") and drawn[-1].startswith("gpu-last")
