"""The Results dock: result files made by ``graph-kernels``, the history table, the timing chart,
the heatmap, export to PNG/SVG/CSV/JSON, sessions, and ``python -m explorer.render``."""

from __future__ import annotations

import copy
import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QFont
from PySide6.QtTest import QTest

from explorer.plots.heatmap_view import HeatmapView
from explorer.plots.timing_chart import TimingChart
from kernels.results import load_sweep, read_records
from tests.conftest import data_path
from tests.gui_support import drawn_tick_texts, make_window, results_of

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def cli(*args, cwd=ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "NUMBA_ENABLE_CUDASIM": "1"}
    out = subprocess.run([sys.executable, "-m", "kernels", *map(str, args)], capture_output=True, text=True,
                         env=env, cwd=cwd, timeout=300)
    assert out.returncode == 0, out.stderr
    return out


@pytest.fixture(scope="module")
def made_by_graph_kernels(tmp_path_factory):
    """Run records and a sweep written by the command line, as on a GPU server."""
    d = tmp_path_factory.mktemp("server")
    records = d / "runs.jsonl"
    karate = data_path("karate.mtx")
    cli("run", "triangles", "cpu-serial", karate, "--repeat", "3", "--record", records)
    cli("run", "triangles", "scipy", karate, "--repeat", "3", "--record", records)
    sweep = d / "sweep.json"
    cli("sweep", "spmv", "gpu-tunable", data_path("lp_afiro.mtx"), "--grid", "wg=1,2,4", "--grid", "rows=1,2",
        "--param", "reduce=shared", "--target", "sim", "--repeat", "1", "--out", sweep, "--quiet")
    return records, sweep


@pytest.fixture
def window(qtbot, tmp_path):
    w = make_window(qtbot, tmp_path)
    yield w
    w.close()


def record(variant: str, median: float, *, kind="cpu-serial", verified=True, fingerprint="fp1", lo=None, hi=None,
           family="triangles", params=None):
    return {"schema": 1, "timestamp": "2025-01-01T10:00:00+00:00", "family": family, "variant": variant,
            "kind": kind, "target": "cpu", "params": params or {}, "input": {"name": "g", "fingerprint": fingerprint},
            "result": {"triangles": 45 if verified else 44}, "verified": verified,
            "verification": {"ok": verified, "reference": "scipy", "detail": "45 != 44" if not verified else "equal"},
            "timing": {"kernel": {"median_s": median, "min_s": lo or median * 0.9, "max_s": hi or median * 1.2},
                       "method": "perf_counter", "repeat": 3},
            "metric": {"name": "edges/s", "unit": "edges/s", "value": 78 / median}, "status": "ok"}


def synthetic_sweep() -> dict:
    """wg × rows with known times: an invalid cell, a failed one, one not run yet."""
    times = {(32, 1): 4e-3, (32, 2): 2e-3, (64, 1): 1.0e-3, (64, 2): 1.03e-3, (128, 1): 3e-3}
    cells = []
    for wg in (32, 64, 128):
        for rows in (1, 2, 256):
            p = {"wg": wg, "rows": rows}
            if rows == 256:
                if wg == 32:
                    cells.append({"params": p, "status": "invalid", "reason": "constraint 'rows <= wg' broken"})
                elif wg == 64:
                    cells.append({"params": p, "status": "failed", "reason": "crashed: the worker died"})
                continue            # (128, 256) not run yet
            if (wg, rows) == (128, 2):
                cells.append({"params": p, "status": "wrong", "reason": "verification failed"})
                continue
            cells.append({"params": p, "status": "ok", "median_s": times[(wg, rows)]})
    return {"kind": "sweep", "schema": 1, "family": "spmv", "variant": "gpu-tunable", "target": "sim",
            "input": {"name": "m"}, "grid": {"wg": [32, 64, 128], "rows": [1, 2, 256]}, "cells": cells,
            "total_cells": 9}


# ---- files made elsewhere -----------------------------------------------------------------------------------

