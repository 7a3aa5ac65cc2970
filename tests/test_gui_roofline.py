"""The roofline view (explorer/plots/roofline_view.py) and the heatmap drawn by percentage, in the
GUI (pytest-qt, offscreen): points under the measured roof, L2-resident points above it marked and
never shown as over 100 %, hovering, and the Results dock's Roofline tab and heatmap metric box."""

from __future__ import annotations

import re

import numpy as np
import pytest
from PySide6.QtTest import QTest

from explorer.plots.roofline_view import GIGA, RooflineView
from kernels.roofline import peaks as kept
from tests.gui_support import dock, make_window

PEAKS = {"bandwidth_Bps": 2.0e12, "rates": {"int32": 1.0e13, "add+min-fp64": 4.0e12}, "measured": "2026-11-27T10:00"}
DEVICE = {"target": "cuda", "name": "Fake H100", "uuid": "GPU-9", "driver": "12.8"}


def gpu_record(variant, median_s, nbytes, ops, op="int32", family="triangles", fits=False, params=None):
    return {"schema": 2, "family": family, "variant": variant, "kind": "gpu", "target": "cuda",
            "params": params or {"block_size": 256}, "input": {"name": "rmat", "fingerprint": "f"}, "verified": True,
            "timing": {"kernel": {"median_s": median_s, "min_s": median_s, "max_s": median_s}, "fits_in_l2": fits},
            "environment": {"device": DEVICE},
            "roofline": {"bytes": int(nbytes), "ops": float(ops), "op": op, "peaks": PEAKS}}


RUNS = [
    gpu_record("gpu-oriented", 1e-3, 1e9, 1e9),                       # 1 TB/s: 50 % of the memory roof
    gpu_record("gpu-row-block", 4e-3, 1e9, 2e10),                     # 5 T ops/s: 50 % of the int32 roof
    gpu_record("gpu-csr", 2e-3, 1e9, 4e9, op="add+min-fp64", family="sssp"),
    gpu_record("gpu-oriented", 1e-4, 1e9, 1e9, fits=True, params={"block_size": 64}),   # 10 TB/s: L2
]


@pytest.fixture(autouse=True)
def no_kept_peaks(tmp_path, monkeypatch):
    monkeypatch.setenv(kept.PEAKS_ENV, str(tmp_path / "peaks.json"))


@pytest.fixture
def view(qtbot):
    v = RooflineView()
    qtbot.addWidget(v)
    v.resize(900, 600)
    v.show()
    QTest.qWaitForWindowExposed(v)
    return v


def test_points_roofs_and_the_l2_resident_point(view):
    chart = view.set_records(RUNS)
    assert len(chart.points) == 4 and set(view.series_items) == {"triangles/gpu-oriented", "triangles/gpu-row-block",
                                                                  "sssp/gpu-csr"}
    xs, ys = view.series_items["triangles/gpu-oriented"].getOriginalDataset()
    assert np.allclose(xs, [1.0]) and np.allclose(ys, [1e12 / GIGA])       # the L2 point is not among them
    # the L2-resident point: its own item and an "L2" label, none of the others
    lx, ly = view.l2_item.getOriginalDataset()
    assert np.allclose(lx, [1.0]) and np.allclose(ly, [1e13 / GIGA])
    assert [label.toPlainText() for label in view.l2_labels] == ["L2"]
    # one roof per operation kind: the diagonal at 2 TB/s bent flat at the measured peak
    assert set(view.roof_items) == {"int32", "add+min-fp64"}
    rx, ry = view.roof_items["int32"].getOriginalDataset()
    assert np.isclose(ry.max(), 1e13 / GIGA) and np.allclose(ry[rx < 1], rx[rx < 1] * 2e12 / GIGA)
    assert "Fake H100" in view.title_label.text and "1 above the roof (L2-resident)" in view.title_label.text


def test_descriptions_never_say_over_100_percent(view):
    chart = view.set_records(RUNS)
    texts = [view.describe(p) for p in chart.points]
    assert sum("stayed in L2" in t for t in texts) == 1
    percents = [float(x) for t in texts for x in re.findall(r"(\d+(?:\.\d+)?) %", t)]
    assert percents and max(percents) <= 100 and 50 in percents


def test_hovering_a_point_describes_it(view, qtbot):
    chart = view.set_records(RUNS)
    target = next(p for p in chart.points if p.series == "sssp/gpu-csr")
    qtbot.wait(50)                  # the new title's height lays the plot out again
    QTest.mouseMove(view.viewport(), view.mapFromScene(view.point_center(target)))
    qtbot.waitUntil(lambda: view.hovered is target, timeout=5000)
    assert "sssp/gpu-csr" in view.hover_label.text and "add+min" in view.hover_label.text


def test_nothing_to_draw_says_why(view):
    no_peaks = [{**RUNS[0], "roofline": {k: v for k, v in RUNS[0]["roofline"].items() if k != "peaks"}}]
    view.set_records(no_peaks)
    assert "device-peaks" in view.title_label.text and view.series_items == {}
    view.set_records([{**RUNS[0], "target": "sim"}])
    assert "real GPU" in view.title_label.text


def sweep_of(records):
    from kernels.compute.sweep import summarize_best

    cells = [{"params": {"block_size": r["params"]["block_size"]}, "status": "ok",
              "median_s": r["timing"]["kernel"]["median_s"], "record": r} for r in records]
    s = {"kind": "sweep", "schema": 2, "family": "triangles", "variant": "gpu-oriented", "target": "cuda",
         "input": {"name": "rmat"}, "grid": {"block_size": [64, 256]}, "cells": cells}
    s.update(summarize_best(cells))
    return s


