"""The page inspector: one page drawn zone by zone, like the thesis' table of a slotted page.

A strip shows the page's words to scale (header, each record, the free gap, the slots); the
table below lists them: the three header words, each record (its vertex, the degree word and
the adjacency list), the free gap, and each slot pair (offset of the degree word, vertex id).
Rows are coloured by zone.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPixmap
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

ZONE_COLOURS = {
    "header": QColor(210, 210, 210),
    "record": QColor(199, 233, 192),
    "record_alt": QColor(161, 217, 155),
    "free": QColor(255, 255, 255),
    "slot": QColor(198, 219, 239),
    "slot_alt": QColor(158, 202, 225),
    "large": QColor(253, 208, 162),
}
MAX_LIST_SHOWN = 48


def _list_text(neighbors, weights) -> str:
    shown = neighbors[:MAX_LIST_SHOWN]
    if weights is not None:
        parts = [f"{v} ({w:g})" for v, w in zip(shown, weights[:MAX_LIST_SHOWN], strict=False)]
    else:
        parts = [str(v) for v in shown]
    more = len(neighbors) - len(shown)
    return "[" + ", ".join(parts) + (f", … {more} more" if more > 0 else "") + "]"


def layout_rows(layout: dict) -> list[tuple[str, str, str, str, str]]:
    """(zone colour key, words, zone, vertex, content) per table row of a page layout."""
    rows = []
    h = layout["header"]
    rows.append(("header", "0", "header: vertices in page", "", str(h["vertices"])))
    rows.append(("header", "1", "header: end of records", "", str(h["records_end"])))
    rows.append(("header", "2", "header: large-list flag", "", str(h["large"])))
    large = layout["large_list"]
    for k, r in enumerate(layout["records"]):
        key = "large" if large else ("record" if k % 2 == 0 else "record_alt")
        degree_note = f"degree word {r['degree']}"
        if large and large["position"] > 0:
            degree_note = f"entries in this page {r['degree']}"
        elif large:
            degree_note = f"total degree {r['degree']}"
        rows.append((key, f"{r['degree_word']}–{max(r['list_end'] - 1, r['degree_word'])}",
                     f"record {k}", str(r["vertex"]),
                     f"{degree_note}; list {_list_text(r['neighbors'], r['weights'])}"))
    start, end = layout["free"]
    rows.append(("free", f"{start}–{end - 1}" if end > start else "—", "free gap", "",
                 f"{max(end - start, 0)} words"))
    for k, s in enumerate(layout["slots"]):
        a, b = s["words"]
        rows.append(("slot" if k % 2 == 0 else "slot_alt", f"{min(a, b)}–{max(a, b)}", f"slot {k}",
                     str(s["vertex"]), f"(offset {s['offset']}, vertex {s['vertex']})"))
    return rows


def strip_segments(layout: dict) -> list[tuple[int, int, str]]:
    """(first word, end word, zone colour key) covering the whole page, in word order."""
    segs = [(0, 3, "header")]
    large = layout["large_list"]
    for k, r in enumerate(layout["records"]):
        key = "large" if large else ("record" if k % 2 == 0 else "record_alt")
        segs.append((r["degree_word"], r["list_end"], key))
    start, end = layout["free"]
    if end > start:
        segs.append((start, end, "free"))
    n = len(layout["slots"])
    for k in range(n - 1, -1, -1):
        a, _ = layout["slots"][k]["words"]
        segs.append((a, a + 2, "slot" if k % 2 == 0 else "slot_alt"))
    return segs


class WordStrip(QLabel):
    """The page's words to scale, coloured by zone."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMinimumHeight(26)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._segments: list[tuple[int, int, str]] = []
        self._page_size = 1

    def set_layout(self, layout: dict | None) -> None:
        self._segments = strip_segments(layout) if layout else []
        self._page_size = layout["page_size"] if layout else 1
        self._redraw()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override: the pixmap must not set the width
        return QSize(60, 26)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(300, 26)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._redraw()

    def _redraw(self) -> None:
        w, h = max(self.width(), 10), 24
        ratio = self.devicePixelRatioF()
        pix = QPixmap(int(w * ratio), int(h * ratio))
        pix.setDevicePixelRatio(ratio)
        pix.fill(QColor(255, 255, 255))
        painter = QPainter(pix)
        scale = (w - 1) / self._page_size
        for a, b, key in self._segments:
            painter.fillRect(QRectF(a * scale, 2, max((b - a) * scale, 1.0), h - 4), ZONE_COLOURS[key])
        painter.setPen(QColor(90, 90, 90))
        painter.drawRect(QRectF(0, 2, w - 1, h - 4))
        painter.end()
        self.setPixmap(pix)


class PageInspector(QWidget):
    """Header, records, free gap and slots of the page chosen on the map."""

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel("click a page on the map to inspect it")
        self.title.setWordWrap(True)
        layout.addWidget(self.title)
        self.strip = WordStrip()
        layout.addWidget(self.strip)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["words", "zone", "vertex", "content"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        header = self.table.horizontalHeader()
        # columns are sized once after filling: ResizeToContents would re-measure on every cell
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        layout.addWidget(self.table, 1)
        self.page: int | None = None
        self.layout_data: dict | None = None

    def show_page(self, slotted, page: int | None) -> None:
        """Show logical page ``page`` of ``slotted`` (``None`` or out of range: clear)."""
        if slotted is None or page is None or not 0 <= page < slotted.num_pages:
            self.page = None
            self.layout_data = None
            self.title.setText("click a page on the map to inspect it" if slotted is not None
                               else "no slotted structure")
            self.strip.set_layout(None)
            self.table.setRowCount(0)
            return
        lay = slotted.page_layout(page)
        self.page = page
        self.layout_data = lay
        h = lay["header"]
        used = lay["free"][0] + 2 * h["vertices"]
        title = (f"<b>page {page}</b> (physical slot {lay['physical_page']}) · {lay['page_size']} words · "
                 f"{h['vertices']} vertex(es) · {used} words used, {lay['free'][1] - lay['free'][0]} free")
        if lay["large_list"]:
            ll = lay["large_list"]
            title += (f" · page {ll['position'] + 1} of {ll['pages']} of vertex {ll['vertex']}'s large list "
                      f"({ll['entries_here']} entries here)")
        if lay["dirty"]:
            title += " · <span style='color:#dc1e1e'>written since the last sync</span>"
        self.title.setText(title)
        self.strip.set_layout(lay)
        rows = layout_rows(lay)
        self.table.setUpdatesEnabled(False)
        self.table.setRowCount(len(rows))
        for r, (key, words, zone, vertex, content) in enumerate(rows):
            colour = ZONE_COLOURS[key]
            for c, text in enumerate((words, zone, vertex, content)):
                item = QTableWidgetItem(text)
                item.setBackground(colour)
                item.setForeground(QColor(20, 20, 20))
                if c == 3:
                    item.setToolTip(text)
                if c in (0, 2):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, item)
        for col in range(3):
            self.table.resizeColumnToContents(col)
        self.table.setUpdatesEnabled(True)

    def rows_text(self) -> list[tuple[str, ...]]:
        """The table as text (tests compare it before and after an edit)."""
        return [tuple(self.table.item(r, c).text() for c in range(4)) for r in range(self.table.rowCount())]
