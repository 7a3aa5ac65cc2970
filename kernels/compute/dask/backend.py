"""The Dask backend: jobs are Dask tasks on the workers of a cluster.

* Each job is one task (:func:`kernels.compute.dask.tasks.run_job`), which runs the kernel in the
  Dask worker's persistent kernels child process (time limit, crash isolation, simulator per
  child, GPU pinned by ``CUDA_VISIBLE_DEVICES``). A ``cuda`` job asks for the Dask resource
  ``GPU=1``, so a GPU worker runs one timed job at a time.
* A graph is scattered once per backend (Dask key ``graph-kernels-<fingerprint>``, replicated
  to the chosen workers) and the future is passed to every job: each worker receives it once.
* One kind of GPU per batch: the workers are grouped by GPU name and a batch of cuda jobs is
  restricted to the most numerous kind, unless ``mixed_gpus``; a notice says which.
* Outcomes are yielded as tasks finish (``distributed.as_completed``). A worker that dies
  mid-job: Dask runs the job again elsewhere (``distributed.scheduler.allowed-failures``); past
  that the job is a ``worker lost`` failure. If no worker able to run the remaining jobs is left
  for :data:`NO_WORKER_GRACE_S`, they fail with that reason. Cancel sets a Dask ``Event`` the
  running jobs poll (their children are killed) and cancels the pending ones.
* Live documents (:meth:`DaskBackend.run_on_document`): a
  :class:`~kernels.compute.dask.tasks.LiveDocumentActor` on one worker per document (a GPU
  worker of the chosen kind for ``cuda``; the one holding fewest documents), chosen once and
  kept; it forwards to the replica in that worker's kernels child. After the first snapshot only
  page deltas cross the network. If that worker is lost, the next run creates the actor on
  another worker and sends a snapshot, and its ``DocumentSync`` says why.
"""

from __future__ import annotations

import contextlib
import itertools
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator

from kernels.compute.backend import CANCELLED, LOST, BackendLost, ComputeBackend, Job, Outcome, WorkerInfo
from kernels.compute.dask import require_dask
from kernels.compute.dask.connect import connect
from kernels.compute.documents import ChannelFailure, DocumentChannel
from kernels.compute.live import ReplicaOutOfDate, UnknownDocument
from kernels.errors import ClusterError, GraphKernelsError
from kernels.measure.targets import Target, needs_gpu

NO_WORKER_GRACE_S = 60.0      # a Nanny restarts a dead worker within seconds; after this, give up
POLL_S = 0.1
RESUBMIT_TRIES = 3            # submissions of one job the scheduler may drop (a restart) before it is lost
RECONNECT_MARGIN_S = 5.0      # waited beyond the client's own reconnection time before calling it lost
ACTOR_CALL_S = 600.0          # open / update of a live document (a snapshot of a large graph takes a while)
COMPARED_VERSIONS = ("numpy", "numba", "numba-cuda", "gpu-graph-explorer")


def version_problems(worker: dict, client: dict) -> list[str]:
    """Differences that break pickles or results between this client and a worker."""
    out = []
    if worker.get("python", "").rsplit(".", 1)[0] != client.get("python", "").rsplit(".", 1)[0]:
        out.append(f"Python {worker.get('python')} here {client.get('python')}")
    for lib in COMPARED_VERSIONS:
        if worker.get(lib) != client.get(lib):
            out.append(f"{lib} {worker.get(lib) or 'missing'} (here {client.get(lib) or 'missing'})")
    return out


