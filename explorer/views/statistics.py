"""Statistics of the current graph: a property table and the degree histogram.

Statistics of large graphs (components, duplicates) take a moment, so above
:data:`BACKGROUND_ENTRIES` stored entries they are computed in a worker thread from an
immutable CSR snapshot; the table says "updating…" meanwhile and the window stays live.
Updates after edits are coalesced (an edit burst triggers one computation).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from explorer.model_signals import signals
from explorer.tasks import Task
from kernels.graph.stats import graph_info
from kernels.memory import format_bytes

BACKGROUND_ENTRIES = 500_000
DEBOUNCE_MS = 60


def degree_counts(degrees: np.ndarray, bins: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Histogram of degrees: one bin per degree up to 100, log-spaced bins beyond."""
    if len(degrees) == 0:
        return np.zeros(0), np.zeros(1)
    top = max(int(degrees.max()), 1)
    if top > 100:
        edges = np.unique(np.concatenate([[0], np.geomspace(1, top + 1, bins)]).astype(np.int64))
    else:
        edges = np.arange(0, top + 2)
    return np.histogram(degrees, bins=edges)


def compute_statistics(csr, live: np.ndarray | None, pages: dict | None, one_sided: bool = False) -> dict:
    """Everything the panel shows, as plain values (Qt-free, safe in a worker thread).

    ``live`` are the stored vertex ids of a slotted graph (removed ids are empty CSR rows and
    are left out of vertex counts and degrees); ``pages`` is the slotted summary."""
    info = graph_info(csr, page_size=pages["page_size"] if pages else None)     # None: the core's rule
    degrees = csr.degrees()
    removed = 0
    if live is not None and csr.is_square:
        removed = csr.n_rows - len(live)
        degrees = degrees[live]
        if removed and info["components"] is not None and not one_sided:
            info["components"] -= removed            # each removed id was an isolated row
            info["isolated_vertices"] -= removed
    info["removed_ids"] = removed
    info["live_degree"] = {
        "min": int(degrees.min()) if len(degrees) else 0,
        "mean": float(degrees.mean()) if len(degrees) else 0.0,
        "max": int(degrees.max()) if len(degrees) else 0,
    }
    info["histogram"] = degree_counts(degrees)
    info["pages"] = pages
    return info


def statistics_rows(info: dict) -> list[tuple[str, str]]:
    rows = []
    if info["square"]:
        v = f"{info['rows'] - info['removed_ids']:,}"
        if info["removed_ids"]:
            v += f" ({info['removed_ids']:,} removed ids)"
        rows.append(("vertices", v))
    else:
        rows.append(("matrix", f"{info['rows']:,} x {info['cols']:,}"))
    stored = "" if info["directed"] else f" ({info['stored_entries']:,} stored entries)"
    rows.append(("edges", f"{info['edges']:,}{stored}"))
    rows.append(("directed", "yes" if info["directed"] else "no"))
    rows.append(("weighted", "yes" if info["weighted"] else "no"))
    d = info["live_degree"]
    rows.append(("degree min / mean / max", f"{d['min']:,} / {d['mean']:.2f} / {d['max']:,}"))
    if info["isolated_vertices"] is not None:
        rows.append(("isolated vertices", f"{info['isolated_vertices']:,}"))
    if info["components"] is not None:
        rows.append(("components (weak)", f"{info['components']:,}"))
    rows.append(("self-loops", f"{info['self_loops']:,}"))
    rows.append(("duplicate entries", f"{info['duplicate_entries']:,}"))
    rows.append(("memory as CSR", format_bytes(info["memory"]["csr_bytes"])))
    pages = info.get("pages")
    if pages:
        rows.append(("memory as slotted pages", f"{format_bytes(pages['memory']['slotted_bytes'])} "
                     f"({pages['pages']:,} pages of {pages['page_size']} words)"))
        rows.append(("page fill min / mean / max", f"{pages['fill']['min']:.0%} / {pages['fill']['mean']:.0%} / "
                     f"{pages['fill']['max']:.0%}"))
        ll = pages["large_lists"]
        rows.append(("large adjacency lists",
                     f"{ll['count']:,} ({ll['pages']:,} pages, longest {ll['largest_pages']})"))
    else:
        rows.append(("memory as slotted pages (estimate)", format_bytes(info["memory"]["slotted_bytes_estimate"])))
    rows.append(("fingerprint", info["fingerprint"]))
    for note in info.get("notices", []):
        rows.append(("note", note))
    return rows



