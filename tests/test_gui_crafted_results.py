"""Open Results with crafted and damaged files: every refusal is visible in the log (and the
status bar), and nothing already open is lost."""

from __future__ import annotations

import json

import pytest

from kernels.results import save_sweep
from tests.crafted_results import crafted_records, crafted_sweeps, valid_record, valid_sweep
from tests.gui_support import make_window, results_of

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot, tmp_path):
    w = make_window(qtbot, tmp_path, size=(1200, 800))
    yield w
    w.close()


@pytest.fixture
def opened(window, tmp_path):
    """The window with one good run-records file and one good sweep already open."""
    good = tmp_path / "good"
    good.mkdir()
    (good / "runs.jsonl").write_text(json.dumps(valid_record()) + "\n" + json.dumps(valid_record("scipy")) + "\n")
    save_sweep(valid_sweep(), good / "sweep.json")
    window.open_paths([good / "runs.jsonl", good / "sweep.json"])
    res = results_of(window)
    assert res.model.rowCount() == 2 and len(res.sweeps) == 1 and res.heatmap.table is not None
    assert not window.log_dock.messages("error")
    return window


def test_every_crafted_result_file_is_refused_visibly_and_nothing_open_is_lost(opened, tmp_path):
    window, res = opened, results_of(opened)
    files = [(f"{name}.json", data) for name, data in crafted_sweeps()]
    files += [(f"{name}.jsonl", data) for name, data in crafted_records()]
    crafted = tmp_path / "crafted"
    crafted.mkdir()
    shown_before = res.heatmap.table.shape
    for filename, data in files:
        path = crafted / filename
        path.write_bytes(data)
        before = len(window.log_dock.messages("error"))
        window.open_paths([path])                       # as File ▸ Open, a drop or the command line would
        errors = window.log_dock.messages("error")
        assert len(errors) == before + 1, f"{filename}: no error shown"
        assert filename in errors[-1] and "\n" not in errors[-1] and "Traceback" not in errors[-1]
        assert filename in window.statusBar().currentMessage()
    # nothing that was open is lost or changed
    assert res.model.rowCount() == 2 and [r["variant"] for r in res.model.records] == ["cpu-serial", "scipy"]
    assert len(res.sweeps) == 1 and res.sweep_box.count() == 1
    assert res.heatmap.table is not None and res.heatmap.table.shape == shown_before
    assert not any(str(crafted) in m for m in window.log_dock.messages("info"))


def test_open_results_says_so_when_the_chosen_file_is_not_a_result_file(opened, tmp_path, monkeypatch):
    from explorer.docks import results_dock

    other = tmp_path / "notes.txt"
    other.write_text("hello")
    monkeypatch.setattr(results_dock.QFileDialog, "getOpenFileNames",
                        staticmethod(lambda *a, **k: ([str(other)], "All files (*)")))
    results_of(opened).open_dialog()
    errors = opened.log_dock.messages("error")
    assert len(errors) == 1 and "notes.txt" in errors[0] and "not a result file" in errors[0]


def test_open_results_reports_a_crafted_file_chosen_in_the_dialog(opened, tmp_path, monkeypatch):
    from explorer.docks import results_dock

    path = tmp_path / "huge.json"
    path.write_bytes(dict(crafted_sweeps())["huge-declared-grid"])
    monkeypatch.setattr(results_dock.QFileDialog, "getOpenFileNames",
                        staticmethod(lambda *a, **k: ([str(path)], "")))
    results_of(opened).open_dialog()
    errors = opened.log_dock.messages("error")
    assert len(errors) == 1 and "huge.json" in errors[0] and "9,000,000 combinations" in errors[0]
    assert len(results_of(opened).sweeps) == 1
