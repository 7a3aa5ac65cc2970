"""The tab of one open graph: node-link view on the left, page map over page inspector on the right.

The tab follows its document: after every edit (or undo/redo) the map is redrawn and the
inspected page re-read, so what is shown is always the structure as it is now.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QSplitter, QStackedWidget, QVBoxLayout, QWidget

from explorer.model_signals import signals
from explorer.views.node_link import NodeLinkView
from explorer.views.page_inspector import PageInspector
from explorer.views.page_map import PageMapView


class GraphTab(QWidget):
    """Everything drawn for one document."""

    pageSelected = Signal(int)

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.document = document
        self._sized = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.node_link = NodeLinkView()
        self.splitter.addWidget(self._titled("node-link view", self.node_link))
        right = QSplitter(Qt.Orientation.Vertical)
        self.page_map = PageMapView()
        self.inspector = PageInspector()
        self.pages_stack = QStackedWidget()
        self.pages_message = QLabel()
        self.pages_message.setWordWrap(True)
        self.pages_message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.pages_message.setStyleSheet("color: #555; padding: 20px;")
        self.pages_stack.addWidget(self.page_map)
        self.pages_stack.addWidget(self.pages_message)
        right.addWidget(self._titled("page map", self.pages_stack))
        right.addWidget(self._titled("page inspector", self.inspector))
        right.setSizes([380, 420])
        self.right_splitter = right
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([560, 640])
        layout.addWidget(self.splitter)
        self.page_map.pageSelected.connect(self._on_page_selected)
        signals(document).changed.connect(self._on_changed)
        signals(document).syncedChanged.connect(self._on_changed)
        self.node_link.set_document(document)
        self._on_changed()
        if document.slotted is not None and document.slotted.num_pages:
            self.page_map.select_page(0)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if not self._sized and self.width() > 100:
            # proportions need the real width: the table columns would otherwise claim it all
            self._sized = True
            self.splitter.setSizes([int(self.width() * 0.42), int(self.width() * 0.58)])

    @staticmethod
    def _titled(title: str, widget: QWidget) -> QWidget:
        box = QWidget()
        lay = QVBoxLayout(box)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        label = QLabel(f"<b>{title}</b>")
        lay.addWidget(label)
        lay.addWidget(widget, 1)
        return box

    def _on_changed(self, _summary=None) -> None:
        g = self.document.slotted
        if g is None:
            self.pages_message.setText(f"No slotted pages: {self.document.not_editable_reason}")
            self.pages_stack.setCurrentWidget(self.pages_message)
            self.inspector.show_page(None, None)
            return
        self.pages_stack.setCurrentWidget(self.page_map)
        self.page_map.set_structure(g)
        page = self.page_map.selected
        if page is None and g.num_pages:
            page = 0
            self.page_map.select_page(0, emit=False)
        self.inspector.show_page(g, page)

    def _on_page_selected(self, page: int) -> None:
        self.inspector.show_page(self.document.slotted, page)
        self.pageSelected.emit(page)

    def select_page(self, page: int) -> None:
        self.page_map.select_page(page)

    def shutdown(self) -> None:
        self.node_link.cancel()
