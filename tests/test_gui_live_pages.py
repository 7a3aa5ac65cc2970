"""GPU runs on the live slotted pages, from the GUI: edit, run gpu-slotted BFS on the simulator,
and check from the record that exactly the pages the edits wrote were synced, that the levels
match SciPy's on the edited graph, and that the Structure dock says what waits and what the
last sync cost; edit again, run again, same checks. A removed source is refused in words."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

from tests.conftest import data_path
from tests.gui_support import close_window, docks, make_window
from tests.test_gui_run import run_and_wait

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot, tmp_path):
    w = make_window(qtbot, tmp_path, data_path("karate.mtx"), page_size=16)   # 16-word pages: edits split pages
    yield w
    close_window(w)


def scipy_levels(doc, source: int) -> tuple[int, int]:
    """(reached, depth) of a BFS from ``source`` on the document's current graph, by SciPy."""
    csr = doc.csr().to_scipy()
    order = csgraph.breadth_first_order(csr, source, directed=doc.directed, return_predecessors=False)
    dist = csgraph.shortest_path(csr, unweighted=True, directed=doc.directed, indices=source)
    return len(order), int(np.max(dist[np.isfinite(dist)]))


def run_bfs(qtbot, window, source: int) -> dict:
    run, results = docks(window)
    run.choose("bfs", "gpu-slotted", {"source": str(source)}, target="sim", repeat=1)
    task = run_and_wait(qtbot, run.run())
    assert task.state == "finished", task.error
    return results.model.records[-1]


def absent_pairs(g, n: int) -> list[tuple[int, int]]:
    pairs = []
    for u in range(g.num_vertices):
        for v in range(u + 1, g.num_vertices):
            if not g.has_edge(u, v):
                pairs.append((u, v))
                if len(pairs) == n:
                    return pairs
    return pairs


def test_runs_on_the_live_pages_sync_exactly_the_pages_the_edits_wrote(qtbot, window):
    doc = window.documents()[0]
    g = doc.slotted
    dock = window.structure_dock
    assert "not on a worker yet" in dock.sync_label.text()

    record = run_bfs(qtbot, window, 0)                      # first run: the whole structure goes over
    structure = record["structure"]
    assert structure["live"] and structure["page_size"] == g.page_size
    assert record["verified"]
    assert (record["result"]["reached"], record["result"]["depth"]) == scipy_levels(doc, 0)
    assert doc.last_sync is not None and doc.last_sync[1]["sent"] == "snapshot"
    assert len(g.dirty_physical_pages()) == 0                # the GUI's marks follow the sync
    assert "0 page(s) wait to be synced" in dock.sync_label.text()

    for round_ in range(2):
        for u, v in absent_pairs(g, 3 + round_):
            dock.set_ids(u=u, v=v)
            dock.add_edge()
        if round_ == 1:
            window.undo_action.trigger()                     # an undo is a delta too (applied backward)
        written = set(int(p) for p in g.dirty_physical_pages())
        assert written
        assert f"{doc.pending_pages():,} page(s) wait to be synced" in dock.sync_label.text()
        record = run_bfs(qtbot, window, 0)
        structure = record["structure"]
        assert set(structure["dirty_page_numbers"]) == written          # exactly the pages the edits wrote
        assert structure["sync"]["pages"] == len(written)
        sync = doc.last_sync[1]
        assert sync["sent"] == "deltas" and sync["bytes_sent"] > 0
        assert (record["result"]["reached"], record["result"]["depth"]) == scipy_levels(doc, 0)
        assert record["verified"]
        assert "last sync" in dock.sync_label.text() and "device sync" in dock.sync_label.text()
    assert any("on the live pages of" in m for m in window.log_dock.messages("info"))


def test_a_removed_source_is_refused_in_words(qtbot, window):
    doc = window.documents()[0]
    dock = window.structure_dock
    dock.set_ids(u=7)
    dock.remove_vertex()
    assert 7 not in doc.slotted.vertices().tolist()
    run, _ = docks(window)
    run.choose("bfs", "gpu-slotted", {"source": "7"}, target="sim", repeat=1)
    # flagged on the form before anything runs (the worker's runner refuses it too:
    # tests/test_live_documents.py)
    assert "vertex 7 was removed" in run.error_label.text() and "source" in run.form.marked_fields()
    assert run.run() is None
    assert any("vertex 7 was removed" in m for m in window.log_dock.messages("error"))


