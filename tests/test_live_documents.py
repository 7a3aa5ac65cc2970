"""GPU runs on the live slotted pages of an edited document (issue 15 §1).

A "GUI-side" :class:`SlottedGraph` is edited with ``record_edit`` (insertions that split a
page, a vertex removal, undo as backward deltas); a :class:`LiveDocument` replica takes the
deltas; ``gpu-slotted`` BFS and SSSP then run on the replica's device mirror. After every run
the record must say that exactly the pages the edits dirtied were synced (compared with the
deltas' page sets and with the GUI-side dirty flags), and the levels / distances must equal
SciPy's on the GUI-side graph. The same cycle runs through the local worker process, across a
killed worker (re-opened from a snapshot)."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest
import scipy.io
from scipy.sparse.csgraph import dijkstra, shortest_path

from kernels.compute.backend import Job
from kernels.compute.documents import DocumentSync, EditJournal, payload_bytes
from kernels.compute.live import LiveDocument, ReplicaOutOfDate
from kernels.errors import ParameterError
from kernels.graph.csr import CSRGraph
from kernels.graph.slotted import SlottedGraph
from kernels.measure.targets import simulator_enabled
from kernels.results.schema import check_record
from tests.conftest import data_path

SMALL = 32          # threads per block under the simulator
PAGE = 16


def karate(page_size: int = PAGE) -> SlottedGraph:
    m = scipy.io.mmread(str(data_path("karate.mtx")))
    csr = CSRGraph.from_scipy(m, weighted=True, directed=False, name="karate")
    return SlottedGraph.from_csr(csr, page_size=page_size)


def scipy_levels(csr: CSRGraph, source: int) -> np.ndarray:
    hops = shortest_path(csr.to_scipy(), unweighted=True, indices=source)
    return np.where(np.isfinite(hops), hops, -1).astype(np.int64)


def scipy_distances(csr: CSRGraph, source: int) -> np.ndarray:
    return dijkstra(csr.to_scipy(), indices=source)


def live_physical_pages(g: SlottedGraph) -> set[int]:
    return {int(p) for p in g.index.physical_page}


def expected_dirty(deltas, gui: SlottedGraph) -> set[int]:
    """Pages the deltas wrote that still hold data (a page handed back is blank: not uploaded)."""
    pages = set()
    for d, _ in deltas:
        pages.update(int(p) for p in d.pages)
    return pages & live_physical_pages(gui)


class Editor:
    """The GUI side: a slotted graph, its journal, and the deltas since the last run."""

    def __init__(self, graph: SlottedGraph):
        self.graph = graph
        self.journal = EditJournal(graph)
        self.unsynced: list = []
        self.history: list = []

    def edit(self, fn, vertices=()):
        result, delta = self.graph.record_edit(fn, vertices)
        self.journal.record(delta)
        self.unsynced.append((delta, True))
        self.history.append(delta)
        return result

    def undo(self):
        delta = self.history.pop()
        self.graph.apply_delta(delta, forward=False)
        self.journal.record(delta, forward=False)
        self.unsynced.append((delta, False))

    def split_a_page(self):
        """Insert edges into vertex 0's list until its page splits (a new page appears)."""
        before = self.graph.num_pages
        absent = [v for v in self.graph.vertices().tolist() if v != 0 and not self.graph.has_edge(0, v)]
        us = [0] * len(absent[:8])
        self.edit(lambda g: g.add_edges(us, absent[:8], [2.5] * len(us)), [0, *absent[:8]])
        assert self.graph.num_pages > before


def edit_rounds(ed: Editor):
    """Three rounds of edits: a split; a vertex removal and a weight change; an undo."""
    yield "split", ed.split_a_page
    yield "remove vertex 5 and re-weight 0-1", lambda: (ed.edit(lambda g: g.remove_vertex(5), [5]),
                                                         ed.edit(lambda g: g.edit_edge(0, 1, 1, 7.0), [0, 1]))
    yield "undo the re-weighting", ed.undo


