"""The log panel: every message the application gives (errors, warnings, notes), with its time.

A dialog or the status bar tells the user once; the log keeps it, so nothing said in passing
is lost. Entries are plain data (:class:`LogEntry`) so that tests and sessions can read them.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
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
        layout.addWidget(self.table)
        self.setWidget(body)
        self._update_counts()

    # ---- adding ---------------------------------------------------------------------
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
