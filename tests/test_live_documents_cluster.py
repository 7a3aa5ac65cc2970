"""Live pages on a remote worker (issue 16 §4): a Dask actor holds the document's replica on one
worker of a real two-worker cluster on the loopback (``LocalCluster(processes=True)``); after the
first snapshot only page deltas cross the network, and the run there syncs only the dirty pages.
When the actor's worker dies, the next run re-creates it elsewhere from a snapshot."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from kernels.compute.backend import Job
from kernels.compute.documents import payload_bytes
from kernels.measure.targets import simulator_enabled
from tests.test_cluster import worker_env
from tests.test_live_documents import SMALL, Editor, check_run, edit_rounds, expected_dirty, karate, scipy_levels

distributed = pytest.importorskip("distributed")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600),
              pytest.mark.skipif(not simulator_enabled(), reason="runs on the simulator")]


@pytest.fixture(scope="module")
def backend():
    from distributed import LocalCluster

    from kernels.compute.dask.backend import DaskBackend

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, env=worker_env()) as cluster, DaskBackend(cluster.scheduler_address) as b:
        b.client.wait_for_workers(2, timeout=120)
        yield b


def job(family: str = "bfs", source: int = 0) -> Job:
    return Job("", family, "gpu-slotted", {"block": SMALL, "source": source}, target="sim", repeat=1, warmup=0,
               want_output=True, time_limit=300)


def test_the_actor_receives_only_the_deltas_after_the_first_snapshot(backend):
    ed = Editor(karate())
    outcome, sync = backend.run_on_document("doc", ed.journal, job())
    assert outcome.ok, outcome.reason
    assert sync.sent == "snapshot" and sync.device["kind"] == "full"
    home = sync.worker
    assert home in backend.client.scheduler_info()["workers"] and outcome.worker == home
    snapshot_bytes = sync.bytes_sent
    ed.graph.mark_synced()
    for round_number, (_, make_edits) in enumerate(edit_rounds(ed)):
        make_edits()
        expected = expected_dirty(ed.unsynced, ed.graph)
        family = ("bfs", "sssp")[round_number % 2]
        outcome, sync = backend.run_on_document("doc", ed.journal, job(family))
        assert outcome.ok, outcome.reason
        assert sync.sent == "deltas" and sync.steps == len(ed.unsynced) and sync.worker == home
        assert sync.bytes_sent == payload_bytes(ed.unsynced) < snapshot_bytes
        assert sync.dirty_pages == len(expected)
        check_run(outcome.record, outcome.output, ed, family, 0, expected)
        ed.unsynced = []
        ed.graph.mark_synced()
    outcome, sync = backend.run_on_document("doc", ed.journal, job())
    assert outcome.ok and sync.sent == "nothing" and sync.bytes_sent == 0 and sync.device["pages"] == 0


def test_the_actor_applies_a_batch_on_its_device_pages_and_the_next_run_sends_nothing(backend):
    from kernels.compute.documents import BatchRefused
    from kernels.graph.update_batches import random_batch

    ed = Editor(karate())
    batch = random_batch(ed.graph, 6, 4, np.random.default_rng(3))
    revision = ed.journal.revision + 1
    result, sync = backend.apply_batch_on_document("batch-doc", ed.journal, batch, revision, target="sim")
    assert sync.sent == "snapshot" and result["verified"] and result["report"].path == "gpu"
    _, delta = ed.graph.record_edit(lambda g: g.apply_delta(result["delta"], forward=True), result["vertices"])
    ed.journal.record(delta, revision=revision)
    outcome, sync = backend.run_on_document("batch-doc", ed.journal, job())
    assert outcome.ok, outcome.reason
    assert sync.sent == "nothing"
    assert np.array_equal(outcome.output.astype(np.int64), scipy_levels(ed.graph.to_csr(), 0))
    u, v = 0, int(ed.graph.neighbors(0)[0])
    with pytest.raises(BatchRefused, match="already exists"):
        backend.apply_batch_on_document("batch-doc", ed.journal, {"insert": ([u], [v])}, ed.journal.revision + 1,
                                        target="sim")
    backend.close_document("batch-doc")


def test_when_the_actors_worker_dies_the_next_run_sends_a_snapshot_elsewhere(backend):
    ed = Editor(karate())
    outcome, sync = backend.run_on_document("doc-killed", ed.journal, job())
    assert outcome.ok, outcome.reason
    home = sync.worker
    pids = backend.client.run(os.getpid)
    os.kill(pids[home], signal.SIGKILL)
    deadline = time.monotonic() + 60
    while home in backend.client.scheduler_info()["workers"] and time.monotonic() < deadline:
        time.sleep(0.2)
    ed.edit(lambda g: g.remove_edge(0, 1), [0, 1])
    outcome, sync = backend.run_on_document("doc-killed", ed.journal, job())
    assert outcome.ok, outcome.reason
    assert sync.sent == "snapshot" and sync.worker != home and "was lost" in sync.reason
    assert sync.worker in sync.reason and sync.device["kind"] == "full"
    assert np.array_equal(outcome.output.astype(np.int64), scipy_levels(ed.graph.to_csr(), 0))
    backend.close_document("doc-killed")
