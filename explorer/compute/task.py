"""The state of one compute run or sweep: an :class:`explorer.tasks.Task` with sweep cells and
the worker process's signals.

Besides the task's ``progressed``, ``finished``, ``failed(message)``, ``cancelled(partial)``
(the part of a sweep that finished, or ``None``) and ``done()``, a compute task emits
``cellsArrived(list)`` (new sweep cells, in order, batched like progress),
``workerStarted(pid)`` and ``workerReplaced(message)`` (the worker died or hung and a fresh
one was started).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from PySide6.QtCore import Signal, Slot

from explorer.tasks import Task, TaskCancelled, TaskControl, TaskFailed

JobCancelled = TaskCancelled      # raised by a job the user cancelled, with the partial sweep


class JobFailed(TaskFailed):
    """A failure to tell the user in words; ``worker_replaced`` when the worker was restarted."""

    def __init__(self, message: str, *, worker_replaced: bool = False):
        super().__init__(message)
        self.worker_replaced = worker_replaced


class JobControl(TaskControl):
    """A task control that also carries sweep cells and the worker's process id."""

    def __init__(self, task: ComputeTask):
        super().__init__(task)
        self._pending_cells: list = []

    def cell(self, cell: dict) -> None:
        with self._lock:
            self._pending_cells.append(cell)
        self._maybe_flush()

    def worker_started(self, pid: int | None) -> None:
        self._task._relay.emit("pid", pid)

    def worker_replaced(self, message: str) -> None:
        self._task._relay.emit("replaced", message)

    def _take_pending(self) -> list[tuple[str, object]]:
        cells, self._pending_cells = self._pending_cells, []
        return ([("cells", cells)] if cells else []) + super()._take_pending()


class ComputeTask(Task):
    """One run or sweep: its request, state, progress, partial cells and outcome."""

    cellsArrived = Signal(object)          # list of sweep cells
    workerStarted = Signal(object)         # pid
    workerReplaced = Signal(str)
    control_class = JobControl

    def __init__(self, kind: str, request, job: Callable[[JobControl], object], parent=None):
        super().__init__(request.title, job, parent)
        self.kind = kind                    # "run" or "sweep"
        self.request = request
        self.cells: list = []
        self.worker_pid: int | None = None

    def release_graph(self) -> None:
        """Forget the graph snapshot once the job is over (a finished task must not keep a
        large graph alive for the rest of the session)."""
        if self.thread_running():
            return
        self._job = None                          # its closure holds the request, graph included
        if getattr(self.request, "graph", None) is not None:
            self.request = dataclasses.replace(self.request, graph=None)

    @Slot(str, object)
    def _on_relay(self, kind: str, payload) -> None:
        if kind == "pid":
            self.worker_pid = payload
            self.workerStarted.emit(payload)
        elif kind == "replaced":
            self.workerReplaced.emit(payload)
        elif kind == "cells":
            if self.state == "running":
                self.cells.extend(payload)
                self.cellsArrived.emit(payload)
        else:
            super()._on_relay(kind, payload)
