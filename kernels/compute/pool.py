"""The one pool of kernels child processes, used by every backend.

A :class:`WorkerPool` is what runs jobs in one place: this machine (the local backend, which
the command line and the GUI use) or one Dask worker (the worker plugin holds one). It owns

* one **measuring process** per mode (``cuda``: the GPU; ``sim``: the CUDA simulator, which
  also runs CPU variants), ``python -m kernels worker``, started on first use, replaced after a
  crash or a hang (a :class:`~kernels.compute.local.client.WorkerClient` each); jobs are
  serialised on them by :attr:`lock`, so a GPU times one thing at a time;
* the **graphs**, sent to a process once by content (``graph-<fingerprint>``) whatever names the
  callers give them, and again after a restart; with ``graph_limit`` the oldest are forgotten;
* the **Job → Outcome** mapping: a crash, a hang, an error the worker survived become outcomes
  (``crashed``, ``timed out``, the error's class), never exceptions;
* **compiling ahead** (:class:`~kernels.compute.precompile.CompileAhead`) for ``cuda`` batches.

Its processes outlive a sweep: a second sweep or run pays no start-up and no transfer of a
graph it already sent, and finds its compiled kernels in memory or in the disk cache.
"""

from __future__ import annotations

import contextlib
import os
import platform
import threading
import time
from collections.abc import Callable

from kernels.compute.backend import CANCELLED, CRASHED, TIMED_OUT, Job, Outcome
from kernels.compute.local.client import SendFailed, WorkerClient, WorkerDied, WorkerError, WorkerTimeout
from kernels.measure.targets import Target


def mode_of(target: Target | str | None) -> str:
    """The process a target's jobs go to: ``cuda``, or ``sim`` (CPU jobs share the simulator's,
    which never opens a GPU context for them)."""
    target = Target.of(target)
    return str(Target.CUDA if target is not None and target.real_gpu else Target.SIM)


def graph_key(graph) -> str:
    """A graph's name in the processes: its content, so a name reused for another graph is another key."""
    return f"graph-{graph.fingerprint}"


