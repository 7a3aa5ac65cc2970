"""Sessions: save everything, reopen it in a fresh window, find it all back - pages included."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget

from explorer.main_window import MainWindow
from explorer.model import session
from kernels.graph.io import read_graph
from tests import gui_support
from tests.conftest import data_path
from tests.gui_support import close_and_wait

pytestmark = pytest.mark.gui
LOAD_TIMEOUT_MS = 120_000


class FakeResultsDock(QDockWidget):
    """Stands in for a compute dock: it keeps runs and sweeps and hands them to sessions."""

    def __init__(self, parent=None):
        super().__init__("Results", parent)
        self.setObjectName("ResultsDock")
        self.runs: list[dict] = []
        self.sweeps: list[dict] = []

    def session_state(self) -> dict:
        return {"runs": self.runs, "sweeps": self.sweeps}

    def restore_session_state(self, state: dict) -> None:
        self.runs = list(state["runs"])
        self.sweeps = list(state["sweeps"])


def make_window(qtbot, tmp_path, name: str, with_results: bool = True) -> MainWindow:
    w = gui_support.make_window(qtbot, tmp_path, compute=False, size=None, page_size=16, sub=name)
    if with_results:
        dock = FakeResultsDock(w)
        w.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        w.compute_docks.append(dock)
    w.resize(1200, 800)
    w.show()
    return w


close = close_and_wait


def open_graph(qtbot, window, path):
    n = len(window.documents())
    window.open_path(str(path))
    qtbot.waitUntil(lambda: len(window.documents()) == n + 1, timeout=LOAD_TIMEOUT_MS)
    return window.documents()[-1]


def pages(g) -> tuple:
    pool, wpool, index = g.host_arrays()
    return pool.copy(), index.copy(), g.to_csr()


def same_pages(a, b) -> bool:
    return np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2].equals(b[2])


def save(qtbot, window, path) -> None:
    with qtbot.waitSignal(window.sessionSaved, timeout=60_000):
        window.save_session_to(str(path))


def reopen(qtbot, window, path) -> None:
    with qtbot.waitSignal(window.sessionLoaded, timeout=60_000):
        window.open_session(str(path))


def test_a_session_brings_back_graphs_edits_history_page_size_runs_and_layout(qtbot, tmp_path):
    w1 = make_window(qtbot, tmp_path, "first")
    karate = open_graph(qtbot, w1, data_path("karate.mtx"))
    matrix = open_graph(qtbot, w1, data_path("lp_afiro.mtx"))            # read-only
    w1.tabs.setCurrentWidget(w1.tab_for(karate))
    dock = w1.structure_dock
    dock.set_ids(u=2, v=25)
    dock.add_edge()
    dock.batch_size.setValue(12)
    dock.apply_batch()
    states = [pages(karate.slotted)]
    w1.change_page_size(32)
    qtbot.waitUntil(lambda: karate.page_size == 32, timeout=30_000)
    dock.add_vertex()
    dock.set_ids(u=34, v=0)
    dock.add_edge()
    w1.undo_action.trigger()                  # leave one step to redo: the position is saved too
    assert karate.undo_stack.count() == 5 and karate.undo_stack.index() == 4
    current = pages(karate.slotted)
    w1.compute_docks[0].runs = [{"family": "triangles", "variant": "gpu-row-block", "median_s": 0.001}]
    w1.compute_docks[0].sweeps = [{"family": "spmv", "cells": [{"params": {"wg": 64}, "status": "ok"}]}]
    w1.structure_dock.hide()
    path = tmp_path / "work.ggesession"
    save(qtbot, w1, path)
    assert karate.undo_stack.is_clean()
    positions = dict(w1.tab_for(karate).node_link.positions)
    close(w1)

    w2 = make_window(qtbot, tmp_path, "second")
    reopen(qtbot, w2, path)
    docs = w2.documents()
    assert [d.name for d in docs] == ["karate", "lp_afiro"]
    k2, m2 = docs
    assert w2.current_document() is k2
    assert k2.page_size == 32 and k2.editable
    k2.slotted.check_invariants()
    assert same_pages(pages(k2.slotted), current)
    assert k2.undo_stack.count() == 5 and k2.undo_stack.index() == 4
    assert not m2.editable and m2.csr().equals(matrix.csr())
    assert w2.compute_docks[0].runs[0]["variant"] == "gpu-row-block"
    assert w2.compute_docks[0].sweeps[0]["cells"][0]["params"] == {"wg": 64}
    assert not w2.structure_dock.isVisible()
    node_positions = w2.tab_for(k2).node_link.positions
    assert set(node_positions) == set(positions)
    assert all(np.allclose(node_positions[v], positions[v]) for v in positions)
    # the history works on the reopened pages: redo, then undo back past the page-size change
    w2.redo_action.trigger()
    assert k2.slotted.has_edge(34, 0)
    for _ in range(3):
        w2.undo_action.trigger()
    assert k2.page_size == 16
    k2.slotted.check_invariants()
    assert same_pages(pages(k2.slotted), states[0])
    w2.undo_action.trigger()
    w2.undo_action.trigger()
    assert k2.undo_stack.index() == 0
    k2.slotted.check_invariants()
    assert k2.csr().same_structure(read_graph(data_path("karate.mtx")))
    close(w2)


def test_saving_is_atomic_a_failed_save_keeps_the_previous_file(qtbot, tmp_path, monkeypatch):
    w = make_window(qtbot, tmp_path, "w", with_results=False)
    open_graph(qtbot, w, data_path("karate.mtx"))
    path = tmp_path / "keep.ggesession"
    save(qtbot, w, path)
    before = path.read_bytes()
    w.structure_dock.add_vertex()

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(session, "_npz_bytes", broken)
    task = w.save_session_to(str(path))
    qtbot.waitUntil(lambda: not task.running, timeout=30_000)
    assert task.state == "failed"
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".keep")] == []
    assert any("No space left" in e and "intact" in e for e in w.log_dock.messages("error"))
    assert not w.documents()[0].undo_stack.is_clean()          # the edit is still unsaved
    close(w)


def test_a_session_from_a_newer_version_is_refused_in_words(qtbot, tmp_path):
    path = tmp_path / "future.ggesession"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("manifest.json", json.dumps({"format": session.FORMAT_NAME, "version": session.FORMAT_VERSION + 1,
                                                 "app_version": "9.0"}))
    with pytest.raises(session.SessionError, match="newer version"):
        session.read(path)
    not_a_session = tmp_path / "plain.ggesession"
    not_a_session.write_text("hello")
    with pytest.raises(session.SessionError, match="not a session file"):
        session.read(not_a_session)


def test_older_sessions_are_upgraded_and_unknown_keys_ignored(qtbot, tmp_path, monkeypatch):
    w = make_window(qtbot, tmp_path, "w", with_results=False)
    doc = open_graph(qtbot, w, data_path("karate.mtx"))
    w.structure_dock.add_vertex()
    path = tmp_path / "s.ggesession"
    save(qtbot, w, path)
    close(w)
    # pretend the file is from version 2 of a format now at version 3, whose migration renames a key
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    manifest = json.loads(members["manifest.json"])
    manifest["some_future_key"] = {"ignored": True}
    members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(path, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)
    seen = []

    def v2_to_v3(m):
        seen.append(m["version"])
        return {**m, "version": 3}

    monkeypatch.setattr(session, "FORMAT_VERSION", 3)
    monkeypatch.setitem(session.MIGRATIONS, 2, v2_to_v3)
    data = session.read(path)
    assert seen == [2] and data.version == 3
    assert data.documents[0].csr.n_rows == 35 and data.documents[0].history[0].text == "add vertex 34"
    assert data.structures[0].num_vertices == doc.num_vertices


def test_a_damaged_structure_is_rebuilt_from_the_saved_graph(qtbot, tmp_path):
    w = make_window(qtbot, tmp_path, "w", with_results=False)
    doc = open_graph(qtbot, w, data_path("dolphins.mtx"))
    w.structure_dock.batch_size.setValue(10)
    w.structure_dock.apply_batch()
    edited = doc.csr()
    path = tmp_path / "s.ggesession"
    save(qtbot, w, path)
    close(w)
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members["structures/0.npz"] = b"garbage"
    with zipfile.ZipFile(path, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)
    w2 = make_window(qtbot, tmp_path, "w2", with_results=False)
    reopen(qtbot, w2, path)
    d2 = w2.documents()[0]
    assert d2.editable and d2.csr().same_structure(edited)
    assert d2.undo_stack.count() == 0
    assert any("undo history was lost" in m for m in w2.log_dock.messages("warning"))
    close(w2)


def test_closing_with_unsaved_edits_keeps_them_for_recovery(qtbot, tmp_path):
    w = make_window(qtbot, tmp_path, "w", with_results=False)
    open_graph(qtbot, w, data_path("karate.mtx"))
    w.structure_dock.add_vertex()
    autosave = w.settings.autosave_path()
    close(w)
    assert autosave.exists()
    w2 = make_window(qtbot, tmp_path, "w", with_results=False)
    assert w2.menus.recover_action.isEnabled()
    with qtbot.waitSignal(w2.sessionLoaded, timeout=60_000):
        w2.recover_autosave()
    assert w2.documents()[0].num_vertices == 35
    close(w2)


def test_a_session_with_a_damaged_undo_step_opens_without_its_history_and_says_so(qtbot, tmp_path):
    w = make_window(qtbot, tmp_path, "w", with_results=False)
    doc = open_graph(qtbot, w, data_path("karate.mtx"))
    w.structure_dock.batch_size.setValue(10)
    w.structure_dock.apply_batch()
    w.structure_dock.add_vertex()
    edited = doc.csr()
    path = tmp_path / "s.ggesession"
    save(qtbot, w, path)
    close(w)
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members["documents/0/undo/0.npz"] = members["documents/0/undo/0.npz"][:-40]
    with zipfile.ZipFile(path, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)
    w2 = make_window(qtbot, tmp_path, "w2", with_results=False)
    reopen(qtbot, w2, path)
    d2 = w2.documents()[0]
    assert d2.editable and d2.csr().same_structure(edited) and d2.undo_stack.count() == 0
    assert any("opened without its undo history" in m for m in w2.log_dock.messages("warning"))
    w2.structure_dock.add_vertex()                 # the structure works: edit, undo, redo
    w2.undo_action.trigger()
    w2.redo_action.trigger()
    d2.slotted.check_invariants()
    close(w2)
