"""The Edit menu's Undo and Redo: actions driven by the current document's undo stack.

They act on the current document's :class:`~explorer.model.undo.UndoStack` and read their
state from it, as Qt's ``QUndoGroup.createUndoAction`` did for a ``QUndoStack``: enabled when
there is a step to undo (redo), named after it ("&Undo add edge 0 -- 9"; "&Undo" when there
is none).
"""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction

from explorer.model.document import GraphDocument
from explorer.model_signals import signals


def prefixed(prefix: str, text: str) -> str:
    return f"{prefix} {text}" if text else prefix


class UndoActions(QObject):
    """Undo and Redo of whichever document is current (:meth:`set_document`)."""

    UNDO, REDO = "&Undo", "&Redo"

    def __init__(self, parent=None):
        super().__init__(parent)
        self.undo_action = QAction(self.UNDO, self)
        self.redo_action = QAction(self.REDO, self)
        self.undo_action.triggered.connect(self.undo)
        self.redo_action.triggered.connect(self.redo)
        self.document: GraphDocument | None = None
        self.refresh()

    def set_document(self, document: GraphDocument | None) -> None:
        if self.document is not None:
            signals(self.document).historyChanged.disconnect(self.refresh)
        self.document = document
        if document is not None:
            signals(document).historyChanged.connect(self.refresh)
        self.refresh()

    def undo(self) -> None:
        if self.document is not None:
            self.document.undo_stack.undo()

    def redo(self) -> None:
        if self.document is not None:
            self.document.undo_stack.redo()

    def refresh(self) -> None:
        stack = self.document.undo_stack if self.document is not None else None
        self.undo_action.setEnabled(stack is not None and stack.can_undo())
        self.redo_action.setEnabled(stack is not None and stack.can_redo())
        self.undo_action.setText(prefixed(self.UNDO, stack.undo_text() if stack is not None else ""))
        self.redo_action.setText(prefixed(self.REDO, stack.redo_text() if stack is not None else ""))
