"""Long work off the GUI thread: one task state object for every kind of job (after Orange3).

A :class:`Task` lives on the GUI thread; its job runs in a Python thread and receives a
:class:`TaskControl` (thread-safe) to report progress and to ask whether the user cancelled.
Everything reaches the GUI thread as queued signals, progress throttled so a fast job cannot
flood the event loop:

``progressed(fraction, text)`` (``-1`` when unknown), then exactly one of
``finished(result)``, ``failed(message)`` (in plain words; ``exception`` and ``details``, a
traceback when it was a bug, say more) or ``cancelled(partial)`` (what finished before the
user cancelled, or ``None``), then ``done()``.

Loading, generating, saving sessions, layouts and statistics use :class:`Task` as it is; a
compute run or sweep (:class:`explorer.compute.task.ComputeTask`) adds partial sweep cells
and the worker process's signals.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal, Slot

from kernels.errors import GraphKernelsError

FLUSH_INTERVAL_S = 0.05       # at most 20 progress updates a second reach the GUI


class TaskCancelled(Exception):
    """Raised inside a job when the user cancelled it; carries what finished."""

    def __init__(self, partial=None):
        super().__init__("cancelled")
        self.partial = partial


class TaskFailed(Exception):
    """A failure the job explains in words (no traceback is kept)."""


def describe_error(exc: BaseException) -> str:
    """An exception in plain words: the project's own errors carry their message already."""
    if isinstance(exc, GraphKernelsError):
        return str(exc)
    if isinstance(exc, MemoryError):
        return "not enough memory for this graph"
    if isinstance(exc, FileNotFoundError):
        return f"{exc.filename or exc}: no such file"
    if isinstance(exc, PermissionError):
        return f"{exc.filename or exc}: permission denied"
    if isinstance(exc, OSError):
        return f"{exc.filename + ': ' if exc.filename else ''}{exc.strerror or exc}"
    return f"{type(exc).__name__}: {exc}"


def is_user_error(exc: BaseException | None) -> bool:
    """Errors a user can cause (a bad file, too little memory): their message is enough, no traceback."""
    return isinstance(exc, (GraphKernelsError, OSError, MemoryError, TaskFailed))


class TaskControl:
    """Handed to the job running in the thread."""

    def __init__(self, task: Task):
        self._task = task
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._progress: tuple[float, str] | None = None
        self._last_flush = 0.0

    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def check(self) -> None:
        """Stop the job here if the user cancelled it."""
        if self._cancel.is_set():
            raise TaskCancelled()

    def progress(self, fraction: float | None, text: str = "") -> None:
        """``fraction`` in [0, 1], ``None`` when unknown; the last one always arrives."""
        with self._lock:
            self._progress = (-1.0 if fraction is None else float(fraction), text)
        self._maybe_flush(force=fraction is not None and fraction >= 1.0)

    def _maybe_flush(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_flush < FLUSH_INTERVAL_S:
            return
        self._last_flush = now
        with self._lock:
            pending = self._take_pending()
        for kind, payload in pending:
            self._task._relay.emit(kind, payload)

    def _take_pending(self) -> list[tuple[str, object]]:
        """What waits to be sent, in order (called under the lock)."""
        progress, self._progress = self._progress, None
        return [] if progress is None else [("progress", progress)]

    def flush(self) -> None:
        self._maybe_flush(force=True)


class Task(QObject):
    """One job in a worker thread; every signal arrives on the GUI thread."""

    progressed = Signal(float, str)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal(object)
    done = Signal()
    _relay = Signal(str, object)          # emitted from the job's thread
    control_class = TaskControl

    def __init__(self, title: str, job: Callable[[TaskControl], object], parent=None):
        super().__init__(parent)
        self.title = title
        self._job = job
        self.control = self.control_class(self)
        self._thread: threading.Thread | None = None
        self.state = "new"                # new -> running -> finished | failed | cancelled
        self.fraction = 0.0
        self.text = ""
        self.result = None
        self.error = ""                   # the failure in words
        self.exception: BaseException | None = None
        self.details = ""                 # a traceback when the failure was a bug
        self.started_at = 0.0
        self._relay.connect(self._on_relay, Qt.ConnectionType.QueuedConnection)

    # ---- control ---------------------------------------------------------------------
    def start(self) -> Task:
        self.state = "running"
        self.started_at = time.monotonic()
        self._thread = threading.Thread(target=self._run, name=f"task: {self.title}", daemon=True)
        self._thread.start()
        return self

    def cancel(self) -> None:
        self.control._cancel.set()

    @property
    def running(self) -> bool:
        return self.state == "running"

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started_at if self.started_at else 0.0

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until the job's thread ended (its last signals may still be queued)."""
        if self._thread is not None:
            self._thread.join(timeout_s)
            return not self._thread.is_alive()
        return True

    def thread_running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ---- the job's thread ------------------------------------------------------------------
    def _run(self) -> None:
        control = self.control
        try:
            result = self._job(control)
        except TaskCancelled as exc:
            outcome = ("cancelled", exc.partial)
        except TaskFailed as exc:          # the job's own words, even when cancelled meanwhile
            outcome = ("failed", (exc, ""))
        except BaseException as exc:  # noqa: BLE001 - every failure must reach the user, not vanish in a thread
            if control.cancelled():
                outcome = ("cancelled", None)
            else:
                outcome = ("failed", (exc, traceback.format_exc()))
        else:
            outcome = ("cancelled", None) if control.cancelled() else ("finished", result)
        control.flush()
        self._relay.emit(*outcome)

    # ---- delivery on the GUI thread ----------------------------------------------------------
    @Slot(str, object)
    def _on_relay(self, kind: str, payload) -> None:
        if self.state != "running":
            return
        if kind == "progress":
            self.fraction, self.text = payload
            self.progressed.emit(*payload)
        elif kind == "finished":
            self.state = "finished"
            self.result = payload
            self.finished.emit(payload)
            self.done.emit()
        elif kind == "failed":
            self.state = "failed"
            self.exception, self.details = payload
            self.error = str(self.exception) if isinstance(self.exception, TaskFailed) \
                else describe_error(self.exception)
            self.failed.emit(self.error)
            self.done.emit()
        elif kind == "cancelled":
            self.state = "cancelled"
            self.result = payload
            self.cancelled.emit(payload)
            self.done.emit()
