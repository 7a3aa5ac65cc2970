"""The local backend: jobs run one at a time in this machine's worker processes, held by a
:class:`~kernels.compute.pool.WorkerPool` (one measuring process per mode: the real GPU, or the
simulator, which also runs CPU variants; each started on first use; compile-ahead processes for
GPU sweeps).

Live documents (:meth:`LocalBackend.run_on_document`): the replica lives in the worker process
of the job's mode, reached through :class:`LocalDocumentChannel`; this side remembers only the
revision it sent, so a restarted worker is noticed by its ``UnknownDocument`` answer and the
document re-opened from a snapshot (:mod:`kernels.compute.documents`)."""

from __future__ import annotations

import contextlib
import platform
from collections.abc import Callable, Iterable, Iterator

from kernels.compute.backend import CANCELLED, CRASHED, TIMED_OUT, ComputeBackend, Job, Outcome, WorkerInfo
from kernels.compute.documents import ChannelFailure, DocumentChannel
from kernels.compute.live import UnknownDocument
from kernels.compute.local.client import SendFailed, WorkerClient, WorkerDied, WorkerError, WorkerTimeout
from kernels.compute.pool import WorkerPool, mode_of
from kernels.measure.targets import Target


class LocalBackend(ComputeBackend):
    kind = "local"

    def __init__(self, env: dict | None = None, client: WorkerClient | None = None, *,
                 compile_ahead: int | None = None):
        super().__init__()
        self.env = dict(env or {})
        self.pool = WorkerPool(self.env, client=client, compile_ahead=compile_ahead)
        self._channels: dict = {}       # (document key, worker mode) -> LocalDocumentChannel

    @property
    def address(self) -> str:
        return "local"

    def describe(self) -> list[WorkerInfo]:
        from kernels.compute.jobs import worker_info  # the same probe a Dask worker runs

        return [WorkerInfo(**worker_info())]

    def default_target(self, family: str, variant: str) -> str:
        from kernels.algorithms.registry import get_variant
        from kernels.measure.targets import default_gpu_target

        _, var = get_variant(family, variant)
        return default_gpu_target() if var.kind == "gpu" else var.targets[0]

    def client_for(self, target: str | None) -> WorkerClient:
        """The worker process that runs ``target``'s jobs (started on first use)."""
        return self.pool.worker(target)

    def add_graph(self, key: str, graph) -> None:
        self.pool.add_graph(key, graph)

    def prestart(self, target: str | None) -> None:
        self.pool.prestart(target)

    def fresh_processes(self) -> None:
        self.pool.restart()

    def run_many(self, jobs: Iterable[Job], *, cancel: Callable[[], bool] | None = None) -> Iterator[Outcome]:
        cancelled = self._cancel_check(cancel)
        jobs = list(jobs)
        for job in jobs:
            if job.target is None:
                job.target = self.default_target(job.family, job.variant)
        self.pool.compile_ahead(jobs)     # the next cells' kernels compile while these run
        for job in jobs:
            if cancelled():
                return
            outcome = self.pool.run(job, cancelled)
            if outcome.failure == CANCELLED:
                return
            yield outcome

    def compile_ahead_stats(self) -> dict | None:
        return self.pool.ahead_stats()

    # ---- live documents ----------------------------------------------------------------------
    def _document_channel(self, doc_key: str, job: Job) -> DocumentChannel:
        mode = mode_of(job.target)
        channel = self._channels.get((doc_key, mode))
        if channel is None:
            channel = self._channels[(doc_key, mode)] = LocalDocumentChannel(self, doc_key, mode)
        return channel

    def close_document(self, doc_key: str) -> None:
        for (key, mode) in [k for k in self._channels if k[0] == doc_key]:
            self._channels.pop((key, mode)).close()

    def document_channels(self, doc_key: str) -> list:
        return [channel for (key, _), channel in self._channels.items() if key == doc_key]

    def run_command(self, graph, command: list[str], result_option: str, *, target: str | None = None,
                    time_limit: float | None = None) -> dict:
        from kernels.compute.command import run_command_here

        simulated = target is not None and Target.parse(target).simulated
        env = {**self.env, **({"NUMBA_ENABLE_CUDASIM": "1"} if simulated else {})}
        return {"result": run_command_here(graph, command, result_option, time_limit, env=env),
                "worker": f"local ({platform.node() or 'this machine'})"}

    def close(self) -> None:
        self._channels.clear()
        self.pool.close()


class LocalDocumentChannel(DocumentChannel):
    """A document's replica in one of this machine's worker processes."""

    def __init__(self, backend: LocalBackend, key: str, mode: str):
        super().__init__()
        self.backend, self.key, self.mode = backend, key, mode

    @property
    def client(self) -> WorkerClient:
        return self.backend.pool.worker(self.mode)

    @property
    def where(self) -> str:
        return self.backend.pool.label(self.client)

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
        except SendFailed:
            raise UnknownDocument("the worker ended before the update") from None
        except (WorkerDied, WorkerTimeout) as exc:
            raise ChannelFailure(CRASHED if isinstance(exc, WorkerDied) else TIMED_OUT, str(exc)) from None
        except WorkerError as exc:
            raise ChannelFailure(exc.kind, str(exc)) from None

    def run(self, job: Job, cancel) -> Outcome:
        pool = self.backend.pool
        with pool.lock:
            return pool.document_outcome(self.client, self.key, job, cancel or (lambda: False))

    def apply_batch(self, batch: dict, revision: int) -> dict:
        from kernels.compute.documents import BATCH_REFUSALS, BatchRefused

        try:
            with self.backend.pool.lock:          # one timed thing at a time on the device
                return self.client.batch_document(self.key, batch, revision)
        except SendFailed:
            raise UnknownDocument("the worker ended before the batch") from None
        except (WorkerDied, WorkerTimeout) as exc:
            raise ChannelFailure(CRASHED if isinstance(exc, WorkerDied) else TIMED_OUT, str(exc)) from None
        except WorkerError as exc:
            if exc.kind in BATCH_REFUSALS:
                raise BatchRefused(str(exc)) from None
            raise ChannelFailure(exc.kind, str(exc)) from None

    def close(self) -> None:
        # a worker that cannot answer holds no replica worth closing
        with contextlib.suppress(WorkerDied, WorkerTimeout, WorkerError):
            self.client.close_document(self.key)
