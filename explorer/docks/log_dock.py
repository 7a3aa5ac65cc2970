"""The log panel: every message the application gives (errors, warnings, notes), with its time.

A dialog or the status bar tells the user once; the log keeps it, so nothing said in passing
is lost. Entries are plain data (:class:`LogEntry`) so that tests and sessions can read them.

The panel is a ``logging`` handler (:class:`LogPanelHandler`) on the ``kernels`` and
``explorer`` loggers: whatever the core logs (a run's notices, a plug-in that did not load, a
file's reading notes) and what the window says (``window.log(level, message)``, which logs
through the ``explorer.window`` logger tagged with its window) arrive here. A record may come
from any thread (file loading, compute jobs): it crosses to the GUI thread by a queued signal.
"""

from __future__ import annotations

import datetime as _dt
import logging
import sys
from dataclasses import dataclass

import shiboken6
from PySide6.QtCore import QObject, Qt, QThread, Signal
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

LEVELS = ("debug", "info", "warning", "error")
_RANK = {name: i for i, name in enumerate(LEVELS)}
_COLOURS = {"debug": QColor(120, 120, 120), "info": QColor(30, 30, 30),
            "warning": QColor(170, 100, 0), "error": QColor(190, 20, 20)}
MAX_ENTRIES = 5000
# the loggers the panel listens to, and the least severe level it asks each for
LISTENED = {"kernels": logging.INFO, "explorer": logging.DEBUG}
WINDOW_LOGGER = "explorer.window"


@dataclass(frozen=True)
class LogEntry:
    time: _dt.datetime
    level: str
    message: str

    def line(self) -> str:
        return f"{self.time:%H:%M:%S}  {self.level.upper():7s}  {self.message}"


def normalise_level(level: str) -> str:
    level = str(level).lower()
    if level in ("warn",):
        return "warning"
    if level in ("critical", "fatal", "exception"):
        return "error"
    return level if level in _RANK else "info"


def level_name(levelno: int) -> str:
    if levelno >= logging.ERROR:
        return "error"
    if levelno >= logging.WARNING:
        return "warning"
    return "info" if levelno >= logging.INFO else "debug"


class _RecordCarrier(QObject):
    """Carries a record from another thread to the panel's (a queued signal)."""

    record = Signal(object)


class LogPanelHandler(logging.Handler):
    """Puts log records in one log panel; ``emit`` may be called from any thread.

    Records tagged with another window (``extra={"window": ...}``) are left to that window's
    panel; records about plug-ins that did not load are said by each window's Run dock (the
    registry logs them once per process, when it loads)."""

    def __init__(self, dock: LogDock, window=None):
        super().__init__(logging.DEBUG)
        self.dock = dock
        self.window_id = id(window) if window is not None else None
        self.carrier = _RecordCarrier()
        self.carrier.record.connect(dock.add_record)      # queued: the dock lives in the GUI thread

    def emit(self, record: logging.LogRecord) -> None:
        tag = getattr(record, "window", None)
        if (tag is not None and tag != self.window_id) or getattr(record, "plugin_problem", False):
            return
        if not shiboken6.isValid(self.dock) or not shiboken6.isValid(self.carrier):
            self.detach()                                  # the window is gone
            return
        try:
            if QThread.currentThread() == self.dock.thread():
                self.dock.add_record(record)
            else:
                self.carrier.record.emit(record)
        except Exception:  # noqa: BLE001 - logging must never raise into the caller
            self.handleError(record)

    def attach(self) -> LogPanelHandler:
        for name, level in LISTENED.items():
            logger = logging.getLogger(name)
            if logger.level == logging.NOTSET or logger.level > level:
                logger.setLevel(level)
            logger.addHandler(self)
        return self

    def detach(self) -> None:
        for name in LISTENED:
            logging.getLogger(name).removeHandler(self)


