"""The compute client: the GUI's only way to run kernels.

A :class:`ComputeClient` (one per main window, found with :meth:`ComputeClient.for_window`)
runs one job at a time in a thread, so the GUI thread never waits for a kernel, always through
a compute backend: this machine's :class:`~kernels.compute.local_backend.LocalBackend` (whose
worker pool, :class:`~kernels.compute.pool.WorkerPool`, owns the worker processes: one for the
real GPU, one for the simulator and CPU variants, each started on first use, and the
compile-ahead processes of GPU sweeps), or the connected cluster's. The user's graphs live in
the GUI process; a worker holds copies, sent again after a restart.

When a worker dies during a job (a kernel fault, an outside kill) or hangs past the time
limit, the job fails with a message that says so, a fresh worker is started and the next
job runs normally. Cancel kills the worker running a single job (a kernel cannot be
interrupted any other way); a sweep stops after killing its current cell and keeps the cells
that finished.
"""

from __future__ import annotations

import signal

from PySide6.QtCore import QObject, Signal

from explorer.compute.cluster import ClusterConnection
from explorer.compute.task import ComputeTask, JobCancelled, JobControl, JobFailed
from explorer.model.requests import RunRequest, SweepRequest
from kernels.compute.local.client import WorkerClient, WorkerDied, WorkerTimeout
from kernels.compute.local_backend import LocalBackend
from kernels.compute.pool import mode_of
from kernels.compute.resume import ResumeRefused
from kernels.errors import GraphKernelsError
from kernels.measure.targets import Target

START_TIMEOUT_S = 120.0          # a cold worker imports numba and the families: seconds, not minutes


def describe_exit(text: str) -> str:
    """``exit status -9`` → ``killed by signal 9 (SIGKILL)``: words a user can act on."""
    import re

    m = re.search(r"exit status (-?\d+)", text)
    if not m:
        return ""
    code = int(m.group(1))
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by signal {-code} ({name})"
    return f"exit status {code}"


def _file_arguments(request: SweepRequest) -> dict:
    """run_sweep's ``out``, ``resume`` and ``strategy`` for the request: each finished cell is
    appended to the sweep file at once (a killed GUI or job keeps them)."""
    if not request.out:
        return {}
    return {"out": request.out, "resume": request.resume, "strategy": request.strategy()}


def _refused(request: SweepRequest, exc: ResumeRefused) -> str:
    return f"{request.title} not started, {exc}; the file is unchanged"


