"""The main window: opening by drop, bad and too-large files, generating, settings, screenshots.

Drops are real ``QDragEnterEvent``/``QDropEvent`` events with file URLs (QTest mouse moves do
not start a drag).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from explorer.docks.graph_dock import GenerateDialog
from explorer.main_window import MainWindow
from explorer.settings import AppSettings
from kernels.graph.generators import GENERATORS
from kernels.measure.targets import target_label
from tests import gui_support
from tests.conftest import data_path, reference_table
from tests.gui_support import no_task_threads_left

pytestmark = pytest.mark.gui
LOAD_TIMEOUT_MS = 120_000
ROOT = Path(__file__).resolve().parents[1]


def make_window(qtbot, tmp_path, **kwargs) -> MainWindow:
    """The window tests' window: no compute docks, 1300 x 850."""
    return gui_support.make_window(qtbot, tmp_path, compute=False, size=(1300, 850), **kwargs)


@pytest.fixture
def window(qtbot, tmp_path):
    w = make_window(qtbot, tmp_path)
    yield w
    w.close()
    no_task_threads_left()


def drop_files(window, paths) -> bool:
    """Drag the files over the window and drop them, as the desktop would."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    # Qt 6 declares the drag-enter position as QPoint and the drop position as QPointF
    enter = QDragEnterEvent(QPoint(300, 300), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    if not enter.isAccepted():
        return False
    drop = QDropEvent(QPointF(300, 300), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, drop)
    return drop.isAccepted()


def stats_value(window, key):
    return window.graph_dock.statistics.value(key) or ""


def test_status_bar_names_the_targets_the_run_dock_offers(window):
    from explorer.compute.targets import describe_target, machine_targets

    text = window.target_label.text()
    assert text.startswith("targets: ")
    names = {"cuda": target_label("cuda"), "sim": "CUDA simulator", "cpu": "CPU"}
    for t in ("cuda", "sim", "cpu"):
        assert (names[t] in text) == (t in machine_targets()), t
    run = next((d for d in window.compute_docks if d.objectName() == "RunDock"), None)
    if run is not None:                 # a GPU variant: every target offered is named in the status bar
        run.choose("spmv", "gpu-naive")
        offered = [run.target_box.itemData(i) for i in range(run.target_box.count())]
        assert offered and all(names[t] in text for t in offered)
        assert all(describe_target(t) == run.target_box.itemText(i) for i, t in enumerate(offered))


def test_the_window_is_what_its_menus_and_session_controller_ask_for(window):
    """The menus and the session controller are typed by the protocols they declare, not by the
    window's class (which imports them: no cycle); the window must keep every member they use."""
    from explorer.window.actions import MenuHost
    from explorer.window.session_controller import SessionHost

    assert isinstance(window, MenuHost)
    assert isinstance(window, SessionHost)
    assert window.sessions.window is window


def test_dropping_mtx_files_opens_a_tab_each_with_the_right_counts(qtbot, window):
    ref = reference_table()
    files = [data_path("karate.mtx"), data_path("dolphins.mtx"), data_path("fe_4elt2.mtx")]   # the last is .gz
    assert drop_files(window, files)
    qtbot.waitUntil(lambda: len(window.documents()) == 3, timeout=LOAD_TIMEOUT_MS)
    assert window.tabs.count() == 3
    for doc in window.documents():
        row = ref[doc.name + ".mtx"]
        window.tabs.setCurrentWidget(window.tab_for(doc))
        qtbot.waitUntil(lambda row=row: stats_value(window, "vertices").startswith(f"{int(row['rows']):,}"),
                        timeout=10_000)
        assert stats_value(window, "edges").startswith(f"{int(row['undirected_edges']):,}")
        assert doc.num_vertices == int(row["rows"]) and doc.num_edges == int(row["undirected_edges"])
        assert doc.editable
        doc.slotted.check_invariants()
    assert [d.name for d in window.documents()] == ["karate", "dolphins", "fe_4elt2"]


