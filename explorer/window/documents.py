"""The open graphs: one tab per document, the current one, and the ones closed (to reopen).

:class:`DocumentTabs` owns the tab widget, the documents in tab order (models of
:mod:`explorer.model`, observed through :mod:`explorer.model_signals`), the Undo and Redo
actions (they follow the current document's stack) and the last closed documents with their
layouts. It says what happened by signals; the window decides what the rest of the GUI does
about it.
"""

from __future__ import annotations

import itertools

import shiboken6
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QTabWidget

from explorer.model.document import GraphDocument
from explorer.model_signals import signals
from explorer.views.graph_tab import GraphTab
from explorer.window.undo_actions import UndoActions

MAX_CLOSED_KEPT = 10


class DocumentTabs(QObject):
    """Documents and their tabs."""

    currentDocumentChanged = Signal(object)     # the new current document or None
    documentAdded = Signal(object)
    documentClosed = Signal(object)
    documentChanged = Signal(object)            # after an edit, undo or redo of that document
    vertexClicked = Signal(int)                 # in the current tab's node-link view

    def __init__(self, parent=None):
        super().__init__(parent)
        self.widget = QTabWidget()
        self.widget.setDocumentMode(True)
        self.widget.setTabsClosable(True)
        self.widget.setMovable(True)
        self.widget.tabCloseRequested.connect(lambda i: self.close(self.widget.widget(i).document))
        self.widget.currentChanged.connect(self._on_tab_changed)
        self.undo_actions = UndoActions(self)
        self._documents: list[GraphDocument] = []
        self._closed: list[tuple[GraphDocument, dict]] = []
        self._current: GraphDocument | None = None
        self._order = itertools.count()

    # ---- what is open ------------------------------------------------------------------------
    def documents(self) -> list[GraphDocument]:
        return list(self._documents)

    def current_document(self) -> GraphDocument | None:
        return self._current

    def current_tab(self) -> GraphTab | None:
        return self.widget.currentWidget()

    def tabs(self) -> list[GraphTab]:
        return [self.widget.widget(i) for i in range(self.widget.count())]

    def tab_for(self, document: GraphDocument) -> GraphTab | None:
        return next((tab for tab in self.tabs() if tab.document is document), None)

    def has_closed(self) -> bool:
        return bool(self._closed)

    def next_order(self) -> int:
        """A place in the tab order, taken when a file starts loading (see :meth:`add`)."""
        return next(self._order)

    # ---- opening and closing -------------------------------------------------------------------
    def add(self, document: GraphDocument, *, select: bool = True, order: int | None = None) -> GraphTab:
        """Show a document in a new tab. ``order`` places tabs of files opened together in the
        order they were given, whichever finished loading first."""
        document.tab_order = self.next_order() if order is None else order
        position = sum(1 for d in self._documents if d.tab_order <= document.tab_order)
        self._documents.insert(position, document)
        tab = GraphTab(document)
        tab.node_link.vertexClicked.connect(self.vertexClicked)
        index = self.widget.insertTab(position, tab, document.name)
        self.widget.setTabToolTip(index, document.source or document.name)
        qt = signals(document)
        qt.renamed.connect(lambda name, d=document: self._update_title(d, name))
        qt.cleanChanged.connect(lambda _clean, d=document: self._update_title(d, d.name))
        qt.changed.connect(lambda _s, d=document: self.documentChanged.emit(d))
        self.documentAdded.emit(document)
        if select:
            self.widget.setCurrentWidget(tab)
        return tab

    def select(self, document: GraphDocument) -> None:
        tab = self.tab_for(document)
        if tab is not None:
            self.widget.setCurrentWidget(tab)

    def close(self, document: GraphDocument | None) -> bool:
        """Close a graph's tab; it is kept (with its history and layout) for :meth:`reopen_closed`."""
        tab = self.tab_for(document) if document is not None else None
        if tab is None:
            return False
        tab.shutdown()
        self.widget.removeTab(self.widget.indexOf(tab))
        self._documents.remove(document)
        self._closed.append((document, {"positions": dict(tab.node_link.positions)}))
        del self._closed[:-MAX_CLOSED_KEPT]
        tab.deleteLater()
        self.documentClosed.emit(document)
        if not self._documents:
            self._on_tab_changed(-1)
        return True

    def close_all(self) -> None:
        for d in list(self._documents):
            self.close(d)

    def reopen_closed(self) -> GraphDocument | None:
        if not self._closed:
            return None
        document, extra = self._closed.pop()
        tab = self.add(document)
        if extra.get("positions"):
            tab.node_link.positions = extra["positions"]
            tab.node_link.refresh()
        return document

    def duplicate_current(self) -> GraphDocument | None:
        """A copy of the current graph (pages and all) in a new tab."""
        d = self._current
        if d is None:
            return None
        copy = GraphDocument(name=f"{d.name} (copy)", csr=d.csr(),
                             slotted=d.slotted.copy() if d.slotted is not None else None,
                             source=d.source, not_editable_reason=d.not_editable_reason)
        self.add(copy)
        return copy

    def step(self, step: int) -> None:
        """Select the next (``step`` 1) or previous (-1) tab, round the end."""
        if self.widget.count():
            self.widget.setCurrentIndex((self.widget.currentIndex() + step) % self.widget.count())

    def shutdown(self) -> None:
        for tab in self.tabs():
            tab.shutdown()

    # ---- reactions ------------------------------------------------------------------------------
    def _update_title(self, document: GraphDocument, name: str) -> None:
        if not shiboken6.isValid(self) or not shiboken6.isValid(self.widget):
            return                     # the window is being torn down
        tab = self.tab_for(document)
        if tab is not None:
            mark = "" if document.undo_stack.is_clean() else " •"
            self.widget.setTabText(self.widget.indexOf(tab), name + mark)

    def _on_tab_changed(self, _index: int) -> None:
        tab = self.widget.currentWidget()
        document = tab.document if tab is not None else None
        if document is self._current:
            return
        self._current = document
        self.undo_actions.set_document(document)
        self.currentDocumentChanged.emit(document)
