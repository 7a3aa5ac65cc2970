"""Compile ahead: while a GPU measures one cell, other processes of the host compile the next
cells' kernels into the disk cache (:mod:`kernels.cuda.kernel_cache`).

A sweep is compile-bound on the inputs users load: 0.1-0.7 s of numba per kernel against
0.02-1 ms of kernel time. The measuring process stays one per GPU, alone in timing it; a
:class:`CompileAhead` of a worker pool keeps ``n`` more kernels child processes (the same
``python -m kernels worker``, on the same GPU: numba compiles for the device it sees) that run
cells up to their compile stage (``compile_variant``) in the order the sweep will run them.

Cells are claimed through files beside the cache (``claims/<cell>.claim``, created exclusively,
then ``.done``), so the compile-ahead processes of every Dask worker of a host share one queue:
each cell is compiled once per host, by whichever process takes it first, the measuring
processes included. Before a measuring process runs a cell (:meth:`CompileAhead.before_run`) it
claims the cell if nobody has (and compiles it itself: the first cells of a sweep are run before
the compile-ahead processes have even started), or waits for the process compiling it (up to
:data:`WAIT_S`); a claim whose process is gone is ignored. The compile-ahead processes run at a
lower priority (``nice`` :data:`NICE`), so the measuring processes get the CPU first.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from kernels.compute.backend import Job
from kernels.compute.local.launch import NICE_ENV

logger = logging.getLogger(__name__)

COMPILE_AHEAD_ENV = "GRAPH_KERNELS_COMPILE_AHEAD"   # processes per pool; 0 switches compiling ahead off
MAX_DEFAULT = 15               # processes a GPU of a warmed pool (its share of the host's cores, at most this)
MAX_UNWARMED = 16              # processes a host, all GPUs together, when a sweep starts them
WAIT_S = 120.0                # the longest a measuring process waits for another's compile of its cell
CLAIM_STALE_S = 600.0         # a claim older than this is ignored (its process hung or was lost)
COMPILE_TIMEOUT_S = 600.0
NICE = 10                     # the compile-ahead processes' niceness (the measuring process keeps 0)


def default_processes(gpus_here: int = 1, *, warmed: bool = False) -> int:
    """``GRAPH_KERNELS_COMPILE_AHEAD``, else this GPU's share of the host's compile-ahead
    processes: the cores less one measuring process per GPU, shared out among the host's GPUs;
    none on a small machine.

    A cold sweep of small kernels is bound by the compiler, so a pool warmed before its sweeps
    (``warmed``: :meth:`kernels.compute.pool.WorkerPool.warm`, what ``cluster local`` does) gets
    the whole share, at most :data:`MAX_DEFAULT` a GPU. Processes started by a sweep itself open
    their CUDA contexts while it runs, and the driver creates contexts one at a time: sixty
    starting together kept a sweep's first cell waiting 17 s on four H100s (and a warmed
    cluster's 2.0 s sweep took 16.3 s unwarmed on four H200s), so then the host's total is
    capped at :data:`MAX_UNWARMED`."""
    raw = os.environ.get(COMPILE_AHEAD_ENV, "").strip()
    if raw:
        try:
            return max(0, int(raw))
        except ValueError:
            logger.warning("%s=%r is not a number of processes: compiling ahead is off", COMPILE_AHEAD_ENV, raw)
            return 0
    cores = os.cpu_count() or 1
    gpus = max(1, gpus_here)
    if cores < 4:
        return 0
    if warmed:
        return max(1, min(MAX_DEFAULT, (cores - gpus) // gpus))
    return max(1, min(MAX_UNWARMED, cores - gpus) // gpus)


def cell_key(job: Job, fingerprint: str) -> str:
    """Names a cell across processes: what it compiles follows from these alone."""
    params = sorted((k, repr(v)) for k, v in (job.params or {}).items())
    text = f"{job.family}\0{job.variant}\0{params}\0{fingerprint}\0{job.seed}\0{job.target}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class Claims:
    """``claims/<cell>.claim`` (created exclusively: who compiles it) and ``<cell>.done``."""

    def __init__(self, root: Path):
        self.root = Path(root) / "claims"
        self.root.mkdir(parents=True, exist_ok=True)

    def claim(self, key: str) -> bool:
        path = self.root / f"{key}.claim"
        if self.done(key):
            return False
        if path.exists():
            if not self._stale(path):
                return False
            with contextlib.suppress(FileNotFoundError):
                path.unlink()             # stale: its process is gone; take it over
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as fh:
            fh.write(f"{os.uname().nodename} {os.getpid()}\n")
        if self.done(key):
            # another process finished the cell between the first look and the create: it marks
            # the cell done before it removes its claim, so a create that succeeded sees the mark
            # now (seen in CI: two pools compiled one cell twice)
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            return False
        return True

    def finish(self, key: str) -> None:
        (self.root / f"{key}.done").touch()
        with contextlib.suppress(FileNotFoundError):
            (self.root / f"{key}.claim").unlink()

    def done(self, key: str) -> bool:
        """Compiled by some process lately (an old mark may be of a cache emptied since)."""
        try:
            return time.time() - (self.root / f"{key}.done").stat().st_mtime < CLAIM_STALE_S
        except OSError:
            return False

    def in_progress(self, key: str) -> bool:
        path = self.root / f"{key}.claim"
        return path.exists() and not self._stale(path)

    @staticmethod
    def _stale(path: Path) -> bool:
        try:
            host, pid = path.read_text().split()
            age = time.time() - path.stat().st_mtime
        except (OSError, ValueError):
            return False                     # being written: not stale
        if age > CLAIM_STALE_S:
            return True
        if host == os.uname().nodename:
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                return True
            except (PermissionError, ValueError):
                return False
        return False


@dataclass
class AheadStats:
    """What compiling ahead did in one pool: cells compiled there, and their time."""

    cells: int = 0
    kernels: int = 0
    compile_s: float = 0.0
    failed: int = 0
    taken_back: int = 0          # cells the measuring process reached while still queued
    waited_s: float = 0.0        # the measuring process's waits for a cell being compiled
    processes: int = 0
    warmed: int = 0              # processes that finished their start-up (imports, CUDA context)
    warm_s: float = 0.0          # the slowest one's start-up, counted from the pool's start
    errors: list = field(default_factory=list)

    def to_json(self) -> dict:
        out = {k: v for k, v in vars(self).items() if k != "errors"}
        out["compile_s"] = round(self.compile_s, 3)
        out["waited_s"] = round(self.waited_s, 3)
        out["warm_s"] = round(self.warm_s, 3)
        return out


class CompileAhead:
    """``processes`` compile-ahead children fed from one queue of cells (see the module)."""

    def __init__(self, pool, processes: int, cache_root: Path):
        self.pool = pool
        self.processes = processes
        self.claims = Claims(cache_root)
        self.queue: deque = deque()
        self.cond = threading.Condition()
        self.stats = AheadStats(processes=processes)
        self._children: list = []
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._settled = 0            # processes whose start-up ended (warmed or failed)
        self._started_at = None

    # ---- the sweep's side --------------------------------------------------------------------
    def submit(self, jobs: list[Job]) -> None:
        """Queue ``jobs`` (cuda cells, in the order they will run); starts the processes on first use."""
        with self.cond:
            for job in jobs:
                self.queue.append(job)
            self.cond.notify_all()
        self._start()

    def warm(self, timeout: float | None = None) -> bool:
        """Start the processes (if not yet) and wait until each has done its start-up work
        (imports, its CUDA context) or failed to, up to ``timeout``; True when all have."""
        self._start()
        with self.cond:
            self.cond.wait_for(lambda: self._settled >= len(self._children) or self._closed, timeout=timeout)
            return self.stats.warmed >= len(self._children)

    def before_run(self, job: Job) -> str | None:
        """The measuring process is about to run ``job``. A cell nobody has taken is claimed for
        the measuring process (it compiles what it needs itself; :meth:`after_run` marks it done),
        and taken off the queue here; a cell another process is compiling is waited for (that
        process started first). Returns the claim to finish after the run, if any."""
        with self.cond:
            if job in self.queue:
                self.queue.remove(job)
                self.stats.taken_back += 1
        key = self._key(job)
        if key is None:
            return None
        if self.claims.claim(key):
            return key
        started = time.monotonic()
        while self.claims.in_progress(key) and not self.claims.done(key) and time.monotonic() - started < WAIT_S:
            time.sleep(0.02)
        self.stats.waited_s += time.monotonic() - started
        return None

    def after_run(self, claim: str | None) -> None:
        if claim is not None:
            self.claims.finish(claim)

    def close(self) -> None:
        with self.cond:
            self._closed = True
            self.queue.clear()
            self.cond.notify_all()
        # all at once: each process tears its CUDA context down on its own (one by one took ~10 s)
        for child in self._children:
            child.ask_to_quit()
        for child in self._children:
            child.finish_closing()
        self._children.clear()

    # ---- the compile-ahead processes ---------------------------------------------------------
    def _start(self) -> None:
        from kernels.compute.local.client import WorkerClient

        with self.cond:              # once, whichever thread comes first (a warm, a sweep's batch)
            if self._threads or self.processes <= 0 or self._closed:
                return
            self._started_at = time.monotonic()
            for i in range(self.processes):
                child = WorkerClient(target="cuda", env={**self.pool.env, NICE_ENV: str(NICE)})
                self._children.append(child)
                thread = threading.Thread(target=self._serve, args=(child,), name=f"compile-ahead-{i}", daemon=True)
                self._threads.append(thread)
                thread.start()

    def _next(self) -> Job | None:
        with self.cond:
            while not self.queue and not self._closed:
                self.cond.wait(timeout=1.0)
            return None if self._closed else self.queue.popleft()

    def _key(self, job: Job) -> str | None:
        graph = self.pool.graph(job.graph_key)
        return None if graph is None else cell_key(job, graph.fingerprint)

    def _serve(self, child) -> None:
        from kernels.compute.local.client import WorkerDied, WorkerError, WorkerTimeout

        try:                         # the start-up first, so that a warmed pool's first cell pays none
            child.warm()
        except (WorkerDied, WorkerTimeout, WorkerError) as exc:
            with self.cond:
                self.stats.errors = [*self.stats.errors[-4:], f"start-up: {exc}"]
        else:
            with self.cond:
                self.stats.warmed += 1
                self.stats.warm_s = max(self.stats.warm_s, time.monotonic() - self._started_at)
        finally:
            with self.cond:
                self._settled += 1
                self.cond.notify_all()
        while True:
            job = self._next()
            if job is None:
                return
            graph = self.pool.graph(job.graph_key)
            key = self._key(job)
            if graph is None or key is None or not self.claims.claim(key):
                continue
            fingerprint_key = f"graph-{graph.fingerprint}"
            try:
                child.add_graph(fingerprint_key, graph)
                summary = child.compile(fingerprint_key, job.family, job.variant, job.params, target="cuda",
                                        seed=job.seed, timeout=COMPILE_TIMEOUT_S)
            except (WorkerDied, WorkerTimeout, WorkerError) as exc:
                # the measuring process meets the same problem and reports it in the cell
                with self.cond:
                    self.stats.failed += 1
                    self.stats.errors = [*self.stats.errors[-4:], str(exc)]
                logger.debug("compile ahead of %s/%s %s: %s", job.family, job.variant, job.params, exc)
            else:
                with self.cond:
                    self.stats.cells += 1
                    self.stats.kernels += int(summary.get("compiled", 0))
                    self.stats.compile_s += float(summary.get("compile_s", 0.0))
            finally:
                self.claims.finish(key)