def test_dropping_a_corrupt_file_shows_the_file_and_line_and_keeps_the_open_graphs(qtbot, window, tmp_path):
    assert drop_files(window, [data_path("karate.mtx")])
    qtbot.waitUntil(lambda: len(window.documents()) == 1, timeout=LOAD_TIMEOUT_MS)
    karate = window.documents()[0]
    key = karate.key
    bad = tmp_path / "broken.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n1 2\n2 x\n")
    with qtbot.waitSignal(window.loadFailed, timeout=LOAD_TIMEOUT_MS) as blocker:
        assert drop_files(window, [bad])
    message = blocker.args[1]
    assert "broken.mtx" in message and "line 4" in message
    errors = window.log_dock.messages("error")
    assert any("broken.mtx" in e and "line 4" in e for e in errors)
    assert "broken.mtx" in window.statusBar().currentMessage()
    assert window.documents() == [karate] and window.tabs.count() == 1
    assert karate.key == key and karate.num_edges == 78
    karate.slotted.check_invariants()


def test_a_file_too_large_for_memory_is_refused_before_reading(qtbot, window, monkeypatch):
    import kernels.graph.io as io
    import kernels.graph.io.estimate as estimate

    monkeypatch.setattr(estimate, "available_memory", lambda: 1024)          # 1 KiB free
    read_calls = []
    monkeypatch.setattr(io, "read_graph", lambda *a, **k: read_calls.append(a))
    with qtbot.waitSignal(window.loadFailed, timeout=LOAD_TIMEOUT_MS) as blocker:
        window.open_path(str(data_path("dolphins.mtx")))
    assert "dolphins.mtx" in blocker.args[1] and "available" in blocker.args[1]
    assert "KiB" in blocker.args[1] or "MiB" in blocker.args[1]
    assert read_calls == []
    assert window.documents() == []


def test_a_missing_file_is_reported_in_words(qtbot, window, tmp_path):
    with qtbot.waitSignal(window.loadFailed, timeout=5000) as blocker:
        window.open_path(str(tmp_path / "nothere.mtx"))
    assert "no such file" in blocker.args[1]


def test_a_matrix_opens_read_only_with_the_reason(qtbot, window):
    window.open_path(str(data_path("lp_afiro.mtx")))
    qtbot.waitUntil(lambda: len(window.documents()) == 1, timeout=LOAD_TIMEOUT_MS)
    doc = window.documents()[0]
    assert not doc.editable and "27 x 51" in doc.not_editable_reason
    assert not window.structure_dock.add_edge_button.isEnabled()
    assert doc.csr().n_cols == 51
    assert any("read-only" in w for w in window.log_dock.messages("warning"))


def test_generate_dialog_offers_every_generator_with_its_options(qtbot, window):
    dialog = GenerateDialog(window)
    qtbot.addWidget(dialog)
    for name, spec in GENERATORS.items():
        dialog.kind_box.setCurrentIndex(list(GENERATORS).index(name))
        assert set(dialog.fields) == {o.name for o in spec.all_options}
    dialog.kind_box.setCurrentIndex(list(GENERATORS).index("gnm"))
    assert dialog.validate() is None and "n" in dialog.error.text()           # required fields empty
    dialog.set_value("n", "40")
    dialog.set_value("m", "-3")
    assert dialog.validate() is None and "'m'" in dialog.error.text()
    dialog.set_value("m", "90")
    dialog.set_value("seed", "7")
    kind, options = dialog.validate()
    assert kind == "gnm" and options["n"] == 40 and options["m"] == 90 and options["seed"] == 7
    window.generate(kind, options)
    qtbot.waitUntil(lambda: len(window.documents()) == 1, timeout=LOAD_TIMEOUT_MS)
    doc = window.documents()[0]
    assert doc.num_vertices == 40 and doc.num_edges == 90 and doc.editable


def test_recent_files_and_layout_are_remembered(qtbot, tmp_path):
    w = make_window(qtbot, tmp_path)
    w.open_path(str(data_path("karate.mtx")))
    qtbot.waitUntil(lambda: len(w.documents()) == 1, timeout=LOAD_TIMEOUT_MS)
    w.log_dock.hide()
    w.close()
    settings = AppSettings.ephemeral(tmp_path)
    assert settings.recent_files()[0] == str(data_path("karate.mtx").resolve())
    assert settings.window_state() is not None
    w2 = make_window(qtbot, tmp_path, restore_layout=True)
    assert not w2.log_dock.isVisible()
    w2.menus.recent_menu.aboutToShow.emit()        # as when the user opens File ▸ Open Recent
    assert any("karate" in a.text() for a in w2.menus.recent_menu.actions())
    w2.close()
    no_task_threads_left()


