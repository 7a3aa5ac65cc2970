"""What the GUI tests share: the test window (made, shown, given files, closed and checked), the
compute docks by name, and the check that no background task outlived a window."""

from __future__ import annotations

import threading
import time

from explorer.compute import ComputeClient
from explorer.main_window import MainWindow
from explorer.settings import AppSettings
from tests.process_helpers import process_gone

LOAD_TIMEOUT_MS = 60_000


def make_window(qtbot, settings_dir, *paths, compute: bool = True, size: tuple[int, int] | None = (1400, 900),
                page_size: int | None = None, dialogs: bool = False, restore_layout: bool = False,
                exposed: bool = False, sub: str | None = None) -> MainWindow:
    """A main window on its own ephemeral settings (in ``settings_dir``, or its folder ``sub``),
    with the compute docks unless ``compute`` is False, resized to ``size`` and shown (not shown
    when ``size`` is None), waited on until exposed if asked, with ``paths`` opened and loaded."""
    if sub is not None:
        settings_dir = settings_dir / sub
        settings_dir.mkdir(exist_ok=True)
    w = MainWindow(AppSettings.ephemeral(settings_dir), restore_layout=restore_layout, dialogs=dialogs,
                   page_size=page_size)
    qtbot.addWidget(w)
    if compute:
        w.add_compute_docks()
    if size is not None:
        w.resize(*size)
        w.show()
        if exposed:
            qtbot.waitExposed(w)
    if paths:
        w.open_paths([str(p) for p in paths])
        qtbot.waitUntil(lambda: len(w.documents()) == len(paths) and not w.busy(), timeout=LOAD_TIMEOUT_MS)
    return w


def no_task_threads_left() -> None:
    """Every background task's thread has ended (within 30 s)."""
    deadline = time.monotonic() + 30
    while any(t.name.startswith("task:") for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not [t.name for t in threading.enumerate() if t.name.startswith("task:")]


def close_and_wait(w: MainWindow) -> None:
    """Close as the user would; no background task is left running."""
    w.close()
    no_task_threads_left()




def close_window(w: MainWindow) -> None:
    """Close a window with compute docks as the user would, then check that nothing the compute
    side started is left (worker processes, task threads)."""
    client = ComputeClient.for_window(w)
    pids = client.worker_pids()
    tasks = [client.current, *client._finished_tasks]
    w.close()
    assert not client.local.pool.workers()
    assert all(t is None or not t.thread_running() for t in tasks)
    assert all(process_gone(pid) for pid in pids), "a worker process outlived the window"


def dock(w: MainWindow, name: str):
    """The compute dock of that object name (``RunDock``, ``ResultsDock``)."""
    return next(d for d in w.compute_docks if d.objectName() == name)


def docks(w: MainWindow):
    """(Run dock, Results dock)."""
    return dock(w, "RunDock"), dock(w, "ResultsDock")


def results_of(w: MainWindow):
    """The Results dock."""
    return dock(w, "ResultsDock")


def drawn_tick_texts(axis) -> list[str]:
    """The tick labels a pyqtgraph ``AxisItem`` draws now, in order, through its public
    ``generateDrawSpecs`` (onto a scratch image)."""
    from PySide6.QtGui import QImage, QPainter

    image = QImage(16, 16, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [] if specs is None else [text for _rect, _flags, text in specs[2]]
