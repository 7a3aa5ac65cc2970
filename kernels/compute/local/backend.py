"""The local backend: jobs run one at a time in this machine's worker process
(:class:`~kernels.compute.local.client.WorkerClient`), one process per mode (real GPU or
simulator; CPU variants run in either), each started on first use.

Live documents (:meth:`LocalBackend.run_on_document`): the replica lives in the worker process
of the job's mode, reached through :class:`LocalDocumentChannel`; this side remembers only the
revision it sent, so a restarted worker is noticed by its ``UnknownDocument`` answer and the
document re-opened from a snapshot (:mod:`kernels.compute.documents`)."""

from __future__ import annotations

import contextlib
import os
import platform
from collections.abc import Callable, Iterable, Iterator

from kernels.compute.backend import CANCELLED, CRASHED, TIMED_OUT, ComputeBackend, Job, Outcome, WorkerInfo
from kernels.compute.documents import ChannelFailure, DocumentChannel
from kernels.compute.live import UnknownDocument
from kernels.compute.local.client import WorkerClient, WorkerDied, WorkerError, WorkerTimeout, _SendFailed


def worker_mode(target: str | None) -> str | None:
    """The worker process a target's jobs go to: ``cuda`` or ``sim`` (CPU jobs share the
    simulator's, which never opens a GPU context for them); ``None``: the machine's default."""
    return target if target in ("cuda", "sim") else ("sim" if target == "cpu" else None)


class LocalBackend(ComputeBackend):
    kind = "local"

    def __init__(self, env: dict | None = None, client: WorkerClient | None = None):
        super().__init__()
        self.env = dict(env or {})
        self._given = client            # a caller's client serves every job (and is not closed here)
        self._clients: dict = {}
        self._graphs: dict = {}
        self._channels: dict = {}       # (document key, worker mode) -> LocalDocumentChannel

    @property
    def address(self) -> str:
        return "local"

    def describe(self) -> list[WorkerInfo]:
        from kernels.compute.dask.tasks import worker_info  # the same probe a Dask worker runs

        return [WorkerInfo(**worker_info())]

    def default_target(self, family: str, variant: str) -> str:
        from kernels.algorithms.registry import get_variant
        from kernels.measure.targets import default_gpu_target

        _, var = get_variant(family, variant)
        return default_gpu_target() if var.kind == "gpu" else var.targets[0]

    def client_for(self, target: str | None) -> WorkerClient:
        """The worker process that runs ``target``'s jobs (started on first use)."""
        if self._given is not None:
            return self._given
        mode = worker_mode(target)
        client = self._clients.get(mode)
        if client is None:
            client = self._clients[mode] = WorkerClient(target=mode, env=self.env)
            for key, graph in self._graphs.items():
                client.add_graph(key, graph)
        return client

    def add_graph(self, key: str, graph) -> None:
        if self._graphs.get(key) is graph:
            return
        self._graphs[key] = graph
        for client in [self._given, *self._clients.values()]:
            if client is not None:
                client.add_graph(key, graph)

    def run_many(self, jobs: Iterable[Job], *, cancel: Callable[[], bool] | None = None) -> Iterator[Outcome]:
        cancelled = self._cancel_check(cancel)
        for job in jobs:
            if cancelled():
                return
            outcome = self._run_one(job, cancelled)
            if outcome is None:
                return
            yield outcome

    def _run_one(self, job: Job, cancelled) -> Outcome | None:
        client = self.client_for(job.target)
        if job.graph_key not in self._graphs:
            raise KeyError(f"no graph named {job.graph_key!r}: add_graph it first")
        return self._request_run(client, job, cancelled, lambda: client.run(
            job.graph_key, job.family, job.variant, job.params, target=job.target, repeat=job.repeat,
            warmup=job.warmup, seed=job.seed, want_output=job.want_output, timeout=job.time_limit,
            cancel=cancelled, launch=job.launch))

    def _request_run(self, client: WorkerClient, job: Job, cancelled, request) -> Outcome | None:
        """The outcome of a run request (``None`` when cancelled): failures become outcomes."""
        try:
            reply = request()
        except WorkerDied as exc:
            if cancelled():
                return None
            return Outcome(job, failure=CRASHED, message=str(exc), worker=self._label(client))
        except WorkerTimeout as exc:
            return Outcome(job, failure=TIMED_OUT, message=str(exc), worker=self._label(client))
        except WorkerError as exc:
            return Outcome(job, failure=exc.kind, message=str(exc), worker=self._label(client))
        record = reply["record"]
        return Outcome(job, record=record, output=reply.get("output"), worker=self._label(client),
                       device=record["environment"]["device"].get("name", ""))

    # ---- live documents ----------------------------------------------------------------------
    def _document_channel(self, doc_key: str, job: Job) -> DocumentChannel:
        mode = worker_mode(job.target)
        channel = self._channels.get((doc_key, mode))
        if channel is None:
            channel = self._channels[(doc_key, mode)] = LocalDocumentChannel(self, doc_key, mode)
        return channel

    def close_document(self, doc_key: str) -> None:
        for (key, mode) in [k for k in self._channels if k[0] == doc_key]:
            self._channels.pop((key, mode)).close()

    def run_command(self, graph, command: list[str], result_option: str, *, target: str | None = None,
                    time_limit: float | None = None) -> dict:
        from kernels.compute.command import run_command_here

        env = {**self.env, **({"NUMBA_ENABLE_CUDASIM": "1"} if target == "sim" else {})}
        return {"result": run_command_here(graph, command, result_option, time_limit, env=env),
                "worker": self._label_here()}

    @staticmethod
    def _label_here() -> str:
        return f"local ({platform.node() or 'this machine'})"

    @staticmethod
    def _label(client: WorkerClient) -> str:
        return f"local ({platform.node() or 'this machine'}, pid {client.pid or os.getpid()})"

    def close(self) -> None:
        self._channels.clear()
        for client in self._clients.values():
            client.close()
        self._clients.clear()