def test_records_and_sweep_made_by_graph_kernels_open_in_the_gui(window, made_by_graph_kernels):
    records_path, sweep_path = made_by_graph_kernels
    res = results_of(window)
    window.open_paths([records_path, sweep_path])          # as File ▸ Open or a drop would
    assert res.model.rowCount() == 2
    assert [r["variant"] for r in res.model.records] == ["cpu-serial", "scipy"]
    assert all(r["verified"] and r["result"] == {"triangles": 45} for r in res.model.records)
    assert res.model.sources == [str(records_path)] * 2
    assert len(res.timing_chart.records) == 2                  # opened runs are selected and compared
    assert res.current_sweep()["family"] == "spmv" and res.heatmap.table.shape == (3, 2)
    table = res.heatmap.table
    assert table.status[0][1] == "invalid" and math.isnan(res.heatmap.image.image[1, 0])
    assert table.best is not None and res.heatmap.best_item is not None
    assert any(str(records_path) in m for m in window.log_dock.messages("info"))


def test_a_broken_result_file_is_reported_and_changes_nothing(window, tmp_path, made_by_graph_kernels):
    records_path, _ = made_by_graph_kernels
    res = results_of(window)
    res.open_result_file(records_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(records_path.read_text().splitlines()[0] + "\n{not json\n")
    window.open_paths([bad])
    errors = window.log_dock.messages("error")
    assert any("bad.jsonl, line 2" in m for m in errors)
    assert res.model.rowCount() == 2
    not_a_sweep = tmp_path / "other.json"
    not_a_sweep.write_text('{"hello": 1}')
    window.open_paths([not_a_sweep])
    assert any("other.json" in m and "not a sweep" in m for m in window.log_dock.messages("error"))
    assert res.sweeps == []


# ---- the history table ------------------------------------------------------------------------------------------

def test_a_failed_verification_is_impossible_to_miss(window, tmp_path):
    res = results_of(window)
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (record("cpu-serial", 1e-3), record("gpu-x", 2e-4, kind="gpu",
                                                                                          verified=False))) + "\n")
    res.open_result_file(path)
    model = res.model
    good, bad = 0, 1
    assert model.index(good, 0).data() == "✓" and model.index(bad, 0).data() == "✗"
    for col in range(model.columnCount()):
        brush = model.index(bad, col).data(Qt.ItemDataRole.BackgroundRole)
        assert isinstance(brush, QBrush) and brush.color().red() > 200 and brush.color().green() < 230
        assert model.index(good, col).data(Qt.ItemDataRole.BackgroundRole) is None
    font = model.index(bad, 0).data(Qt.ItemDataRole.FontRole)
    assert isinstance(font, QFont) and font.bold()
    assert "VERIFICATION FAILED" in model.index(bad, 3).data(Qt.ItemDataRole.ToolTipRole)
    assert any("FAILED verification" in m for m in window.log_dock.messages("warning"))
    # the chart draws it hatched red with a cross
    chart = res.timing_chart
    assert "VERIFICATION FAILED" in chart.describe_bar(1)
    bars = next(i for i in chart.time_plot.items if type(i).__name__ == "BarGraphItem")
    assert bars.opts["brushes"][1].style() == Qt.BrushStyle.BDiagPattern


def test_selecting_rows_chooses_the_runs_compared(window):
    res = results_of(window)
    res.add_records([record("cpu-serial", 1e-3), record("cpu-parallel", 5e-4, kind="cpu-parallel"),
                     record("gpu-row-block", 1e-5, kind="gpu")])
    assert len(res.timing_chart.records) == 3                 # nothing selected: the latest runs
    sel = res.table.selectionModel()
    sel.select(res.model.index(0, 0), sel.SelectionFlag.Select | sel.SelectionFlag.Rows)
    sel.select(res.model.index(2, 0), sel.SelectionFlag.Select | sel.SelectionFlag.Rows)
    assert [r["variant"] for r in res.timing_chart.records] == ["cpu-serial", "gpu-row-block"]
    res.remove_selected()
    assert [r["variant"] for r in res.model.records] == ["cpu-parallel"]


# ---- the timing chart ---------------------------------------------------------------------------------------------

