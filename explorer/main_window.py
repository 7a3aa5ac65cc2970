"""The main window: one tab per open graph with its statistics and degree histogram."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import (
    QHBoxLayout,
    QMainWindow,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QWidget,
)

from kernels.errors import GraphKernelsError
from kernels.graph.csr import CSRGraph
from kernels.graph.stats import degree_histogram, graph_info
from kernels.targets import default_target, target_label


class GraphTab(QWidget):
    """Statistics table and degree histogram of one graph."""

    def __init__(self, graph: CSRGraph, parent=None):
        super().__init__(parent)
        self.graph = graph
        self.info = graph_info(graph)
        layout = QHBoxLayout(self)
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["property", "value"])
        self.table.verticalHeader().setVisible(False)
        for key, value in self._rows():
            r = self.table.rowCount()
            self.table.insertRow(r)
            self.table.setItem(r, 0, QTableWidgetItem(key))
            self.table.setItem(r, 1, QTableWidgetItem(value))
        self.table.resizeColumnsToContents()
        layout.addWidget(self.table, 1)
        self.histogram = pg.PlotWidget(title="degree histogram")
        self.histogram.setLabel("bottom", "degree")
        self.histogram.setLabel("left", "vertices")
        counts, edges = degree_histogram(graph)
        if len(counts):
            self.histogram.plot(edges, counts, stepMode="center", fillLevel=0, brush=(80, 120, 200, 150))
        layout.addWidget(self.histogram, 2)

    def _rows(self):
        i = self.info
        d = i["degree"]
        yield "vertices", f"{i['rows']:,}" if i["square"] else f"{i['rows']:,} x {i['cols']:,} matrix"
        yield "edges", f"{i['edges']:,}"
        yield "directed", "yes" if i["directed"] else "no"
        yield "weighted", "yes" if i["weighted"] else "no"
        yield "self-loops", f"{i['self_loops']:,}"
        yield "duplicate entries", f"{i['duplicate_entries']:,}"
        yield "degree min / mean / max", f"{d['min']} / {d['mean']:.2f} / {d['max']}"
        if i["components"] is not None:
            yield "components", f"{i['components']:,}"
        yield "memory (CSR)", f"{i['memory']['csr_bytes'] / 1024:.1f} KiB"
        yield "fingerprint", i["fingerprint"]


class MainWindow(QMainWindow):
    def __init__(self):
        super().__init__()
        self.setWindowTitle("GPU Graph Explorer")
        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.tabCloseRequested.connect(self.tabs.removeTab)
        self.setCentralWidget(self.tabs)
        self.statusBar().showMessage(f"target: {target_label(default_target())}")

    def open_path(self, path: str) -> GraphTab | None:
        from kernels.graph.io import read_graph

        try:
            graph = read_graph(path)
        except GraphKernelsError as exc:
            QMessageBox.warning(self, "Cannot open graph", str(exc))
            return None
        return self.add_graph(graph)

    def add_graph(self, graph: CSRGraph) -> GraphTab:
        tab = GraphTab(graph)
        self.tabs.addTab(tab, graph.name)
        self.tabs.setCurrentWidget(tab)
        return tab
