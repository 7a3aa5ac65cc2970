"""The compute backend: the one seam for *where* kernels run.

Two implementations, both with this interface:

* ``local`` (:class:`kernels.compute.local_backend.LocalBackend`): the ``python -m kernels worker``
  child process of this machine, one job at a time;
* ``dask`` (:class:`kernels.compute.dask.backend.DaskBackend`): a ``distributed.Client`` connected
  to a Dask scheduler; every Dask worker runs the same child process (one per GPU), so a job
  behaves the same wherever it runs.

A caller names its graphs (``add_graph(key, graph)``), then runs :class:`Job` objects: one with
:meth:`ComputeBackend.run`, many with :meth:`ComputeBackend.run_many`, which yields an
:class:`Outcome` per job *as it finishes* (not in submission order). A failure is an outcome,
not an exception: a crashed, hung or lost job is recorded and the rest go on. Both methods take
a ``cancel`` callable (polled, so a GUI thread can pass its task's flag); :meth:`cancel` does the
same from another thread.

:func:`kernels.compute.backends.open_backend`, above both, picks the implementation: no
scheduler → local, an address → dask. The job types (:class:`Job`, :class:`Outcome`,
:class:`WorkerInfo`) are :mod:`kernels.compute.jobs`', below the seam.

Live documents: :meth:`ComputeBackend.run_on_document` runs a job on the worker's replica of an
edited slotted structure, sending only the page deltas since the replica's revision (see
:mod:`kernels.compute.documents`, which defines ``DocumentSource`` and ``DocumentSync``).
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator

from kernels.compute.jobs import (  # noqa: F401  (the seam's types, defined below it)
    CANCELLED,
    CRASHED,
    LOST,
    TIMED_OUT,
    BackendLost,
    Job,
    JobFailed,
    Outcome,
    WorkerInfo,
)
from kernels.errors import GraphKernelsError

SCHEDULER_ENV = "GRAPH_KERNELS_SCHEDULER"



class ComputeBackend(ABC):
    """Where jobs run. Thread use: one caller thread runs jobs; :meth:`cancel` may come from any."""

    kind: str = "abstract"

    def __init__(self) -> None:
        self._cancel_event = threading.Event()
        self.notices: list[str] = []   # what the backend decided for the caller (e.g. the GPU kind chosen)

    # ---- what is there ---------------------------------------------------------------------
    @abstractmethod
    def describe(self) -> list[WorkerInfo]:
        """The workers (one for the local backend) with their GPUs and library versions."""

    @property
    @abstractmethod
    def address(self) -> str:
        """Where the work runs, in words (``local`` or the scheduler's address)."""

    @abstractmethod
    def default_target(self, family: str, variant: str) -> str:
        """The target a job with ``target=None`` gets: cuda where the workers have GPUs, else sim
        for GPU variants; a CPU variant's own target."""

    # ---- graphs and jobs ---------------------------------------------------------------------
    @abstractmethod
    def add_graph(self, key: str, graph) -> None:
        """Name a graph for later jobs; it is sent to a worker once, when a job there needs it."""

    def run(self, job: Job, cancel: Callable[[], bool] | None = None) -> Outcome:
        """Run one job and wait for its outcome."""
        for outcome in self.run_many([job], cancel=cancel):
            return outcome
        return Outcome(job, failure=CANCELLED, message="cancelled before it ran")

    @abstractmethod
    def run_many(self, jobs: Iterable[Job], *, cancel: Callable[[], bool] | None = None) -> Iterator[Outcome]:
        """Run the jobs (spread over the workers) and yield each outcome as it finishes.

        Stops early when cancelled: jobs that did not finish yield nothing."""

    @abstractmethod
    def run_command(self, graph, command: list[str], result_option: str, *, target: str | None = None,
                    time_limit: float | None = None) -> dict:
        """Run a whole ``graph-kernels`` command on ``graph`` in a child process where the work runs
        (``["dynamic", "--rounds", "3", ...]``; ``result_option`` names the option that writes its
        JSON result) and return ``{"result": ..., "worker": ...}``; a ``cuda`` command holds one
        GPU. Raises :class:`~kernels.compute.command.CommandFailed` or ``ClusterError``."""

    # ---- live documents (kernels.compute.documents) ------------------------------------------
    def run_on_document(self, doc_key: str, source, job: Job, cancel: Callable[[], bool] | None = None):
        """Run ``job`` on this backend's replica of the document ``doc_key``.

        ``source`` is the caller's :class:`~kernels.compute.documents.DocumentSource` (an
        :class:`~kernels.compute.documents.EditJournal`, say). Before the run, the replica gets
        the deltas since its revision (or a snapshot: the first time, after the worker lost it,
        or when the deltas are no longer known); a ``live_pages`` variant (``gpu-slotted``
        BFS/SSSP) then syncs only the dirty pages to the device and runs there. Returns
        ``(Outcome, DocumentSync)``; ``job.graph_key`` is set to ``doc_key``."""
        from kernels.compute.documents import run_on_channel

        job.graph_key = doc_key
        if job.target is None:
            job.target = self.default_target(job.family, job.variant)
        name = getattr(source, "name", None)
        return run_on_channel(self._document_channel(doc_key, job), source, job, self._cancel_check(cancel),
                              name=name)

    def apply_batch_on_document(self, doc_key: str, source, batch: dict, revision: int, target: str | None = None):
        """Apply a batch of edge updates (``insert``, ``delete``, ``reweight``) on the device
        pages of this backend's replica of ``doc_key`` (``target``: ``cuda``, or ``sim`` for the
        simulator; default this backend's GPU default), after sending it what it lacks. The
        replica then holds ``revision``: the caller replays the returned page delta on its
        structure as that revision, or calls :meth:`forget_document_revision`. Returns
        ``(result, DocumentSync)`` (:func:`kernels.compute.documents.apply_batch_on_channel`)."""
        from kernels.compute.documents import apply_batch_on_channel

        job = Job(graph_key=doc_key, family="updates", variant="device",
                  target=target or self.default_target("bfs", "gpu-slotted"))
        return apply_batch_on_channel(self._document_channel(doc_key, job), source, batch, revision,
                                      name=getattr(source, "name", None))

    def document_channels(self, doc_key: str) -> list:
        """This backend's channels to replicas of ``doc_key`` (none without documents)."""
        return []

    def forget_document_revision(self, doc_key: str) -> None:
        """The caller did not keep a batch its replicas of ``doc_key`` took: a snapshot next time."""
        from kernels.compute.documents import forget_revision

        forget_revision(self.document_channels(doc_key))

    def close_document(self, doc_key: str) -> None:  # noqa: B027 (a backend without documents has none)
        """Drop the replicas of ``doc_key`` (the GUI closed its tab)."""

    def _document_channel(self, doc_key: str, job: Job):
        raise GraphKernelsError(f"the {self.kind} backend does not keep live documents")

    def parallelism(self, target: str | None) -> int:
        """How many jobs of ``target`` run at once (a search proposes batches this large)."""
        return 1

    def prestart(self, target: str | None) -> None:  # noqa: B027 (a backend with nothing to start)
        """Start what runs ``target``'s jobs now, while the caller prepares its input (optional)."""

    def fresh_processes(self) -> None:
        """Replace the processes that run jobs by new ones (``--confirm``: a kernel's time depends on
        where its process placed its memory)."""
        raise GraphKernelsError(f"the {self.kind} backend cannot start fresh processes")

    def usable(self) -> bool:
        """Whether jobs can still be sent (a Dask backend whose scheduler was lost for good cannot)."""
        return True

    def cancel(self) -> None:
        """Stop the jobs of the running :meth:`run_many` (from any thread)."""
        self._cancel_event.set()

    def _cancel_check(self, cancel: Callable[[], bool] | None) -> Callable[[], bool]:
        self._cancel_event.clear()
        return lambda: self._cancel_event.is_set() or (cancel is not None and bool(cancel()))

    @abstractmethod
    def close(self) -> None:
        """Release workers and connections."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def scheduler_address(given: str | None = None) -> str | None:
    """The scheduler to use: the option given, else ``GRAPH_KERNELS_SCHEDULER``, else none."""
    value = given if given is not None else os.environ.get(SCHEDULER_ENV, "")
    value = value.strip()
    return value or None