def test_timing_chart_log_scale_and_speedup_against_a_baseline(qtbot):
    chart = TimingChart()
    qtbot.addWidget(chart)
    runs = [record("cpu-serial", 2e-3, lo=1e-3, hi=4e-3), record("gpu-a", 2e-5, kind="gpu"),
            record("gpu-a", 1e-4, kind="gpu", fingerprint="other"), record("cpu-serial", 5e-4, fingerprint="other")]
    chart.set_records(runs, baseline="cpu-serial")
    assert chart.unit == "ms" and chart.medians == [2e-3, 2e-5, 1e-4, 5e-4]
    bars = next(i for i in chart.time_plot.items if type(i).__name__ == "BarGraphItem")
    assert np.allclose(bars.opts["y1"], np.log10([2.0, 0.02, 0.1, 0.5]))      # log10 of ms, drawn linearly
    assert np.all(np.asarray(bars.opts["y0"]) < math.log10(0.02))            # bars start below the fastest
    errors = next(i for i in chart.time_plot.items if type(i).__name__ == "ErrorBarItem")
    assert errors.opts["top"][0] == pytest.approx(math.log10(4.0) - math.log10(2.0))
    assert errors.opts["bottom"][0] == pytest.approx(math.log10(2.0) - math.log10(1.0))
    # 20 µs to 4 ms: each tick says its unit ("20 µs", "1 ms"), and reads as the bars' coordinate in ms
    axis = chart.time_plot.getAxis("left")
    spacing, values = axis.tickValues(*chart.time_plot.getViewBox().viewRange()[1], 400)[0]
    ticks = [(v, t) for v, t in zip(values, axis.tickStrings(values, 1.0, spacing), strict=True) if t]
    units = {"µs": 1e-3, "ms": 1.0}
    assert ticks and all(float(t.split()[0]) * units[t.split()[1]] == pytest.approx(10 ** pos) for pos, t in ticks)
    # the baseline is the same variant on the same input: 2e-3/2e-5 and 5e-4/1e-4
    assert chart.speedups == pytest.approx([1.0, 100.0, 5.0, 1.0])
    assert chart.speed_plot.isVisible()
    chart.set_log_scale(False)
    bars = next(i for i in chart.time_plot.items if type(i).__name__ == "BarGraphItem")
    assert np.allclose(bars.opts["y1"], [2.0, 0.02, 0.1, 0.5]) and np.allclose(bars.opts["y0"], 0)
    chart.set_records(runs, baseline=None)
    assert not chart.speed_plot.isVisible() and chart.speedups == []


def test_hovering_a_bar_shows_its_times(qtbot):
    chart = TimingChart()
    qtbot.addWidget(chart)
    chart.resize(700, 500)
    chart.show()
    chart.set_records([record("cpu-serial", 2e-3), record("gpu-a", 2e-5, kind="gpu")])
    QTest.qWaitForWindowExposed(chart)
    QTest.mouseMove(chart.viewport(), chart.mapFromScene(chart.bar_center(1)))
    qtbot.waitUntil(lambda: chart.hovered == 1, timeout=5000)
    assert "gpu-a" in chart.hover_label.text and "20 µs" in chart.hover_label.text


# ---- the heatmap -------------------------------------------------------------------------------------------------

def test_heatmap_blank_invalid_cells_best_marked_flat_region_outlined_and_hover(qtbot, window):
    res = results_of(window)
    res.add_sweep(synthetic_sweep())
    view = res.heatmap
    t = view.table
    assert t.shape == (3, 3) and t.row_values == [32, 64, 128] and t.col_values == [1, 2, 256]
    top = drawn_tick_texts(view.plot.getAxis("top"))
    left = drawn_tick_texts(view.plot.getAxis("left"))
    assert top == ["1", "2", "256"] and left == ["32", "64", "128"]          # categorical ticks
    image = view.image.image
    for r, c in ((0, 2), (1, 2), (2, 2), (2, 1)):                           # invalid, failed, missing, wrong
        assert math.isnan(image[c, r])
    assert image[0, 1] == pytest.approx(math.log10(1.0))                     # 1 ms in ms, log10
    # the colour bar names its unit once: no automatic "(x0.001)" SI factor on top of "ms"
    axis = view.colorbar.axis
    assert axis.labelText == "median kernel time (ms, log scale)" and not axis.autoSIPrefix
    assert axis.labelString().count("(") == 1
    assert t.best == (1, 0)
    rect = view.best_item.rect()
    assert (rect.center().x(), rect.center().y()) == (0.5, 1.5)
    flat = [(math.floor(i.rect().center().y()), math.floor(i.rect().center().x())) for i in view.flat_items]
    assert flat == [(1, 1)]                                                  # 1.03 ms is within 5 % of 1 ms
    assert "invalid" in view.describe_cell(0, 2) and "failed" in view.describe_cell(1, 2)
    assert "not run yet" in view.describe_cell(2, 2) and "wrong" in view.describe_cell(2, 1)
    assert res.show_view("heatmap") and res.tabs.currentIndex() == 1
    # swapping the axes transposes the table
    res.swap_axes()
    assert view.table.row_param == "rows" and view.table.shape == (3, 3) and view.table.best == (0, 1)


