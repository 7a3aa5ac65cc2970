"""The worker process: jobs run there; a killed worker is reported and restarted."""

from __future__ import annotations

import os
import signal

import pytest

from kernels.compute.local.client import WorkerClient, WorkerDied, WorkerError
from kernels.graph.csr import CSRGraph
from kernels.samples import sample_path


@pytest.fixture
def karate():
    from kernels.graph.io import read_graph

    return read_graph(sample_path())


def test_worker_runs_a_job_and_returns_a_verified_record(karate):
    with WorkerClient(target="sim") as client:
        assert client.ping()["simulator"] is True
        client.add_graph("k", karate)
        reply = client.run("k", "spmv", "cpu-serial", {"dtype": "fp32"}, repeat=2, want_output=True)
        assert reply["record"]["verified"] is True
        assert reply["output"].shape == (34,)


def test_errors_come_back_as_messages_and_the_worker_survives(karate):
    with WorkerClient(target="sim") as client:
        client.add_graph("k", karate)
        with pytest.raises(WorkerError, match="dtype"):
            client.run("k", "spmv", "cpu-serial", {"dtype": "fp16"})
        pid = client.pid
        assert client.run("k", "spmv", "scipy")["record"]["verified"]
        assert client.pid == pid


def test_worker_killed_between_jobs_is_replaced_with_the_graphs(karate):
    with WorkerClient(target="sim") as client:
        client.add_graph("k", karate)
        client.ping()
        first = client.pid
        os.kill(first, signal.SIGKILL)
        client._proc.wait(timeout=10)  # the death happened before the next job is asked for
        # the next request notices the death, starts a fresh worker and re-sends the graph
        assert client.run("k", "spmv", "cpu-serial", timeout=120)["record"]["verified"]
        assert client.pid != first and client.restarts == 1 and client.deaths == [-signal.SIGKILL]


def test_worker_killed_during_a_job_is_reported(karate):
    import threading

    with WorkerClient(target="sim") as client:
        client.add_graph("k", karate)
        client.ping()
        pid = client.pid
        # a slow job: many repetitions of the simulator kernel would do, a sleep is simpler
        timer = threading.Timer(0.5, os.kill, (pid, signal.SIGKILL))
        timer.start()
        with pytest.raises(WorkerDied, match="died"):
            client.request({"op": "sleep", "seconds": 30}, timeout=60)
        timer.join()
        assert client.run("k", "spmv", "cpu-serial", timeout=120)["record"]["verified"]


def test_graph_arrays_cross_the_pipe_intact():
    g = CSRGraph.from_edges(5, [0, 1, 2, 3], [1, 2, 3, 4], weights=[1.0, 2.0, 3.0, 4.0], directed=True)
    with WorkerClient(target="sim") as client:
        client.add_graph("g", g)
        rec = client.run("g", "spmv", "scipy")["record"]
        assert rec["input"]["fingerprint"] == g.fingerprint