class ComputeClient(QObject):
    """Runs :class:`RunRequest` and :class:`SweepRequest` jobs, one at a time, off the GUI thread."""

    taskStarted = Signal(object)        # ComputeTask
    taskDone = Signal(object)
    busyChanged = Signal(bool)
    workerRestarted = Signal(str)       # what happened, in words

    OBJECT_NAME = "computeClient"

    @classmethod
    def for_window(cls, window) -> ComputeClient:
        """The window's client, created on first use (the Run and Results docks share it)."""
        client = window.findChild(cls, cls.OBJECT_NAME)
        if client is None:
            client = cls(window)
        return client

    def __init__(self, parent=None, *, env: dict | None = None):
        super().__init__(parent)
        self.setObjectName(self.OBJECT_NAME)
        self.env = dict(env or {})
        self.local = LocalBackend(env=self.env)     # this machine: its worker pool outlives every job
        self.current: ComputeTask | None = None
        self._finished_tasks: list[ComputeTask] = []
        self.restarts = 0
        self.cluster = ClusterConnection(self)      # jobs whose target is on_cluster go there

    # ---- workers ---------------------------------------------------------------------------
    def _worker(self, target: str) -> WorkerClient:
        return self.local.pool.worker(target)

    def worker_pids(self) -> list[int]:
        """The process ids of this machine's worker processes that are running."""
        return [c.pid for c in self.local.pool.workers().values() if c.alive and c.pid]

    def worker_pid(self, target: str | None = None) -> int | None:
        """The process id of the worker serving ``target`` (or of the running job's worker)."""
        if target is None and self.current is not None and self.current.worker_pid is not None:
            return self.current.worker_pid
        client = self.local.pool.workers().get(mode_of(target))
        return client.pid if client is not None and client.alive else None

    def restart_workers(self) -> None:
        """Stop every idle worker; the next job starts a fresh one (graphs are sent again)."""
        if self.busy:
            raise GraphKernelsError("a job is running: cancel it first")
        self.local.pool.restart()

    # ---- jobs -----------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self.current is not None and self.current.running

    def submit_run(self, request: RunRequest) -> ComputeTask:
        return self._start(ComputeTask("run", request, lambda control: self._run_job(request, control)))

    def submit_batch(self, request) -> ComputeTask:
        """A :class:`~explorer.model.requests.BatchRequest`: edge updates applied on the device
        pages of the document's replica (where its GPU runs run); the result holds the page delta
        the document replays."""
        return self._start(ComputeTask("batch", request, lambda control: self._batch_job(request, control)))

    def forget_document_revision(self, live_key: str) -> None:
        """The document did not keep a batch its replicas may have taken (cancelled, or dropped):
        each replica, here and on a connected cluster, gets a snapshot before its next run."""
        self.local.forget_document_revision(live_key)
        if self.cluster.backend is not None:
            self.cluster.backend.forget_document_revision(live_key)

    def submit_sweep(self, request: SweepRequest) -> ComputeTask:
        return self._start(ComputeTask("sweep", request, lambda control: self._sweep_job(request, control)))

    def cancel(self) -> None:
        if self.current is not None and self.current.running:
            self.current.cancel()

    def _start(self, task: ComputeTask) -> ComputeTask:
        if self.busy:
            raise GraphKernelsError(f"{self.current.title} is still running: wait for it or cancel it")
        self.current = task
        task.workerReplaced.connect(self._on_worker_replaced)
        task.done.connect(lambda t=task: self._on_done(t))
        task.start()
        self.taskStarted.emit(task)
        self.busyChanged.emit(True)
        return task

    def _on_done(self, task: ComputeTask) -> None:
        task.wait(5)          # the thread has emitted its last signal: let it end
        self._finished_tasks = [t for t in self._finished_tasks if t.thread_running()]
        if task.thread_running():
            self._finished_tasks.append(task)
        self.taskDone.emit(task)
        task.release_graph()
        if task is self.current:
            self.busyChanged.emit(False)

    def _on_worker_replaced(self, message: str) -> None:
        self.restarts += 1
        self.workerRestarted.emit(message)

    def shutdown(self, timeout_s: float = 15.0) -> None:
        """Cancel the running job, wait for its thread, stop the workers (window closing)."""
        task = self.current
        if task is not None:
            task.cancel()
            task.wait(timeout_s)
        for t in self._finished_tasks:
            t.wait(timeout_s)
        self.local.close()
        self.cluster.disconnect()

    # ---- in the job thread -------------------------------------------------------------------
    def _start_worker(self, client: WorkerClient, control: JobControl) -> None:
        """Start (or check) the worker and tell the GUI its pid before the job is sent."""
        fresh = not client.alive
        if fresh:
            control.progress(None, "starting the worker process")
        try:
            client.ping(timeout=START_TIMEOUT_S)
        except (WorkerDied, WorkerTimeout) as exc:
            client.kill()
            raise JobFailed(f"the worker process could not be started: {exc}") from None
        control.worker_started(client.pid)

    def _replace_worker(self, client: WorkerClient, control: JobControl, what: str, exc: Exception,
                        timed_out: bool) -> JobFailed:
        client.kill()
        try:
            client.start()
            fresh = f"a fresh worker (pid {client.pid}) was started"
        except OSError as start_exc:
            fresh = f"a fresh worker could not be started ({start_exc}); the next run tries again"
        if timed_out and getattr(exc, "started", True):
            limit = getattr(exc, "limit_s", None)
            after = f"after {limit:g} s, " if limit is not None else ""
            message = (f"{what} was stopped {after}the time limit set in the Run dock; {fresh}, "
                       "your graphs and edits are safe.")
        elif timed_out:
            message = f"{what} did not start: {exc}; {fresh}, your graphs and edits are safe."
        else:
            how = describe_exit(str(exc))
            cause = f"died ({how})" if how else f"died ({exc})"
            message = (f"The worker process {cause} while running {what}: a kernel fault or an outside kill. "
                       f"{fresh[0].upper() + fresh[1:]}; your graphs and edits are safe.")
        control.worker_replaced(message)
        return JobFailed(message, worker_replaced=True)

    def _cluster_backend(self):
        backend = self.cluster.backend
        if backend is None:
            raise JobFailed("not connected to a cluster: use Compute ▸ Connect to Cluster… first")
        return backend

    def _run_on_cluster(self, request: RunRequest, target: Target, control: JobControl) -> dict:
        from kernels.compute.backend import Job

        backend = self._cluster_backend()
        backend.add_graph(request.graph_key, request.graph)      # sent once to a worker that needs it
        control.progress(None, f"running {request.title} on {request.graph_name} on the cluster "
                               f"({backend.address}, {target.local()})")
        job = Job(graph_key=request.graph_key, family=request.family, variant=request.variant,
                  params=dict(request.params), target=str(target.local()), repeat=request.repeat, warmup=request.warmup,
                  time_limit=request.time_limit, launch=request.launch)
        outcome = backend.run(job, cancel=control.cancelled)
        if control.cancelled():
            raise JobCancelled()
        if not outcome.ok:
            where = f" on {outcome.worker}" if outcome.worker else ""
            raise JobFailed(f"{request.title} failed{where}: {outcome.reason}")
        record = dict(outcome.record)
        record["worker"] = {"address": outcome.worker, "device": outcome.device, "cluster": backend.address}
        control.progress(1.0, f"{request.title} finished on {outcome.worker}")
        return {"record": record}

    def _document_backend(self, target: Target, control: JobControl):
        """(backend, where in words) keeping the documents' replicas for ``target``: the cluster's,
        or this machine's (its worker for the target started first)."""
        if target.on_cluster:
            backend = self._cluster_backend()
            return backend, f"the cluster ({backend.address})"
        self._start_worker(self._worker(str(target)), control)
        return self.local, str(target)

    def _run_on_live_pages(self, request: RunRequest, target: Target, control: JobControl) -> dict:
        """Bring the worker's replica of the document up to date (deltas, or a snapshot), then run
        on its pages: only the pages written since the last run cross to the device."""
        from kernels.compute.backend import Job

        backend, place = self._document_backend(target, control)
        source = request.live_source
        control.progress(None, f"syncing {request.graph_name}'s pages and running {request.title} on {place}")
        job = Job(graph_key=request.live_key, family=request.family, variant=request.variant,
                  params=dict(request.params), target=str(target.local()), repeat=request.repeat, warmup=request.warmup,
                  time_limit=request.time_limit, launch=request.launch)
        outcome, sync = backend.run_on_document(request.live_key, source, job, cancel=control.cancelled)
        if control.cancelled():
            raise JobCancelled()
        self._raise_if_failed(outcome, request, target, control)
        record = dict(outcome.record)
        if target.on_cluster:
            record["worker"] = {"address": outcome.worker, "device": outcome.device, "cluster": backend.address}
        control.progress(1.0, f"{request.title} finished; {sync.summary()}")
        return {"record": record, "sync": sync.to_json(), "sync_summary": sync.summary(),
                "revision": sync.revision, "live_key": request.live_key}

    def _batch_job(self, request, control: JobControl) -> dict:
        from kernels.compute.documents import BatchRefused, ChannelFailure

        target = Target.parse(request.target)
        backend, place = self._document_backend(target, control)
        control.progress(None, f"preparing a batch for {request.document_name}")
        try:
            batch, text = request.draw()
        except GraphKernelsError as exc:
            raise JobFailed(f"the batch could not be made: {exc}") from None
        control.progress(None, f"applying {text} on {request.document_name}'s device pages on {place}")
        try:
            result, sync = backend.apply_batch_on_document(request.live_key, request.live_source, batch,
                                                           request.revision, target=str(target.local()))
        except BatchRefused as exc:
            raise JobFailed(f"batch refused: {exc}") from None
        except ChannelFailure as exc:
            raise JobFailed(f"the batch did not reach the device pages ({exc.failure}): {exc}") from None
        except GraphKernelsError as exc:
            raise JobFailed(f"the batch failed: {exc}") from None
        control.progress(1.0, f"{text} applied on the device; {sync.summary()}")
        return {"result": result, "text": text, "sync": sync.to_json(), "sync_summary": sync.summary(),
                "revision": request.revision, "live_key": request.live_key}

    def _run_job(self, request: RunRequest, control: JobControl) -> dict:
        target = Target.parse(request.target)
        if request.on_live_pages:
            return self._run_on_live_pages(request, target, control)
        if target.on_cluster:
            return self._run_on_cluster(request, target, control)
        from kernels.compute.backend import CANCELLED, Job

        self._start_worker(self._worker(str(target)), control)
        backend = self.local                           # the same seam as the command line and the cluster
        backend.add_graph(request.graph_slot, request.graph)    # one copy per graph content in the worker
        control.progress(None, f"running {request.title} on {request.graph_name} on {target}")
        job = Job(graph_key=request.graph_slot, family=request.family, variant=request.variant,
                  params=dict(request.params), target=str(target), repeat=request.repeat, warmup=request.warmup,
                  time_limit=request.time_limit, launch=request.launch)
        outcome = backend.run(job, cancel=control.cancelled)
        if outcome.failure == CANCELLED or control.cancelled():
            raise JobCancelled()
        self._raise_if_failed(outcome, request, target, control)
        control.progress(1.0, f"{request.title} finished")
        return {"record": outcome.record}

    def _raise_if_failed(self, outcome, request: RunRequest, target: Target, control: JobControl) -> None:
        """A failed outcome as the user reads it; a crashed or hung local worker is replaced first."""
        if outcome.ok:
            return
        if not target.on_cluster and outcome.failure in ("crashed", "timed out"):
            timed_out = outcome.failure == "timed out"
            exc = (WorkerTimeout(outcome.message, limit_s=request.time_limit) if timed_out
                   else WorkerDied(outcome.message))
            raise self._replace_worker(self._worker(str(target)), control, request.title, exc, timed_out=timed_out)
        raise JobFailed(f"{request.title} did not run: {outcome.message or outcome.reason}")

    def _sweep_on_cluster(self, request: SweepRequest, target: Target, control: JobControl) -> dict:
        return self._run_sweep(request, str(target.local()), control,
                               f"{request.title} on {request.graph_name} on the cluster",
                               backend=self._cluster_backend())

    def _sweep_job(self, request: SweepRequest, control: JobControl) -> dict:
        target = Target.parse(request.target)
        if target.on_cluster:
            return self._sweep_on_cluster(request, target, control)
        client = self._worker(request.target)
        self._start_worker(client, control)
        pid = [client.pid]

        def note_restart() -> None:
            if client.pid != pid[0]:           # a crashed or hung cell: the sweep restarted the worker
                pid[0] = client.pid
                control.worker_started(client.pid)

        return self._run_sweep(request, request.target, control, request.title, on_cell=note_restart,
                               backend=self.local)

    def _run_sweep(self, request: SweepRequest, target: str, control: JobControl, label: str, *,
                   on_cell=None, **where) -> dict:
        """The sweep through ``where`` (a local ``client`` or a cluster ``backend``): cells and
        progress to the GUI as they finish, refusals and cancels in words."""
        from kernels.compute.sweep import run_sweep

        control.progress(0.0, f"{label}: 0 of {request.total_cells} configurations")

        def progress(done: int, total: int, cell: dict) -> None:
            control.cell(cell)
            control.progress(done / max(total, 1), f"{label}: {done} of {total} configurations")
            if on_cell is not None:
                on_cell()

        try:
            sweep = run_sweep(request.graph, request.family, request.variant, request.grid, fixed=request.fixed,
                              target=target, repeat=request.repeat, warmup=request.warmup, launch=request.launch,
                              time_limit=request.time_limit, progress=progress, cancel=control.cancelled,
                              **where, **_file_arguments(request))
        except ResumeRefused as exc:
            raise JobFailed(_refused(request, exc)) from None
        except GraphKernelsError as exc:
            raise JobFailed(f"{request.title} did not start: {exc}") from None
        if sweep.get("cancelled") or control.cancelled():
            sweep["cancelled"] = True
            raise JobCancelled(sweep)
        return sweep