def test_hovering_a_heatmap_cell_shows_its_value(qtbot):
    view = HeatmapView()
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show()
    QTest.qWaitForWindowExposed(view)
    view.set_sweep(synthetic_sweep())
    QTest.mouseMove(view.viewport(), view.mapFromScene(view.cell_center(1, 1)))
    qtbot.waitUntil(lambda: view.hovered == (1, 1), timeout=5000)
    assert view.hover_label.text == "wg=64, rows=2: 1.03 ms — 3.0 % slower than the best"
    assert view.toolTip() == view.hover_label.text
    QTest.mouseMove(view.viewport(), view.mapFromScene(view.cell_center(0, 2)))
    qtbot.waitUntil(lambda: view.hovered == (0, 2), timeout=5000)
    assert "invalid" in view.hover_label.text and "rows <= wg" in view.hover_label.text


def test_a_one_parameter_sweep_is_one_column(window):
    res = results_of(window)
    sweep = synthetic_sweep()
    sweep["grid"] = {"wg": [32, 64, 128]}
    sweep["cells"] = [{"params": {"wg": 32}, "status": "ok", "median_s": 1e-3},
                      {"params": {"wg": 64}, "status": "ok", "median_s": 2e-3}]
    res.add_sweep(sweep)
    assert res.heatmap.table.shape == (3, 1) and res.heatmap.table.best == (0, 0)


# ---- export ---------------------------------------------------------------------------------------------------------

def test_exports_write_png_svg_csv_json_and_jsonl(window, tmp_path, made_by_graph_kernels):
    records_path, sweep_path = made_by_graph_kernels
    res = results_of(window)
    res.open_result_file(records_path)
    res.open_result_file(sweep_path)
    out = {name: tmp_path / name for name in ("t.png", "t.svg", "h.png", "h.svg", "h.csv", "s.csv", "s.json",
                                              "r.csv", "r.jsonl")}
    assert res.export_timing(out["t.png"]) and res.export_timing(out["t.svg"])
    assert res.export_heatmap(out["h.png"]) and res.export_heatmap(out["h.svg"])
    assert res.export_heatmap_csv(out["h.csv"])
    assert res.export_sweep(out["s.csv"]) and res.export_sweep(out["s.json"])
    assert res.export_runs(out["r.csv"]) and res.export_runs(out["r.jsonl"])
    for name in ("t.png", "h.png"):
        assert out[name].read_bytes()[:8] == PNG_MAGIC and out[name].stat().st_size > 5000
    for name in ("t.svg", "h.svg"):
        text = out[name].read_text()
        assert "<svg" in text and "</svg>" in text and len(text) > 2000
    assert "<text" in out["h.svg"].read_text() or "<path" in out["h.svg"].read_text()
    with open(out["h.csv"]) as fh:
        rows = list(csv.reader(fh))
    assert rows[0][0].startswith("wg \\ rows") and len(rows) == 4 and "-" in rows[1]
    with open(out["s.csv"]) as fh:
        assert len(list(csv.DictReader(fh))) == 6
    assert load_sweep(out["s.json"])["best"] == load_sweep(sweep_path)["best"]
    with open(out["r.csv"]) as fh:
        assert [r["variant"] for r in csv.DictReader(fh)] == ["cpu-serial", "scipy"]
    assert read_records(out["r.jsonl"]) == read_records(records_path)
    assert len([m for m in window.log_dock.messages("info") if "written to" in m]) == 9


def test_export_refuses_in_words_when_there_is_nothing(window, tmp_path):
    res = results_of(window)
    assert not res.export_heatmap(tmp_path / "h.png")
    assert not res.export_timing(tmp_path / "t.svg")
    assert not res.export_runs(tmp_path / "r.csv")
    assert len(window.log_dock.messages("error")) == 3
    assert not any(tmp_path.iterdir())


# ---- sessions -------------------------------------------------------------------------------------------------------