def test_closed_graph_can_be_reopened_with_its_edits(qtbot, window):
    window.open_path(str(data_path("karate.mtx")))
    qtbot.waitUntil(lambda: len(window.documents()) == 1, timeout=LOAD_TIMEOUT_MS)
    doc = window.documents()[0]
    window.structure_dock.add_vertex()
    window.close_document(doc)
    assert window.documents() == [] and window.current_document() is None
    window.reopen_closed()
    assert window.documents() == [doc] and doc.num_vertices == 35 and doc.undo_stack.count() == 1


def test_compute_docks_are_added_when_present_and_the_window_works_without_them(qtbot, tmp_path, window,
                                                                                monkeypatch):
    assert window.compute_docks == [] and window.graph_dock.isVisible()    # a window without them works
    docks = window.add_compute_docks()
    assert {d.objectName() for d in docks} == {"RunDock", "ResultsDock"}
    assert window.add_compute_docks() == docks          # idempotent
    # without the Run dock's module (a core-only install): the Results dock alone, and a warning
    monkeypatch.setitem(sys.modules, "explorer.docks.run_dock", None)      # its import raises ImportError
    other = make_window(qtbot, tmp_path, sub="other")
    try:
        assert [d.objectName() for d in other.add_compute_docks()] == ["ResultsDock"]
        assert any("Run dock is not available" in m for m in other.log_dock.messages("warning"))
    finally:
        other.close()


def test_every_menu_command_has_a_keyboard_shortcut_or_is_a_dialog(window):
    shortcuts = [a.shortcut().toString() for m in window.menuBar().actions() for a in m.menu().actions()
                 if a.shortcut().toString()]
    assert len(shortcuts) == len(set(shortcuts)), "a shortcut is bound twice"
    for expected in ("Ctrl+O", "Ctrl+G", "Ctrl+Z", "Ctrl+Shift+Z", "Ctrl+E", "Ctrl+S"):
        assert expected in shortcuts


def test_screenshot_module_writes_a_png_and_exits_zero(tmp_path):
    out = tmp_path / "shot.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-m", "explorer.screenshot", str(out), "--view", "page-map",
                           "--page-size", "32", str(data_path("karate.mtx"))],
                          capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_the_user_facing_help_has_no_screenshot_options():
    proc = subprocess.run([sys.executable, "-m", "explorer", "--help"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0 and "--self-test" in proc.stdout
    for option in ("--screenshot", "--view", "--size", "--random-edits"):
        assert option not in proc.stdout


def test_screenshot_of_a_bad_file_still_writes_the_picture_and_says_why(tmp_path):
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 3\n")
    out = tmp_path / "shot.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-m", "explorer.screenshot", str(out), str(bad)],
                          capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert proc.returncode == 1
    assert "bad.mtx" in proc.stderr
    assert out.stat().st_size > 0


def test_loading_can_be_cancelled_and_leaves_nothing_behind(qtbot, window, monkeypatch):
    import kernels.graph.io as io
    from kernels.graph.io import LoadCancelled

    started = threading.Event()

    def slow_read(path, progress=None, cancel=None, **kwargs):
        started.set()
        while not cancel():
            progress(0.5)
            time.sleep(0.01)
        raise LoadCancelled("cancelled", str(path))

    monkeypatch.setattr(io, "read_graph", slow_read)
    task = window.open_path(str(data_path("dolphins.mtx")))
    qtbot.waitUntil(lambda: window.cancel_button.isVisible() and started.is_set(), timeout=LOAD_TIMEOUT_MS)
    qtbot.mouseClick(window.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: task.state == "cancelled", timeout=10_000)
    assert window.documents() == []
    assert not window.cancel_button.isVisible()
    assert any("cancelled" in m for m in window.log_dock.messages("warning"))