class LocalDocumentChannel(DocumentChannel):
    """A document's replica in one of this machine's worker processes."""

    def __init__(self, backend: LocalBackend, key: str, mode: str | None):
        super().__init__()
        self.backend, self.key, self.mode = backend, key, mode

    @property
    def client(self) -> WorkerClient:
        return self.backend.client_for(self.mode)

    @property
    def where(self) -> str:
        return self.backend._label(self.client)

    def open(self, arrays: dict, revision: int, name: str | None) -> None:
        try:
            self.client.open_document(self.key, arrays, revision, name=name)
        except (WorkerDied, WorkerTimeout) as exc:
            raise ChannelFailure(CRASHED if isinstance(exc, WorkerDied) else TIMED_OUT, str(exc)) from None
        except WorkerError as exc:
            raise ChannelFailure(exc.kind, str(exc)) from None

    def update(self, deltas: list, revision: int) -> None:
        try:
            self.client.update_document(self.key, deltas, revision)
        except _SendFailed:
            raise UnknownDocument("the worker ended before the update") from None
        except (WorkerDied, WorkerTimeout) as exc:
            raise ChannelFailure(CRASHED if isinstance(exc, WorkerDied) else TIMED_OUT, str(exc)) from None
        except WorkerError as exc:
            raise ChannelFailure(exc.kind, str(exc)) from None

    def run(self, job: Job, cancel) -> Outcome:
        client = self.client
        cancelled = cancel or (lambda: False)

        def request():
            try:
                return client.run_document(self.key, job.family, job.variant, job.params, target=job.target,
                                           repeat=job.repeat, warmup=job.warmup, seed=job.seed,
                                           want_output=job.want_output, timeout=job.time_limit, cancel=cancelled,
                                           launch=job.launch)
            except _SendFailed:
                raise UnknownDocument("the worker ended before the run") from None

        try:
            outcome = self.backend._request_run(client, job, cancelled, request)
        except UnknownDocument as exc:
            return Outcome(job, failure=UnknownDocument.__name__, message=str(exc), worker=self.where)
        return outcome or Outcome(job, failure=CANCELLED, message="cancelled while running", worker=self.where)

    def close(self) -> None:
        # a worker that cannot answer holds no replica worth closing
        with contextlib.suppress(WorkerDied, WorkerTimeout, WorkerError):
            self.client.close_document(self.key)
