"""Batches of edge updates applied on a document replica's device pages (issue 27 §4): the
worker's replica applies the batch with the device path, the caller replays the returned page
delta on its own structure as the revision it named, and the next run on the live pages finds
the replica up to date (nothing sent) and right (levels equal SciPy's). A refused batch
changes nothing; a batch the caller does not keep makes the next run send a snapshot."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.compute.backend import Job
from kernels.compute.documents import BatchRefused
from kernels.compute.live import LiveDocument
from kernels.measure.targets import simulator_enabled
from tests.test_live_documents import SMALL, Editor, karate, scipy_levels

on_the_simulator = pytest.mark.skipif(not simulator_enabled(), reason="the CUDA simulator is off (a real-GPU run)")


def _bfs(source=0):
    return Job("", "bfs", "gpu-slotted", {"block": SMALL, "source": source}, target="sim", repeat=1, warmup=0,
               want_output=True, time_limit=300)


def _batch(g, rng, inserts=6, deletes=4):
    from kernels.graph.update_batches import random_batch

    return random_batch(g, inserts, deletes, rng)


def replica_round_trip():
    gui = karate()
    replica = LiveDocument("doc", gui.to_arrays(), revision=0)
    twin = gui.copy()
    batch = _batch(gui, np.random.default_rng(1))
    result = replica.apply_batch(batch, revision=1)
    assert result["verified"] and result["report"].path == "gpu" and replica.revision == 1
    gui.apply_delta(result["delta"], forward=True, verify=True)     # word for word onto the caller's pages
    twin.apply_updates(**batch)                                     # the host path on a twin
    assert gui.to_csr().to_scipy().nnz == twin.to_csr().to_scipy().nnz
    assert (gui.to_csr().to_scipy() != twin.to_csr().to_scipy()).nnz == 0
    assert set(result["vertices"]) >= {int(u) for part in batch.values() for u in part[0]}


@on_the_simulator
def test_a_replica_applies_a_batch_and_returns_the_delta_the_caller_replays():
    replica_round_trip()


@pytest.mark.gpu
def test_a_replica_applies_a_batch_on_a_real_gpu():
    replica_round_trip()


@on_the_simulator
def test_a_refused_batch_changes_nothing_on_the_replica():
    from kernels.errors import GraphEditError

    gui = karate()
    replica = LiveDocument("doc", gui.to_arrays(), revision=3)
    before = replica.graph.to_arrays()
    u, v = 0, int(gui.neighbors(0)[0])
    with pytest.raises(GraphEditError, match="already exists"):
        replica.apply_batch({"insert": ([u], [v])}, revision=4)
    after = replica.graph.to_arrays()
    assert replica.revision == 3
    assert all(np.array_equal(np.asarray(before[k]), np.asarray(after[k])) for k in before)


@on_the_simulator
@pytest.mark.timeout(600)
def test_the_local_worker_applies_batches_and_the_next_run_sends_nothing():
    from kernels.compute.local_backend import LocalBackend

    ed = Editor(karate())
    rng = np.random.default_rng(7)
    with LocalBackend() as backend:
        for _ in range(2):
            batch = _batch(ed.graph, rng)
            revision = ed.journal.revision + 1
            result, sync = backend.apply_batch_on_document("doc", ed.journal, batch, revision, target="sim")
            assert result["verified"]
            _, delta = ed.graph.record_edit(lambda g, d=result["delta"]: g.apply_delta(d, forward=True),
                                            result["vertices"])
            ed.journal.record(delta, revision=revision)
        outcome, sync = backend.run_on_document("doc", ed.journal, _bfs())
        assert outcome.ok, outcome.reason
        assert sync.sent == "nothing"                    # the replica took the batches itself
        assert np.array_equal(outcome.output.astype(np.int64), scipy_levels(ed.graph.to_csr(), 0))

        u, v = 0, int(ed.graph.neighbors(0)[0])
        with pytest.raises(BatchRefused, match="already exists"):
            backend.apply_batch_on_document("doc", ed.journal, {"insert": ([u], [v])}, ed.journal.revision + 1,
                                            target="sim")
        outcome, sync = backend.run_on_document("doc", ed.journal, _bfs())
        assert outcome.ok and sync.sent == "nothing"     # refused: the replica kept its revision

        # a batch made for a state the document has left (it was edited meanwhile) is refused
        stale = _batch(ed.graph, rng)
        ed.edit(lambda g: g.remove_edge(*[int(x) for x in next(iter(zip(stale["delete"][0], stale["delete"][1],
                                                                          strict=True)))]), [])
        with pytest.raises(BatchRefused, match="changed while the batch was being prepared"):
            backend.apply_batch_on_document("doc", ed.journal, stale, ed.journal.revision, target="sim")
        outcome, sync = backend.run_on_document("doc", ed.journal, _bfs())
        assert outcome.ok and sync.sent == "nothing"     # the edit was sent; the batch was not applied
        assert np.array_equal(outcome.output.astype(np.int64), scipy_levels(ed.graph.to_csr(), 0))

        # a batch the caller drops (its document changed meanwhile): the next run sends a snapshot
        backend.apply_batch_on_document("doc", ed.journal, _batch(ed.graph, rng), ed.journal.revision + 1,
                                        target="sim")
        backend.forget_document_revision("doc")
        outcome, sync = backend.run_on_document("doc", ed.journal, _bfs())
        assert outcome.ok and sync.sent == "snapshot" and "did not keep" in sync.reason
        assert np.array_equal(outcome.output.astype(np.int64), scipy_levels(ed.graph.to_csr(), 0))
