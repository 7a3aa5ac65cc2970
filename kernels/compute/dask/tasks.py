"""What runs on a Dask worker.

A Dask worker does not run kernels in its own threads: each keeps persistent kernels worker
processes (:class:`~kernels.compute.local.client.WorkerClient`, one per mode: ``cuda`` or
``sim``; CPU jobs share the simulator's) held by the :class:`KernelsPlugin` worker plugin. So

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

import contextlib
import os
import threading
import time

from kernels.compute.backend import CANCELLED, CRASHED, TIMED_OUT, Job, Outcome

PLUGIN_NAME = "graph-kernels"
GRAPH_CACHE = 4                 # graphs kept in each child process (the oldest is dropped)
CANCEL_POLL_S = 0.5             # how often a running job asks the scheduler whether it was cancelled


def worker_info() -> dict:
    """This process's worker description: GPU (through the driver, no numba.cuda), CPU, versions."""
    import platform

    from kernels.measure.environment import cpu_name, library_versions
    from kernels.measure.targets import probe_gpu

    gpu = probe_gpu()
    gpu_json = None
    if gpu is not None:
        gpu_json = {"name": gpu.name, "memory_bytes": gpu.total_memory_bytes,
                    "compute_capability": f"{gpu.compute_capability[0]}.{gpu.compute_capability[1]}",
                    "driver": gpu.driver_version, "index": gpu.index,
                    "visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
    return {"address": "local", "name": platform.node(), "host": platform.node(), "pid": os.getpid(),
            "gpu": gpu_json, "cpu": cpu_name(), "versions": dict(library_versions())}


def _mode(target: str | None) -> str:
    return "cuda" if target == "cuda" else "sim"


class Children:
    """The kernels child processes of one Dask worker, and the lock that serialises its jobs."""

    def __init__(self):
        self.lock = threading.Lock()
        self.clients: dict = {}
        self.keys: dict = {}            # mode -> graph keys sent to that child, oldest first

    def client(self, target: str | None):
        from kernels.compute.local.client import WorkerClient

        mode = _mode(target)
        if mode not in self.clients:
            self.clients[mode] = WorkerClient(target=mode)
            self.keys[mode] = []
        return self.clients[mode]

    def ensure_graph(self, target: str | None, key: str, graph) -> None:
        mode = _mode(target)
        client = self.client(target)
        keys = self.keys[mode]
        if key in keys:
            return
        if len(keys) >= GRAPH_CACHE:
            # the child forgets the oldest graph (the Dask worker still has it if needed); a new
            # child would also lose the live documents it holds
            from kernels.compute.local.client import WorkerDied, WorkerTimeout

            with contextlib.suppress(WorkerDied, WorkerTimeout):   # a dead child: the next request starts one
                client.forget_graph(keys.pop(0))
        client.add_graph(key, graph)
        keys.append(key)

    def close(self) -> None:
        for client in self.clients.values():
            client.close()
        self.clients.clear()

_fallback = Children()          # used when the plugin was not registered (a job submitted by hand)


def _children(worker) -> Children:
    plugin = worker.plugins.get(PLUGIN_NAME)
    children = getattr(plugin, "children", None)
    return children if children is not None else _fallback


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
    children = _children(worker)
    cancelled = _cancel_checker(cancel_event)
    with children.lock:
        key = f"graph-{graph.fingerprint}"     # by content: a caller's name may be reused for a new graph
        if cancelled is None or not cancelled():
            children.ensure_graph(job.target, key, graph)
        client = children.client(job.target)
        return _run_in_child(job, worker.address, cancelled, lambda: client.run(
            key, job.family, job.variant, job.params, target=job.target, repeat=job.repeat, warmup=job.warmup,
            seed=job.seed, want_output=job.want_output, timeout=job.time_limit, cancel=cancelled,
            launch=job.launch))


def _run_in_child(job: Job, address: str, cancelled, request) -> Outcome:
    """The outcome of a run request to a kernels child (called with the children's lock held)."""
    from kernels.compute.local.client import WorkerDied, WorkerError, WorkerTimeout

    if cancelled is not None and cancelled():
        return Outcome(job, failure=CANCELLED, message="cancelled before it ran", worker=address)
    try:
        reply = request()
    except WorkerDied as exc:
        failure = CANCELLED if cancelled is not None and cancelled() else CRASHED
        return Outcome(job, failure=failure, message=str(exc), worker=address)
    except WorkerTimeout as exc:
        return Outcome(job, failure=TIMED_OUT, message=str(exc), worker=address)
    except WorkerError as exc:
        return Outcome(job, failure=exc.kind, message=str(exc), worker=address)
    record = reply["record"]
    device = record["environment"]["device"]
    label = device.get("name", "")
    if job.target == "cuda" and os.environ.get("CUDA_VISIBLE_DEVICES"):
        label += f" (CUDA_VISIBLE_DEVICES={os.environ['CUDA_VISIBLE_DEVICES']})"
    return Outcome(job, record=record, output=reply.get("output"), worker=address, device=label)


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
        from kernels.compute.local.client import WorkerDied, WorkerError, WorkerTimeout, _SendFailed
        from kernels.errors import GraphKernelsError

        children = _children(self._worker)
        with children.lock:
            try:
                return {"ok": fn(children.client(self.target))}
            except WorkerError as exc:
                return {"error": exc.kind, "message": str(exc)}
            except WorkerTimeout as exc:
                return {"error": TIMED_OUT, "message": str(exc)}
            except _SendFailed as exc:            # it had ended: its replacement holds no replica
                return {"error": "UnknownDocument", "message": str(exc)}
            except WorkerDied as exc:
                return {"error": CRASHED, "message": str(exc)}
            except GraphKernelsError as exc:      # UnknownDocument, ReplicaOutOfDate
                return {"error": type(exc).__name__, "message": str(exc)}

    def open(self, arrays: dict, revision: int, name: str | None) -> dict:
        return self._call(lambda client: client.open_document(self.key, arrays, revision, name=name))

    def update(self, deltas: list, revision: int) -> dict:
        return self._call(lambda client: client.update_document(self.key, deltas, revision))

    def run(self, job: Job, cancel_event: str | None = None) -> Outcome:
        from kernels.compute.local.client import _SendFailed

        children = _children(self._worker)
        cancelled = _cancel_checker(cancel_event)
        with children.lock:
            client = children.client(self.target)

            def request():
                try:
                    return client.run_document(self.key, job.family, job.variant, job.params, target=job.target,
                                               repeat=job.repeat, warmup=job.warmup, seed=job.seed,
                                               want_output=job.want_output, timeout=job.time_limit,
                                               cancel=cancelled, launch=job.launch)
                except _SendFailed as exc:     # the child had ended: a new one holds no replica
                    from kernels.compute.local.client import WorkerError

                    raise WorkerError("UnknownDocument", str(exc)) from None

            return _run_in_child(job, self.address, cancelled, request)

    def close(self) -> dict:
        return self._call(lambda client: client.close_document(self.key))


def run_command_job(graph, command: list[str], result_option: str, time_limit: float | None) -> dict:
    """The Dask task for :func:`kernels.compute.command.run_command_here`, serialised with the
    worker's other jobs (one timed thing per GPU)."""
    from distributed import get_worker

    from kernels.compute.command import run_command_here

    worker = get_worker()
    with _children(worker).lock:
        result = run_command_here(graph, command, result_option, time_limit)
    pinned = os.environ.get("CUDA_VISIBLE_DEVICES")
    return {"result": result, "worker": worker.address, "visible_devices": pinned}
