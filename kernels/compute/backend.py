"""The compute backend: the one seam for *where* kernels run.

Two implementations, both with this interface:

* ``local`` (:class:`kernels.compute.local.backend.LocalBackend`): the ``python -m kernels worker``
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

:func:`open_backend` picks the implementation: no scheduler → local, an address → dask.

Live documents: :meth:`ComputeBackend.run_on_document` runs a job on the worker's replica of an
edited slotted structure, sending only the page deltas since the replica's revision (see
:mod:`kernels.compute.documents`, which defines ``DocumentSource`` and ``DocumentSync``).
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from kernels.errors import GraphKernelsError

SCHEDULER_ENV = "GRAPH_KERNELS_SCHEDULER"

# Outcome.failure values besides an error class name ("ParameterError", "KernelFailure", ...)
CRASHED = "crashed"        # the kernels child process died (a kernel fault, an outside kill)
TIMED_OUT = "timed out"    # no answer within the time limit: the child was killed and restarted
LOST = "worker lost"       # infrastructure, not the kernel: a Dask worker died with the job on it more often
                           # than Dask retries, the scheduler or the connection to it was lost, the scheduler
                           # dropped the job; a sweep records such a cell as "lost" and --resume runs it again
CANCELLED = "cancelled"


@dataclass
class Job:
    """One timed, verified run of ``family/variant`` on the graph named ``graph_key``."""

    graph_key: str
    family: str
    variant: str
    params: dict = field(default_factory=dict)
    target: str | None = None
    repeat: int = 5
    warmup: int = 1
    seed: int = 0
    want_output: bool = False
    launch: str = "auto"       # launch mode of the timed launches: auto, graph, direct or queued
    energy: bool = False       # also NVML's energy per launch (kernels.measure.energy)
    time_limit: float | None = 300.0
    tag: Any = None            # the caller's name for the job (a sweep: the cell's grid position)


@dataclass
class Outcome:
    """What became of a :class:`Job`: a record (and output), or a failure with its reason.

    ``worker`` and ``device`` say where it ran (``"local"`` and the device name locally; the
    Dask worker's address and its GPU on a cluster)."""

    job: Job
    record: dict | None = None
    output: Any = None
    failure: str | None = None
    message: str = ""
    worker: str = ""
    device: str = ""

    @property
    def ok(self) -> bool:
        return self.record is not None

    @property
    def lost(self) -> bool:
        """Whether the job was lost to the infrastructure (it may succeed when run again)."""
        return self.failure == LOST

    @property
    def reason(self) -> str:
        return f"{self.failure}: {self.message}" if self.failure else ""

    def raise_if_failed(self) -> None:
        if self.failure is not None:
            raise JobFailed(self)


class JobFailed(GraphKernelsError):
    """A single run (``graph-kernels run --scheduler``) did not produce a record."""

    def __init__(self, outcome: Outcome):
        self.outcome = outcome
        where = f" on {outcome.worker}" if outcome.worker else ""
        super().__init__(f"{outcome.job.family}/{outcome.job.variant}{where}: {outcome.reason}")


class BackendLost(GraphKernelsError):
    """The backend went away while jobs were out (a cluster's scheduler, or the connection to it):
    the jobs without an outcome are lost, not failed."""


@dataclass
class WorkerInfo:
    """One worker as :meth:`ComputeBackend.describe` reports it.

    ``gpu`` is ``None`` without a GPU, else ``{name, memory_bytes, compute_capability, driver,
    index, visible_devices}``; ``problems`` say why the worker cannot run GPU variants (empty
    when it can); ``notes`` are remarks that do not stop it."""

    address: str
    name: str = ""
    host: str = ""
    pid: int | None = None
    nthreads: int = 1
    resources: dict = field(default_factory=dict)
    gpu: dict | None = None
    cpu: str = ""
    versions: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def can_run_gpu(self) -> bool:
        return self.gpu is not None and not self.problems

    def device_kind(self, target: str) -> str:
        """The device a job of ``target`` runs on here: the GPU's name, or the CPU's."""
        if target == "cuda":
            return self.gpu["name"] if self.gpu else "no GPU"
        return f"{self.cpu} (CUDA simulator)" if target == "sim" else self.cpu

    def to_json(self) -> dict:
        return asdict(self)


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


def open_backend(scheduler: str | None = None, *, security=None, mixed_gpus: bool = False,
                 env: dict | None = None, connect_timeout: float = 20.0, worker_client=None) -> ComputeBackend:
    """A local backend without a scheduler address, else a Dask backend connected to it.

    ``security`` is a ``distributed.Security`` (see :func:`kernels.compute.dask.connect.make_security`);
    ``mixed_gpus`` lets one sweep use GPUs of different kinds; ``env`` and ``worker_client``
    configure the local worker process."""
    if scheduler is None:
        from kernels.compute.local.backend import LocalBackend

        return LocalBackend(env=env, client=worker_client)
    from kernels.compute.dask.backend import DaskBackend

    return DaskBackend(scheduler, security=security, mixed_gpus=mixed_gpus, connect_timeout=connect_timeout)
