"""The window's background tasks (loading, generating, rebuilding, saving) in the status bar:
what runs, its progress, and a Cancel button for all of them."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QStatusBar

from explorer.tasks import Task


class TaskStatus(QObject):
    """Starts the window's tasks and shows them in ``bar`` while they run."""

    def __init__(self, bar: QStatusBar, parent=None):
        super().__init__(parent)
        self._tasks: list[Task] = []
        self.label = QLabel()
        self.progress_bar = QProgressBar()
        self.progress_bar.setMaximumWidth(220)
        self.progress_bar.setTextVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("cancel loading (Esc)")
        self.cancel_button.clicked.connect(self.cancel_all)
        for w in (self.label, self.progress_bar, self.cancel_button):
            w.setVisible(False)
            bar.addPermanentWidget(w)

    def track(self, task: Task) -> Task:
        """Start ``task`` and show it until it is done."""
        self._tasks.append(task)
        task.progressed.connect(self._on_progress)
        task.done.connect(lambda task=task: self._done(task))
        task.start()
        self._update()
        return task

    def busy(self) -> bool:
        return any(t.running for t in self._tasks)

    def cancel_all(self) -> None:
        for t in list(self._tasks):
            t.cancel()

    def stop_all(self, timeout_s: float = 30) -> None:
        """Cancel every task and wait for their threads (the window closes)."""
        self.cancel_all()
        for task in list(self._tasks):
            task.wait(timeout_s)

    def _on_progress(self, fraction: float, text: str) -> None:
        if fraction < 0:
            self.progress_bar.setRange(0, 0)           # busy indicator
        else:
            self.progress_bar.setRange(0, 1000)
            self.progress_bar.setValue(int(fraction * 1000))
        if text:
            self.label.setText(text)

    def _done(self, task: Task) -> None:
        if task in self._tasks:
            self._tasks.remove(task)
        self._update()

    def _update(self) -> None:
        running = [t for t in self._tasks if t.running]
        for w in (self.label, self.progress_bar, self.cancel_button):
            w.setVisible(bool(running))
        if running:
            more = f" (+{len(running) - 1} more)" if len(running) > 1 else ""
            self.label.setText(f"{running[0].title}{more}")
