"""Every number says how it was timed (issue 25, §1, the views): ``timing.launch`` is ``direct``,
``graph`` (CUDA-graph replays) or ``queued`` (device time of launches queued behind a busy
kernel); records without it were ``direct``. A speedup between a graph replay and a direct call is
marked as a cross-mode comparison, never shown as a plain speedup; graph and queued compare."""

from __future__ import annotations

import copy

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from explorer.plots.heatmap_view import HeatmapView
from explorer.plots.history_table import COLUMNS, HistoryModel
from explorer.plots.timing_chart import TimingChart
from kernels.compute.sweep import summarize_best
from kernels.results.heatmap import heatmap_table, to_text
from kernels.results.launch_modes import comparable, launch_mode
from tests.test_gui_results import record

pytestmark = pytest.mark.gui


def timed(variant: str, median: float, mode: str | None, **kw) -> dict:
    r = record(variant, median, kind="gpu" if variant.startswith("gpu") else "cpu-serial", family="spmv", **kw)
    r["target"] = "cuda"
    if mode is not None:
        r["timing"]["launch"] = mode
    return r


def chart_of(qtbot, records, baseline=None) -> TimingChart:
    chart = TimingChart()
    qtbot.addWidget(chart)
    chart.resize(900, 650)
    chart.show()
    chart.set_records(records, baseline=baseline)
    QApplication.processEvents()
    return chart


def test_the_rule_graph_and_queued_compare_direct_does_not_and_a_missing_field_is_direct():
    assert comparable("graph", "queued") and comparable("direct", "direct") and comparable("graph", "graph")
    assert not comparable("graph", "direct") and not comparable("direct", "queued")
    assert launch_mode({"timing": {}}) == "direct" and launch_mode({"timing": {"launch": "queued"}}) == "queued"


def test_a_graph_replay_against_a_direct_call_is_marked_not_like_with_like(qtbot):
    runs = [timed("cusparse", 6e-5, "direct"), timed("gpu-tunable", 1.2e-5, "graph")]
    chart = chart_of(qtbot, runs, baseline="cusparse")
    i = [r["variant"] for r in chart.records].index("gpu-tunable")
    assert chart.speedups[i] == pytest.approx(5.0)
    assert chart.speedup_notes[i] == "graph vs direct: not like with like"
    assert chart.speedup_text(i) == "5×\n(graph vs direct: not like with like)"
    assert "not like with like" in chart.describe_bar(i)
    bars = [item for item in chart.speed_plot.items if type(item).__name__ == "BarGraphItem"][0]
    assert any(b.style() == Qt.BrushStyle.BDiagPattern for b in bars.opts["brushes"])      # styled apart


def test_graph_against_queued_is_a_plain_speedup_and_the_baseline_prefers_a_comparable_mode(qtbot):
    runs = [timed("cusparse", 2e-5, "direct"), timed("cusparse", 4e-5, "queued"), timed("gpu-tunable", 1e-5, "graph")]
    chart = chart_of(qtbot, runs, baseline="cusparse")
    i = [r["variant"] for r in chart.records].index("gpu-tunable")
    # the direct cuSPARSE call is faster, but the queued one (device time) is the fair baseline
    assert chart.speedups[i] == pytest.approx(4.0) and chart.speedup_notes[i] == ""
    assert chart.speedup_text(i) == "4×"


def test_the_chart_says_which_mode_each_number_used(qtbot):
    same = chart_of(qtbot, [timed("gpu-a", 1e-5, "graph"), timed("gpu-b", 2e-5, "graph")])
    assert "CUDA-graph replays" in same.title_label.text
    assert not any("[graph]" in t for t in same.bar_labels())          # said once, in the title
    mixed = chart_of(qtbot, [timed("gpu-a", 1e-5, "graph"), timed("cpu-serial", 2e-3, None)])
    assert "not like with like" in mixed.title_label.text
    labels = mixed.bar_labels()
    assert any("[graph]" in t for t in labels) and any("[direct]" in t for t in labels)
    assert "CUDA-graph replays" in mixed.describe_bar(0) or "CUDA-graph replays" in mixed.describe_bar(1)


def test_the_history_table_has_a_launch_column():
    model = HistoryModel()
    model.add_records([timed("gpu-a", 1e-5, "queued"), timed("gpu-b", 1e-5, None)])
    col = COLUMNS.index("launch")
    assert [model.index(r, col).data() for r in range(2)] == ["queued", "direct"]
    assert "device time" in model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert "graph" in model.headerData(col, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)


def sweep_with_modes(modes: dict) -> dict:
    cells = []
    for wg, (median, mode) in modes.items():
        rec = timed("gpu-tunable", median, mode)
        cells.append({"params": {"wg": wg}, "status": "ok", "median_s": median, "record": rec})
    sweep = {"kind": "sweep", "schema": 2, "family": "spmv", "variant": "gpu-tunable", "target": "cuda",
             "launch": "auto", "input": {"name": "m"}, "grid": {"wg": list(modes)}, "cells": cells}
    sweep.update(summarize_best(cells))
    return sweep


def test_the_heatmap_says_how_its_cells_were_timed(qtbot):
    one = heatmap_table(sweep_with_modes({32: (1e-5, "graph"), 64: (2e-5, "graph")}))
    assert "CUDA-graph replays" in one.subtitle and "CUDA-graph replays" in to_text(one).splitlines()[0]
    mixed_sweep = sweep_with_modes({32: (1e-5, "graph"), 64: (2e-5, "direct")})
    view = HeatmapView()
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    view.set_sweep(copy.deepcopy(mixed_sweep))
    QApplication.processEvents()
    assert "not like with like" in view.title_label.text
    assert "graph vs direct" not in view.describe_cell(0, 0)                  # the best cell itself
    assert "direct vs graph: not like with like" in view.describe_cell(1, 0)
