"""What runs on a Dask worker.

A Dask worker does not run kernels in its own threads: each keeps the project's one pool of
kernels worker processes (:class:`~kernels.compute.pool.WorkerPool`, the local backend's: a
measuring process per mode, ``cuda`` or ``sim``; CPU jobs share the simulator's; compile-ahead
processes for GPU batches, started by :func:`compile_ahead`) held by the ``KernelsPlugin`` worker
plugin. So

* a hang past the time limit kills only that child (the job is a failed cell, the child is
  restarted on the next job, the Dask worker lives on);
* a kernel fault kills only the child;
* the simulator is switched on per child, and the child inherits the GPU that
  ``CUDA_VISIBLE_DEVICES`` pinned for the Dask worker.

Jobs on one Dask worker are serialised by a lock, so a GPU runs one timed job at a time even
where the worker has several threads. The child keeps graphs by content fingerprint: a graph
crosses into it once, however many cells use it; beyond :data:`GRAPH_CACHE` graphs the oldest
is forgotten (the child, and the live documents it holds, live on).

:class:`LiveDocumentActor` is the Dask actor holding one live document on one worker: its
replica lives in that worker's kernels child (the same one, under the same lock, as the jobs),
and the client sends it page deltas (see :mod:`kernels.compute.documents`).

Nothing here imports ``distributed`` at module level except through the functions Dask calls.
"""

from __future__ import annotations

import os
import threading
import time

from kernels.compute.jobs import CRASHED, TIMED_OUT, Job, Outcome

PLUGIN_NAME = "graph-kernels"
GRAPH_CACHE = 4                 # graphs kept in each child process (the oldest is dropped)
CANCEL_POLL_S = 0.5             # how often a running job asks the scheduler whether it was cancelled


def make_pool(address: str):
    """The kernels child processes of one Dask worker (:class:`~kernels.compute.pool.WorkerPool`):
    outcomes name the worker's address and, for cuda jobs, its ``CUDA_VISIBLE_DEVICES``."""
    from kernels.compute.pool import WorkerPool

    pinned = os.environ.get("CUDA_VISIBLE_DEVICES")
    return WorkerPool(label=lambda client: address, graph_limit=GRAPH_CACHE,
                      device_suffix=f" (CUDA_VISIBLE_DEVICES={pinned})" if pinned else "")


_fallback: dict = {}            # address -> pool, when the plugin was not registered (a job submitted by hand)


def _pool(worker):
    plugin = worker.plugins.get(PLUGIN_NAME)
    pool = getattr(plugin, "pool", None)
    if pool is None:
        pool = _fallback.get(worker.address)
        if pool is None:
            pool = _fallback[worker.address] = make_pool(worker.address)
    return pool


def _cancel_checker(event_name: str | None):
    """A cheap ``cancel()`` for WorkerClient: asks the scheduler's Event at most every 0.5 s."""
    if not event_name:
        return None
    from distributed import Event

    event = Event(event_name)
    state = {"next": 0.0, "set": False}

    def cancelled() -> bool:
        now = time.monotonic()
        if not state["set"] and now >= state["next"]:
            state["next"] = now + CANCEL_POLL_S
            try:
                state["set"] = bool(event.is_set())
            except Exception:  # the scheduler is gone: the job will be lost anyway, do not kill it here
                state["set"] = False
        return state["set"]

    return cancelled


def run_job(graph, job: Job, cancel_event: str | None = None) -> Outcome:
    """The Dask task: run ``job`` on ``graph`` in this worker's kernels child process."""
    from distributed import get_worker

    worker = get_worker()
    return _pool(worker).run(job, _cancel_checker(cancel_event), graph=graph)


def restart_pool(dask_worker=None) -> None:
    """Run by ``Client.run``: this worker's kernels processes end; the next job starts new ones."""
    _pool(dask_worker).restart()


def _off_the_loop(name: str, work, *args) -> None:
    """``Client.run`` calls a plain function on the worker's event loop: what may wait for the pool's
    lock (held by a running job, whose cancel checks need that loop) runs in a thread instead."""
    threading.Thread(target=work, args=args, name=name, daemon=True).start()


def prestart(target: str | None, dask_worker=None) -> None:
    """Run by ``Client.run``: start this worker's measuring process for ``target`` now (in a thread)."""
    _off_the_loop("prestart", _pool(dask_worker).prestart, target)


