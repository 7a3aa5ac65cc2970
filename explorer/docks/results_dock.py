"""The Results dock: the run history, the timing chart, the sweep heatmaps, and export.

Runs finished here and result files made by ``graph-kernels`` anywhere (``.jsonl`` run
records, sweep ``.json``) land in the same views. Select rows of the history to compare
them in the timing chart (nothing selected: the latest runs of the latest family); choose a
baseline variant for the speedup view. A sweep's heatmap fills in live as its cells finish;
a cancelled sweep keeps the cells that did. Pictures export to PNG and SVG, data to CSV,
sweeps to JSON and runs to JSON lines, which ``graph-kernels`` and this dock read back.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.compute import ComputeClient, ComputeTask
from explorer.plots.export import save_offscreen
from explorer.plots.heatmap_view import HeatmapView
from explorer.plots.history_table import HistoryModel, HistoryTable
from explorer.plots.roofline_view import RooflineView
from explorer.plots.timing_chart import TimingChart
from explorer.window.compute_dock import ComputeDock
from kernels.errors import GraphFormatError, GraphKernelsError
from kernels.results import (
    dumps,
    load_sweep,
    read_records,
    records_to_csv,
    save_sweep,
    share_like_other_files,
    sweep_to_csv,
)

LATEST_RUNS_SHOWN = 12
HISTORY_SHARE = 0.45          # of the dock's width: ✓, run, median, target, launch and parameters in view
NO_BASELINE = "no speedup view"


def _plain(obj):
    """JSON-able copy (records from the worker may hold NumPy scalars)."""
    return json.loads(dumps(obj))



TIMING_METRICS = (("median time", "time"), ("% of measured bandwidth", "pct-bandwidth"),
                  ("% of roofline bound", "pct-bound"))
HEATMAP_METRICS = (("median time", "time"), ("% of measured bandwidth", "pct-bandwidth"),
                   ("% of roofline bound", "pct-bound"), ("energy per launch", "energy"))

class ResultsDock(QDockWidget, ComputeDock):
    """History table | timing chart and heatmap tabs; a toolbar for comparing and exporting."""

    recordsAdded = Signal(int)           # how many
    sweepChanged = Signal(int)           # index in self.sweeps
    resumableChanged = Signal()          # the shown sweep may have become resumable, or stopped being so

    def __init__(self, window):
        super().__init__("Results", window)
        self.setObjectName("ResultsDock")
        self.window_ = window
        self.client = ComputeClient.for_window(window)
        # {"sweep": dict, "source": path opened or "", "label": str, "file": the sweep file it is in or ""}
        self.sweeps: list[dict] = []
        self._live: dict[int, int] = {}  # id(task) -> index in self.sweeps
        self._live_since: dict[int, float] = {}  # id(task) -> when it started (the live cells/s)
        # id(task) -> the entry's sweep before Resume (a refusal restores it)
        self._before_resume: dict[int, dict] = {}

        body = QWidget()
        outer = QVBoxLayout(body)
        outer.setContentsMargins(4, 4, 4, 4)
        bar = QHBoxLayout()
        self.open_button = QPushButton("Open…")
        self.open_button.setToolTip("open run records (.jsonl) or a sweep (.json) made by graph-kernels (Ctrl+Alt+O)")
        self.open_button.clicked.connect(self.open_dialog)
        bar.addWidget(self.open_button)
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        bar.addWidget(self.export_button)
        bar.addSpacing(12)
        # the shown view's controls (timing chart | heatmap) share this row: on a 768-pixel screen
        # a row of their own took the room of two heatmap rows
        self.view_controls = QStackedWidget()
        timing_page = QWidget()
        timing_bar = QHBoxLayout(timing_page)
        timing_bar.setContentsMargins(0, 0, 0, 0)
        timing_bar.addWidget(QLabel("speedup vs"))
        self.baseline_box = QComboBox()
        self.baseline_box.setToolTip("the variant every shown run is compared with (its fastest run on the same input)")
        self.baseline_box.setMinimumContentsLength(14)
        timing_bar.addWidget(self.baseline_box)
        self.log_box = QCheckBox("log scale")
        self.log_box.setChecked(True)
        self.log_box.setToolTip("time axis on a log scale (bars start half a decade below the fastest run)")
        timing_bar.addWidget(self.log_box)
        timing_bar.addWidget(QLabel("show"))
        self.timing_metric_box = QComboBox()
        for label, metric in TIMING_METRICS:
            self.timing_metric_box.addItem(label, metric)
        self.timing_metric_box.setToolTip("the bars' figure: the median time, or each GPU run's fraction of its "
                                          "device's measured copy bandwidth or roofline bound (graph-kernels "
                                          "device-peaks; L2: the input stayed in L2)")
        timing_bar.addWidget(self.timing_metric_box)
        timing_bar.addStretch(1)
        self.view_controls.addWidget(timing_page)
        bar.addWidget(self.view_controls, 1)
        self.selection_label = QLabel()
        self.selection_label.setStyleSheet("color: #555;")
        bar.addWidget(self.selection_label)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("remove the selected runs from the history (Delete)")
        self.remove_button.clicked.connect(self.remove_selected)
        bar.addWidget(self.remove_button)
        outer.addLayout(bar)

        self.model = HistoryModel(self)
        self.table = HistoryTable(self.model)
        self.timing_chart = TimingChart()
        self.heatmap = HeatmapView()
        heat_controls = QWidget()
        heat_bar = QHBoxLayout(heat_controls)
        heat_bar.setContentsMargins(0, 0, 0, 0)
        heat_bar.addWidget(QLabel("sweep"))
        self.sweep_box = QComboBox()
        self.sweep_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.sweep_box.setMinimumContentsLength(16)
        heat_bar.addWidget(self.sweep_box, 1)
        heat_bar.addWidget(QLabel("rows"))
        self.rows_box = QComboBox()
        heat_bar.addWidget(self.rows_box)
        heat_bar.addWidget(QLabel("columns"))
        self.cols_box = QComboBox()
        heat_bar.addWidget(self.cols_box)
        self.swap_button = QPushButton("⇄")
        self.swap_button.setToolTip("swap rows and columns")
        self.swap_button.setMaximumWidth(34)
        self.swap_button.clicked.connect(self.swap_axes)
        heat_bar.addWidget(self.swap_button)
        heat_bar.addWidget(QLabel("show"))
        self.metric_box = QComboBox()
        for label, metric in HEATMAP_METRICS:
            self.metric_box.addItem(label, metric)
        self.metric_box.setToolTip("what the cells show: the median time, the fraction of the device's measured "
                                   "copy bandwidth or of the roofline bound (graph-kernels device-peaks; L2: the "
                                   "input stayed in L2), or the energy per launch (sweeps made with --energy)")
        heat_bar.addWidget(self.metric_box)
        self.view_controls.addWidget(heat_controls)
        # the stacked bars are as wide as the widest page: let their combo boxes shrink to a few
        # characters (the full text is in the drop-down) so that the window fits 1366 px
        for box, chars in ((self.baseline_box, 10), (self.timing_metric_box, 8), (self.sweep_box, 10),
                           (self.rows_box, 5), (self.cols_box, 5), (self.metric_box, 8)):
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(chars)
        self.roofline = RooflineView()
        roof_controls = QWidget()
        roof_bar = QHBoxLayout(roof_controls)
        roof_bar.setContentsMargins(0, 0, 0, 0)
        roof_bar.addWidget(QLabel("points"))
        self.roof_source_box = QComboBox()
        self.roof_source_box.addItem("runs (the selected, or all)", "runs")
        self.roof_source_box.addItem("the shown sweep's cells", "sweep")
        self.roof_source_box.setToolTip("one point per run of the history, or per cell of the sweep in the Heatmap tab")
        roof_bar.addWidget(self.roof_source_box)
        roof_bar.addStretch(1)
        self.view_controls.addWidget(roof_controls)

        self.tabs = QTabWidget()
        self.tabs.addTab(self.timing_chart, "Timing")
        self.tabs.addTab(self.heatmap, "Heatmap")
        self.tabs.addTab(self.roofline, "Roofline")
        self.tabs.currentChanged.connect(self.view_controls.setCurrentIndex)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.table)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(0, 5)
        splitter.setStretchFactor(1, 6)
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([int(HISTORY_SHARE * 1000), int((1 - HISTORY_SHARE) * 1000)])
        self.splitter = splitter
        outer.addWidget(splitter, 1)
        self.setWidget(body)

        self._build_export_menu()
        self._install_menu(window)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self.refresh_chart())
        self.baseline_box.currentIndexChanged.connect(lambda _i: self.refresh_chart())
        self.log_box.toggled.connect(self.timing_chart.set_log_scale)
        self.timing_metric_box.currentIndexChanged.connect(lambda _i: self._timing_metric_chosen())
        self.sweep_box.currentIndexChanged.connect(self._sweep_chosen)
        self.rows_box.currentIndexChanged.connect(lambda _i: self.redraw_heatmap())
        self.cols_box.currentIndexChanged.connect(lambda _i: self.redraw_heatmap())
        self.metric_box.currentIndexChanged.connect(lambda _i: self.redraw_heatmap())
        self.roof_source_box.currentIndexChanged.connect(lambda _i: self.redraw_roofline())
        self.client.taskStarted.connect(self._on_task_started)
        self.sweep_box.currentIndexChanged.connect(lambda _i: self.resumableChanged.emit())
        self.sweepChanged.connect(lambda _i: self.resumableChanged.emit())
        self._update_baselines()
        self.refresh_chart()
        run_dock = window.findChild(QDockWidget, "RunDock")
        if run_dock is not None and hasattr(run_dock, "watch_results"):
            run_dock.watch_results(self)          # its Resume Sweep follows the shown sweep

    # ==== menus =======================================================================================
    def _build_export_menu(self) -> None:
        menu = QMenu(self)
        entries = (
            ("Timing Chart as PNG…", lambda: self._export_dialog("timing chart", "png", self.export_timing)),
            ("Timing Chart as SVG…", lambda: self._export_dialog("timing chart", "svg", self.export_timing)),
            None,
            ("Heatmap as PNG…", lambda: self._export_dialog("heatmap", "png", self.export_heatmap)),
            ("Heatmap as SVG…", lambda: self._export_dialog("heatmap", "svg", self.export_heatmap)),
            ("Heatmap Table as CSV…", lambda: self._export_dialog("heatmap", "csv", self.export_heatmap_csv)),
            ("Sweep as CSV (one row per configuration)…",
             lambda: self._export_dialog("sweep", "csv", self.export_sweep)),
            ("Sweep as JSON (graph-kernels reads it)…",
             lambda: self._export_dialog("sweep", "json", self.export_sweep)),
            None,
            ("Runs as CSV…", lambda: self._export_dialog("runs", "csv", self.export_runs)),
            ("Runs as JSON Lines…", lambda: self._export_dialog("runs", "jsonl", self.export_runs)),
        )
        for entry in entries:
            if entry is None:
                menu.addSeparator()
                continue
            act = menu.addAction(entry[0])
            act.triggered.connect(lambda _c=False, f=entry[1]: f())
        self.export_menu = menu
        self.export_button.setMenu(menu)

    def _install_menu(self, window) -> None:
        bar = window.menuBar()
        menu = QMenu("Res&ults", bar)
        view_menu = getattr(window, "view_menu", None)
        if view_menu is not None:
            bar.insertMenu(view_menu.menuAction(), menu)
        else:
            bar.addMenu(menu)
        self.menu = menu
        self.open_action = QAction("Open &Results…", window)
        self.open_action.setShortcut(QKeySequence("Ctrl+Alt+O"))
        self.open_action.setStatusTip("open run records (.jsonl) or sweeps (.json) made by graph-kernels")
        self.open_action.triggered.connect(lambda _c=False: self.open_dialog())
        menu.addAction(self.open_action)
        self._add_to_file_menu(window)
        from explorer.window.compare_window import install_compare_action

        self.compare_window = None
        self.compare_action = install_compare_action(window, self)      # one tuning, two GPUs
        menu.addMenu(self.export_menu).setText("&Export")
        menu.addSeparator()
        for text, key, index in (("Show &Timing Chart", "Ctrl+Alt+T", 0), ("Show &Heatmap", "Ctrl+Alt+H", 1),
                                 ("Show Roo&fline", "Ctrl+Alt+L", 2)):
            act = QAction(text, window)
            act.setShortcut(QKeySequence(key))
            act.triggered.connect(lambda _c=False, i=index: self._show_tab(i))
            menu.addAction(act)
        remove = QAction("&Remove Selected Runs", self.table)
        remove.setShortcut(QKeySequence.StandardKey.Delete)
        remove.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        remove.triggered.connect(lambda _c=False: self.remove_selected())
        self.table.addAction(remove)
        clear = QAction("&Clear History", window)
        clear.triggered.connect(lambda _c=False: self.clear_history())
        menu.addAction(clear)

    def _add_to_file_menu(self, window) -> None:
        """File ▸ Open Results… next to the other ways of opening files."""
        for top in window.menuBar().actions():
            menu = top.menu()
            if menu is None or top.text().replace("&", "") != "File":
                continue
            actions = menu.actions()
            anchor = next((a for a in actions if a.text().replace("&", "").startswith("Open Session")), None)
            if anchor is not None:
                index = actions.index(anchor)
                before = actions[index - 1] if index > 0 and actions[index - 1].isSeparator() else anchor
                menu.insertAction(before, self.open_action)
            else:
                menu.addAction(self.open_action)
            return

    def _show_tab(self, index: int) -> None:
        self.show()
        self.raise_()
        self.tabs.setCurrentIndex(index)

    # ==== runs ==========================================================================================
    def add_records(self, records: list[dict], source: str = "", select: bool = False) -> None:
        rows = self.model.add_records([_plain(r) for r in records], source)
        self._update_baselines()
        if select and rows:
            self.table.clearSelection()
            sel = self.table.selectionModel()
            for row in rows:
                sel.select(self.model.index(row, 0),
                           sel.SelectionFlag.Select | sel.SelectionFlag.Rows)
        if rows:
            self.table.scrollTo(self.model.index(rows[-1], 0))
        self.refresh_chart()
        self.recordsAdded.emit(len(rows))

    def shown_records(self) -> list[dict]:
        """The runs in the timing chart: the selected rows, or the latest of the latest family."""
        rows = self.table.selected_rows()
        records = self.model.records
        if rows:
            self.selection_label.setText(f"{len(rows)} selected")
            return [records[r] for r in rows]
        self.selection_label.setText("select runs to compare" if records else "")
        if not records:
            return []
        family = records[-1].get("family")
        latest = [r for r in records if r.get("family") == family]
        return latest[-LATEST_RUNS_SHOWN:]

    def refresh_chart(self) -> None:
        base = self.baseline_box.currentData()
        self.timing_chart.set_records(self.shown_records(), baseline=base, pool=self.model.records)
        self.redraw_roofline()

    def _timing_metric_chosen(self) -> None:
        metric = self.timing_metric_box.currentData() or "time"
        self.log_box.setEnabled(metric == "time")           # percentages are drawn on a linear 0-100 % axis
        self.timing_chart.set_metric(metric)

    def redraw_roofline(self) -> None:
        """The roofline of the shown runs, or of the shown sweep's cells (the points box)."""
        from kernels.roofline.chart import sweep_records

        if self.roof_source_box.currentData() == "sweep":
            sweep = self.current_sweep()
            self.roofline.set_records(sweep_records(sweep) if sweep else [], "sweep cells")
        else:           # every run of the history on one roof (the selected ones when there is a selection)
            rows = self.table.selected_rows()
            records = self.model.records
            self.roofline.set_records([records[r] for r in rows] if rows else records, "runs")

    def _update_baselines(self) -> None:
        current = self.baseline_box.currentData()
        names = []
        for r in self.model.records:
            if r.get("variant") not in names:
                names.append(r.get("variant"))
        self.baseline_box.blockSignals(True)
        self.baseline_box.clear()
        self.baseline_box.addItem(NO_BASELINE, None)
        for n in names:
            self.baseline_box.addItem(n, n)
        index = self.baseline_box.findData(current) if current else -1
        self.baseline_box.setCurrentIndex(max(index, 0))
        self.baseline_box.blockSignals(False)

    def set_baseline(self, variant: str | None) -> None:
        index = self.baseline_box.findData(variant) if variant else 0
        if index < 0:
            raise GraphKernelsError(f"no run of '{variant}' in the history to use as a baseline")
        self.baseline_box.setCurrentIndex(index)
        self.refresh_chart()

    def remove_selected(self) -> None:
        rows = self.table.selected_rows()
        if rows:
            self.model.remove_rows(rows)
            self._update_baselines()
            self.refresh_chart()
            self.window_.log("info", f"removed {len(rows)} run(s) from the history")

    def clear_history(self) -> None:
        n = len(self.model.records)
        self.model.clear()
        self._update_baselines()
        self.refresh_chart()
        if n:
            self.window_.log("info", f"cleared the run history ({n} run(s); export them first to keep them)")

    # ==== sweeps ========================================================================================
    def add_sweep(self, sweep: dict, source: str = "", file: str = "") -> int:
        """Show ``sweep`` (opened from ``source``, or run here); ``file``: the sweep file its cells
        are in (Resume Sweep continues it)."""
        if not source:            # a sweep starting here: its label (and sessions) keep when it ran
            sweep.setdefault("started", _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
        label = self._sweep_label(sweep, source)
        self.sweeps.append({"sweep": sweep, "source": source, "label": label, "file": str(file or "")})
        self.sweep_box.addItem(label)
        index = len(self.sweeps) - 1
        self.sweep_box.setCurrentIndex(index)
        return index

    @staticmethod
    def _sweep_label(sweep: dict, source: str) -> str:
        inp = (sweep.get("input") or {}).get("name", "?")
        axes = " × ".join(sweep.get("grid", {}))
        when = _sweep_time(sweep) or (Path(source).name if source else _dt.datetime.now().strftime("%H:%M:%S"))
        return f"{sweep.get('family')}/{sweep.get('variant')} on {inp} ({sweep.get('target')}): {axes} — {when}"

    def current_sweep(self) -> dict | None:
        i = self.sweep_box.currentIndex()
        return self.sweeps[i]["sweep"] if 0 <= i < len(self.sweeps) else None

    def current_sweep_file(self) -> str:
        """The file the shown sweep's cells are in ('' for none: an export, a Kernel Tuner cache)."""
        i = self.sweep_box.currentIndex()
        return self.sweeps[i].get("file", "") if 0 <= i < len(self.sweeps) else ""

    def resumable_file(self) -> str:
        """The shown sweep's file if Resume Sweep can continue it: the sweep stopped early (cancelled,
        killed, fewer cells than its grid, cells lost with a cluster) and its file is still there; else ''."""
        from kernels.compute.resume import unfinished

        sweep, path = self.current_sweep(), self.current_sweep_file()
        if sweep is None or not path or sweep.get("live") or not Path(path).is_file():
            return ""
        return path if unfinished(sweep) else ""

    def _sweep_chosen(self, _index: int = -1) -> None:
        sweep = self.current_sweep()
        names = list((sweep or {}).get("grid", {}))
        for box in (self.rows_box, self.cols_box):
            box.blockSignals(True)
            box.clear()
        self.rows_box.addItems(names)
        self.cols_box.addItem("(none)", None)
        for n in names:
            self.cols_box.addItem(n, n)
        if names:
            self.rows_box.setCurrentIndex(0)
            self.cols_box.setCurrentIndex(2 if len(names) > 1 else 0)
        for box in (self.rows_box, self.cols_box):
            box.blockSignals(False)
        self.swap_button.setEnabled(len(names) > 1)
        self.redraw_heatmap()

    def swap_axes(self) -> None:
        rows, cols = self.rows_box.currentText(), self.cols_box.currentData()
        if cols:
            self.rows_box.blockSignals(True)
            self.rows_box.setCurrentText(cols)
            self.rows_box.blockSignals(False)
            self.cols_box.setCurrentIndex(self.cols_box.findData(rows))

    def redraw_heatmap(self) -> None:
        sweep = self.current_sweep()
        if sweep is None:
            self.heatmap.clear_sweep("no sweep yet: choose parameters in the Run dock and press Sweep, "
                                     "or open a sweep file")
            return
        rows = self.rows_box.currentText() or None
        cols = self.cols_box.currentData()
        if cols == rows:
            cols = None
        try:
            self.heatmap.set_sweep(sweep, rows, cols, self.metric_box.currentData() or "time")
        except GraphKernelsError as exc:
            self.heatmap.clear_sweep(str(exc))
        if self.roof_source_box.currentData() == "sweep":
            self.redraw_roofline()

    # ==== live results ===================================================================================
    def _on_task_started(self, task: ComputeTask) -> None:
        if task.kind == "run":
            task.finished.connect(lambda result: self.add_records([result["record"]], select=False))
            return
        if task.kind != "sweep":            # a batch on the GPU edits the graph: no records
            return
        request = task.request
        index = self._entry_of_file(request.out) if request.resume else -1
        if index >= 0:                  # Resume Sweep: the same entry fills in, from the file's cells
            self._before_resume[id(task)] = self.sweeps[index]["sweep"]
            self.sweeps[index]["sweep"] = request.empty_sweep()
            if self.sweep_box.currentIndex() == index:
                self._sweep_chosen()
            else:
                self.sweep_box.setCurrentIndex(index)
        else:
            source = request.out if request.resume else ""
            index = self.add_sweep(request.empty_sweep(), source=source, file=request.out)
        self._live[id(task)] = index
        self._live_since[id(task)] = time.monotonic()
        self.sweepChanged.emit(index)
        task.cellsArrived.connect(lambda cells, t=task: self._on_cells(t, cells))
        task.finished.connect(lambda sweep, t=task: self._on_sweep_over(t, sweep))
        task.cancelled.connect(lambda sweep, t=task: self._on_sweep_over(t, sweep))
        task.failed.connect(lambda _message, t=task: self._on_sweep_over(t, None))
        if self.window_.isVisible():
            self._show_tab(1)

    def _on_cells(self, task: ComputeTask, cells: list) -> None:
        index = self._live.get(id(task))
        if index is None:
            return
        sweep = self.sweeps[index]["sweep"]
        sweep["cells"].extend(cells)
        sweep["ran_here"] = sweep.get("ran_here", 0) + len(cells)
        elapsed = time.monotonic() - self._live_since.get(id(task), time.monotonic())
        if elapsed > 0:
            sweep["cells_per_s"] = sweep["ran_here"] / elapsed      # this run's pace (the title shows it)
        if self.sweep_box.currentIndex() == index:
            self.redraw_heatmap()
        self.sweepChanged.emit(index)

    def _entry_of_file(self, path: str) -> int:
        if not path:
            return -1
        for i in range(len(self.sweeps) - 1, -1, -1):
            if self.sweeps[i].get("file") and _same_file(self.sweeps[i]["file"], path):
                return i
        return -1

    def _on_sweep_over(self, task: ComputeTask, sweep: dict | None) -> None:
        index = self._live.pop(id(task), None)
        self._live_since.pop(id(task), None)
        before = self._before_resume.pop(id(task), None)
        if index is None:
            return
        entry = self.sweeps[index]
        request = task.request
        known = len((request.resume_from or {}).get("cells", [])) if request.resume else 0
        if sweep is None and request.resume and len(entry["sweep"]["cells"]) <= known:
            # refused (another graph, variant, device…) or failed before a cell ran: shown as before
            entry["sweep"] = before if before is not None else _plain(request.resume_from)
            entry["sweep"].pop("live", None)
            if self.sweep_box.currentIndex() == index:
                self.redraw_heatmap()
            self.sweepChanged.emit(index)
            return
        if sweep is None and not entry["sweep"]["cells"]:
            # it failed before any configuration ran (the Run dock said why): nothing to keep
            del self.sweeps[index]
            self.sweep_box.removeItem(index)
            self.redraw_heatmap()
            return
        if sweep is not None:
            entry["sweep"] = _plain(sweep)          # the complete file content, best and flat region included
        else:
            entry["sweep"]["live"] = False
            entry["sweep"]["cancelled"] = True      # it stopped early: the cells it has are kept
        entry["sweep"].pop("live", None)
        if self.sweep_box.currentIndex() == index:
            self.redraw_heatmap()
        self.sweepChanged.emit(index)

    # ==== files ===========================================================================================
    def open_dialog(self) -> None:
        settings = getattr(self.window_, "settings", None)
        start = settings.last_directory() if settings is not None else ""
        paths, _ = QFileDialog.getOpenFileNames(self, "Open results", start,
                                                "Run records and sweeps (*.jsonl *.json);;All files (*)")
        for path in paths:
            try:
                if not self.open_result_file(path):     # "All files" lets any name through: say so
                    raise GraphFormatError("not a result file", path, None,
                                           ".jsonl run records or a .json sweep from graph-kernels")
                self.window_.log("info", f"opened result file {path}")
            except GraphKernelsError as exc:
                self.window_.show_error("Cannot open result file", str(exc))

    def open_result_file(self, path) -> bool:
        """Open run records (``.jsonl``) or a sweep (``.json``); raises ``GraphFormatError``
        naming the file (and line) when it is neither, or damaged (:mod:`kernels.results.schema`
        checks it whole before anything here changes). ``False``: not a result file name."""
        path = str(path)
        suffix = Path(path).suffix.lower()
        if suffix == ".jsonl":
            records = read_records(path)
            if not records:
                raise GraphFormatError("no run records in the file", path, None, "one JSON run record per line")
            self.add_records(records, source=path, select=True)
            self._show_tab(0)
            wrong = [r for r in records if r.get("verified") is False]
            if wrong:
                self.window_.log("warning", f"{Path(path).name}: {len(wrong)} of {len(records)} run(s) FAILED "
                                            "verification (red rows in the history)")
            self.window_.statusBar().showMessage(f"{len(records)} run(s) from {Path(path).name}", 8000)
            return True
        if suffix == ".json":
            from kernels.results.sweep_file import is_sweep_lines

            sweep = load_sweep(path)
            # a JSON-lines sweep can be continued (Resume Sweep); an export or a Kernel Tuner cache cannot
            self.add_sweep(sweep, source=path, file=path if is_sweep_lines(path) else "")
            self._show_tab(1)
            self.window_.statusBar().showMessage(f"sweep from {Path(path).name}", 8000)
            return True
        return False

    def _export_dialog(self, what: str, suffix: str, export) -> None:
        settings = getattr(self.window_, "settings", None)
        start = Path(settings.last_directory() if settings is not None else ".") / f"{what.replace(' ', '-')}.{suffix}"
        path, _ = QFileDialog.getSaveFileName(self, f"Export {what}", str(start), f"{suffix.upper()} (*.{suffix})")
        if path:
            if not path.lower().endswith("." + suffix):
                path += "." + suffix
            export(path)

    def _exported(self, what: str, path, action) -> bool:
        try:
            action()
        except (GraphKernelsError, OSError, ValueError) as exc:
            self.window_.show_error("Export failed", f"{what} not written to {path}: {exc}")
            return False
        self.window_.log("info", f"{what} written to {path}")
        self.window_.statusBar().showMessage(f"{what} written to {path}", 8000)
        return True

    def export_timing(self, path) -> bool:
        """The timing chart as PNG or SVG (by the suffix)."""
        if not self.timing_chart.records:
            self.window_.show_error("Export failed", "the timing chart is empty: run something or select runs first")
            return False
        return self._exported("timing chart", path, lambda: save_offscreen(self.timing_chart.clone(), path,
                                                                            "GPU Graph Explorer: timing chart"))

    def export_heatmap(self, path) -> bool:
        if self.heatmap.table is None:
            self.window_.show_error("Export failed", "no heatmap to export: run or open a sweep first")
            return False
        return self._exported("heatmap", path, lambda: save_offscreen(self.heatmap.clone(), path,
                                                                       "GPU Graph Explorer: heatmap"))

    def export_heatmap_csv(self, path) -> bool:
        from kernels.results.heatmap import write_csv

        if self.heatmap.table is None:
            self.window_.show_error("Export failed", "no heatmap to export: run or open a sweep first")
            return False
        return self._exported("heatmap table", path, lambda: write_csv(self.heatmap.table, path))

    def export_sweep(self, path) -> bool:
        """The shown sweep: ``.csv`` one row per configuration, ``.json`` the sweep file."""
        sweep = self.current_sweep()
        if sweep is None:
            self.window_.show_error("Export failed", "no sweep to export")
            return False
        if str(path).lower().endswith(".json"):
            return self._exported("sweep", path, lambda: save_sweep({k: v for k, v in sweep.items() if k != "live"},
                                                                    path))
        return self._exported("sweep table", path, lambda: sweep_to_csv(sweep, path))

    def export_runs(self, path, rows: list[int] | None = None) -> bool:
        """The selected runs (all when none is selected): ``.csv`` or ``.jsonl``."""
        rows = rows if rows is not None else (self.table.selected_rows() or range(len(self.model.records)))
        records = [self.model.records[r] for r in rows]
        if not records:
            self.window_.show_error("Export failed", "the run history is empty")
            return False
        if str(path).lower().endswith(".jsonl"):
            return self._exported(f"{len(records)} run record(s)", path, lambda: _write_jsonl(records, path))
        return self._exported(f"{len(records)} run(s)", path, lambda: records_to_csv(records, path))

    # ==== window integration ==============================================================================
    def show_view(self, name: str) -> bool:
        """Arrange the dock for ``--screenshot --view timing|heatmap`` (False when it has nothing)."""
        if name not in ("timing", "heatmap", "roofline"):
            return False
        if name == "roofline":
            if not self.model.records and not self.sweeps:
                self.window_.log("warning", "--view roofline: no runs or sweep to show")
                return False
            if not self.model.records:
                self.roof_source_box.setCurrentIndex(1)
            self._show_tab(2)
            self.window_.resizeDocks([self], [int(self.window_.height() * 0.6)], Qt.Orientation.Vertical)
            width = max(self.splitter.width(), 600)
            self.splitter.setSizes([int(width * 0.22), int(width * 0.78)])
            return True
        if name == "timing" and not self.model.records:
            self.window_.log("warning", "--view timing: no runs to show (give a .jsonl of run records)")
            return False
        if name == "heatmap" and not self.sweeps:
            self.window_.log("warning", "--view heatmap: no sweep to show (give a sweep .json)")
            return False
        self._show_tab(0 if name == "timing" else 1)
        self.window_.resizeDocks([self], [int(self.window_.height() * 0.55)], Qt.Orientation.Vertical)
        width = max(self.splitter.width(), 600)
        history = 0.38 if name == "timing" else 0.22        # the picture gets the room
        self.splitter.setSizes([int(width * history), int(width * (1 - history))])
        return True

    def session_state(self) -> dict:
        return _plain({"records": self.model.records, "sources": self.model.sources,
                "sweeps": [{"sweep": {k: v for k, v in e["sweep"].items() if k != "live"}, "source": e["source"],
                            "file": e.get("file", "")} for e in self.sweeps],
                "current_sweep": self.sweep_box.currentIndex(), "baseline": self.baseline_box.currentData(),
                "log_scale": self.log_box.isChecked(), "tab": self.tabs.currentIndex(),
                "timing_metric": self.timing_metric_box.currentData(),
                "heatmap_metric": self.metric_box.currentData(),
                "roofline_points": self.roof_source_box.currentData()})

    def restore_session_state(self, state: dict) -> None:
        records = state.get("records") or []
        sources = state.get("sources") or [""] * len(records)
        for rec, src in zip(records, sources, strict=False):
            self.model.add_records([rec], src)
        for entry in state.get("sweeps") or []:
            self.add_sweep(entry["sweep"], entry.get("source", ""), entry.get("file", ""))
        self._update_baselines()
        if state.get("baseline"):
            index = self.baseline_box.findData(state["baseline"])
            self.baseline_box.setCurrentIndex(max(index, 0))
        self.log_box.setChecked(bool(state.get("log_scale", True)))
        current = state.get("current_sweep", -1)
        if 0 <= current < len(self.sweeps):
            self.sweep_box.setCurrentIndex(current)
        # what the views show (a session saved before they had a choice: the defaults)
        for box, key in ((self.timing_metric_box, "timing_metric"), (self.metric_box, "heatmap_metric"),
                         (self.roof_source_box, "roofline_points")):
            index = box.findData(state.get(key)) if isinstance(state.get(key), str) else -1
            box.setCurrentIndex(max(index, 0))
        self.tabs.setCurrentIndex(int(state.get("tab", 0)))
        self.refresh_chart()

    def shutdown(self) -> None:
        if getattr(self, "compare_window", None) is not None:      # Results ▸ Compare Sweeps…
            self.compare_window.close()
        self.client.shutdown()


def _sweep_time(sweep: dict) -> str:
    """When the sweep ran (its ``started`` stamp, in local time), not when it was opened here."""
    stamp = sweep.get("started")
    if not stamp:
        return ""
    try:
        t = _dt.datetime.fromisoformat(str(stamp))
    except ValueError:
        return str(stamp)
    if t.tzinfo is not None:
        t = t.astimezone()
    return t.strftime("%H:%M:%S") if t.date() == _dt.date.today() else t.strftime("%Y-%m-%d %H:%M")


def _same_file(a: str, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return a == b


def _write_jsonl(records: list[dict], path) -> None:
    """Write records as JSON lines, atomically (a temporary file renamed over the target)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        share_like_other_files(fd)           # 0644 like other exports, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(dumps(rec) + "\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
