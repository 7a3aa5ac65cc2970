"""The node-link view of a small graph (pyqtgraph ``GraphItem``); click a vertex to pick it.

The layout is computed once per graph in a worker thread (:mod:`explorer.views.graph_layout`);
edits keep every placed vertex where it is and put new vertices next to their neighbours, so
the picture does not jump after each edit. Graphs above :data:`MAX_VERTICES` vertices or
:data:`MAX_EDGES` edges are not drawn: the view says so and points to the statistics.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QStackedLayout, QWidget

from explorer.model_signals import signals
from explorer.tasks import Task
from explorer.views.graph_layout import force_layout, place_new_vertices

MAX_VERTICES = 3000
MAX_EDGES = 30000
MAX_LABELS = 80

_NODE = QColor(70, 110, 190)
_PICK_U = QColor(240, 140, 20)
_PICK_V = QColor(30, 160, 70)


class NodeLinkView(QWidget):
    """Vertices and edges of a document; emits :attr:`vertexClicked` with the vertex id."""

    vertexClicked = Signal(int)
    layoutReady = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._stack = QStackedLayout(self)
        self.plot = pg.PlotWidget()
        self.plot.setBackground("w")
        self.plot.hideAxis("left")
        self.plot.hideAxis("bottom")
        self.plot.setAspectLocked(True)
        self.plot.setMenuEnabled(False)
        self.graph_item = pg.GraphItem()
        self.plot.addItem(self.graph_item)
        self.graph_item.scatter.sigClicked.connect(self._on_points_clicked)
        self.message = QLabel()
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #555; font-size: 11pt; padding: 20px;")
        self._stack.addWidget(self.plot)
        self._stack.addWidget(self.message)
        self.document = None
        self.positions: dict[int, np.ndarray] = {}
        self.ids = np.zeros(0, dtype=np.int64)            # vertex id of each drawn point
        self.picked: list[int] = []                        # highlighted vertices (source, target)
        self._labels: list[pg.TextItem] = []
        self._task: Task | None = None
        self.drawn = False

    # ---- document -----------------------------------------------------------------------
    def set_document(self, document) -> None:
        if self.document is not None:
            signals(self.document).changed.disconnect(self._on_changed)
        self.document = document
        self.positions = {}
        self.drawn = False
        if document is not None:
            signals(document).changed.connect(self._on_changed)
        self.refresh()

    def _on_changed(self, _summary=None) -> None:
        self.refresh()

    def too_large_reason(self) -> str:
        d = self.document
        if d.num_vertices > MAX_VERTICES:
            return f"{d.num_vertices:,} vertices"
        if d.num_edges > MAX_EDGES:
            return f"{d.num_edges:,} edges"
        return ""

    def refresh(self) -> None:
        d = self.document
        if d is None:
            self._show_message("no graph")
            return
        reason = self.too_large_reason()
        if reason:
            self._show_message(f"{reason}: too many to draw as nodes and links "
                               f"(the view draws up to {MAX_VERTICES:,} vertices and {MAX_EDGES:,} edges).\n"
                               "See the statistics, the degree histogram and the page map.")
            return
        if not d.csr().is_square:
            self._show_message("a rectangular matrix has no node-link view")
            return
        if not self.positions and self.live_vertices().size:
            self._start_layout()
            return
        self._draw()

    def live_vertices(self) -> np.ndarray:
        d = self.document
        if d.slotted is not None:
            return d.slotted.vertices()
        return np.arange(d.csr().n_rows, dtype=np.int64)

    def _show_message(self, text: str) -> None:
        self.message.setText(text)
        self._stack.setCurrentWidget(self.message)
        self.drawn = False

    # ---- layout in the background --------------------------------------------------------
    def _start_layout(self) -> None:
        if self._task is not None and self._task.running:
            return
        csr = self.document.csr()
        live = self.live_vertices()
        rows, cols = csr.row_of_entry(), csr.indices
        n = csr.n_rows
        self._show_message(f"computing a layout for {len(live):,} vertices…")

        def job(control):
            pos = force_layout(n, rows, cols, progress=lambda f: control.progress(f, "layout"),
                               cancelled=control.cancelled)
            return {int(v): pos[int(v)] for v in live}

        task = Task("node-link layout", job, self)
        task.finished.connect(lambda positions, t=task: self._on_layout(positions, t))
        task.failed.connect(lambda message: self._show_message(f"no layout: {message}"))
        self._task = task
        task.start()

    def _on_layout(self, positions, task=None) -> None:
        # a layout overtaken by restored positions (restore_positions) is dropped
        if self.document is None or (task is not None and task is not self._task):
            return
        self.positions = positions
        self._draw()
        self.layoutReady.emit()

    def restore_positions(self, positions: dict) -> None:
        """Positions saved with a session: they replace the drawing, and a layout still being
        computed for the graph (started when its tab was added) no longer replaces them."""
        if self._task is not None and self._task.running:
            self._task.cancel()
        self._task = None
        self.positions = {int(v): p for v, p in positions.items()}
        self.refresh()

    def busy(self) -> bool:
        """Whether a layout is being computed."""
        return self._task is not None and self._task.running

    def cancel(self) -> None:
        """Stop a running layout (window closing)."""
        if self._task is not None and self._task.running:
            self._task.cancel()
            self._task.wait(10)

    # ---- drawing -------------------------------------------------------------------------
    def _draw(self) -> None:
        d = self.document
        csr = d.csr()
        live = self.live_vertices()
        missing = [int(v) for v in live if int(v) not in self.positions]
        if missing:
            place_new_vertices(self.positions, missing, lambda v: csr.neighbors(v) if v < csr.n_rows else [])
        live_set = np.zeros(max(csr.n_rows, 1), dtype=bool)
        live_set[live] = True
        self.ids = live.astype(np.int64)
        index_of = np.full(max(csr.n_rows, 1), -1, dtype=np.int64)
        index_of[self.ids] = np.arange(len(self.ids))
        pos = np.array([self.positions[int(v)] for v in self.ids]) if len(self.ids) else np.zeros((0, 2))
        rows, cols = csr.row_of_entry().astype(np.int64), csr.indices.astype(np.int64)
        keep = live_set[rows] & live_set[cols] & (rows != cols)
        if not csr.directed:
            keep &= rows < cols
        adj = np.column_stack([index_of[rows[keep]], index_of[cols[keep]]]) if keep.any() else np.zeros((0, 2), int)
        n = len(self.ids)
        size = 12 if n <= 100 else (8 if n <= 1000 else 5)
        brushes = [pg.mkBrush(_NODE)] * n
        for colour, v in zip((_PICK_U, _PICK_V), self.picked, strict=False):
            if 0 <= v < len(index_of) and index_of[v] >= 0:
                brushes[int(index_of[v])] = pg.mkBrush(colour)
        pen = pg.mkPen(color=(120, 120, 120, 160 if n <= 500 else 90), width=1)
        self.graph_item.setData(pos=pos, adj=adj.astype(int), size=size, symbol="o", symbolBrush=brushes,
                                symbolPen=pg.mkPen("w"), pen=pen, pxMode=True)
        self._draw_labels(pos)
        self._stack.setCurrentWidget(self.plot)
        if not self.drawn:
            self.plot.autoRange(padding=0.08)
        self.drawn = True

    def _draw_labels(self, pos) -> None:
        for item in self._labels:
            self.plot.removeItem(item)
        self._labels = []
        if len(self.ids) > MAX_LABELS:
            return
        for v, p in zip(self.ids.tolist(), pos, strict=True):
            label = pg.TextItem(str(v), color=(30, 30, 30), anchor=(0.5, 1.3))
            label.setPos(float(p[0]), float(p[1]))
            self.plot.addItem(label)
            self._labels.append(label)

    # ---- picking ---------------------------------------------------------------------------
    def set_picked(self, vertices: list[int]) -> None:
        self.picked = [int(v) for v in vertices][:2]
        if self.drawn:
            self._draw()

    def _on_points_clicked(self, _scatter, points, _event=None) -> None:
        if len(points) and len(self.ids):
            self.vertexClicked.emit(int(self.ids[points[0].index()]))

    def scene_position_of(self, v: int) -> QPointF:
        """Where vertex ``v`` is drawn, in view (data) coordinates (tests click there)."""
        p = self.positions[int(v)]
        return QPointF(float(p[0]), float(p[1]))