class WorkerPool:
    def __init__(self, env: dict | None = None, *, label: Callable[[WorkerClient], str] | None = None,
                 graph_limit: int | None = None, compile_ahead: int | None = None, device_suffix: str = "",
                 client: WorkerClient | None = None):
        self.env = dict(env or {})
        self._given = client           # a caller's process serves every mode (and is not closed here)
        self.lock = threading.RLock()
        self.graph_limit = graph_limit
        self.device_suffix = device_suffix
        self._label = label
        self._workers: dict[str, WorkerClient] = {}
        self._graphs: dict[str, object] = {}          # a caller's name -> graph
        self._sent: dict[str, list[str]] = {}          # mode -> graph keys in that process, oldest first
        self._compile_ahead = compile_ahead
        self._ahead = None
        self._ahead_lock = threading.Lock()     # one CompileAhead, whichever thread asks first
        self._warming: dict | None = None
        self._warm_lock = threading.Lock()      # not self.lock: a job holds that for its whole run
        self._closed = False

    # ---- processes ---------------------------------------------------------------------------
    def worker(self, target: str | None) -> WorkerClient:
        """The measuring process of ``target``'s mode (started by its first request)."""
        mode = mode_of(target)
        if self._given is not None:
            self._sent.setdefault(mode, [])
            return self._given
        with self.lock:
            client = self._workers.get(mode)
            if client is None:
                client = self._workers[mode] = WorkerClient(target=mode, env=self.env)
                self._sent[mode] = []
            return client

    def workers(self) -> dict[str, WorkerClient]:
        return dict(self._workers) if self._given is None else {"given": self._given}

    def label(self, client: WorkerClient) -> str:
        if self._label is not None:
            return self._label(client)
        return f"local ({platform.node() or 'this machine'}, pid {client.pid or os.getpid()})"

    def prestart(self, target: str | None) -> None:
        """Start ``target``'s measuring process now (it imports numba and opens its device while the
        caller reads its input); returns at once."""
        client = self.worker(target)
        with self.lock:
            client.start()

    def warm(self, target: str | None = "cuda", *, timeout: float = 600.0) -> dict:
        """Start ``target``'s measuring process and, for a real GPU, the compile-ahead processes,
        and wait until they have done their start-up work (imports, CUDA contexts): the measuring
        process first, so that its context is not queued behind theirs. What ``cluster local``
        does before its first sweep. Returns what it took (seconds, per process)."""
        started = time.monotonic()
        # this process unpickles the graphs it is sent (a Dask worker's first scattered graph
        # imported scipy.sparse there: a second of a sweep's start on an H200 host)
        import kernels.graph.csr  # noqa: F401

        client = self.worker(target)
        with self.lock:
            if self._closed:
                raise WorkerDied("the pool was closed while warming")
            measuring = client.warm(timeout=timeout, capture=True)
        report = {"target": str(target), "measuring": measuring, "compile_ahead": 0, "compile_ahead_warmed": 0}
        if (parsed := Target.of(target)) is not None and parsed.real_gpu:
            ahead = self._compile_ahead_pool(warmed=True)
            if ahead is not None:
                ahead.warm(timeout=max(1.0, timeout - (time.monotonic() - started)))
                report.update(compile_ahead=ahead.processes, compile_ahead_warmed=ahead.stats.warmed,
                              compile_ahead_warm_s=round(ahead.stats.warm_s, 3))
        report["seconds"] = round(time.monotonic() - started, 3)
        return report

    def warm_in_background(self, target: str | None = "cuda") -> None:
        """:meth:`warm` in a thread (a Dask worker's event loop must not wait for it);
        :meth:`warm_state` says how it went. Asked again, it warms again (a failed warm is
        retried; processes already warm answer at once), unless a warm is under way. It never
        takes :attr:`lock` in the caller's thread: a running job holds that, and on a Dask worker
        the job's cancel checks need the event loop this is called on."""
        with self._warm_lock:
            if self._warming is not None and self._warming.get("state") == "warming":
                return
            self._warming = {"state": "warming"}

        def work():
            try:
                report = self.warm(target)
            except (WorkerDied, WorkerTimeout, WorkerError) as exc:
                self._warming = {"state": "failed", "message": str(exc)}
            except Exception as exc:  # noqa: BLE001 - a thread's failure must end "warming", in words
                self._warming = {"state": "failed", "message": f"{type(exc).__name__}: {exc}"}
            else:
                self._warming = {"state": "warm", **report}

        threading.Thread(target=work, name="warm-pool", daemon=True).start()

    def warm_state(self) -> dict | None:
        """``None`` (never asked to warm, or restarted since), ``{"state": "warming"}``,
        ``{"state": "warm", ...}`` with :meth:`warm`'s report, or ``{"state": "failed", "message"}``;
        with ``measuring_pid_now``, the pid of the measuring process that serves jobs now."""
        if self._warming is None:
            return None
        state = dict(self._warming)
        measuring = state.get("measuring") or {}
        client = self._workers.get(mode_of(state.get("target"))) if state.get("target") else None
        if measuring and client is not None:
            state["measuring_pid_now"] = client.pid
        return state

    def restart(self) -> None:
        """Stop every process; the next job starts fresh ones (graphs are sent again)."""
        with self.lock:
            self._warming = None
            for client in self._workers.values():
                client.close()
            for sent in self._sent.values():
                sent.clear()

    def close(self) -> None:
        self._closed = True             # a warm under way starts no compile-ahead processes after this
        with self.lock, self._ahead_lock:
            if self._ahead is not None:
                self._ahead.close()
                self._ahead = None
            for client in self._workers.values():
                client.ask_to_quit()
            for client in self._workers.values():
                client.finish_closing()
            self._workers.clear()
            self._sent.clear()

    # ---- graphs -----------------------------------------------------------------------------
    def add_graph(self, key: str, graph) -> None:
        """Name a graph for later jobs (sent to a process once, when a job there needs it)."""
        self._graphs[key] = graph

    def graph(self, key: str):
        return self._graphs.get(key)

    def ensure_graph(self, client: WorkerClient, mode: str, graph) -> str:
        """The graph's key in ``client``, sending it first if that process lacks it; past
        ``graph_limit`` graphs the oldest is forgotten there (the process and the live documents
        it holds live on)."""
        key = graph_key(graph)
        if self._given is not None:
            mode = "given"              # one process for every mode: one list of what it holds
        sent = self._sent.setdefault(mode, [])
        if client.alive and key in sent:
            return key
        if not client.alive:
            sent.clear()
        if self.graph_limit is not None and len(sent) >= self.graph_limit:
            with contextlib.suppress(WorkerDied, WorkerTimeout):   # a dead process: the next request starts one
                client.forget_graph(sent.pop(0))
        client.add_graph(key, graph)
        sent.append(key)
        return key

    # ---- jobs -------------------------------------------------------------------------------
    def run(self, job: Job, cancel: Callable[[], bool] | None = None, graph=None) -> Outcome:
        """Run one job in its mode's measuring process (``graph``, else the one named
        ``job.graph_key``); every failure is an outcome."""
        graph = graph if graph is not None else self._graphs.get(job.graph_key)
        if graph is None:
            raise KeyError(f"no graph named {job.graph_key!r}: add_graph it first")
        cancelled = cancel or (lambda: False)
        with self.lock:
            if cancelled():
                return Outcome(job, failure=CANCELLED, message="cancelled before it ran")
            client = self.worker(job.target)
            ahead = self._ahead if job.real_gpu else None
            claim = ahead.before_run(job) if ahead is not None else None

            def request():
                key = self.ensure_graph(client, mode_of(job.target), graph)
                return client.run(key, job.family, job.variant, job.params, target=job.target, repeat=job.repeat,
                                  warmup=job.warmup, seed=job.seed, want_output=job.want_output,
                                  timeout=job.time_limit, cancel=cancelled, launch=job.launch, energy=job.energy)

            try:
                return self.outcome(client, job, cancelled, request)
            finally:
                if ahead is not None:
                    ahead.after_run(claim)

    def outcome(self, client: WorkerClient, job: Job, cancelled: Callable[[], bool], request) -> Outcome:
        """The outcome of ``request()`` (a run or a document run in ``client``): the record, or
        the failure in words (``crashed``, ``timed out``, ``cancelled``, the error's class)."""
        where = self.label(client)
        try:
            reply = request()
        except SendFailed as exc:
            return Outcome(job, failure=CRASHED, message=str(exc), worker=where)
        except WorkerDied as exc:
            failure = CANCELLED if cancelled() else CRASHED
            return Outcome(job, failure=failure, message=str(exc), worker=where)
        except WorkerTimeout as exc:
            return Outcome(job, failure=TIMED_OUT, message=str(exc), worker=where)
        except WorkerError as exc:
            return Outcome(job, failure=exc.kind, message=str(exc), worker=where)
        record = reply["record"]
        device = record["environment"]["device"].get("name", "")
        if job.real_gpu and self.device_suffix:
            device += self.device_suffix
        return Outcome(job, record=record, output=reply.get("output"), worker=self.label(client), device=device)

    def document_outcome(self, client: WorkerClient, key: str, job: Job, cancelled: Callable[[], bool]) -> Outcome:
        """:meth:`outcome` of a run on the live document ``key`` replicated in ``client``; a process
        that had ended before the request holds no replica: ``UnknownDocument``, so the caller
        sends the document again (the local backend and the Dask worker plugin alike)."""
        def request():
            try:
                return client.run_document(key, job.family, job.variant, job.params, target=job.target,
                                           repeat=job.repeat, warmup=job.warmup, seed=job.seed,
                                           want_output=job.want_output, timeout=job.time_limit,
                                           cancel=cancelled, launch=job.launch)
            except SendFailed as exc:
                raise WorkerError("UnknownDocument", f"the worker ended before the run ({exc})") from None

        return self.outcome(client, job, cancelled, request)

    # ---- compiling ahead ------------------------------------------------------------------------
    def compile_ahead(self, jobs: list[Job]) -> None:
        """Have the next ``cuda`` jobs' kernels compiled by other processes while these run
        (nothing for fewer than two jobs, without a disk cache, or with compiling ahead off)."""
        jobs = [j for j in jobs if j.real_gpu]
        if len(jobs) < 2:
            return
        ahead = self._compile_ahead_pool()
        if ahead is not None:
            ahead.submit(jobs)

    def ahead_stats(self) -> dict | None:
        return None if self._ahead is None else self._ahead.stats.to_json()

    def _compile_ahead_pool(self, warmed: bool = False):
        """The compile-ahead processes (made on first use: by :meth:`warm`, with the GPU's whole
        share of the host's cores, or by a sweep, with the unwarmed cap; see
        :func:`~kernels.compute.precompile.default_processes`)."""
        with self._ahead_lock:
            if self._ahead is None and not self._closed:
                self._ahead = self._new_compile_ahead(warmed)
            return self._ahead

    def _new_compile_ahead(self, warmed: bool):
        from kernels.compute.precompile import CompileAhead, default_processes
        from kernels.cuda.kernel_cache import cache_dir
        from kernels.measure.targets import gpu_count

        root = cache_dir()
        visible = self.env.get("CUDA_VISIBLE_DEVICES", os.environ.get("CUDA_VISIBLE_DEVICES"))
        gpus_here = max(1, gpu_count()) if visible is None else max(1, gpu_count_of_host())
        processes = self._compile_ahead
        if processes is None:
            processes = default_processes(gpus_here, warmed=warmed)
        if root is None or processes <= 0:
            return None
        return CompileAhead(self, processes, root)


def gpu_count_of_host() -> int:
    """GPUs of this host, whatever this process's ``CUDA_VISIBLE_DEVICES`` (a Dask worker sees one)."""
    import subprocess

    try:
        done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
        return max(1, sum(1 for line in done.stdout.splitlines() if line.startswith("GPU ")))
    except (OSError, subprocess.SubprocessError):
        return 1
