"""The page map: every page of the slotted structure as one cell of one image.

Cells are laid out row by row in logical page order. Fill colours an ordinary page on a
light-to-dark blue scale and a page of a large adjacency list on a purple scale; a page
written since the last device sync gets a red frame; the selected page a black outline.
Drawing is a few vectorised NumPy operations on an RGBA array shown by one
``pyqtgraph.ImageItem``, so 10^5 pages redraw in milliseconds.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QLabel, QVBoxLayout, QWidget

CELL = 6          # pixels per page cell in the image (a 1-pixel frame around a 4x4 core)
_BACKGROUND = np.array([250, 250, 250, 255], dtype=np.uint8)
_DIRTY = np.array([220, 30, 30, 255], dtype=np.uint8)
_ORDINARY_LOW = np.array([222, 235, 247], dtype=float)
_ORDINARY_HIGH = np.array([8, 69, 148], dtype=float)
_LARGE_LOW = np.array([218, 218, 235], dtype=float)     # purples: far from the red of "dirty"
_LARGE_HIGH = np.array([84, 39, 143], dtype=float)


MIN_COLUMNS = 16


def grid_columns(n_pages: int) -> int:
    """Columns of the map: roughly twice as wide as high, at least 16 (so that a map of a few
    pages shows small cells, not one giant square)."""
    return max(MIN_COLUMNS, int(math.ceil(math.sqrt(2 * n_pages))))


def page_colours(fill: np.ndarray, large: np.ndarray) -> np.ndarray:
    """RGB (uint8) per page: fill on a blue scale, large-list pages on a purple scale."""
    f = np.clip(np.asarray(fill, dtype=float), 0.0, 1.0)[:, None]
    ordinary = _ORDINARY_LOW + (_ORDINARY_HIGH - _ORDINARY_LOW) * f
    big = _LARGE_LOW + (_LARGE_HIGH - _LARGE_LOW) * f
    rgb = np.where(np.asarray(large, bool)[:, None], big, ordinary)
    return rgb.round().astype(np.uint8)


def render_map(stats: dict, columns: int) -> np.ndarray:
    """The map image, shape (rows*CELL, columns*CELL, 4), row-major (row 0 at the top)."""
    n = len(stats["fill"])
    rows = max(1, int(math.ceil(n / columns)))
    core = np.zeros((rows * columns, 4), dtype=np.uint8)
    core[:] = _BACKGROUND
    core[:n, :3] = page_colours(stats["fill"], stats["large"])
    frame = np.zeros((rows * columns, 4), dtype=np.uint8)
    frame[:] = _BACKGROUND
    frame[:n][np.asarray(stats["dirty"], bool)] = _DIRTY
    # cell pattern: frame ring (1 px) around a core (CELL-2 px)
    ring = np.ones((CELL, CELL), dtype=bool)
    ring[1:-1, 1:-1] = False
    core_grid = core.reshape(rows, columns, 1, 1, 4)
    frame_grid = frame.reshape(rows, columns, 1, 1, 4)
    cells = np.where(ring[None, None, :, :, None], frame_grid, core_grid)     # rows, cols, CELL, CELL, 4
    return np.ascontiguousarray(cells.transpose(0, 2, 1, 3, 4).reshape(rows * CELL, columns * CELL, 4))


class PageMapView(QWidget):
    """The map of a document's pages; click a cell to choose the page to inspect."""

    pageSelected = Signal(int)      # logical page number

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        layout.addWidget(self.caption)
        self.plot = pg.PlotWidget()
        self.plot.setBackground("w")
        self.plot.hideAxis("left")
        self.plot.hideAxis("bottom")
        self.plot.setMenuEnabled(False)
        self.plot.setAspectLocked(True)
        self.plot.invertY(True)
        self.plot.setToolTip("")
        layout.addWidget(self.plot, 1)
        self.legend = QLabel(
            "<span style='color:#08458f'>■</span> ordinary page (darker = fuller) &nbsp; "
            "<span style='color:#54278f'>■</span> large adjacency list &nbsp; "
            "<span style='color:#dc1e1e'>□</span> written since the last device sync")
        self.legend.setWordWrap(True)
        layout.addWidget(self.legend)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.selection = QGraphicsRectItem()
        pen = QPen(QColor(0, 0, 0))
        pen.setWidthF(2.0)
        pen.setCosmetic(True)
        self.selection.setPen(pen)
        self.selection.setVisible(False)
        self.plot.addItem(self.selection)
        self.plot.scene().sigMouseClicked.connect(self._on_click)
        self.plot.scene().sigMouseMoved.connect(self._on_move)
        self.stats: dict | None = None
        self.columns = 1
        self.selected: int | None = None
        self._rendered = None

    # ---- content ----------------------------------------------------------------------
    def set_structure(self, slotted) -> None:
        """Redraw from a slotted graph (``None``: clear)."""
        if slotted is None:
            self.stats = None
            self.image.clear()
            self.selection.setVisible(False)
            self.caption.setText("no slotted structure")
            return
        stats = slotted.page_stats()
        n = len(stats["fill"])
        # refit when the picture's shape changes (a rebuild on other pages, pages added or freed)
        shape = (slotted.page_size, grid_columns(n), -(-n // max(grid_columns(n), 1)))
        first = self.stats is None or shape != getattr(self, "_shape", None)
        self._shape = shape
        self.stats = stats
        self.columns = grid_columns(n)
        self._rendered = render_map(stats, self.columns)
        self.image.setImage(self._rendered, autoLevels=False, levels=(0, 255))
        dirty = int(np.count_nonzero(stats["dirty"]))
        large = int(np.count_nonzero(stats["large"]))
        mean_fill = float(np.mean(stats["fill"])) if n else 0.0
        self.caption.setText(
            f"<b>{n:,}</b> pages of {slotted.page_size} words · mean fill {mean_fill:.0%} · "
            f"{large:,} in large lists · <span style='color:#dc1e1e'>{dirty:,} written since the last sync</span>")
        if first:
            self.plot.autoRange(padding=0.02)
        if self.selected is not None and self.selected >= n:
            self.selected = n - 1 if n else None
        self._place_selection()

    def select_page(self, page: int | None, emit: bool = True) -> None:
        if self.stats is None or page is None or not 0 <= page < len(self.stats["fill"]):
            return
        self.selected = int(page)
        self._place_selection()
        if emit:
            self.pageSelected.emit(self.selected)

    def page_at(self, x: float, y: float) -> int | None:
        """Logical page under image coordinates (pixels), or None."""
        if self.stats is None:
            return None
        col, row = int(x // CELL), int(y // CELL)
        if x < 0 or y < 0 or col >= self.columns:
            return None
        page = row * self.columns + col
        return page if page < len(self.stats["fill"]) else None

    def cell_centre(self, page: int) -> QPointF:
        """Image coordinates of a page cell's centre (tests click there)."""
        row, col = divmod(page, self.columns)
        return QPointF((col + 0.5) * CELL, (row + 0.5) * CELL)

    def describe_page(self, page: int) -> str:
        s = self.stats
        text = (f"page {page} (physical {int(s['physical_page'][page])}): {int(s['vertices'][page])} vertex(es) "
                f"from {int(s['first_vertex'][page])}, {int(s['used_words'][page])} words used, "
                f"{int(s['free_words'][page])} free ({float(s['fill'][page]):.0%} full)")
        if s["large"][page]:
            text += f", part {int(s['large_position'][page]) + 1} of a {int(s['large_pages'][page])}-page large list"
        if s["dirty"][page]:
            text += ", written since the last sync"
        return text

    # ---- mouse ------------------------------------------------------------------------
    def _image_point(self, scene_pos):
        return self.image.mapFromScene(scene_pos)

    def _on_click(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        p = self._image_point(event.scenePos())
        page = self.page_at(p.x(), p.y())
        if page is not None:
            self.select_page(page)

    def _on_move(self, scene_pos) -> None:
        p = self._image_point(scene_pos)
        page = self.page_at(p.x(), p.y())
        self.plot.setToolTip(self.describe_page(page) if page is not None else "")

    def _place_selection(self) -> None:
        if self.selected is None or self.stats is None:
            self.selection.setVisible(False)
            return
        row, col = divmod(self.selected, self.columns)
        self.selection.setRect(QRectF(col * CELL - 0.5, row * CELL - 0.5, CELL + 1, CELL + 1))
        self.selection.setVisible(True)
