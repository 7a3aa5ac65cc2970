"""The window's status bar: a message too long for the room left of the permanent widgets (the
task progress, the targets label) is cut with an ellipsis, the whole of it in the tooltip, so a
long batch summary never runs under the targets label (seen at 1366 × 768)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStatusBar, QWidget

SPACING = 8        # pixels between the message and each permanent widget


class ElidingStatusBar(QStatusBar):
    def __init__(self, parent=None):
        super().__init__(parent)
        self._permanent: list[QWidget] = []

    def addPermanentWidget(self, widget: QWidget, stretch: int = 0) -> None:  # noqa: N802 - Qt's name
        self._permanent.append(widget)
        super().addPermanentWidget(widget, stretch)

    def showMessage(self, message: str, timeout: int = 0) -> None:  # noqa: N802 - Qt's name
        taken = sum(w.width() + SPACING for w in self._permanent if w.isVisible())
        room = max(80, self.width() - taken - 2 * SPACING)
        shown = self.fontMetrics().elidedText(message, Qt.TextElideMode.ElideRight, room)
        self.setToolTip(message if shown != message else "")
        super().showMessage(shown, timeout)