def test_a_batch_applied_on_the_gpu_is_replayed_here_and_the_next_run_sends_nothing(qtbot, window, tmp_path):
    from PySide6.QtCore import Qt

    from explorer.compute.client import ComputeClient

    doc = window.documents()[0]
    g = doc.slotted
    dock = window.structure_dock
    run_bfs(qtbot, window, 0)                               # the replica exists; the Run dock's target is sim
    client = ComputeClient.for_window(window)
    edges, revision = g.num_edges, doc.revision
    before = g.to_csr()
    dock.batch_size.setValue(12)
    dock.batch_mode.setCurrentText("mixed")
    dock.batch_path.setCurrentIndex(dock.batch_path.findData("gpu"))
    qtbot.mouseClick(dock.batch_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: doc.revision == revision + 1, timeout=300_000)
    qtbot.waitUntil(lambda: not client.busy, timeout=60_000)
    g.check_invariants()
    assert g.num_edges == edges and not before.equals(g.to_csr())       # 6 removed, 6 added
    assert "on the GPU (sim)" in doc.undo_stack.undo_text()
    assert "updates/s" in dock.last_edit_label.text()
    assert len(g.dirty_physical_pages()) == 0                          # the replica holds them already

    record = run_bfs(qtbot, window, 0)
    assert doc.last_sync[1]["sent"] == "nothing"                        # nothing crossed for the batch
    assert record["verified"] and (record["result"]["reached"], record["result"]["depth"]) == scipy_levels(doc, 0)

    doc.undo_stack.undo()                                               # the batch undone here: a delta
    assert before.equals(g.to_csr())
    record = run_bfs(qtbot, window, 0)
    assert doc.last_sync[1]["sent"] == "deltas" and record["verified"]

    # a refused batch (an edge already stored) is said in words and changes nothing
    u, v = 0, int(g.neighbors(0)[0])
    path = tmp_path / "refused.txt"
    path.write_text(f"+ {u} {v}\n")
    errors = []
    window.show_error = lambda title, message: errors.append(message)
    dock.apply_batch_file(str(path))
    qtbot.waitUntil(lambda: bool(errors), timeout=300_000)
    qtbot.waitUntil(lambda: not client.busy, timeout=60_000)
    assert "already exists" in errors[0] and before.equals(g.to_csr())

    bad = tmp_path / "bad.txt"                                          # a damaged file: one sentence
    bad.write_bytes(b"+ 1 two\n")
    dock.apply_batch_file(str(bad))
    qtbot.waitUntil(lambda: len(errors) == 2, timeout=300_000)
    qtbot.waitUntil(lambda: not client.busy, timeout=60_000)
    assert "line 1" in errors[1] and before.equals(g.to_csr())


def test_a_cancelled_gpu_batch_leaves_the_document_and_its_replica_consistent(qtbot, window):
    from PySide6.QtCore import Qt

    from explorer.compute.client import ComputeClient

    doc = window.documents()[0]
    g = doc.slotted
    dock = window.structure_dock
    run_bfs(qtbot, window, 0)
    client = ComputeClient.for_window(window)
    revision, before = doc.revision, g.to_csr()
    dock.batch_size.setValue(8)
    dock.batch_path.setCurrentIndex(dock.batch_path.findData("gpu"))
    qtbot.mouseClick(dock.batch_button, Qt.MouseButton.LeftButton)
    task = client.current
    task.cancel()                                   # a cancel cannot stop a batch already on the worker
    qtbot.waitUntil(lambda: not client.busy, timeout=300_000)
    if task.state == "cancelled":
        assert doc.revision == revision and before.equals(g.to_csr())
        u, v = next((u, v) for u in range(g.num_vertices) for v in range(u + 1, g.num_vertices)
                    if not g.has_edge(u, v))
        dock.set_ids(u=u, v=v)
        dock.add_edge()                             # takes the number the replica's batch may hold
        record = run_bfs(qtbot, window, 0)
        assert doc.last_sync[1]["sent"] == "snapshot"
    else:                                           # it finished before the cancel was seen
        assert doc.revision == revision + 1
        record = run_bfs(qtbot, window, 0)
        assert doc.last_sync[1]["sent"] == "nothing"
    assert record["verified"] and (record["result"]["reached"], record["result"]["depth"]) == scipy_levels(doc, 0)
