"""The Structure dock's vectorised batches: a random batch or a batch file applied as one
undoable command, its rate and the pages it wrote shown; undo and redo restore the pages."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.conftest import data_path
from tests.test_gui_edit import assert_same_structure, open_graph, structure_state, window  # noqa: F401

pytestmark = pytest.mark.gui


def test_a_vectorised_random_batch_is_one_undo_step_and_shows_its_rate(qtbot, window):  # noqa: F811
    doc = open_graph(qtbot, window, data_path("dolphins.mtx"))
    g = doc.slotted
    before = structure_state(g)
    dock = window.structure_dock
    dock.batch_size.setValue(30)
    dock.batch_mode.setCurrentText("mixed")
    dock.batch_path.setCurrentIndex(dock.batch_path.findData("host"))
    edges = g.num_edges
    qtbot.mouseClick(dock.batch_button, Qt.MouseButton.LeftButton)
    g.check_invariants()
    assert g.num_edges == edges and not before["csr"].equals(g.to_csr())
    assert doc.undo_stack.count() == 1
    shown = dock.last_edit_label.text()
    assert "vectorised" in shown and "updates/s" in shown and "page(s) written" in shown
    after = structure_state(g)
    doc.undo_stack.undo()
    assert_same_structure(structure_state(g), before)
    doc.undo_stack.redo()
    assert_same_structure(structure_state(g), after)


def test_a_batch_file_is_applied_and_a_bad_one_reported(qtbot, window, tmp_path):  # noqa: F811
    doc = open_graph(qtbot, window, data_path("karate.mtx"))
    g = doc.slotted
    u, v = 0, int(g.neighbors(0)[0])
    new = next(w for w in range(1, 34) if not g.has_edge(0, w))
    path = tmp_path / "edits.txt"
    path.write_text(f"# two updates\n- {u} {v}\n+ {u} {new}\n")
    dock = window.structure_dock
    dock.apply_batch_file(str(path))
    assert not g.has_edge(u, v) and g.has_edge(u, new) and doc.undo_stack.count() == 1
    assert "batch file edits.txt: 2 updates" in dock.last_edit_label.text()
    errors = []
    dock.errorRaised.connect(errors.append)
    path.write_text(f"+ {u} {new}\n")                       # already there now: refused, nothing changes
    state = structure_state(g)
    dock.apply_batch_file(str(path))
    qtbot.waitUntil(lambda: bool(errors) or window.statusBar().currentMessage() != "", timeout=5000)
    assert_same_structure(structure_state(g), state)
    assert doc.undo_stack.count() == 1


def test_a_large_vectorised_batch_runs_off_the_gui_thread_and_is_one_undo_step(qtbot, window, monkeypatch):  # noqa: F811
    import explorer.docks.structure_dock as structure_dock

    monkeypatch.setattr(structure_dock, "BACKGROUND_BATCH", 10)    # "large" for a test graph
    doc = open_graph(qtbot, window, data_path("dolphins.mtx"))
    g = doc.slotted
    before = structure_state(g)
    dock = window.structure_dock
    dock.batch_size.setValue(24)
    dock.batch_mode.setCurrentText("add")
    dock.batch_path.setCurrentIndex(dock.batch_path.findData("host"))
    edges = g.num_edges
    with qtbot.waitSignal(dock.backgroundBatchRequested, timeout=5000):
        qtbot.mouseClick(dock.batch_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: doc.undo_stack.count() == 1, timeout=120_000)
    g.check_invariants()
    assert g.num_edges == edges + 24
    assert "updates/s" in dock.last_edit_label.text()
    doc.undo_stack.undo()
    assert_same_structure(structure_state(g), before)