def describe_worker(address: str, sched: dict, probe: dict | None, client_versions: dict) -> WorkerInfo:
    """A :class:`WorkerInfo` from the scheduler's view of the worker and its own probe."""
    probe = probe or {}
    resources = dict(sched.get("resources") or {})
    info = WorkerInfo(address=address, name=str(sched.get("name", "")), host=sched.get("host", ""),
                      pid=probe.get("pid"), nthreads=int(sched.get("nthreads", 1)), resources=resources,
                      gpu=probe.get("gpu"), cpu=probe.get("cpu", ""), versions=probe.get("versions", {}))
    if not probe:
        info.problems.append("it did not answer the probe (kernels not importable there?)")
    elif info.gpu is None:
        info.problems.append("no GPU found (no CUDA driver or device visible to the worker)")
    elif resources.get("GPU", 0) < 1:
        info.problems.append("no GPU resource declared (start it with --resources GPU=1)")
    mismatch = version_problems(info.versions, client_versions) if probe else []
    if mismatch:
        info.problems.append("versions differ from this client: " + ", ".join(mismatch))
    if info.nthreads > 1:
        info.notes.append(f"{info.nthreads} threads: kernels jobs are serialised per worker, other Dask "
                          "work may still share the GPU (use --nthreads 1)")
    if info.gpu is not None and not info.gpu.get("visible_devices"):
        info.notes.append("CUDA_VISIBLE_DEVICES is not set: the worker uses the machine's first GPU")
    return info


def merge_ahead_stats(before: dict, now: dict) -> dict | None:
    """Several workers' compile-ahead counts (``AheadStats.to_json``) for one batch: each worker's
    counts now less those before it, summed; its processes counted as they are now, and the
    slowest start-up kept."""
    total: dict = {}
    for address, stats in now.items():
        if not stats:
            continue
        old = before.get(address) or {}
        for key, value in stats.items():
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                continue
            if key == "warm_s":
                total[key] = max(total.get(key, 0.0), value)
            elif key in ("processes", "warmed"):
                total[key] = total.get(key, 0) + value
            else:
                total[key] = total.get(key, 0) + value - old.get(key, 0)
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in total.items()} or None


class _Batch:
    """The futures of one :meth:`DaskBackend.run_many`: which job each runs, which are pending,
    how often each job was submitted, and the cancel event its running jobs poll."""

    def __init__(self, backend: DaskBackend, plans: dict):
        from distributed import Event

        self.backend, self.plans = backend, plans
        self.name = uuid.uuid4().hex[:12]
        self.event_name = f"graph-kernels-cancel-{self.name}"
        self.event = Event(self.event_name, client=backend.client)
        self.futures: dict = {}
        self.pending: set = set()
        self.tries: Counter = Counter()

    def submit(self, job: Job):
        from kernels.compute.dask.tasks import run_job

        self.tries[id(job)] += 1
        workers = self.plans[job.target]
        graph = self.backend._graph_future(job.graph_key, workers)
        # in the order given (the compile-ahead processes compile in that order), batch after batch:
        # without a priority a worker runs resource-restricted tasks last-submitted first (after
        # the first one)
        future = self.backend.client.submit(
            run_job, graph, job, self.event_name, key=f"graph-kernels-job-{self.name}-{len(self.futures)}",
            workers=workers, allow_other_workers=False, pure=False, priority=-next(self.backend.submitted),
            resources={"GPU": 1} if job.real_gpu else None)
        self.futures[future] = job
        self.pending.add(future)
        return future

    def stop(self) -> None:
        """Stop the running jobs (their children are killed) and cancel the queued ones; a lost
        scheduler has neither to stop."""
        if not self.backend.usable():
            return
        with contextlib.suppress(Exception):
            self.event.set()
            self.backend.client.cancel(list(self.pending))