def warm(target: str | None = "cuda", dask_worker=None) -> None:
    """Run by ``Client.run``: start this worker's measuring process and compile-ahead processes and
    have them do their start-up work (in a thread: returns at once; :func:`warm_state` tells)."""
    _pool(dask_worker).warm_in_background(target)


def warm_state(dask_worker=None) -> dict | None:
    """Run by ``Client.run``: how this worker's warming went (``WorkerPool.warm_state``)."""
    return _pool(dask_worker).warm_state()


def ahead_stats(dask_worker=None) -> dict | None:
    """Run by ``Client.run``: this worker's compile-ahead counts so far (``AheadStats``), if it has any."""
    return _pool(dask_worker).ahead_stats()


def compile_ahead(jobs: list[Job], graph_keys: dict, dask_worker=None) -> int:
    """Run by ``Client.run`` on each GPU worker at the start of a batch: queue the batch's cells
    for this worker's compile-ahead processes (the graphs are the scattered ones this worker
    holds). Returns at once; the number of cells queued."""
    pool = _pool(dask_worker)
    queued = []
    for job in jobs:
        graph = dask_worker.data.get(graph_keys.get(job.graph_key)) if hasattr(dask_worker, "data") else None
        if graph is not None:
            pool.add_graph(job.graph_key, graph)
            queued.append(job)
    _off_the_loop("compile-ahead", pool.compile_ahead, queued)
    return len(queued)


class LiveDocumentActor:
    """A Dask actor: one live document on this worker (created by
    :class:`~kernels.compute.dask.backend.DaskDocumentChannel`).

    It holds nothing big itself: ``open`` / ``update`` / ``run`` are forwarded to the replica in
    this worker's kernels child of the document's mode, under the lock the jobs take, so a GPU
    still runs one timed thing at a time. Answers are plain values or ``{"error": kind,
    "message": ...}`` (``UnknownDocument`` when the child was restarted and lost the replica)."""

    def __init__(self, key: str, target: str | None):
        from distributed import get_worker

        self._worker = get_worker()
        self.key = key
        self.target = target
        self.address = self._worker.address

    def _call(self, fn):
        from kernels.compute.local.client import SendFailed, WorkerDied, WorkerError, WorkerTimeout
        from kernels.errors import GraphKernelsError

        pool = _pool(self._worker)
        with pool.lock:
            try:
                return {"ok": fn(pool.worker(self.target))}
            except WorkerError as exc:
                return {"error": exc.kind, "message": str(exc)}
            except WorkerTimeout as exc:
                return {"error": TIMED_OUT, "message": str(exc)}
            except SendFailed as exc:            # it had ended: its replacement holds no replica
                return {"error": "UnknownDocument", "message": str(exc)}
            except WorkerDied as exc:
                return {"error": CRASHED, "message": str(exc)}
            except GraphKernelsError as exc:      # UnknownDocument, ReplicaOutOfDate
                return {"error": type(exc).__name__, "message": str(exc)}

    def open(self, arrays: dict, revision: int, name: str | None) -> dict:
        return self._call(lambda client: client.open_document(self.key, arrays, revision, name=name))

    def update(self, deltas: list, revision: int) -> dict:
        return self._call(lambda client: client.update_document(self.key, deltas, revision))

    def batch(self, batch: dict, revision: int) -> dict:
        return self._call(lambda client: client.batch_document(self.key, batch, revision))

    def run(self, job: Job, cancel_event: str | None = None) -> Outcome:
        pool = _pool(self._worker)
        with pool.lock:
            return pool.document_outcome(pool.worker(self.target), self.key, job,
                                         _cancel_checker(cancel_event) or (lambda: False))

    def close(self) -> dict:
        return self._call(lambda client: client.close_document(self.key))


def run_command_job(graph, command: list[str], result_option: str, time_limit: float | None) -> dict:
    """The Dask task for :func:`kernels.compute.command.run_command_here`, serialised with the
    worker's other jobs (one timed thing per GPU)."""
    from distributed import get_worker

    from kernels.compute.command import run_command_here

    worker = get_worker()
    with _pool(worker).lock:
        result = run_command_here(graph, command, result_option, time_limit)
    pinned = os.environ.get("CUDA_VISIBLE_DEVICES")
    return {"result": result, "worker": worker.address, "visible_devices": pinned}
