"""The edit history of the current graph: a list over its undo stack (the model's).

What Qt's ``QUndoView`` showed for a ``QUndoStack``: a first row for the state before any
edit ("loaded"), then one row per step; the selected row is the stack's position, and
choosing a row undoes or redoes up to it.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractListModel, QItemSelectionModel, QModelIndex, QSize, Qt
from PySide6.QtWidgets import QAbstractItemView, QListView

from explorer.model.document import GraphDocument
from explorer.model_signals import signals


class HistoryModel(QAbstractListModel):
    """Rows of an undo stack: ``empty_label``, then the text of each step."""

    def __init__(self, empty_label: str = "", parent=None):
        super().__init__(parent)
        self.empty_label = empty_label
        self.document: GraphDocument | None = None

    @property
    def stack(self):
        return self.document.undo_stack if self.document is not None else None

    def set_document(self, document: GraphDocument | None) -> None:
        if self.document is not None:
            signals(self.document).historyChanged.disconnect(self.reset)
        self.beginResetModel()
        self.document = document
        self.endResetModel()
        if document is not None:
            signals(document).historyChanged.connect(self.reset)

    def reset(self) -> None:
        self.beginResetModel()
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt override
        if parent.isValid() or self.stack is None:
            return 0
        return self.stack.count() + 1

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        stack = self.stack
        if stack is None or not index.isValid() or not 0 <= index.row() <= stack.count():
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return self.empty_label if index.row() == 0 else stack.text(index.row() - 1)
        return None

    def current(self) -> QModelIndex:
        """The row of the stack's position."""
        return self.index(self.stack.index(), 0) if self.stack is not None else QModelIndex()


class HistoryView(QListView):
    """The edit history; it asks for little height and takes what the dock has left.

    A scroll area whose content wraps text sizes that content to its preferred height, and a
    list view prefers 192 px: the dock then scrolled at 1366 × 768 although everything fit."""

    MIN_HEIGHT = 110            # a few entries always show, whatever layout was restored

    def __init__(self, empty_label: str = "", parent=None):
        super().__init__(parent)
        self.history = HistoryModel(empty_label, self)
        self.setModel(self.history)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self._following = False
        self.history.modelReset.connect(self._show_position)
        self.selectionModel().currentChanged.connect(self._chosen)

    def set_document(self, document: GraphDocument | None) -> None:
        self.history.set_document(document)

    def _show_position(self) -> None:
        self._following = True
        try:
            self.selectionModel().setCurrentIndex(self.history.current(),
                                                  QItemSelectionModel.SelectionFlag.ClearAndSelect)
        finally:
            self._following = False

    def _chosen(self, index: QModelIndex, _previous: QModelIndex) -> None:
        stack = self.history.stack
        if self._following or stack is None or not index.isValid():
            return
        stack.set_index(index.row())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(super().sizeHint().width(), self.MIN_HEIGHT)
