"""The Qt face of the document model: its notifications re-emitted as Qt signals.

The model (:mod:`explorer.model`) tells its observers through plain callback lists. Widgets do
not connect there: a callback list would keep calling a widget after Qt deleted it. Instead
each document gets one :class:`DocumentSignals`, a small ``QObject`` that observes the
document and its undo stack and re-emits what it hears; widgets connect to its signals, and
Qt ends those connections with the widget (and delivers them on the GUI thread).

``signals(document).changed.connect(view.refresh)``
"""

from __future__ import annotations

import weakref

from PySide6.QtCore import QCoreApplication, QObject, Signal

from explorer.model.document import GraphDocument

_SIGNALS: weakref.WeakKeyDictionary[GraphDocument, DocumentSignals] = weakref.WeakKeyDictionary()


class DocumentSignals(QObject):
    """One document's notifications as Qt signals."""

    changed = Signal(object)        # an EditSummary (or None after load / rename)
    renamed = Signal(str)
    syncedChanged = Signal()        # the dirty marks were cleared
    historyChanged = Signal()       # the undo stack: its steps, its position, its clean state
    cleanChanged = Signal(bool)     # the undo stack reached or left its clean (saved) state

    def __init__(self, document: GraphDocument):
        super().__init__()
        app = QCoreApplication.instance()
        if app is not None:
            self.moveToThread(app.thread())        # signals go to the GUI thread whoever asked first
        # the model keeps this object alive through these callbacks; it holds no reference back
        events = document.events
        events.changed.connect(self._changed)
        events.renamed.connect(self._renamed)
        events.synced.connect(self._synced)
        document.undo_stack.events.changed.connect(self._history_changed)
        document.undo_stack.events.clean_changed.connect(self._clean_changed)

    def _changed(self, summary) -> None:
        self.changed.emit(summary)

    def _renamed(self, name: str) -> None:
        self.renamed.emit(name)

    def _synced(self) -> None:
        self.syncedChanged.emit()

    def _history_changed(self) -> None:
        self.historyChanged.emit()

    def _clean_changed(self, clean: bool) -> None:
        self.cleanChanged.emit(clean)


def signals(document: GraphDocument) -> DocumentSignals:
    """The Qt signals of ``document`` (made on first use, one per document)."""
    found = _SIGNALS.get(document)
    if found is None:
        found = _SIGNALS[document] = DocumentSignals(document)
    return found