def check_run(record, output, ed: Editor, family: str, source: int, expected_pages: set[int]) -> None:
    s = record["structure"]
    assert s["live"] is True and s["page_size"] == PAGE and s["pages"] == ed.graph.num_pages
    assert s["dirty_pages"] == len(expected_pages)
    assert set(s["dirty_page_numbers"]) == expected_pages
    assert s["sync"]["kind"] == "sync" and s["sync"]["pages"] >= len(expected_pages)
    if s["sync"]["strategy"] == "runs":
        assert s["sync"]["pages"] == len(expected_pages)
    assert any("page_size parameter" in n for n in record["notices"])
    csr = ed.graph.to_csr()
    if family == "bfs":
        assert np.array_equal(np.asarray(output, dtype=np.int64), scipy_levels(csr, source))
    else:
        ref = scipy_distances(csr, source)
        assert np.array_equal(np.isfinite(output), np.isfinite(ref))
        assert np.allclose(output[np.isfinite(ref)], ref[np.isfinite(ref)], rtol=1e-12)
    assert record["verified"]
    check_record(record, "record")


def edit_and_run_cycle(target: str, block: int) -> None:
    ed = Editor(karate())
    arrays, revision = ed.journal.snapshot()
    doc = LiveDocument("doc", arrays, revision, name="karate", verify_deltas=True)
    params = {"block": block, "source": 0}
    first = doc.run("bfs", "gpu-slotted", params, target=target, repeat=1, warmup=0)
    assert first.record["structure"]["sync"]["kind"] == "full"
    assert first.record["structure"]["sync"]["pages"] == ed.graph.physical_pages_used
    ed.graph.mark_synced()                      # the GUI's dirty marks now mean "since the last run"
    for round_number, (_, make_edits) in enumerate(edit_rounds(ed)):
        make_edits()
        expected = expected_dirty(ed.unsynced, ed.graph)
        assert expected == set(ed.graph.dirty_physical_pages().tolist())
        doc.apply(ed.unsynced, ed.journal.revision)
        ed.unsynced = []
        family = ("bfs", "sssp")[round_number % 2]
        result = doc.run(family, "gpu-slotted", params, target=target, repeat=1, warmup=0)
        check_run(result.record, result.output, ed, family, 0, expected)
        ed.graph.mark_synced()
        # a second run without edits uploads nothing
        again = doc.run("bfs", "gpu-slotted", params, target=target, repeat=1, warmup=0)
        assert again.record["structure"]["dirty_pages"] == 0 and again.record["structure"]["sync"]["bytes"] == 0


@pytest.mark.skipif(not simulator_enabled(), reason="the CUDA simulator is off (a real-GPU run)")
def test_edits_then_runs_sync_exactly_the_dirty_pages_and_equal_scipy_on_the_simulator():
    edit_and_run_cycle("sim", SMALL)


@pytest.mark.gpu
def test_edits_then_runs_sync_exactly_the_dirty_pages_and_equal_scipy_on_the_gpu():
    edit_and_run_cycle("cuda", 256)


def test_a_removed_source_is_refused_in_words():
    ed = Editor(karate())
    ed.edit(lambda g: g.remove_vertex(7), [7])
    arrays, revision = ed.journal.snapshot()
    doc = LiveDocument("doc", arrays, revision, name="karate")
    for family in ("bfs", "sssp"):
        for variant in ("gpu-slotted", "gpu-csr", "cpu-serial"):
            with pytest.raises(ParameterError, match="'source'.*vertex 7 was removed"):
                doc.run(family, variant, {"source": 7}, target="cpu" if variant.startswith("cpu") else None,
                        repeat=1, warmup=0)
    with pytest.raises(ParameterError, match="from 0 to 33"):
        doc.run("bfs", "cpu-serial", {"source": 34}, repeat=1, warmup=0)


def test_a_variant_on_the_csr_says_its_structure_is_not_live():
    ed = Editor(karate())
    arrays, revision = ed.journal.snapshot()
    doc = LiveDocument("doc", arrays, revision)
    record = doc.run("bfs", "cpu-serial", {"source": 0}, repeat=1, warmup=0).record
    assert record["structure"]["live"] is False and record["verified"]
    check_record(record, "record")


def test_deltas_that_do_not_fit_leave_the_replica_unchanged():
    ed = Editor(karate())
    arrays, revision = ed.journal.snapshot()
    doc = LiveDocument("doc", arrays, revision)
    ed.edit(lambda g: g.add_edge(0, 9, 1.0), [0, 9])
    ed.edit(lambda g: g.remove_vertex(4), [4])
    good, stale = ed.unsynced[0], ed.unsynced[1]
    before = doc.graph.to_arrays()["pool"].copy()
    # the second step is applied twice: it no longer fits after the first time
    with pytest.raises(ReplicaOutOfDate, match="step 3 of 3 does not apply"):
        doc.apply([good, stale, stale], 5)
    assert np.array_equal(doc.graph.to_arrays()["pool"], before) and doc.revision == 0
    with pytest.raises(ReplicaOutOfDate, match="step 1 is not a"):
        doc.apply(["not a delta"], 1)
    doc.apply([good, stale], 2)
    assert doc.revision == 2 and doc.graph.to_csr().equals(ed.graph.to_csr())