def test_results_dock_roofline_tab_and_heatmap_percentages(qtbot, tmp_path):
    w = make_window(qtbot, tmp_path)
    res = dock(w, "ResultsDock")
    res.add_records(RUNS[:3])
    assert res.show_view("roofline") and res.tabs.currentWidget() is res.roofline
    assert len(res.roofline.chart.points) == 3              # every run of the history (two families)
    res.add_sweep(sweep_of([RUNS[0], RUNS[3]]))
    res.roof_source_box.setCurrentIndex(1)                   # the sweep's cells
    assert len(res.roofline.chart.points) == 2 and len(res.roofline.chart.above) == 1
    res.metric_box.setCurrentIndex(res.metric_box.findData("pct-bandwidth"))
    heat = res.heatmap
    assert heat.table.metric == "pct-bandwidth" and heat.unit == "%"
    texts = [item.toPlainText() for item in heat.cell_texts()]
    assert any(t.startswith("L2") for t in texts) and "50" in texts
    assert not any(float(x) > 100 for t in texts for x in re.findall(r"^\d+(?:\.\d+)?", t))
    assert "stayed in L2" in heat.describe_cell(0, 0) and "% of the measured bandwidth" in heat.colorbar_titles()[0]
    res.metric_box.setCurrentIndex(res.metric_box.findData("energy"))      # no --energy: the view says so
    assert heat.table is None and "--energy" in heat.title_label.text
    w.close()


def test_timing_chart_by_percentage(qtbot):
    from explorer.plots.timing_chart import TimingChart

    chart = TimingChart()
    qtbot.addWidget(chart)
    chart.resize(900, 600)
    chart.show()
    cpu = {**RUNS[0], "kind": "cpu-serial", "target": "cpu", "variant": "cpu-serial"}
    chart.set_records([RUNS[0], RUNS[3], cpu])
    chart.set_metric("pct-bandwidth")
    assert [p[0] for p in chart.percents[:1]] == [pytest.approx(50.0)] and chart.percents[1][:2] == (None, True)
    assert chart.value_texts() == ["50 %", "L2", "–"]        # never a number over 100 %
    assert chart.time_axis.titles[0] == "% of the measured copy bandwidth"
    assert "stayed in L2" in chart.describe_bar(1) and "real GPU" in chart.describe_bar(2)
    chart.set_metric("time")
    assert chart.value_texts() == ["1", "0.1", "1"] and chart.time_axis.titles[0] == "median kernel time (ms)"


def test_the_chosen_figures_are_kept_in_the_session(qtbot, tmp_path):
    def window_and_dock(sub):
        w = make_window(qtbot, tmp_path / sub, size=None)
        return w, dock(w, "ResultsDock")

    w1, res = window_and_dock("a")
    res.add_records(RUNS[:2])
    res.add_sweep(sweep_of([RUNS[0], RUNS[3]]))
    res.timing_metric_box.setCurrentIndex(res.timing_metric_box.findData("pct-bound"))
    res.metric_box.setCurrentIndex(res.metric_box.findData("pct-bandwidth"))
    res.roof_source_box.setCurrentIndex(res.roof_source_box.findData("sweep"))
    res.tabs.setCurrentIndex(2)
    state = res.session_state()
    w2, again = window_and_dock("b")
    again.restore_session_state(state)
    assert again.timing_chart.bar_metric == "pct-bound" and again.heatmap.table.metric == "pct-bandwidth"
    assert again.tabs.currentWidget() is again.roofline and len(again.roofline.chart.points) == 2
    again.restore_session_state({})                 # an older session: the defaults
    assert again.timing_metric_box.currentData() == "time" and again.metric_box.currentData() == "time"
    w1.close()
    w2.close()


def test_render_roofline_png_and_svg(qtbot, tmp_path):
    import json

    from explorer.render import main

    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in RUNS))
    assert main(["roofline", str(runs), str(tmp_path / "r.png"), "--size", "800x500"]) == 0
    assert main(["roofline", str(runs), str(tmp_path / "r.svg")]) == 0
    assert (tmp_path / "r.png").stat().st_size > 5000
    svg = (tmp_path / "r.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg


def test_heatmap_view_by_energy(qtbot):
    from explorer.plots.heatmap_view import HeatmapView

    view = HeatmapView()
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show()
    runs = [{**RUNS[0], "energy": {"joules_per_launch": 0.002, "watts": 400.0}},
            {**RUNS[3], "energy": {"joules_per_launch": 0.0005, "watts": 450.0}}]
    table = view.set_sweep(sweep_of(runs), metric="energy")
    assert view.unit == "mJ" and np.allclose(table.shown[:, 0], [0.0005, 0.002])
    assert sorted(item.toPlainText() for item in view.cell_texts()) == ["0.5 ★", "2"]
    assert view.colorbar_titles()[0] == "energy per launch (mJ, log scale)"
    assert "0.5 mJ" in view.describe_cell(0, 0) and "100 µs" in view.describe_cell(0, 0)


def test_no_two_of_many_series_look_alike():
    from explorer.plots.roofline_view import series_style

    styles = [series_style(i) for i in range(20)]
    assert len({(c.name(), s) for c, s in styles}) == 20
    assert all(s != "s" for _, s in styles)          # the hollow square is the L2-resident points'
