"""Editing the live slotted structure through the window: edit tools, page map, inspector, undo.

Undo must restore the *pages*, not just the graph: after an undo the pool, the index, the page
statistics and the CSR equal what they were, word for word.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtCore import Qt

from explorer.views.page_map import render_map
from kernels.graph.slotted import SlottedGraph
from tests.conftest import data_path
from tests.gui_support import close_and_wait, make_window

pytestmark = pytest.mark.gui
LOAD_TIMEOUT_MS = 120_000       # the first load compiles the slotted engine (cached afterwards)


@pytest.fixture
def window(qtbot, tmp_path):
    w = make_window(qtbot, tmp_path, compute=False, size=(1300, 850), page_size=16)
    yield w
    close_and_wait(w)


def open_graph(qtbot, window, path):
    before = len(window.documents())
    window.open_path(str(path))
    qtbot.waitUntil(lambda: len(window.documents()) == before + 1, timeout=LOAD_TIMEOUT_MS)
    return window.documents()[-1]


def structure_state(g: SlottedGraph) -> dict:
    """What 'the exact structure' means here: pool words, index, page statistics, CSR."""
    pool, wpool, index = g.host_arrays()
    stats = {k: v.copy() for k, v in g.page_stats().items() if k != "dirty"}
    return {"pool": pool.copy(), "wpool": None if wpool is None else wpool.copy(), "index": index.copy(),
            "stats": stats, "csr": g.to_csr(), "vertices": g.vertices().copy()}


def assert_same_structure(a: dict, b: dict) -> None:
    assert np.array_equal(a["pool"], b["pool"])
    assert (a["wpool"] is None) == (b["wpool"] is None)
    if a["wpool"] is not None:
        assert np.array_equal(a["wpool"], b["wpool"])
    assert np.array_equal(a["index"], b["index"])
    assert a["stats"].keys() == b["stats"].keys()
    for k in a["stats"]:
        assert np.array_equal(a["stats"][k], b["stats"][k]), k
    assert a["csr"].equals(b["csr"])
    assert np.array_equal(a["vertices"], b["vertices"])


def absent_edge(g: SlottedGraph, u: int) -> int:
    for v in g.vertices().tolist():
        if v != u and not g.has_edge(u, v):
            return v
    raise AssertionError("no absent edge")


def page_of(g: SlottedGraph, v: int) -> int:
    first = g.index.first_vertex
    return int(np.searchsorted(first, v, side="right") - 1)


def wait_for_statistics(qtbot, window, key: str, prefix: str) -> None:
    """Statistics follow edits after a short coalescing delay."""
    stats = window.graph_dock.statistics
    qtbot.waitUntil(lambda: (stats.value(key) or "").startswith(prefix), timeout=10_000)


def undo(window):
    window.undo_action.trigger()


def redo(window):
    window.redo_action.trigger()


def test_add_and_remove_edge_through_the_tools_updates_map_and_inspector_and_undo_restores_the_pages(
        qtbot, window):
    doc = open_graph(qtbot, window, data_path("karate.mtx"))
    tab = window.current_tab()
    dock = window.structure_dock
    g = doc.slotted
    assert g.page_size == 16
    u = 5
    v = absent_edge(g, u)
    before = structure_state(g)
    image_before = tab.page_map._rendered.copy()
    tab.select_page(page_of(g, u))
    rows_before = tab.inspector.rows_text()
    key_before = doc.key

    dock.set_ids(u=u, v=v)
    qtbot.mouseClick(dock.add_edge_button, Qt.MouseButton.LeftButton)
    assert g.has_edge(u, v) and g.has_edge(v, u)
    g.check_invariants()
    after_add = structure_state(g)
    assert doc.key != key_before
    assert doc.undo_stack.count() == 1 and doc.undo_stack.undo_text() == f"add edge {u} -- {v}"
    assert not np.array_equal(tab.page_map._rendered, image_before)        # written pages framed red
    assert tab.page_map.stats["dirty"].any()
    tab.select_page(page_of(g, u))
    assert tab.inspector.rows_text() != rows_before
    assert any(str(v) in row[3] for row in tab.inspector.rows_text() if row[2] == str(u))
    wait_for_statistics(qtbot, window, "edges", "79")
    assert "add edge" in window.log_dock.messages("info")[-1]

    undo(window)
    g.check_invariants()
    assert_same_structure(structure_state(g), before)
    wait_for_statistics(qtbot, window, "edges", "78")
    tab.select_page(page_of(g, u))
    assert tab.inspector.rows_text() == rows_before
    redo(window)
    g.check_invariants()
    assert_same_structure(structure_state(g), after_add)

    # remove an existing edge with the tools
    w = int(g.neighbors(u)[0])
    dock.set_ids(u=u, v=w)
    qtbot.mouseClick(dock.remove_edge_button, Qt.MouseButton.LeftButton)
    assert not g.has_edge(u, w) and not g.has_edge(w, u)
    g.check_invariants()
    assert doc.undo_stack.count() == 2
    undo(window)
    assert_same_structure(structure_state(g), after_add)
    undo(window)
    assert_same_structure(structure_state(g), before)
    assert doc.undo_stack.index() == 0


def test_undo_redo_the_history_list_and_the_tab_mark_follow_the_model(qtbot, window):
    """The Edit menu's actions, the Structure dock's history and the tab's unsaved mark are views
    of the current document's undo stack (explorer.model.undo), as they were of a QUndoStack."""
    from explorer.model import commands

    undo_action, redo_action, history = window.undo_action, window.redo_action, window.structure_dock.history
    doc = open_graph(qtbot, window, data_path("karate.mtx"))
    tab_text = lambda: window.tabs.tabText(window.tabs.indexOf(window.tab_for(doc)))  # noqa: E731
    assert (undo_action.text(), undo_action.isEnabled(), redo_action.isEnabled()) == ("&Undo", False, False)
    assert tab_text() == doc.name and history.model().rowCount() == 1
    window.push_command(commands.add_edge(doc, 0, 9))
    window.push_command(commands.remove_edge(doc, 0, 1))
    assert (undo_action.text(), undo_action.isEnabled()) == ("&Undo remove edge 0 -- 1", True)
    assert (redo_action.text(), redo_action.isEnabled()) == ("&Redo", False)
    assert tab_text() == doc.name + " •"
    rows = [history.model().index(i, 0).data() for i in range(history.model().rowCount())]
    assert rows == ["loaded", "add edge 0 -- 9", "remove edge 0 -- 1"] and history.currentIndex().row() == 2

    history.setCurrentIndex(history.model().index(0, 0))          # clicking "loaded" goes back to it
    assert doc.undo_stack.index() == 0 and not doc.slotted.has_edge(0, 9) and doc.slotted.has_edge(0, 1)
    assert (undo_action.isEnabled(), redo_action.text()) == (False, "&Redo add edge 0 -- 9")
    assert tab_text() == doc.name                                 # back where it was loaded: clean
    redo_action.trigger()
    assert history.currentIndex().row() == 1 and doc.slotted.has_edge(0, 9) and tab_text() == doc.name + " •"

    other = open_graph(qtbot, window, data_path("dolphins.mtx"))   # the actions follow the current graph
    assert window.current_document() is other and not undo_action.isEnabled() and undo_action.text() == "&Undo"
    assert history.model().rowCount() == 1
    window.document_tabs.select(doc)
    assert undo_action.text() == "&Undo add edge 0 -- 9" and redo_action.text() == "&Redo remove edge 0 -- 1"


