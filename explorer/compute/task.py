"""The state of one long compute job (after Orange3's task state objects).

A :class:`ComputeTask` lives on the GUI thread; its job runs in a :class:`QThread`. The job
talks to the task through a :class:`JobControl` (thread-safe): progress, partial sweep cells,
the worker's process id, and whether the user pressed Cancel. Everything reaches the GUI
thread as queued signals, throttled so a fast sweep cannot flood the event loop:

``progressed(fraction, text)``, ``cellsArrived(list)`` (new sweep cells, in order),
``workerStarted(pid)``, then exactly one of ``finished(result)``, ``failed(message)`` or
``cancelled(partial)`` (the part of a sweep that finished, or ``None``), then ``done()``.
``workerReplaced(message)`` says the worker died or hung and a fresh one was started.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot

FLUSH_INTERVAL_S = 0.1        # at most ten progress/cell updates a second reach the GUI


class JobCancelled(Exception):
    """Raised inside a job when the user cancelled it; carries what finished."""

    def __init__(self, partial=None):
        super().__init__("cancelled")
        self.partial = partial


class JobFailed(Exception):
    """A failure to tell the user in words; ``worker_replaced`` when the worker was restarted."""

    def __init__(self, message: str, *, worker_replaced: bool = False):
        super().__init__(message)
        self.worker_replaced = worker_replaced


class JobControl:
    """Handed to the job running in the thread."""

    def __init__(self, task: ComputeTask):
        self._task = task
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._pending_cells: list = []
        self._progress: tuple[float, str] | None = None
        self._last_flush = 0.0

    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def progress(self, fraction: float | None, text: str = "") -> None:
        """``fraction`` in [0, 1], ``None`` when unknown."""
        with self._lock:
            self._progress = (-1.0 if fraction is None else float(fraction), text)
        self._maybe_flush()

    def cell(self, cell: dict) -> None:
        with self._lock:
            self._pending_cells.append(cell)
        self._maybe_flush()

    def worker_started(self, pid: int | None) -> None:
        self._task._relay.emit("pid", pid)

    def worker_replaced(self, message: str) -> None:
        self._task._relay.emit("replaced", message)

    def _maybe_flush(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_flush < FLUSH_INTERVAL_S:
            return
        with self._lock:
            cells, self._pending_cells = self._pending_cells, []
            progress, self._progress = self._progress, None
        self._last_flush = now
        if cells:
            self._task._relay.emit("cells", cells)
        if progress is not None:
            self._task._relay.emit("progress", progress)

    def flush(self) -> None:
        self._maybe_flush(force=True)


class _JobThread(QThread):
    def __init__(self, task: ComputeTask, job: Callable[[JobControl], object]):
        super().__init__()
        self._task = task
        self._job = job
        self.setObjectName(f"compute: {task.title}")

    def run(self) -> None:  # runs in the new thread
        control = self._task.control
        try:
            result = self._job(control)
        except JobCancelled as exc:
            control.flush()
            self._task._relay.emit("cancelled", exc.partial)
        except JobFailed as exc:
            control.flush()
            self._task._relay.emit("failed", (str(exc), ""))
        except BaseException as exc:  # noqa: BLE001 - a bug must reach the user, not vanish in a thread
            control.flush()
            if control.cancelled():
                self._task._relay.emit("cancelled", None)
            else:
                self._task._relay.emit("failed", (f"{type(exc).__name__}: {exc}", traceback.format_exc()))
        else:
            control.flush()
            self._task._relay.emit("finished", result)


class ComputeTask(QObject):
    """One run or sweep: its request, state, progress, partial cells and outcome."""

    progressed = Signal(float, str)
    cellsArrived = Signal(object)          # list of sweep cells
    workerStarted = Signal(object)         # pid
    workerReplaced = Signal(str)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal(object)
    done = Signal()
    _relay = Signal(str, object)

    def __init__(self, kind: str, request, job: Callable[[JobControl], object], parent=None):
        super().__init__(parent)
        self.kind = kind                    # "run" or "sweep"
        self.request = request
        self.title = request.title
        self.state = "new"                  # new -> running -> finished | failed | cancelled
        self.fraction = 0.0
        self.text = ""
        self.cells: list = []
        self.result = None
        self.error = ""
        self.details = ""                   # a traceback when the failure was a bug
        self.worker_pid: int | None = None
        self.started_at = 0.0
        self.control = JobControl(self)
        self._thread = _JobThread(self, job)
        self._relay.connect(self._on_relay, Qt.ConnectionType.QueuedConnection)

    # ---- control ---------------------------------------------------------------------
    def start(self) -> ComputeTask:
        self.state = "running"
        self.started_at = time.monotonic()
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
        return self._thread.wait(-1 if timeout_s is None else int(timeout_s * 1000))

    def thread_running(self) -> bool:
        return self._thread.isRunning()

    def release_graph(self) -> None:
        """Forget the graph snapshot once the job is over (a finished task must not keep a
        large graph alive for the rest of the session)."""
        import dataclasses

        if self._thread.isRunning():
            return
        self._thread._job = None                 # its closure holds the request, graph included
        if getattr(self.request, "graph", None) is not None:
            self.request = dataclasses.replace(self.request, graph=None)

    # ---- delivery on the GUI thread ------------------------------------------------------
    @Slot(str, object)
    def _on_relay(self, kind: str, payload) -> None:
        if kind == "pid":
            self.worker_pid = payload
            self.workerStarted.emit(payload)
            return
        if kind == "replaced":
            self.workerReplaced.emit(payload)
            return
        if self.state != "running":
            return
        if kind == "progress":
            self.fraction, self.text = payload
            self.progressed.emit(*payload)
        elif kind == "cells":
            self.cells.extend(payload)
            self.cellsArrived.emit(payload)
        elif kind == "finished":
            self.state = "finished"
            self.result = payload
            self.finished.emit(payload)
            self.done.emit()
        elif kind == "failed":
            self.state = "failed"
            self.error, self.details = payload
            self.failed.emit(self.error)
            self.done.emit()
        elif kind == "cancelled":
            self.state = "cancelled"
            self.result = payload
            self.cancelled.emit(payload)
            self.done.emit()