class LogDock(QDockWidget):
    """A table of time / level / message; a level filter; copy and clear."""

    entryAdded = Signal(object)   # LogEntry

    def __init__(self, parent=None):
        super().__init__("Log", parent)
        self.setObjectName("LogDock")
        self.entries: list[LogEntry] = []
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("show"))
        self.level_filter = QComboBox()
        self.level_filter.addItems(["all", "info and above", "warnings and errors", "errors only"])
        self.level_filter.setCurrentIndex(1)
        self.level_filter.currentIndexChanged.connect(self._refilter)
        bar.addWidget(self.level_filter)
        bar.addStretch(1)
        self.counts_label = QLabel()
        bar.addWidget(self.counts_label)
        copy = QPushButton("Copy")
        copy.setToolTip("copy the shown entries to the clipboard")
        copy.clicked.connect(self.copy_to_clipboard)
        bar.addWidget(copy)
        clear = QPushButton("Clear")
        clear.clicked.connect(self.clear)
        bar.addWidget(clear)
        layout.addLayout(bar)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["time", "level", "message"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setWordWrap(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        # two lines of log are enough on a small screen; the room goes to the Results dock below
        self.table.setMinimumHeight(56)
        layout.addWidget(self.table)
        self.setWidget(body)
        self._update_counts()

    # ---- adding ---------------------------------------------------------------------
    def add_record(self, record: logging.LogRecord) -> LogEntry:
        """A log record (from :class:`LogPanelHandler`, on the GUI thread) as an entry."""
        return self.log(level_name(record.levelno), record.getMessage())

    def log(self, level: str, message: str) -> LogEntry:
        entry = LogEntry(_dt.datetime.now(), normalise_level(level), str(message))
        self.entries.append(entry)
        if len(self.entries) > MAX_ENTRIES:
            del self.entries[: len(self.entries) - MAX_ENTRIES]
            self._refilter()
        elif self._shown(entry):
            self._append_row(entry)
        self._update_counts()
        self.entryAdded.emit(entry)
        return entry

    def messages(self, level: str | None = None) -> list[str]:
        """Messages logged (of one level, or all)."""
        return [e.message for e in self.entries if level is None or e.level == level]

    def clear(self) -> None:
        self.entries.clear()
        self.table.setRowCount(0)
        self._update_counts()

    def copy_to_clipboard(self) -> None:
        text = "\n".join(e.line() for e in self.entries if self._shown(e))
        QGuiApplication.clipboard().setText(text)

    # ---- display --------------------------------------------------------------------
    def _minimum_rank(self) -> int:
        return (0, 1, 2, 3)[self.level_filter.currentIndex()]

    def _shown(self, entry: LogEntry) -> bool:
        return _RANK[entry.level] >= self._minimum_rank()

    def _append_row(self, entry: LogEntry) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        colour = _COLOURS[entry.level]
        for col, text in enumerate((f"{entry.time:%H:%M:%S}", entry.level, entry.message)):
            item = QTableWidgetItem(text)
            item.setForeground(colour)
            if col == 2:
                item.setToolTip(entry.message)
            item.setTextAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
            self.table.setItem(row, col, item)
        self.table.scrollToBottom()

    def _refilter(self) -> None:
        self.table.setRowCount(0)
        for entry in self.entries:
            if self._shown(entry):
                self._append_row(entry)

    def _update_counts(self) -> None:
        errors = sum(1 for e in self.entries if e.level == "error")
        warnings = sum(1 for e in self.entries if e.level == "warning")
        self.counts_label.setText(f"{errors} error(s), {warnings} warning(s)")


def report_unexpected_errors(window) -> None:
    """An exception escaping a Qt callback is a bug; say so in the log panel (and on stderr)
    instead of letting it vanish, and keep the window - and the user's graphs - alive."""
    import traceback

    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        try:
            window.log("error", f"unexpected error (a bug; please report it): {kind.__name__}: {value}")
            window.log("debug", "".join(traceback.format_exception(kind, value, tb)))
        except RuntimeError:          # the window is already gone
            pass

    sys.excepthook = hook
