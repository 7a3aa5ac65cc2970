"""The client side of the worker process: start it, send jobs, wait with a time limit,
and restart it when it dies or hangs. Used by sweeps and by the GUI's compute client.

The caller's graphs are remembered here, so that after a restart they are sent again
before the next job: nothing the user made lives only in the worker.
"""

from __future__ import annotations

import contextlib
import itertools
import queue
import subprocess
import threading
import time

from kernels.compute.local.launch import neutral_directory, worker_command, worker_environment
from kernels.compute.local.protocol import ProtocolError, read_frame, write_frame
from kernels.errors import GraphKernelsError

# a fresh worker imports numba and the families; a job is only timed once it has started
START_TIMEOUT_S = 300.0


class WorkerDied(GraphKernelsError):
    """The worker process ended (crash, kill) before answering."""


class SendFailed(WorkerDied):
    """The pipe was closed when we wrote: the worker had died before this request."""


class WorkerTimeout(GraphKernelsError):
    """The worker did not answer within the time limit; it has been killed."""

    def __init__(self, message: str, *, limit_s: float | None = None, started: bool = True):
        super().__init__(message)
        self.limit_s = limit_s
        self.started = started


class WorkerError(GraphKernelsError):
    """The worker answered with an error (bad parameters, a kernel fault it survived...)."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)


class WorkerClient:
    def __init__(self, target: str | None = None, env: dict | None = None):
        self.target = target
        self.extra_env = dict(env or {})
        self._proc: subprocess.Popen | None = None
        self._replies: queue.Queue = queue.Queue()
        self._graphs: dict = {}
        self._loaded: set = set()
        self._prepared: set = set()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.restarts = 0
        self.deaths: list = []  # exit codes of workers that died between requests

    # ---- process management ------------------------------------------------------------
    def start(self) -> None:
        if self.alive:
            return
        if self._proc is not None:  # it died since the last request: note it, then replace it
            self.deaths.append(self._proc.poll())
            self.restarts += 1
            self.kill()
        # a neutral directory and import path: no module of the caller's folder runs there (launch.py)
        self._proc = subprocess.Popen(worker_command(self.target), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=None, env=worker_environment(self.target, self.extra_env),
                                      cwd=neutral_directory(), bufsize=0)
        self._replies = queue.Queue()
        self._loaded = set()
        self._prepared = set()
        threading.Thread(target=self._read_loop, args=(self._proc, self._replies), daemon=True).start()

    @staticmethod
    def _read_loop(proc, replies) -> None:
        try:
            while True:
                replies.put(read_frame(proc.stdout))
        except (ProtocolError, OSError, ValueError):
            replies.put(None)  # the process is gone

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def kill(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            for stream in (self._proc.stdin, self._proc.stdout):
                with contextlib.suppress(OSError):
                    stream.close()
        self._proc = None
        self._loaded = set()
        self._prepared = set()

    def restart(self) -> None:
        self.kill()
        self.restarts += 1
        self.start()

    def close(self) -> None:
        self.ask_to_quit()
        self.finish_closing()

    def ask_to_quit(self) -> None:
        """Tell the process to end, without waiting (closing many at once: each ends on its own)."""
        if self.alive:
            with contextlib.suppress(OSError, BrokenPipeError):
                write_frame(self._proc.stdin, {"op": "quit"})

    def finish_closing(self, timeout: float = 5.0) -> None:
        """Wait (up to ``timeout``) for the process asked to quit, then make sure it is gone."""
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=timeout)
        self.kill()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- requests -----------------------------------------------------------------------
    def request(self, message: dict, timeout: float | None = None, cancel=None,
                start_timeout: float | None = None) -> dict:
        """Send one request and wait for its reply; kill the worker on timeout or cancel.

        With ``start_timeout``, ``timeout`` counts from the worker's "started" progress frame
        (sent when the job begins), and until then ``start_timeout`` applies: a time limit set
        for a run is not spent on a busy machine's scheduling or on reading the request."""
        with self._lock:
            self.start()
            try:
                write_frame(self._proc.stdin, message)
            except (BrokenPipeError, OSError):
                self.deaths.append(self._proc.wait())
                self.restarts += 1
                self.kill()
                raise SendFailed("the worker process ended before the request could be sent") from None
            limit = start_timeout if (start_timeout is not None and timeout is not None) else timeout
            deadline = None if limit is None else time.monotonic() + limit
            while True:
                wait = 0.1 if deadline is None else max(0.0, min(0.1, deadline - time.monotonic()))
                try:
                    reply = self._replies.get(timeout=wait)
                except queue.Empty:
                    if cancel is not None and cancel():
                        self.kill()
                        raise WorkerDied("cancelled: the worker was stopped") from None
                    if deadline is not None and time.monotonic() >= deadline:
                        self.kill()
                        if limit is not timeout:
                            raise WorkerTimeout(f"the job did not start within {limit:g} s: the worker was "
                                                "stopped", limit_s=limit, started=False) from None
                        raise WorkerTimeout(f"stopped after {timeout:g} s, the time limit", limit_s=timeout) from None
                    continue
                if reply is None:
                    code = self._proc.wait() if self._proc else None
                    self.kill()
                    raise WorkerDied(f"the worker process died (exit status {code}) while running the job")
                if reply.get("op") == "progress":
                    if reply.get("stage") == "started" and limit is not timeout:
                        limit = timeout
                        deadline = time.monotonic() + timeout
                    continue
                if reply.get("op") == "error":
                    raise WorkerError(reply.get("kind", "Error"), reply.get("message", "unknown error"))
                return reply

    def ping(self, timeout: float = 120) -> dict:
        return self.request({"op": "ping"}, timeout=timeout)

    def warm(self, timeout: float = START_TIMEOUT_S, *, capture: bool = False) -> dict:
        """Start the process and have it do its start-up work now (imports; a GPU's context, a
        first compile and, with ``capture``, a first CUDA graph capture):
        ``{"pid", "import_s", "context_s", "first_compile_s"}``."""
        reply = self.request({"op": "warm", "target": self.target, "capture": capture}, timeout=timeout)
        return {k: reply[k] for k in ("pid", "import_s", "context_s", "first_compile_s", "no_capture") if k in reply}

    def _ensure_prepared(self, family: str, variant: str, target: str | None, timeout) -> None:
        """Have the worker import the variant's family (and gather the environment a record carries)
        before the timed request, once per process."""
        if (family, variant, target) not in self._prepared:
            self.request({"op": "prepare", "family": family, "variant": variant, "target": target},
                         timeout=timeout)
            self._prepared.add((family, variant, target))

    def add_graph(self, key: str, graph) -> None:
        """Remember a graph; it is (re)sent to the worker before a job needs it."""
        self._graphs[key] = graph
        self._loaded.discard(key)

    def _ensure_loaded(self, key: str, timeout) -> None:
        self.start()
        if key not in self._loaded:
            self.request({"op": "load", "key": key, "graph": self._graphs[key]}, timeout=timeout)
            self._loaded.add(key)

    def run(self, key: str, family: str, variant: str, params: dict | None = None, *,
            target: str | None = None, repeat: int = 5, warmup: int = 1, seed: int = 0,
            want_output: bool = False, timeout: float | None = None, cancel=None, launch: str = "auto",
            energy: bool = False) -> dict:
        msg = {"op": "run", "id": next(self._ids), "key": key, "family": family, "variant": variant,
               "params": params or {}, "target": target, "repeat": repeat, "warmup": warmup,
               "seed": seed, "want_output": want_output, "launch": launch, "energy": energy}
        setup_timeout = max(timeout or 0, START_TIMEOUT_S)
        for attempt in (1, 2):
            try:
                self._ensure_loaded(key, timeout=setup_timeout)
                self._ensure_prepared(family, variant, target, timeout=setup_timeout)
                return self.request(msg, timeout=timeout, cancel=cancel, start_timeout=setup_timeout)
            except SendFailed:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def compile(self, key: str, family: str, variant: str, params: dict | None = None, *, target: str = "cuda",
                seed: int = 0, timeout: float | None = None) -> dict:
        """Compile a cell's kernels into the disk cache, running nothing (``compile_variant``)."""
        msg = {"op": "compile", "id": next(self._ids), "key": key, "family": family, "variant": variant,
               "params": params or {}, "target": target, "seed": seed}
        self._ensure_loaded(key, timeout=max(timeout or 0, START_TIMEOUT_S))
        return self.request(msg, timeout=timeout)["summary"]

    def forget_graph(self, key: str, timeout: float | None = 60) -> None:
        """Drop a graph here and in the worker (its live documents stay)."""
        self._graphs.pop(key, None)
        if key in self._loaded and self.alive:
            self._loaded.discard(key)
            self.request({"op": "forget", "key": key}, timeout=timeout)

    # ---- live documents (kernels.compute.live): the worker keeps the replica, this client
    # keeps nothing of it, so after a restart the worker answers UnknownDocument and the caller
    # re-opens it from a snapshot (kernels.compute.documents)
    def open_document(self, key: str, arrays: dict, revision: int, *, name: str | None = None,
                      verify_deltas: bool = False, timeout: float | None = 300) -> dict:
        """Create the worker's replica of a document from ``SlottedGraph.to_arrays()``."""
        return self.request({"op": "open_document", "key": key, "arrays": arrays, "revision": revision,
                             "name": name, "verify_deltas": verify_deltas}, timeout=timeout)["summary"]

    def _document_request(self, msg: dict, timeout: float | None) -> dict:
        """A request on a replica; its state's failures raised as themselves (``UnknownDocument``:
        the replica is gone; ``ReplicaOutOfDate``: it holds another state), others as ``WorkerError``."""
        from kernels.compute.live import ReplicaOutOfDate, UnknownDocument

        try:
            return self.request(msg, timeout=timeout)
        except WorkerError as exc:
            if exc.kind == "UnknownDocument":
                raise UnknownDocument(str(exc)) from None
            if exc.kind == "ReplicaOutOfDate":
                raise ReplicaOutOfDate(str(exc)) from None
            raise

    def update_document(self, key: str, deltas: list, revision: int, *, timeout: float | None = 300) -> dict:
        """Apply ``[(PageDelta, forward), ...]`` to the replica; raises ``UnknownDocument`` or
        ``ReplicaOutOfDate`` (kernels.compute.live) when the replica is gone or holds another state."""
        return self._document_request({"op": "update_document", "key": key, "deltas": deltas, "revision": revision},
                                      timeout)["summary"]

    def batch_document(self, key: str, batch: dict, revision: int, *, timeout: float | None = 300) -> dict:
        """Apply a batch of edge updates on the replica's device pages
        (:meth:`kernels.compute.live.LiveDocument.apply_batch`); the replica then holds
        ``revision``. Raises ``UnknownDocument`` when the replica is gone; a refused batch is a
        ``WorkerError`` of kind ``GraphEditError`` (or ``ParameterError``)."""
        return self._document_request({"op": "batch_document", "key": key, "batch": batch, "revision": revision},
                                      timeout)["result"]

    def run_document(self, key: str, family: str, variant: str, params: dict | None = None, *,
                     target: str | None = None, repeat: int = 5, warmup: int = 1, seed: int = 0,
                     want_output: bool = False, timeout: float | None = None, cancel=None,
                     launch: str = "auto") -> dict:
        """Run on the replica (a ``live_pages`` variant syncs its dirty pages first); the reply
        holds the record, whose ``structure`` field reports the sync."""
        msg = {"op": "run_document", "id": next(self._ids), "key": key, "family": family, "variant": variant,
               "params": params or {}, "target": target, "repeat": repeat, "warmup": warmup, "seed": seed,
               "want_output": want_output, "launch": launch}
        return self.request(msg, timeout=timeout, cancel=cancel)

    def close_document(self, key: str, timeout: float | None = 60) -> None:
        if self.alive:
            self.request({"op": "close_document", "key": key}, timeout=timeout)