class DaskBackend(ComputeBackend):
    kind = "dask"

    def __init__(self, address: str | None = None, *, security=None, mixed_gpus: bool = False,
                 connect_timeout: float = 20.0, client=None):
        super().__init__()
        require_dask("connecting to a Dask cluster (--scheduler, cluster ADDRESS)")
        if client is None:
            if not address:
                raise ClusterError("no scheduler address given")
            client = connect(address, security=security, timeout=connect_timeout)
            self._own_client = True
        else:
            self._own_client = False
        self.client = client
        self._address = None
        self.address                    # noqa: B018 (kept: a lost connection forgets it)
        self.connect_timeout = connect_timeout
        self.mixed_gpus = mixed_gpus
        self._graphs: dict = {}
        self._futures: dict = {}
        self._targets: dict = {}
        self._channels: dict = {}       # (document key, target) -> DaskDocumentChannel
        self._ahead_before = None       # (workers, their compile-ahead counts) when the last batch began
        self.submitted = itertools.count()    # jobs handed to Dask: their priorities, first come first run
        from kernels.compute.dask.plugin import KernelsPlugin

        try:
            self.client.register_plugin(KernelsPlugin())
        except Exception as exc:
            self.close()
            raise ClusterError(f"the Dask workers at {self.address} cannot load the kernels plugin: "
                               f"{type(exc).__name__}: {exc} (is gpu-graph-explorer installed there?)") from None

    @property
    def address(self) -> str:
        if self._address is None and self.client.scheduler is not None:
            self._address = self.client.scheduler.address
        return self._address or "the Dask scheduler"

    # ---- what is there ---------------------------------------------------------------------
    def _scheduler_workers(self) -> dict:
        return self.client.scheduler_info(n_workers=-1).get("workers", {})

    def describe(self) -> list[WorkerInfo]:
        from kernels.compute.jobs import worker_info
        from kernels.measure.environment import library_versions

        workers = self._scheduler_workers()
        try:
            probes = self.client.run(worker_info, on_error="return") if workers else {}
        except Exception as exc:
            raise ClusterError(f"could not ask the workers of {self.address}: {type(exc).__name__}: {exc}") from None
        here = library_versions()
        out = []
        for address in sorted(workers):
            probe = probes.get(address)
            out.append(describe_worker(address, workers[address], probe if isinstance(probe, dict) else None, here))
        return out

    def default_target(self, family: str, variant: str) -> str:
        from kernels.algorithms.registry import get_variant

        _, var = get_variant(family, variant)
        if var.kind != "gpu":
            return var.targets[0]
        if (family, variant) not in self._targets:
            able = any(w.can_run_gpu for w in self.describe())
            self._targets[(family, variant)] = str(Target.CUDA if able else Target.SIM)
        return self._targets[(family, variant)]

    def choose_workers(self, target: str | None) -> tuple[list[str] | None, list[str]]:
        """The workers a batch of ``target`` jobs may use (``None``: any) and the notices to show."""
        if not needs_gpu(target):
            return None, []
        workers = self.describe()
        able = [w for w in workers if w.can_run_gpu]
        if not able:
            why = "; ".join(f"{w.address}: {', '.join(w.problems)}" for w in workers) or "no workers connected"
            raise ClusterError(f"no worker of {self.address} can run GPU variants ({why})")
        kinds = Counter(w.gpu["name"] for w in able)
        if len(kinds) == 1 or self.mixed_gpus:
            notice = (f"running on {len(able)} GPU worker(s): "
                      + ", ".join(f"{n} x {k}" for k, n in kinds.most_common()))
            return None, [notice]
        chosen, count = sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        left = ", ".join(f"{n} x {k}" for k, n in kinds.items() if k != chosen)
        notice = (f"running on the {count} {chosen} worker(s) only, so that times are comparable ({left} left "
                  "out; --mixed-gpus uses every GPU)")
        return [w.address for w in able if w.gpu["name"] == chosen], [notice]

    # ---- graphs and jobs ---------------------------------------------------------------------
    def add_graph(self, key: str, graph) -> None:
        self._graphs[key] = graph
        in_use = {g.fingerprint for g in self._graphs.values()}
        for fingerprint in [f for f in self._futures if f not in in_use]:
            self._futures.pop(fingerprint).release()

    def _graph_future(self, key: str, workers: list[str] | None):
        """The scattered graph, keyed by its content fingerprint: re-adding the same graph (or
        naming it twice) reuses the copies the workers have."""
        if key not in self._graphs:
            raise KeyError(f"no graph named {key!r}: add_graph it first")
        graph = self._graphs[key]
        future = self._futures.get(graph.fingerprint)
        if future is None or future.status != "finished":
            dask_key = f"graph-kernels-{graph.fingerprint}"
            future = self.client.scatter({dask_key: graph}, workers=workers, broadcast=True, hash=False)[dask_key]
            self._futures[graph.fingerprint] = future
        return future

    def _alive(self, workers: list[str] | None, needs_gpu: bool) -> bool:
        current = self._scheduler_workers()
        for address, info in current.items():
            if workers is not None and address not in workers:
                continue
            if needs_gpu and (info.get("resources") or {}).get("GPU", 0) < 1:
                continue
            return True
        return False

    def run_many(self, jobs: Iterable[Job], *, cancel: Callable[[], bool] | None = None) -> Iterator[Outcome]:
        from distributed import as_completed

        cancelled = self._cancel_check(cancel)
        jobs = list(jobs)
        self.notices = []
        for job in jobs:
            if job.target is None:
                job.target = self.default_target(job.family, job.variant)
        plans = {}
        for target in sorted({job.target for job in jobs}):
            workers, notices = self.choose_workers(target)
            plans[target] = workers
            self.notices.extend(notices)
        batch = _Batch(self, plans)
        try:
            for job in jobs:
                batch.submit(job)
        except Exception as exc:          # the scheduler went away while the jobs were handed over
            batch.stop()
            raise BackendLost(f"the cluster at {self.address} did not take the jobs: "
                              f"{self._regain_connection() or f'{type(exc).__name__}: {exc}'}") from None
        self._compile_ahead(jobs, plans)
        done = as_completed(list(batch.futures), with_results=False, loop=self.client.loop)
        last_check, alone_since = time.monotonic(), None
        try:
            while batch.pending:
                if cancelled():
                    return
                if not done.has_ready():
                    time.sleep(POLL_S)
                    now = time.monotonic()
                    if now - last_check > 2.0 and self.usable():
                        last_check = now
                        alone_since = self._check_workers(batch.pending, batch.futures, plans, alone_since)
                        if alone_since == "gave up":
                            for future in list(batch.pending):
                                batch.pending.discard(future)
                                yield Outcome(batch.futures[future], failure=LOST, message=(
                                    f"no worker that can run it is left at {self.address} after "
                                    f"{NO_WORKER_GRACE_S:g} s"))
                            return
                    continue
                dropped = []
                for future in done.next_batch(block=False):
                    if future not in batch.pending:
                        continue
                    batch.pending.discard(future)
                    job = batch.futures[future]
                    if future.status == "cancelled" and not cancelled():
                        dropped.append(job)      # not ours: the scheduler or the connection went away
                        continue
                    outcome = self._outcome(future, job)
                    future.release()
                    if outcome.failure == CANCELLED and cancelled():
                        continue
                    yield outcome
                for job in dropped:
                    why = self._resubmit(batch, job, done)
                    if why is not None:
                        yield Outcome(job, failure=LOST, message=why)
        finally:
            if batch.pending:       # cancelled, interrupted (Ctrl-C) or failed: stop the running jobs too
                batch.stop()

    def usable(self) -> bool:
        return self.client.status == "running"

    def parallelism(self, target: str | None) -> int:
        try:
            if needs_gpu(target):
                chosen, _ = self.choose_workers(target)
                return len(chosen) if chosen is not None else sum(w.can_run_gpu for w in self.describe())
            return max(1, len(self._scheduler_workers()))
        except GraphKernelsError:
            return 1

    def fresh_processes(self) -> None:
        from kernels.compute.dask.tasks import restart_pool

        try:
            self.client.run(restart_pool)
        except Exception as exc:
            raise ClusterError(f"could not restart the workers' processes at {self.address}: "
                               f"{type(exc).__name__}: {exc}") from None

    def prestart(self, target: str | None) -> None:
        """Have the workers that will run ``target`` start their measuring processes now."""
        from kernels.compute.dask.tasks import prestart

        try:
            workers = [w.address for w in self.describe() if w.can_run_gpu] if needs_gpu(target) else None
            self.client.run(prestart, target, workers=workers)      # returns at once
        except Exception:  # noqa: BLE001 - an optimisation: the first job starts them anyway
            pass

    def warm(self, target: str = "cuda", timeout: float = 600.0, poll_s: float = 0.25) -> dict:
        """Have every worker that runs ``target`` start its measuring process (and, for a GPU,
        its compile-ahead processes) and do their start-up work (imports, CUDA contexts) now, and
        wait for them (up to ``timeout``): ``{worker address: its pool's warm state}``.
        ``cluster local`` does this before its first sweep, so that no sweep waits for contexts
        the driver creates one at a time."""
        from kernels.compute.dask.tasks import warm, warm_state

        if needs_gpu(target):
            workers = [w.address for w in self.describe() if w.can_run_gpu]
        else:
            try:
                workers = sorted(self._scheduler_workers())
            except Exception as exc:
                raise ClusterError(f"could not ask the scheduler at {self.address}: {type(exc).__name__}: {exc}") \
                    from None
        if not workers:
            return {}
        try:
            self.client.run(warm, target, workers=workers)          # returns at once
            deadline = time.monotonic() + timeout
            while True:
                states = self.client.run(warm_state, workers=workers)
                if all((s or {}).get("state") in ("warm", "failed") for s in states.values()):
                    return states
                if time.monotonic() > deadline:
                    return states
                time.sleep(poll_s)
        except Exception as exc:
            raise ClusterError(f"could not warm the workers at {self.address}: {type(exc).__name__}: {exc}") from None

    def _compile_ahead(self, jobs: list[Job], plans: dict) -> None:
        """Tell the GPU workers the batch's cells, so that their compile-ahead processes compile
        them while the GPUs measure (one queue per host: cells are claimed through the cache's
        folder). A hint: a worker that cannot take it compiles as it goes."""
        from kernels.compute.dask.tasks import ahead_stats, compile_ahead

        cuda_jobs = [j for j in jobs if j.real_gpu]
        if len(cuda_jobs) < 2:
            return
        keys = {j.graph_key: self._futures[self._graphs[j.graph_key].fingerprint].key for j in cuda_jobs}
        workers = plans.get(str(Target.CUDA)) or [w.address for w in self.describe() if w.can_run_gpu]
        try:
            self._ahead_before = (workers, self.client.run(ahead_stats, workers=workers))
            self.client.run(compile_ahead, cuda_jobs, keys, workers=workers)   # returns at once
        except Exception as exc:  # noqa: BLE001 - compiling ahead is an optimisation; the cells run anyway
            self.notices.append(f"compiling ahead was not started on the workers: {type(exc).__name__}: {exc}")

    def compile_ahead_stats(self) -> dict | None:
        """What the GPU workers' compile-ahead processes did for the last batch (their counts now
        less those when it started, summed over the workers), or ``None``."""
        from kernels.compute.dask.tasks import ahead_stats

        if self._ahead_before is None:
            return None
        workers, before = self._ahead_before
        try:
            now = self.client.run(ahead_stats, workers=workers)
        except Exception:  # noqa: BLE001 - a summary: the cells themselves are what the sweep keeps
            return None
        return merge_ahead_stats(before, now)

    def _resubmit(self, batch: _Batch, job: Job, done) -> str | None:
        """Submit a job the scheduler dropped again, once the client is connected: ``None`` when it
        is out again, else why it is lost (the connection did not come back, or it was dropped
        :data:`RESUBMIT_TRIES` times)."""
        while batch.tries[id(job)] < RESUBMIT_TRIES:
            why = self._regain_connection()
            if why is not None:
                return why
            try:
                done.add(batch.submit(job))
                return None
            except Exception:      # the scheduler is going away; the client notices within moments
                time.sleep(0.5)
        return self._regain_connection() or f"the scheduler at {self.address} dropped the job {RESUBMIT_TRIES} times"

    def _regain_connection(self) -> str | None:
        """After the scheduler dropped jobs: ``None`` once the client is connected (again), else why
        not. The Dask client reconnects by itself for its ``timeout`` (``connect_timeout`` here) and
        closes when that passes; this waits for either, a little longer than the client does."""
        deadline = time.monotonic() + self.connect_timeout + RECONNECT_MARGIN_S
        while self.client.status == "connecting" and time.monotonic() < deadline:
            time.sleep(POLL_S)
        if self.client.status == "running":
            return None
        return (f"the connection to the scheduler at {self.address} was lost and not regained within "
                f"{self.connect_timeout:g} s")

    # ---- live documents ----------------------------------------------------------------------
    def _document_channel(self, doc_key: str, job: Job) -> DocumentChannel:
        channel = self._channels.get((doc_key, job.target))
        if channel is None:
            channel = self._channels[(doc_key, job.target)] = DaskDocumentChannel(self, doc_key, job.target)
        return channel

    def close_document(self, doc_key: str) -> None:
        for key in [k for k in self._channels if k[0] == doc_key]:
            self._channels.pop(key).close()

    def document_channels(self, doc_key: str) -> list:
        return [channel for (key, _), channel in self._channels.items() if key == doc_key]

    def worker_for_document(self, target: str | None) -> str:
        """The worker a new document's actor goes to: one that can run ``target`` (a GPU of the
        chosen kind for cuda), holding the fewest documents of this backend."""
        if needs_gpu(target):
            chosen, notices = self.choose_workers(target)
            self.notices = notices
            able = chosen or [w.address for w in self.describe() if w.can_run_gpu]
        else:
            able = sorted(self._scheduler_workers())
        if not able:
            raise ClusterError(f"no worker at {self.address} can hold a live document")
        load = Counter(c.address for c in self._channels.values() if c.actor is not None)
        return min(sorted(able), key=lambda a: load[a])

    def run_command(self, graph, command: list[str], result_option: str, *, target: str | None = None,
                    time_limit: float | None = None) -> dict:
        from kernels.compute.dask.tasks import run_command_job

        workers, self.notices = self.choose_workers(target)
        future = self.client.submit(run_command_job, graph, command, result_option, time_limit, pure=False,
                                    workers=workers, allow_other_workers=False,
                                    resources={"GPU": 1} if needs_gpu(target) else None)
        try:
            return future.result()
        except GraphKernelsError:
            raise
        except Exception as exc:
            from distributed import KilledWorker

            if isinstance(exc, KilledWorker):
                raise ClusterError(f"'{command[0]}' was lost: the Dask worker running it died") from None
            raise ClusterError(f"'{command[0]}' failed on the cluster: {type(exc).__name__}: {exc}") from None
        finally:
            if future.status not in ("finished", "error"):
                future.cancel()
            future.release()

    def _check_workers(self, pending, futures, plans, alone_since):
        targets = {futures[f].target for f in pending}
        if any(self._alive(plans[t], needs_gpu(t)) for t in targets):
            return None
        now = time.monotonic()
        if alone_since is None:
            return now
        return "gave up" if now - alone_since > NO_WORKER_GRACE_S else alone_since

    def _outcome(self, future, job: Job) -> Outcome:
        status = future.status
        if status == "finished":
            try:
                return future.result()
            except Exception as exc:  # the result could not be fetched (its worker died just now)
                return Outcome(job, failure=LOST, message=f"{type(exc).__name__}: {exc}")
        if status == "error":
            exc = future.exception()
            from distributed import KilledWorker

            if isinstance(exc, KilledWorker):
                return Outcome(job, failure=LOST, message=(
                    "the Dask worker running it died, also on the retries (allowed-failures): "
                    f"{str(exc).splitlines()[0] if str(exc) else 'KilledWorker'}"))
            return Outcome(job, failure=type(exc).__name__, message=str(exc).splitlines()[0] if str(exc) else "")
        return Outcome(job, failure=LOST, message=f"the scheduler dropped the job ({status})")

    def close(self) -> None:
        for channel in self._channels.values():
            channel.close()
        self._channels.clear()
        for future in self._futures.values():
            future.release()
        self._futures.clear()
        if self._own_client:
            self.client.close()