def test_the_journal_gives_the_deltas_since_a_revision_or_none_when_cut():
    ed = Editor(karate())
    j = ed.journal
    ed.edit(lambda g: g.add_edge(0, 9, 1.0), [0, 9])
    ed.edit(lambda g: g.add_edge(0, 14, 1.0), [0, 14])
    ed.undo()
    assert j.revision == 3
    assert j.deltas_since(3) == []
    assert [f for _, f in j.deltas_since(1)] == [True, False]
    assert j.deltas_since(4) is None and j.deltas_since(-1) is None
    assert j.pending_pages(0) == len({int(p) for d in ed.history + [ed.unsynced[1][0]] for p in d.pages})
    j.replace(karate(32))
    assert j.revision == 4 and j.deltas_since(3) is None and j.deltas_since(4) == []
    small = EditJournal(karate(), max_bytes=1)
    _, d = small.graph.record_edit(lambda g: g.add_edge(0, 9, 1.0))
    small.record(d)
    _, d = small.graph.record_edit(lambda g: g.add_edge(0, 14, 1.0))
    small.record(d)
    assert small.deltas_since(0) is None and small.deltas_since(2) == []


def test_a_document_sync_summary_names_what_crossed():
    sync = DocumentSync("deltas", steps=2, bytes_sent=5734, seconds=0.0065, revision=2,
                        device={"kind": "sync", "pages": 5, "bytes": 1424, "seconds": 0.00028})
    assert sync.summary() == "sent 2 page deltas (5.6 KiB, 6.5 ms); device sync: 5 pages, 1.4 KiB, 0.28 ms"
    assert payload_bytes({"a": np.zeros(1000, dtype=np.int32)}) >= 4000


# ---- through the local worker process ---------------------------------------------------------

@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.skipif(not simulator_enabled(), reason="the CUDA simulator is off (a real-GPU run)")
def test_the_local_worker_receives_deltas_and_after_a_kill_a_snapshot():
    from kernels.compute.local_backend import LocalBackend

    ed = Editor(karate())

    def job(family="bfs", source=0):
        return Job("", family, "gpu-slotted", {"block": SMALL, "source": source}, target="sim", repeat=1,
                   warmup=0, want_output=True, time_limit=300)

    with LocalBackend() as backend:
        outcome, sync = backend.run_on_document("doc", ed.journal, job())
        assert outcome.ok and sync.sent == "snapshot" and sync.device["kind"] == "full"
        snapshot_bytes = sync.bytes_sent
        ed.graph.mark_synced()
        for round_number, (_, make_edits) in enumerate(edit_rounds(ed)):
            make_edits()
            expected = expected_dirty(ed.unsynced, ed.graph)
            steps = len(ed.unsynced)
            family = ("bfs", "sssp")[round_number % 2]
            outcome, sync = backend.run_on_document("doc", ed.journal, job(family))
            assert outcome.ok, outcome.reason
            assert sync.sent == "deltas" and sync.steps == steps and sync.revision == ed.journal.revision
            assert sync.bytes_sent == payload_bytes(ed.unsynced) < snapshot_bytes
            assert sync.dirty_pages == len(expected) and sync.device["kind"] == "sync"
            check_run(outcome.record, outcome.output, ed, family, 0, expected)
            ed.unsynced = []
            ed.graph.mark_synced()

        outcome, sync = backend.run_on_document("doc", ed.journal, job("bfs", 5))
        assert outcome.failure == "ParameterError" and "vertex 5 was removed" in outcome.message
        assert sync.sent == "nothing"

        os.kill(backend.client_for("sim").pid, signal.SIGKILL)
        time.sleep(0.2)
        ed.edit(lambda g: g.remove_edge(0, 1), [0, 1])
        outcome, sync = backend.run_on_document("doc", ed.journal, job())
        assert outcome.ok, outcome.reason
        assert sync.sent == "snapshot" and "restarted" in sync.reason and sync.device["kind"] == "full"
        assert np.array_equal(outcome.output.astype(np.int64), scipy_levels(ed.graph.to_csr(), 0))