class StatisticsView(QWidget):
    """Table of properties over a degree histogram, following one document."""

    updated = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel()
        self.title.setWordWrap(True)
        layout.addWidget(self.title)
        split = QSplitter(Qt.Orientation.Vertical)
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["property", "value"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        split.addWidget(self.table)
        self.histogram = pg.PlotWidget()
        self.histogram.setBackground("w")
        self.histogram.setTitle("degree histogram", color="#333")
        self.histogram.setLabel("bottom", "degree")
        self.histogram.setLabel("left", "vertices")
        self.histogram.setMinimumHeight(120)
        split.addWidget(self.histogram)
        split.setSizes([300, 180])
        layout.addWidget(split, 1)
        self.document = None
        self.info: dict | None = None
        self.info_revision = -1
        self._task: Task | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.recompute)

    def set_document(self, document) -> None:
        if self.document is not None:
            signals(self.document).changed.disconnect(self._schedule)
            signals(self.document).renamed.disconnect(self._on_renamed)
        self.document = document
        self.info = None
        self.info_revision = -1
        if document is None:
            self.title.setText("no graph open")
            self.table.setRowCount(0)
            self.histogram.clear()
            return
        signals(document).changed.connect(self._schedule)
        signals(document).renamed.connect(self._on_renamed)
        self._on_renamed(document.name)
        self.recompute()

    def _on_renamed(self, _name: str) -> None:
        d = self.document
        kind = "editable (slotted pages)" if d.editable else f"read-only: {d.not_editable_reason}"
        # two lines, not three: on a 768-pixel screen the histogram below needs the room
        self.title.setText(f"<b>{d.name}</b> <small>· {kind}<br>{d.source or 'made in this session'}</small>")

    def _schedule(self, _summary=None) -> None:
        self._timer.start()

    def recompute(self) -> None:
        """Recompute for the document's current revision (in the background when large)."""
        d = self.document
        if d is None:
            return
        revision = d.revision
        csr = d.csr()
        g = d.slotted
        live = g.vertices() if g is not None else None
        pages = None
        if g is not None:
            from kernels.graph.slotted import summary

            pages = summary(g)
        one_sided = g.one_sided_entries if g is not None else False
        if csr.nnz <= BACKGROUND_ENTRIES:
            self._show(revision, compute_statistics(csr, live, pages, one_sided))
            return
        if self._task is not None and self._task.running:
            self._task.cancel()
        self.table.setRowCount(0)
        self.title.setText(self.title.text() + "<br><i>updating statistics…</i>")
        task = Task("statistics", lambda control: compute_statistics(csr, live, pages, one_sided), self)
        task.finished.connect(lambda info, r=revision: self._show(r, info))
        self._task = task
        task.start()

    def _show(self, revision: int, info: dict) -> None:
        if self.document is None or revision != self.document.revision:
            return
        self.info = info
        self.info_revision = revision
        self.document.store_info(revision, info)
        self._on_renamed(self.document.name)
        rows = statistics_rows(info)
        self.table.setRowCount(len(rows))
        for r, (key, value) in enumerate(rows):
            self.table.setItem(r, 0, QTableWidgetItem(key))
            item = QTableWidgetItem(value)
            item.setToolTip(value)
            self.table.setItem(r, 1, item)
        self.histogram.clear()
        counts, edges = info["histogram"]
        skewed = bool(len(edges) > 1 and edges[-1] > 101)
        self.histogram.setLogMode(x=skewed, y=skewed)
        if skewed:
            # a skewed distribution reads best log-log: one point per non-empty bin of degree >= 1
            centres = np.sqrt(np.maximum(edges[:-1], 1) * np.maximum(edges[1:] - 1, 1))
            keep = (counts > 0) & (edges[:-1] >= 1)
            self.histogram.plot(centres[keep], counts[keep], pen=pg.mkPen((40, 70, 140), width=1.5),
                                symbol="o", symbolSize=5, symbolBrush=(70, 110, 190))
            self.histogram.setLabel("bottom", "degree (log)")
            self.histogram.setLabel("left", "vertices (log)")
        elif len(counts):
            self.histogram.plot(edges, counts, stepMode="center", fillLevel=0,
                                brush=(70, 110, 190, 160), pen=pg.mkPen((40, 70, 140), width=1))
            self.histogram.setLabel("bottom", "degree")
            self.histogram.setLabel("left", "vertices")
        self.updated.emit()

    def value(self, key: str) -> str | None:
        """The shown value of a property (tests read the counts here)."""
        for r in range(self.table.rowCount()):
            if self.table.item(r, 0).text() == key:
                return self.table.item(r, 1).text()
        return None

    def cancel(self) -> None:
        self._timer.stop()
        if self._task is not None and self._task.running:
            self._task.cancel()
            self._task.wait(10)