def test_ctrl_z_and_ctrl_shift_z_undo_and_redo(qtbot, window):
    doc = open_graph(qtbot, window, data_path("karate.mtx"))
    g = doc.slotted
    before = structure_state(g)
    window.structure_dock.set_ids(u=0, v=absent_edge(g, 0))
    window.structure_dock.add_edge()
    after = structure_state(g)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert_same_structure(structure_state(g), before)
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert_same_structure(structure_state(g), after)


def test_a_random_batch_is_one_undo_step(qtbot, window):
    doc = open_graph(qtbot, window, data_path("dolphins.mtx"))
    g = doc.slotted
    before = structure_state(g)
    dock = window.structure_dock
    dock.batch_size.setValue(40)
    dock.batch_mode.setCurrentText("mixed")
    dock.batch_seed.setValue(3)
    edges = g.num_edges
    qtbot.mouseClick(dock.batch_button, Qt.MouseButton.LeftButton)
    g.check_invariants()
    assert g.num_edges == edges            # mixed: 20 removed, 20 added
    assert not before["csr"].equals(g.to_csr())
    assert doc.undo_stack.count() == 1
    after = structure_state(g)
    undo(window)
    assert_same_structure(structure_state(g), before)
    redo(window)
    assert_same_structure(structure_state(g), after)
    dock.batch_mode.setCurrentText("add")
    dock.batch_size.setValue(25)
    dock.apply_batch()
    assert g.num_edges == edges + 25 and doc.undo_stack.count() == 2
    g.check_invariants()


