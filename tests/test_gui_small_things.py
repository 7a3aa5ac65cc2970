"""Smaller things users noticed (issue 15, point 8), each driven through the real widgets."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from explorer.main_window import MainWindow
from kernels.graph.io import read_graph
from kernels.graph.stats import graph_info, page_size_for
from tests.conftest import data_path
from tests.gui_support import make_window
from tests.test_gui_results import record, synthetic_sweep

pytestmark = pytest.mark.gui


def make(qtbot, tmp_path, *, dialogs=False, paths=()) -> MainWindow:
    return make_window(qtbot, tmp_path, *paths, size=(1600, 1000), dialogs=dialogs, exposed=True)


def dock(w, name):
    return next(d for d in w.compute_docks if d.objectName() == name)


def test_error_windows_do_not_pile_up_one_window_on_the_main_window_counts_the_rest(qtbot, tmp_path):
    w = make(qtbot, tmp_path, dialogs=True)
    for n in range(3):
        w.show_error("Edit refused", f"problem {n}")
    QApplication.processEvents()
    boxes = [b for b in w.findChildren(QMessageBox) if b.isVisible()]
    assert len(boxes) == 1 and boxes[0].parent() is w
    assert boxes[0].text() == "problem 2" and "2 earlier error(s)" in boxes[0].informativeText()
    assert len(w.log_dock.messages("error")) == 3
    boxes[0].close()
    w.close()


def test_a_rebuild_on_other_pages_refits_the_page_map_and_is_logged_once(qtbot, tmp_path):
    w = make(qtbot, tmp_path, paths=[data_path("karate.mtx")])
    tab = w.current_tab()
    before = tab.page_map.plot.getViewBox().viewRange()
    logged = len(w.log_dock.messages("info"))
    task = w.change_page_size(16)
    qtbot.waitUntil(lambda: not task.running and w.current_document().page_size == 16, timeout=30_000)
    QApplication.processEvents()
    after = tab.page_map.plot.getViewBox().viewRange()
    n = len(tab.page_map.stats["fill"])
    rows = -(-n // tab.page_map.columns)
    assert after != before and after[1][1] - after[1][0] >= rows * 0.9     # every row of pages in view
    new = [m for m in w.log_dock.messages("info")[logged:] if "page size" in m]
    assert len(new) == 1, new
    w.close()


def test_a_sweeps_name_says_when_it_ran_not_when_it_was_opened(qtbot, tmp_path):
    w = make(qtbot, tmp_path)
    sweep = synthetic_sweep()
    sweep["started"] = "2024-03-05T14:07:00+00:00"
    results = dock(w, "ResultsDock")
    results.add_sweep(sweep, source="")
    assert "2024-03-05" in results.sweep_box.itemText(0)
    w.close()


def test_sweep_record_and_session_files_are_readable_like_other_exports(qtbot, tmp_path):
    w = make(qtbot, tmp_path, paths=[data_path("karate.mtx")])
    results = dock(w, "ResultsDock")
    results.add_records([record("cpu-serial", 1e-3)])
    results.add_sweep(synthetic_sweep())
    mask = os.umask(0o022)
    try:
        assert results.export_sweep(tmp_path / "s.json") and results.export_runs(tmp_path / "r.jsonl")
        assert results.export_runs(tmp_path / "r.csv")
        with qtbot.waitSignal(w.sessionSaved, timeout=20_000):
            w.save_session_to(str(tmp_path / "x.ggesession"))
    finally:
        os.umask(mask)
    modes = {name: stat.S_IMODE(os.stat(tmp_path / name).st_mode) for name in
             ("s.json", "r.jsonl", "r.csv", "x.ggesession")}
    assert set(modes.values()) == {0o644}, modes
    w.close()


def test_info_and_the_gui_choose_the_page_size_by_one_rule(qtbot, tmp_path):
    g = read_graph(data_path("karate.mtx"))
    assert graph_info(g)["memory"]["slotted_page_size"] == page_size_for(g) == 256
    w = make(qtbot, tmp_path, paths=[data_path("karate.mtx")])
    assert w.current_document().page_size == page_size_for(g)
    w.close()


def test_launch_parameters_are_kept_per_variant(qtbot, tmp_path):
    w = make(qtbot, tmp_path)
    run = dock(w, "RunDock")
    run.choose("spmv", "gpu-tunable", {"wg": "64", "rows": "4"})
    run.choose("spmv", "gpu-naive", {"wg": "256"})
    run.choose("spmv", "gpu-tunable")
    assert run.form.texts()["wg"] == "64" and run.form.texts()["rows"] == "4"
    run.choose("spmv", "gpu-naive")
    assert run.form.texts()["wg"] == "256"
    w.close()


def test_quitting_with_unsaved_edits_asks_and_cancel_keeps_the_window(qtbot, tmp_path):
    w = make(qtbot, tmp_path, dialogs=True, paths=[data_path("karate.mtx")])
    w.structure_dock.add_vertex()
    assert w.unsaved_documents()

    def answer(button):
        box = getattr(w, "_quit_box", None)
        if box is None or not box.isVisible():
            QTimer.singleShot(50, lambda: answer(button))
            return
        box.button(button).click()

    QTimer.singleShot(50, lambda: answer(QMessageBox.StandardButton.Cancel))
    assert not w.close()
    assert w.isVisible() and w.unsaved_documents()
    w._quit_box = None
    QTimer.singleShot(50, lambda: answer(QMessageBox.StandardButton.Discard))
    assert w.close()
    assert w.settings.autosave_path().exists()        # closing without saving still keeps them for recovery


def test_the_shortcut_list_names_each_command_once(qtbot, tmp_path):
    w = make(qtbot, tmp_path)
    rows = w.shortcut_list()
    assert len(rows) == len(set(rows))
    assert sum(1 for text, _k in rows if text.startswith("Open Results")) == 1
    w.close()


def test_the_structure_dock_says_vertex_ids_count_from_zero(qtbot, tmp_path):
    w = make(qtbot, tmp_path)
    s = w.structure_dock
    assert "from 0" in s.u_edit.placeholderText()
    assert "count from 1" in s.u_edit.toolTip() and "k − 1" in s.v_edit.toolTip()
    w.close()


# ---- issue 25, item 5 ---------------------------------------------------------------------------------------------

def test_an_edited_graphs_node_link_layout_comes_back_from_its_session(qtbot, tmp_path):
    """The layout a tab started computing when the restored graph was added finished after the
    saved positions were put in, and replaced them: the drawing moved."""
    from tests.test_gui_session import close, make_window, open_graph, reopen, save

    w1 = make_window(qtbot, tmp_path, "first", with_results=False)
    karate = open_graph(qtbot, w1, data_path("karate.mtx"))
    view = w1.tab_for(karate).node_link
    qtbot.waitUntil(lambda: view.drawn and not view.busy(), timeout=30_000)
    w1.structure_dock.set_ids(u=2, v=25)
    w1.structure_dock.add_edge()                                   # an edited graph
    w1.structure_dock.add_vertex()
    saved = {v: p.copy() for v, p in view.positions.items()}
    assert 34 in saved
    path = tmp_path / "edited.ggesession"
    save(qtbot, w1, path)
    close(w1)

    w2 = make_window(qtbot, tmp_path, "second", with_results=False)
    reopen(qtbot, w2, path)
    restored = w2.tab_for(w2.documents()[0]).node_link
    # let any layout the restore started finish: it must not replace the saved positions
    qtbot.waitUntil(lambda: not restored.busy(), timeout=30_000)
    qtbot.wait(200)
    assert set(restored.positions) == set(saved)
    assert all(np.allclose(restored.positions[v], saved[v]) for v in saved)
    close(w2)


def test_a_stale_source_is_flagged_on_the_form_naming_the_allowed_range(qtbot, tmp_path):
    """A BFS source set on a larger graph was only refused once the run started."""
    w = make(qtbot, tmp_path, paths=[data_path("football.mtx")])          # 115 vertices
    run = dock(w, "RunDock")
    run.choose("bfs", "gpu-csr", {"source": "100"}, target="sim")
    assert run.validate() == ""
    w.open_paths([str(data_path("karate.mtx"))])                          # 34 vertices: 100 is stale
    qtbot.waitUntil(lambda: w.current_document() is not None and w.current_document().name == "karate",
                    timeout=20_000)
    text = run.error_label.text()
    assert "source" in text and "0 to 33" in text
    assert "source" in run.form.marked_fields()
    assert run.run() is None                                               # refused before anything starts
    run.choose("bfs", "gpu-csr", {"source": "3"}, target="sim")
    assert run.validate() == "" and not run.form.marked_fields()
    w.close()


def test_declining_the_simulator_question_is_an_info_line_not_an_error(qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    w = make(qtbot, tmp_path, paths=[data_path("lp_afiro.mtx")])
    run = dock(w, "RunDock")
    run.choose("spmv", "gpu-naive", {"wg": "32"}, target="sim", repeat=1)
    w.settings.set_simulator_ask_above(0.01)
    w.dialogs = True
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.No)
    errors = len(w.log_dock.messages("error"))
    assert run.run() is None
    assert len(w.log_dock.messages("error")) == errors
    assert any("you chose not to wait" in m for m in w.log_dock.messages("info"))
    assert run.error_label.text() == ""
    w.close()