def test_results_and_run_settings_survive_a_session(qtbot, window, tmp_path, made_by_graph_kernels):
    records_path, sweep_path = made_by_graph_kernels
    res = results_of(window)
    run = next(d for d in window.compute_docks if d.objectName() == "RunDock")
    res.open_result_file(records_path)
    res.open_result_file(sweep_path)
    res.set_baseline("cpu-serial")
    run.choose("spmv", "gpu-tunable", {"wg": "64", "rows": "8"}, repeat=7)
    run.launch_box.setCurrentIndex(run.launch_box.findData("direct"))
    states = json.loads(json.dumps({d.objectName(): d.session_state() for d in window.compute_docks}))

    other = make_window(qtbot, tmp_path, size=None, sub="other")
    try:
        for dock in other.compute_docks:
            dock.restore_session_state(copy.deepcopy(states[dock.objectName()]))
        res2 = results_of(other)
        run2 = next(d for d in other.compute_docks if d.objectName() == "RunDock")
        assert res2.model.records == res.model.records and res2.model.sources == res.model.sources
        assert [s["sweep"]["cells"] for s in res2.sweeps] == [s["sweep"]["cells"] for s in res.sweeps]
        assert res2.heatmap.table.shape == (3, 2)
        assert res2.baseline_box.currentData() == "cpu-serial"
        assert run2.variant.name == "gpu-tunable" and run2.form.texts()["wg"] == "64"
        assert run2.repeat_box.value() == 7
        assert run2.launch_box.currentData() == "direct" and run.launch_box.currentData() == "direct"
    finally:
        other.close()


@pytest.mark.parametrize("launch", ["bogus", "", None, ["graph"], {"graph": 1}, 10**30, -1, 3.5, "graph" * 100_000])
def test_a_crafted_launch_mode_in_a_session_keeps_auto_and_the_rest_of_the_run_settings(window, launch):
    """A session's run settings are untrusted: a launch (or target) value that is not one of the
    choices (wrong type, huge, empty) leaves the combo as it was, raises nothing, and the other
    saved settings still apply."""
    run = next(d for d in window.compute_docks if d.objectName() == "RunDock")
    state = run.session_state()
    target = run.target_box.currentData()
    state.update(repeat=9, launch=launch, target=launch)
    run.restore_session_state(state)
    assert run.launch_box.currentData() == "auto" and run.target_box.currentData() == target
    assert run.repeat_box.value() == 9
    state["launch"] = "queued"
    run.restore_session_state(state)
    assert run.launch_box.currentData() == "queued"


def test_runs_and_sweeps_are_saved_in_the_window_session(qtbot, window, tmp_path, made_by_graph_kernels):
    records_path, sweep_path = made_by_graph_kernels
    window.open_paths([data_path("karate.mtx"), records_path, sweep_path])
    qtbot.waitUntil(lambda: len(window.documents()) == 1 and not window.busy(), timeout=60_000)
    path = str(tmp_path / "work.ggesession")
    with qtbot.waitSignal(window.sessionSaved, timeout=60_000):
        window.save_session_to(path)

    other = make_window(qtbot, tmp_path, size=None, sub="other")
    try:
        with qtbot.waitSignal(other.sessionLoaded, timeout=60_000):
            other.open_session(path)
        res = results_of(other)
        assert [r["variant"] for r in res.model.records] == ["cpu-serial", "scipy"]
        assert res.current_sweep()["best"] == load_sweep(sweep_path)["best"]
        assert res.heatmap.table.shape == (3, 2)
        assert not other.log_dock.messages("error")
    finally:
        other.close()


# ---- rendering without a window ----------------------------------------------------------------------------

def test_explorer_render_and_graph_kernels_heatmap_write_pngs(tmp_path, made_by_graph_kernels):
    records_path, sweep_path = made_by_graph_kernels
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    png = tmp_path / "h.png"
    out = subprocess.run([sys.executable, "-m", "explorer.render", "heatmap", str(sweep_path), str(png),
                          "--rows", "rows", "--cols", "wg"], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert png.read_bytes()[:8] == PNG_MAGIC
    timing = tmp_path / "t.png"
    out = subprocess.run([sys.executable, "-m", "explorer.render", "timing", str(records_path), str(timing),
                          "--baseline", "scipy"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert timing.read_bytes()[:8] == PNG_MAGIC
    cli_png = tmp_path / "cli.png"
    cli("heatmap", sweep_path, "--out", cli_png)
    assert cli_png.read_bytes()[:8] == PNG_MAGIC
    bad = subprocess.run([sys.executable, "-m", "explorer.render", "heatmap", str(records_path), str(png)],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert bad.returncode == 1 and "not a sweep" in bad.stderr