def test_page_size_change_rebuilds_and_is_undoable(qtbot, window):
    doc = open_graph(qtbot, window, data_path("karate.mtx"))
    old = doc.slotted
    window.structure_dock.set_ids(u=1, v=absent_edge(old, 1))
    window.structure_dock.add_edge()            # an edit before the rebuild: it must survive it
    before = structure_state(old)
    dock = window.structure_dock
    dock.page_size_box.setCurrentIndex(dock.page_size_box.findData(64))
    qtbot.mouseClick(dock.rebuild_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: doc.page_size == 64, timeout=30_000)
    new = doc.slotted
    new.check_invariants()
    assert new.to_csr().equals(before["csr"])
    assert new.num_pages < old.num_pages
    assert window.current_tab().page_map.stats["fill"].shape[0] == new.num_pages
    assert doc.undo_stack.count() == 2
    undo(window)
    assert doc.page_size == 16 and doc.slotted is old
    assert_same_structure(structure_state(doc.slotted), before)
    assert dock.page_size_box.currentData() == 16
    redo(window)
    assert doc.page_size == 64 and doc.slotted is new


def test_vertex_edits_keep_ids_and_undo_exactly(qtbot, window):
    doc = open_graph(qtbot, window, data_path("karate.mtx"))
    g = doc.slotted
    before = structure_state(g)
    dock = window.structure_dock
    dock.add_vertex()
    assert g.num_vertices == 35 and g.has_vertex(34)
    dock.set_ids(u=34, v=0)
    dock.add_edge()
    dock.set_ids(u=33)
    dock.clean_box.setChecked(True)
    dock.remove_vertex()
    assert not g.has_vertex(33)
    g.check_invariants()
    assert all(33 not in g.neighbors(int(x)).tolist() for x in g.vertices())
    wait_for_statistics(qtbot, window, "vertices", "34 (1 removed id")
    for _ in range(3):
        undo(window)
    assert_same_structure(structure_state(g), before)


def test_a_refused_edit_is_reported_and_changes_nothing(qtbot, window):
    doc = open_graph(qtbot, window, data_path("karate.mtx"))
    g = doc.slotted
    before = structure_state(g)
    dock = window.structure_dock
    dock.set_ids(u=0, v=int(g.neighbors(0)[0]))
    dock.add_edge()                             # already there
    dock.set_ids(u=0, v=999)
    dock.remove_edge()                          # no such vertex
    dock.u_edit.clear()
    dock.add_edge()                             # no id typed
    errors = window.log_dock.messages("error")
    assert any("already exists" in e for e in errors)
    assert any("999" in e for e in errors)
    assert any("type a vertex id" in e for e in errors)
    assert doc.undo_stack.count() == 0
    assert_same_structure(structure_state(g), before)


def test_clicking_the_page_map_chooses_the_inspected_page(qtbot, window):
    open_graph(qtbot, window, data_path("karate.mtx"))
    tab = window.current_tab()
    view = tab.page_map
    target = 7
    scene = view.image.mapToScene(view.cell_centre(target))
    pos = view.plot.mapFromScene(scene)
    with qtbot.waitSignal(view.pageSelected, timeout=5000) as blocker:
        qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == [target]
    assert tab.inspector.page == target
    assert tab.inspector.rows_text()[0][2] == "header: vertices in page" or tab.inspector.rows_text()[0][1].startswith(
        "header")


def test_clicking_vertices_in_the_node_link_view_fills_u_and_v(qtbot, window):
    open_graph(qtbot, window, data_path("karate.mtx"))
    node_link = window.current_tab().node_link
    qtbot.waitUntil(lambda: node_link.drawn, timeout=30_000)
    dock = window.structure_dock
    dock.u_edit.clear()
    dock.v_edit.clear()
    for v in (3, 9):
        scene = node_link.graph_item.mapToScene(node_link.scene_position_of(v))
        pos = node_link.plot.mapFromScene(scene)
        with qtbot.waitSignal(node_link.vertexClicked, timeout=5000) as blocker:
            qtbot.mouseClick(node_link.plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)
        assert blocker.args == [v]
    assert (dock.u_edit.text(), dock.v_edit.text()) == ("3", "9")
    assert node_link.picked == [3, 9]


def test_page_map_of_a_hundred_thousand_pages_renders_in_a_blink(qtbot):
    n = 100_000
    rng = np.random.default_rng(0)
    stats = {"fill": rng.random(n), "large": rng.random(n) < 0.05, "dirty": rng.random(n) < 0.01}
    t0 = time.perf_counter()
    image = render_map(stats, 448)
    elapsed = time.perf_counter() - t0
    assert image.shape[2] == 4 and image.shape[1] == 448 * 6
    assert elapsed < 1.0