class DaskDocumentChannel(DocumentChannel):
    """A document's replica held by a :class:`~kernels.compute.dask.tasks.LiveDocumentActor`."""

    def __init__(self, backend: DaskBackend, key: str, target: str | None):
        super().__init__()
        self.backend, self.key, self.target = backend, key, target
        self.actor = None
        self.future = None
        self.address = ""

    @property
    def where(self) -> str:
        return self.address or "no Dask worker yet"

    def _alive(self) -> bool:
        return (self.actor is not None and self.future.status == "finished"
                and self.address in self.backend._scheduler_workers())

    def _check(self) -> bool:
        """Whether the actor is there; forgets it (and says why) when its worker was lost."""
        if self.actor is not None and not self._alive():
            self.lost_reason = f"the Dask worker {self.address} holding the replica was lost"
            self._drop()
        return self.actor is not None

    def _drop(self) -> None:
        if self.future is not None:
            self.future.release()
        self.actor = self.future = None

    def _create(self) -> None:
        from kernels.compute.dask.tasks import LiveDocumentActor

        address = self.backend.worker_for_document(self.target)
        future = self.backend.client.submit(LiveDocumentActor, self.key, self.target, actor=True, workers=[address],
                                            allow_other_workers=False, pure=False,
                                            key=f"graph-kernels-document-{uuid.uuid4().hex[:12]}")
        try:
            with self.backend.client.as_current():    # the actor proxy finds its client through it
                self.actor = future.result(timeout=ACTOR_CALL_S)
        except Exception as exc:
            future.release()
            raise ChannelFailure(LOST, f"could not place the document on {address}: {type(exc).__name__}: {exc}") \
                from None
        self.future, self.address = future, address

    def _call(self, method: str, *args) -> dict:
        try:
            with self.backend.client.as_current():
                answer = getattr(self.actor, method)(*args).result(timeout=ACTOR_CALL_S)
        except Exception as exc:       # the worker went away, or the call could not reach it
            self.lost_reason = f"the Dask worker {self.address} holding the replica did not answer"
            self._drop()
            raise UnknownDocument(f"{type(exc).__name__}: {exc}") from None
        return answer

    def open(self, arrays: dict, revision: int, name: str | None) -> None:
        if not self._check():
            self._create()
        try:
            answer = self._call("open", arrays, revision, name)
        except UnknownDocument as exc:
            raise ChannelFailure(LOST, str(exc)) from None
        if "error" in answer:
            raise ChannelFailure(answer["error"], answer["message"])

    def _replica_call(self, method: str, *args, refused: dict | None = None):
        """The actor's ``method`` on the replica; its answer's error raised as the channel's
        exceptions (``refused`` maps more error kinds to exception classes)."""
        if not self._check():
            raise UnknownDocument(self.lost_reason or "no actor holds the document")
        answer = self._call(method, *args)
        if "error" in answer:
            kind, message = answer["error"], answer["message"]
            errors = {"UnknownDocument": UnknownDocument, **(refused or {})}
            if kind in errors:
                raise errors[kind](message)
            raise ChannelFailure(kind, message)
        return answer.get("ok")

    def update(self, deltas: list, revision: int) -> None:
        self._replica_call("update", deltas, revision, refused={"ReplicaOutOfDate": ReplicaOutOfDate})

    def apply_batch(self, batch: dict, revision: int) -> dict:
        from kernels.compute.documents import BATCH_REFUSALS, BatchRefused

        return self._replica_call("batch", batch, revision, refused=dict.fromkeys(BATCH_REFUSALS, BatchRefused))

    def run(self, job: Job, cancel) -> Outcome:
        from distributed import Event

        if not self._check():
            return Outcome(job, failure=UnknownDocument.__name__, message=self.lost_reason, worker=self.where)
        event_name = f"graph-kernels-cancel-{uuid.uuid4().hex[:12]}"
        event = Event(event_name, client=self.backend.client)
        with self.backend.client.as_current():
            future = self.actor.run(job, event_name)
        last_check = time.monotonic()
        while not future.done():
            time.sleep(POLL_S)
            if cancel is not None and cancel():
                event.set()
                cancel = None              # the child is stopped; wait for its answer
            if time.monotonic() - last_check > 2.0:
                last_check = time.monotonic()
                if not self._check():
                    return Outcome(job, failure=UnknownDocument.__name__, message=self.lost_reason,
                                   worker=self.address or "")
        try:
            return future.result()
        except Exception as exc:
            self.lost_reason = f"the Dask worker {self.address} holding the replica did not answer"
            self._drop()
            return Outcome(job, failure=UnknownDocument.__name__, message=f"{type(exc).__name__}: {exc}")

    def close(self) -> None:
        if self.actor is not None and self._alive():
            with contextlib.suppress(Exception), self.backend.client.as_current():   # best effort
                self.actor.close().result(timeout=30)
        self._drop()
