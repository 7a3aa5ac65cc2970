"""Long work off the GUI thread: a task state object, and the graph loading/generating jobs.

:class:`BackgroundTask` (after Orange3's task state) runs one function in a Python thread and
reports back on the GUI thread: throttled progress, the result, the error, or that it was
cancelled. The function receives a :class:`TaskControl` to report progress and to ask
whether it should stop.

Loading refuses a file too large for this machine *before* reading it
(``check_fits_memory`` estimates from the file's header and size), reads it, computes its
statistics and builds the live slotted-page structure, all in the worker thread: the GUI only
receives a finished :class:`LoadedGraph`.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal, Slot

from kernels.errors import GraphKernelsError
from kernels.graph.csr import CSRGraph

PROGRESS_INTERVAL_S = 0.05     # at most 20 progress signals a second reach the GUI


class TaskCancelled(Exception):
    """Raised inside a job when the user cancelled it."""


class TaskControl:
    """Handed to a job: report progress, check for cancellation (thread-safe)."""

    def __init__(self, task: BackgroundTask):
        self._task = task
        self._event = threading.Event()
        self._last = 0.0

    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Stop the job here if the user cancelled it."""
        if self._event.is_set():
            raise TaskCancelled()

    def progress(self, fraction: float | None, text: str = "") -> None:
        """Report progress (``None``: unknown); throttled so the GUI is never flooded."""
        now = time.monotonic()
        final = fraction is not None and fraction >= 1.0
        if not final and now - self._last < PROGRESS_INTERVAL_S:
            return
        self._last = now
        self._task._relay.emit("progress", (-1.0 if fraction is None else float(fraction), text))


class BackgroundTask(QObject):
    """One job in a worker thread; every signal arrives on the GUI thread.

    ``finished(result)``, ``failed(exception, traceback_text)`` or ``cancelled()`` is emitted
    exactly once, then ``done()``.
    """

    progressed = Signal(float, str)   # fraction (-1 when unknown), text
    finished = Signal(object)
    failed = Signal(object, str)
    cancelled = Signal()
    done = Signal()
    _relay = Signal(str, object)      # emitted from the worker thread

    def __init__(self, title: str, job: Callable[[TaskControl], object], parent=None):
        super().__init__(parent)
        self.title = title
        self._job = job
        self.control = TaskControl(self)
        self._thread: threading.Thread | None = None
        self.result = None
        self.error: BaseException | None = None
        self.state = "new"            # new -> running -> finished | failed | cancelled
        self._relay.connect(self._on_relay, Qt.ConnectionType.QueuedConnection)

    def start(self) -> BackgroundTask:
        self.state = "running"
        self._thread = threading.Thread(target=self._run, name=f"task: {self.title}", daemon=True)
        self._thread.start()
        return self

    def cancel(self) -> None:
        self.control._event.set()

    @property
    def running(self) -> bool:
        return self.state == "running"

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the worker thread ended (signals may still be queued)."""
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def _run(self) -> None:
        try:
            result = self._job(self.control)
        except TaskCancelled:
            self._relay.emit("cancelled", None)
        except BaseException as exc:  # noqa: BLE001 - every failure must reach the user
            if self.control.cancelled():
                self._relay.emit("cancelled", None)
            else:
                self._relay.emit("failed", (exc, traceback.format_exc()))
        else:
            if self.control.cancelled():
                self._relay.emit("cancelled", None)
            else:
                self._relay.emit("finished", result)

    @Slot(str, object)
    def _on_relay(self, kind: str, payload) -> None:
        if kind == "progress":
            if self.state == "running":
                self.progressed.emit(*payload)
            return
        if self.state != "running":
            return
        if kind == "finished":
            self.state = "finished"
            self.result = payload
            self.finished.emit(payload)
        elif kind == "failed":
            self.state = "failed"
            self.error = payload[0]
            self.failed.emit(payload[0], payload[1])
        else:
            self.state = "cancelled"
            self.cancelled.emit()
        self.done.emit()


# ---- what a loading job produces ---------------------------------------------------------
@dataclass
class LoadedGraph:
    """A graph ready to become a document: its CSR, statistics and (if it can have one) the
    live slotted structure; ``slotted_reason`` says in words why it has none."""

    csr: CSRGraph
    info: dict
    slotted: object | None
    page_size: int
    source: str = ""
    slotted_reason: str = ""
    notes: list[str] = field(default_factory=list)
    estimate: dict | None = None           # what check_fits_memory said before reading


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


def build_live_structure(csr: CSRGraph, page_size: int, control: TaskControl | None = None):
    """(SlottedGraph, "") or (None, reason): matrices and graphs with repeated entries stay
    read-only CSR, and the reason says how to make them editable."""
    from kernels.graph.slotted import SlottedGraph

    if not csr.is_square:
        return None, (f"a {csr.n_rows} x {csr.n_cols} matrix is not a graph: it can be run (SpMV) "
                      "but not edited on slotted pages")
    try:
        if control is not None:
            control.progress(None, "building slotted pages")
        return SlottedGraph.from_csr(csr, page_size=page_size), ""
    except GraphKernelsError as exc:
        return None, str(exc)


AUTO_PAGE_SIZE = 0     # "choose by graph size"


def auto_page_size(csr: CSRGraph) -> int:
    """The page size for a graph of this size: the core's one rule (``graph-kernels info`` uses it too)."""
    from kernels.graph.stats import page_size_for

    return page_size_for(csr)


def finish_loaded(csr: CSRGraph, page_size: int, control: TaskControl, source: str = "") -> LoadedGraph:
    from kernels.graph.stats import graph_info

    if not page_size:
        page_size = auto_page_size(csr)
    control.check()
    control.progress(None, "computing statistics")
    info = graph_info(csr, page_size=page_size)
    control.check()
    slotted, reason = build_live_structure(csr, page_size, control)
    control.check()
    return LoadedGraph(csr, info, slotted, page_size, source=source, slotted_reason=reason,
                       notes=list(csr.notices))


def prepare_imports() -> None:
    """Import what the jobs use, on the calling (GUI) thread, before any job starts.

    Several loads start at once when files are dropped together; importing modules, or
    filling the format registry on first use, from several threads at once can deadlock on
    import locks or see a half-filled registry ("expected one of: " with nothing listed)."""
    import kernels.graph.slotted  # noqa: F401
    import kernels.graph.stats  # noqa: F401
    from kernels.graph.io import formats

    formats()


def load_file_job(path: str | Path, page_size: int) -> Callable[[TaskControl], LoadedGraph]:
    """A job reading one graph file (any format and compression the core reads)."""
    path = str(path)
    prepare_imports()

    def job(control: TaskControl) -> LoadedGraph:
        from kernels.graph.io import check_fits_memory, read_graph

        control.progress(0.0, f"checking {Path(path).name}")
        estimate = check_fits_memory(path)   # ResourceLimitError, naming the estimate, before any allocation
        control.check()
        control.progress(0.0, f"reading {Path(path).name}")

        def progress(fraction, *_):
            control.progress(min(float(fraction), 0.99) * 0.8, f"reading {Path(path).name}")

        csr = read_graph(path, progress=progress, cancel=control.cancelled)
        loaded = finish_loaded(csr, page_size, control, source=path)
        loaded.estimate = estimate
        return loaded

    return job


def generate_job(kind: str, options: dict, page_size: int) -> Callable[[TaskControl], LoadedGraph]:
    """A job running one registered generator with validated options."""
    prepare_imports()
    import kernels.graph.generators  # noqa: F401

    def job(control: TaskControl) -> LoadedGraph:
        from kernels.graph.generators import generate

        control.progress(None, f"generating {kind}")
        csr = generate(kind, **options)
        return finish_loaded(csr, page_size, control, source=csr.source)

    return job
