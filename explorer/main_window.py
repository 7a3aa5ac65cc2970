"""The main window: a tab per open graph, docks around it, menus for everything.

Interface for the compute side (Run and Results docks)
------------------------------------------------------
The compute docks never reach into the tabs; they use only this:

* ``window.current_document()`` -> :class:`~explorer.document.GraphDocument` or ``None``, and
  the signal ``window.currentDocumentChanged(object)`` (the new document or ``None``).
  ``window.documents()`` lists every open document.
* ``GraphDocument``: ``key`` (changes whenever the content changes: send ``csr()`` to the
  worker under that key), ``csr()`` (the current :class:`~kernels.graph.csr.CSRGraph`
  snapshot, cached per revision), ``name``, ``changed`` (signal after every edit, undo, redo),
  ``undo_stack``, ``editable``, ``slotted`` (read-only access to the live structure) and
  ``mark_synced()`` (call it after uploading the structure's pages to a device: it clears
  the page map's "written since the last sync" marks).
* ``window.log(level, message)`` puts a message in the log panel (``level``: "info",
  "warning" or "error"); ``window.show_error(title, message)`` also tells the user at once.
* ``window.add_compute_docks()`` creates ``explorer.docks.run_dock.RunDock(window)`` and
  ``explorer.docks.results_dock.ResultsDock(window)`` when those modules exist.
* Optional dock methods the window calls when a dock has them:
  ``session_state() -> JSON-able dict`` and ``restore_session_state(dict)`` (saved in
  sessions under the dock's ``objectName``), ``open_result_file(path) -> bool`` (files
  ending in ``.json``/``.jsonl`` dropped or opened go to the dock that accepts them),
  ``show_view(name)`` (``--screenshot --view timing|heatmap``) and ``shutdown()`` (the
  window closes: stop workers and threads).
"""

from __future__ import annotations

import html
import itertools
import logging
from pathlib import Path

import shiboken6
from PySide6.QtCore import QByteArray, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QUndoGroup
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTabWidget,
)

from explorer import commands
from explorer.docks.graph_dock import GenerateDialog, GraphDock
from explorer.docks.log_dock import WINDOW_LOGGER, LogDock, LogPanelHandler, normalise_level
from explorer.docks.structure_dock import StructureDock
from explorer.document import GraphDocument
from explorer.loading import AUTO_PAGE_SIZE, LoadedGraph, auto_page_size, generate_job, load_file_job
from explorer.settings import AppSettings
from explorer.tasks import Task, describe_error, is_user_error
from explorer.views.graph_tab import GraphTab
from kernels.errors import GraphKernelsError
from kernels.measure.targets import target_label
from kernels.memory import format_bytes

RESULT_SUFFIXES = (".json", ".jsonl")
GRAPH_FILE_FILTER = ("Graph files (*.mtx *.mm *.npz *.graphml *.gml *.net *.pajek *.gr *.clq *.col *.dimacs *.csv "
                     "*.graph *.metis *.chaco *.txt *.tsv *.edges *.el *.wel *.edgelist *.dat *.gz *.bz2 *.xz);;"
                     "All files (*)")
MAX_CLOSED_KEPT = 10
DEFAULT_WINDOW = (1600, 1000)      # the first start (a remembered geometry replaces it), within the screen
# default shares of the window (View ▸ Reset Layout and the first start): the Results area gets
# room for a readable chart, the side docks for their forms without clipping
BOTTOM_SHARE = 0.46
SIDE_WIDTHS = (0.19, 0.25)          # Graph (left), Structure/Run (right), of the window's width
SIDE_MIN = (250, 350)


def _with_platform_keys(main: str, standard: QKeySequence.StandardKey) -> list[QKeySequence]:
    """``main`` first, then the platform's own bindings for the same command, each once (a
    sequence listed twice makes Qt call the shortcut ambiguous and do nothing)."""
    keys = [QKeySequence(main)]
    for k in QKeySequence.keyBindings(standard):
        if k.toString() not in {x.toString() for x in keys}:
            keys.append(k)
    return keys


def targets_text() -> str:
    """The status bar's words for where kernels can run: the same list the Run dock offers
    (:func:`explorer.compute.targets.machine_targets`), so the two never disagree."""
    from explorer.compute.targets import machine_targets

    try:
        here = machine_targets()
    except GraphKernelsError as exc:
        return f"no target ({exc})"
    names = {"cuda": target_label("cuda"), "sim": "CUDA simulator", "cpu": "CPU"}
    text = "targets: " + ", ".join(names[t] for t in here)
    return text + ("" if "cuda" in here else " (no GPU)")


def _session_suffix() -> str:
    from explorer.session import SESSION_SUFFIX

    return SESSION_SUFFIX


class MainWindow(QMainWindow):
    """Tabs of graphs; Graph, Structure and Log docks (and the compute docks when present)."""

    currentDocumentChanged = Signal(object)
    documentAdded = Signal(object)
    documentClosed = Signal(object)
    loadFailed = Signal(str, str)          # what, message
    sessionSaved = Signal(str)
    sessionLoaded = Signal(str)

    def __init__(self, settings: AppSettings | None = None, *, page_size: int | None = None,
                 restore_layout: bool = True, dialogs: bool = True):
        super().__init__()
        self.settings = settings or AppSettings()
        # 0: chosen by graph size (see explorer.loading.auto_page_size)
        self.default_page_size = page_size if page_size is not None else self.settings.default_page_size(AUTO_PAGE_SIZE)
        self.dialogs = dialogs             # False: errors go to the log and status bar only
        self.setWindowTitle("GPU Graph Explorer")
        self.setAcceptDrops(True)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks)
        self._documents: list[GraphDocument] = []
        self._closed: list[tuple[GraphDocument, dict]] = []
        self._tasks: list[Task] = []
        self._message_boxes: list[QMessageBox] = []
        self._current: GraphDocument | None = None
        self._order = itertools.count()
        self.session_path: str | None = None
        self.compute_docks: list[QDockWidget] = []

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.setTabsClosable(True)
        self.tabs.setMovable(True)
        self.tabs.tabCloseRequested.connect(lambda i: self.close_document(self.tabs.widget(i).document))
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.setCentralWidget(self.tabs)

        self.undo_group = QUndoGroup(self)
        self.log_dock = LogDock(self)
        # the panel hears the core's and the GUI's loggers (kernels, explorer), from any thread
        self.log_handler = LogPanelHandler(self.log_dock, self).attach()
        self.graph_dock = GraphDock(self)
        self.structure_dock = StructureDock(self)
        # the right docks (Structure | Run) take the full height: their forms are long
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.setCorner(Qt.Corner.TopRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.graph_dock)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.structure_dock)
        # the log sits under the Graph dock, so the Results dock has the bottom's width to itself
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.log_dock)
        self.splitDockWidget(self.graph_dock, self.log_dock, Qt.Orientation.Vertical)
        self._default_state = self.saveState()
        self._layout_restored = False
        self._sized = False

        self.graph_dock.openRequested.connect(self.open_dialog)
        self.graph_dock.generateRequested.connect(self.generate_dialog)
        self.graph_dock.sampleRequested.connect(self.open_sample)
        self.structure_dock.editRequested.connect(self.push_command)
        self.structure_dock.pageSizeRequested.connect(self.change_page_size)
        self.structure_dock.errorRaised.connect(lambda text: self.show_error("Edit refused", text))

        self._build_status_bar()
        self._build_menus()
        self._restore_enabled = restore_layout
        self.resize(*self._first_size())     # the first start; a remembered geometry replaces it
        if restore_layout:
            self._restore_layout()
        self._update_actions()

    # ==== the interface used by the compute docks ===============================================
    def current_document(self) -> GraphDocument | None:
        return self._current

    def documents(self) -> list[GraphDocument]:
        return list(self._documents)

    def log(self, level: str, message: str) -> None:
        """Log ``message`` through the ``explorer.window`` logger; this window's panel shows it."""
        levelno = {"debug": logging.DEBUG, "warning": logging.WARNING,
                   "error": logging.ERROR}.get(normalise_level(level), logging.INFO)
        logging.getLogger(WINDOW_LOGGER).log(levelno, "%s", message, extra={"window": id(self)})

    def show_error(self, title: str, message: str) -> None:
        """Tell the user now (status bar, and a dialog unless disabled) and keep it in the log."""
        self.log("error", message)
        self.statusBar().showMessage(message, 15000)
        if self.dialogs and self.isVisible():
            open_box = next((b for b in self._message_boxes if b.isVisible()), None)
            if open_box is not None:
                # one error window at a time, on the window: the latest error, and how many came before
                open_box.earlier = getattr(open_box, "earlier", 0) + 1
                open_box.setWindowTitle(title)
                open_box.setText(message)
                open_box.setInformativeText(f"{open_box.earlier} earlier error(s) since this window opened: "
                                            "all are in the log (View ▸ Show Log, Ctrl+L)")
                open_box.raise_()
                return
            box = QMessageBox(QMessageBox.Icon.Warning, title, message, QMessageBox.StandardButton.Ok, self)
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            box.setWindowModality(Qt.WindowModality.NonModal)
            box.finished.connect(lambda _r, b=box: self._message_boxes.remove(b) if b in self._message_boxes else None)
            self._message_boxes.append(box)
            box.show()

    def show_warning(self, message: str) -> None:
        self.log("warning", message)
        self.statusBar().showMessage(message, 10000)

    def add_compute_docks(self) -> list[QDockWidget]:
        """Add the Run and Results docks if the compute side is installed (idempotent)."""
        if self.compute_docks:
            return self.compute_docks
        try:
            from explorer.docks.run_dock import RunDock
        except ImportError as exc:
            self.log("warning", f"the Run dock is not available ({exc})")
            RunDock = None
        try:
            from explorer.docks.results_dock import ResultsDock
        except ImportError as exc:
            self.log("warning", f"the Results dock is not available ({exc})")
            ResultsDock = None
        for cls, area in ((RunDock, Qt.DockWidgetArea.RightDockWidgetArea),
                          (ResultsDock, Qt.DockWidgetArea.BottomDockWidgetArea)):
            if cls is None:
                continue
            try:
                dock = cls(self)
            except Exception as exc:  # noqa: BLE001 - a broken dock must not take the window down
                self.show_error("Dock not available", f"{cls.__name__} could not start: {describe_error(exc)}")
                continue
            if not dock.objectName():
                dock.setObjectName(cls.__name__)
            self.addDockWidget(area, dock)
            self.compute_docks.append(dock)
            self.view_menu.insertAction(self._view_separator, dock.toggleViewAction())
        # One tab group only (Structure | Run): with a second group (Log | Results) Qt 6.12 leaves
        # a stray copy of one group's tab bar drawn over the window. Results sits beside the log.
        right = [d for d in self.compute_docks if self.dockWidgetArea(d) == Qt.DockWidgetArea.RightDockWidgetArea]
        for d in right:
            self.tabifyDockWidget(self.structure_dock, d)
        self.structure_dock.raise_()
        self._default_state = self.saveState()
        if self._restore_enabled:
            self._restore_layout()         # the compute docks' remembered places
        return self.compute_docks

    @staticmethod
    def _first_size() -> tuple[int, int]:
        screen = QApplication.primaryScreen()
        if screen is None:
            return DEFAULT_WINDOW
        room = screen.availableGeometry()
        return min(DEFAULT_WINDOW[0], room.width()), min(DEFAULT_WINDOW[1], room.height())

    def apply_default_sizes(self) -> None:
        """Give the docks their default shares of the window's current size."""
        w, h = self.width(), self.height()
        bottom = [d for d in self.docks() if self.dockWidgetArea(d) == Qt.DockWidgetArea.BottomDockWidgetArea
                  and not d.isFloating() and d.isVisible()]
        if bottom:
            self.resizeDocks(bottom[:1], [int(h * BOTTOM_SHARE)], Qt.Orientation.Vertical)
        left = max(SIDE_MIN[0], int(w * SIDE_WIDTHS[0]))
        right = max(SIDE_MIN[1], int(w * SIDE_WIDTHS[1]))
        self.resizeDocks([self.graph_dock, self.structure_dock], [left, right], Qt.Orientation.Horizontal)
        self.resizeDocks([self.graph_dock, self.log_dock], [int(h * 0.68), int(h * 0.32)], Qt.Orientation.Vertical)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if not self._sized and not self._layout_restored:
            self._sized = True
            self.apply_default_sizes()

    def docks(self) -> list[QDockWidget]:
        return [self.graph_dock, self.structure_dock, self.log_dock, *self.compute_docks]

    # ==== status bar =============================================================================
    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.progress_label = QLabel()
        self.progress_bar = QProgressBar()
        self.progress_bar.setMaximumWidth(220)
        self.progress_bar.setTextVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("cancel loading (Esc)")
        self.cancel_button.clicked.connect(self.cancel_tasks)
        for w in (self.progress_label, self.progress_bar, self.cancel_button):
            w.setVisible(False)
            bar.addPermanentWidget(w)
        self.target_label = QLabel(targets_text())
        self.target_label.setToolTip("where kernels can run here, as the Run dock offers them "
                                     "(GRAPH_KERNELS_TARGET=cuda|sim|cpu forces one)")
        bar.addPermanentWidget(self.target_label)

    def _update_progress(self) -> None:
        running = [t for t in self._tasks if t.running]
        for w in (self.progress_label, self.progress_bar, self.cancel_button):
            w.setVisible(bool(running))
        if not running:
            return
        task = running[0]
        more = f" (+{len(running) - 1} more)" if len(running) > 1 else ""
        self.progress_label.setText(f"{task.title}{more}")

    def _on_task_progress(self, task: Task, fraction: float, text: str) -> None:
        if fraction < 0:
            self.progress_bar.setRange(0, 0)           # busy indicator
        else:
            self.progress_bar.setRange(0, 1000)
            self.progress_bar.setValue(int(fraction * 1000))
        if text:
            self.progress_label.setText(text)

    def _track(self, task: Task) -> Task:
        self._tasks.append(task)
        task.progressed.connect(lambda f, t, task=task: self._on_task_progress(task, f, t))
        task.done.connect(lambda task=task: self._task_done(task))
        task.start()
        self._update_progress()
        return task

    def _task_done(self, task: Task) -> None:
        if task in self._tasks:
            self._tasks.remove(task)
        self._update_progress()

    def busy(self) -> bool:
        """Whether background work (loading, generating, rebuilding, saving) is running."""
        return any(t.running for t in self._tasks)

    def cancel_tasks(self) -> None:
        for t in list(self._tasks):
            t.cancel()

    # ==== menus ===================================================================================
    def _action(self, menu, text: str, slot, shortcut=None, tip: str = "") -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        if tip:
            act.setStatusTip(tip)
            act.setToolTip(tip)
        act.triggered.connect(lambda _checked=False: slot())
        menu.addAction(act)
        return act

    def _build_menus(self) -> None:
        mb = self.menuBar()
        S = QKeySequence.StandardKey
        file = mb.addMenu("&File")
        self._action(file, "&Open Graph…", self.open_dialog, S.Open, "open graph files, each in its own tab")
        self.recent_menu = file.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self._action(file, "Open &Sample Graph", self.open_sample, None, "the bundled karate club graph")
        self.reopen_action = self._action(file, "Reopen Closed &Graph", self.reopen_closed, "Ctrl+Shift+T",
                                          "bring back the last closed graph with its edits and history")
        file.addSeparator()
        self._action(file, "Open Sess&ion…", self.open_session_dialog, "Ctrl+Shift+O")
        self.save_session_action = self._action(file, "Save Session", self.save_session, S.Save,
                                                "save graphs, edits, history, runs and layout")
        self._action(file, "Save Session &As…", self.save_session_as, "Ctrl+Alt+S")
        self.recover_action = self._action(file, "Recover Autosaved Session", self.recover_autosave, None,
                                           "the session kept when the window last closed with unsaved edits")
        file.addSeparator()
        self.export_action = self._action(file, "&Export Graph As…", self.export_graph_dialog, "Ctrl+Shift+S",
                                          "write the current graph (with its edits) to a graph file")
        self._action(file, "Save Window &Picture…", self.screenshot_dialog, None, "save the window as a PNG")
        self.close_action = self._action(file, "&Close Graph", lambda: self.close_document(self._current), "Ctrl+W")
        file.addSeparator()
        self._action(file, "&Quit", self.close, "Ctrl+Q")

        edit = mb.addMenu("&Edit")
        self.undo_action = self.undo_group.createUndoAction(self, "&Undo")
        self.undo_action.setShortcuts(_with_platform_keys("Ctrl+Z", S.Undo))
        self.redo_action = self.undo_group.createRedoAction(self, "&Redo")
        self.redo_action.setShortcuts(_with_platform_keys("Ctrl+Shift+Z", S.Redo))
        edit.addAction(self.undo_action)
        edit.addAction(self.redo_action)

        graph = mb.addMenu("&Graph")
        self._action(graph, "&Generate…", self.generate_dialog, "Ctrl+G", "generate a graph from the registry")
        self.rename_action = self._action(graph, "&Rename…", self.rename_dialog, "F2")
        self.clone_action = self._action(graph, "&Duplicate as New Tab", self.duplicate_current, "Ctrl+Shift+D",
                                         "a copy of the current graph (pages and all) in a new tab")
        self._action(graph, "Default &Page Size for New Graphs…", self.default_page_size_dialog)
        graph.addSeparator()
        self._action(graph, "Next Tab", lambda: self._step_tab(1), "Ctrl+PgDown")
        self._action(graph, "Previous Tab", lambda: self._step_tab(-1), "Ctrl+PgUp")

        structure = mb.addMenu("&Structure")
        sd = self.structure_dock
        self.structure_actions = [
            self._action(structure, "Add &Vertex", sd.add_vertex, "Ctrl+I"),
            self._action(structure, "&Remove Vertex u", sd.remove_vertex, "Ctrl+Shift+I"),
            self._action(structure, "Add &Edge u–v", sd.add_edge, "Ctrl+E"),
            self._action(structure, "Remove E&dge u–v", sd.remove_edge, "Ctrl+Shift+E"),
            self._action(structure, "E&dit Edge u–v → u–new v", sd.edit_edge, "Ctrl+Alt+E"),
            self._action(structure, "Random &Batch", sd.apply_batch, "Ctrl+B"),
            self._action(structure, "Rebuild with &Page Size…", self.page_size_dialog, "Ctrl+Shift+P"),
        ]
        structure.addSeparator()
        self.structure_actions += [
            self._action(structure, "Next Page", lambda: self._step_page(1), "Ctrl+]"),
            self._action(structure, "Previous Page", lambda: self._step_page(-1), "Ctrl+["),
            self._action(structure, "&Check Invariants", self.check_invariants, "Ctrl+K",
                         "verify every word of the page layout"),
            self._action(structure, "&Forget Dirty Marks", self.forget_dirty_marks, None,
                         "clear the 'written since the last sync' marks, as a device sync would"),
        ]

        self.structure_dock.route_shortcuts([self.undo_action, self.redo_action, *self.structure_actions])

        self.view_menu = mb.addMenu("&View")
        for dock in (self.graph_dock, self.structure_dock, self.log_dock):
            self.view_menu.addAction(dock.toggleViewAction())
        self._view_separator = self.view_menu.addSeparator()
        self._action(self.view_menu, "Show &Log", lambda: (self.log_dock.show(), self.log_dock.raise_()), "Ctrl+L")
        self._action(self.view_menu, "&Reset Layout", self.reset_layout)

        helpm = mb.addMenu("&Help")
        self._action(helpm, "&Keyboard Shortcuts", self.shortcuts_dialog, "F1")
        self._action(helpm, "&About", self.about_dialog)

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.settings.recent_files()
        if not files:
            act = self.recent_menu.addAction("(none yet)")
            act.setEnabled(False)
            return
        for n, path in enumerate(files, 1):
            act = self.recent_menu.addAction(f"&{n % 10} {Path(path).name}")
            act.setToolTip(path)
            act.triggered.connect(lambda _c=False, p=path: self.open_paths([p]))
        self.recent_menu.addSeparator()
        self.recent_menu.addAction("Clear List", self.settings.clear_recent_files)

    def _update_actions(self) -> None:
        d = self._current
        for act in (self.export_action, self.close_action, self.rename_action, self.clone_action):
            act.setEnabled(d is not None)
        editable = d is not None and d.editable
        for act in self.structure_actions:
            act.setEnabled(editable)
        self.clone_action.setEnabled(editable or d is not None)
        self.reopen_action.setEnabled(bool(self._closed))
        self.recover_action.setEnabled(self.settings.autosave_path().exists())
        self.save_session_action.setEnabled(bool(self._documents))

    # ==== documents and tabs =======================================================================
    def tab_for(self, document: GraphDocument) -> GraphTab | None:
        for i in range(self.tabs.count()):
            tab = self.tabs.widget(i)
            if tab.document is document:
                return tab
        return None

    def current_tab(self) -> GraphTab | None:
        return self.tabs.currentWidget()

    def add_document(self, document: GraphDocument, *, select: bool = True, order: int | None = None) -> GraphTab:
        """Show a document in a new tab. ``order`` places tabs of files opened together in the
        order they were given, whichever finished loading first."""
        document.tab_order = next(self._order) if order is None else order
        position = sum(1 for d in self._documents if d.tab_order <= document.tab_order)
        self._documents.insert(position, document)
        self.undo_group.addStack(document.undo_stack)
        tab = GraphTab(document)
        tab.node_link.vertexClicked.connect(self._on_vertex_clicked)
        index = self.tabs.insertTab(position, tab, document.name)
        self.tabs.setTabToolTip(index, document.source or document.name)
        document.renamed.connect(lambda name, d=document: self._on_renamed(d, name))
        document.undo_stack.cleanChanged.connect(lambda _clean, d=document: self._on_renamed(d, d.name))
        document.changed.connect(lambda _s, d=document: self._on_document_changed(d))
        self.documentAdded.emit(document)
        if select:
            self.tabs.setCurrentWidget(tab)
        self._update_actions()
        return tab

    def _on_renamed(self, document: GraphDocument, name: str) -> None:
        if not shiboken6.isValid(self.tabs) or not shiboken6.isValid(document.undo_stack):
            return                     # the window is being torn down
        tab = self.tab_for(document)
        if tab is not None:
            mark = "" if document.undo_stack.isClean() else " •"
            self.tabs.setTabText(self.tabs.indexOf(tab), name + mark)

    def _on_document_changed(self, document: GraphDocument) -> None:
        summary = document.last_edit
        if summary is not None:
            self.statusBar().showMessage(f"{document.name}: {summary.describe()}", 8000)
            self.log("info", f"{document.name}: {summary.describe()}")
        if document is self._current:
            self._update_actions()

    def _on_tab_changed(self, _index: int) -> None:
        tab = self.tabs.currentWidget()
        document = tab.document if tab is not None else None
        if document is self._current:
            return
        self._current = document
        self.undo_group.setActiveStack(document.undo_stack if document is not None else None)
        self.graph_dock.set_document(document)
        self.structure_dock.set_document(document)
        if tab is not None:
            tab.node_link.set_picked(self.structure_dock.picked())
        title = f"{document.name} — GPU Graph Explorer" if document is not None else "GPU Graph Explorer"
        self.setWindowTitle(title)
        self._update_actions()
        self.currentDocumentChanged.emit(document)

    def _step_tab(self, step: int) -> None:
        if self.tabs.count():
            self.tabs.setCurrentIndex((self.tabs.currentIndex() + step) % self.tabs.count())

    def _on_vertex_clicked(self, v: int) -> None:
        self.structure_dock.vertex_picked(v)
        tab = self.current_tab()
        if tab is not None:
            tab.node_link.set_picked(self.structure_dock.picked())
        self.statusBar().showMessage(f"picked vertex {v}", 4000)

    def close_document(self, document: GraphDocument | None) -> None:
        """Close a graph's tab. It is kept (with its history) for File ▸ Reopen Closed Graph."""
        if document is None:
            return
        tab = self.tab_for(document)
        if tab is None:
            return
        tab.shutdown()
        index = self.tabs.indexOf(tab)
        self.tabs.removeTab(index)
        self.undo_group.removeStack(document.undo_stack)
        self._documents.remove(document)
        self._closed.append((document, {"positions": dict(tab.node_link.positions)}))
        del self._closed[:-MAX_CLOSED_KEPT]
        tab.deleteLater()
        self.log("info", f"closed {document.name} (File ▸ Reopen Closed Graph brings it back)")
        self.documentClosed.emit(document)
        if not self._documents:
            self._on_tab_changed(-1)
        self._update_actions()

    def reopen_closed(self) -> None:
        if not self._closed:
            return
        document, extra = self._closed.pop()
        tab = self.add_document(document)
        if extra.get("positions"):
            tab.node_link.positions = extra["positions"]
            tab.node_link.refresh()
        self.log("info", f"reopened {document.name}")

    def close_all_documents(self) -> None:
        for d in list(self._documents):
            self.close_document(d)

    # ==== opening ===================================================================================
    def open_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Open graph files", self.settings.last_directory(),
                                                GRAPH_FILE_FILTER + f";;Sessions (*{_session_suffix()})"
                                                ";;Run records and sweeps (*.json *.jsonl)")
        if paths:
            self.open_paths(paths)

    def open_sample(self) -> Task | None:
        from kernels.samples import sample_path

        return self.open_path(str(sample_path()), remember=False)

    def open_paths(self, paths) -> list[Task]:
        tasks = []
        for p in paths:
            task = self.open_path(str(p))
            if task is not None:
                tasks.append(task)
        return tasks

    def open_path(self, path: str, *, remember: bool = True) -> Task | None:
        """Open one file: a graph (in the background, in a new tab), a session, or a result file
        (handed to the dock that reads it). Returns the loading task for graphs."""
        p = Path(path)
        if p.suffix.lower() == _session_suffix():
            self.open_session(str(p))
            return None
        if p.suffix.lower() in RESULT_SUFFIXES:
            self._open_result_file(str(p))
            return None
        if not p.exists():
            self.show_error("Cannot open graph", f"{path}: no such file")
            self.loadFailed.emit(str(path), f"{path}: no such file")
            return None
        task = Task(f"loading {p.name}", load_file_job(p, self.default_page_size), self)
        order = next(self._order)
        task.finished.connect(lambda loaded, p=p, remember=remember, order=order: self._loaded(
            loaded, p.name.split(".")[0], p if remember else None, order))
        task.failed.connect(lambda _message, p=p: self._load_failed(f"{p.name}", task))
        task.cancelled.connect(lambda _partial, p=p: self.log("warning", f"loading {p} was cancelled"))
        self.log("info", f"loading {p}")
        return self._track(task)

    def _open_result_file(self, path: str) -> None:
        for dock in self.compute_docks:
            opener = getattr(dock, "open_result_file", None)
            if opener is None:
                continue
            try:
                if opener(path):
                    self.log("info", f"opened result file {path}")
                    dock.show()
                    dock.raise_()
                    return
            except GraphKernelsError as exc:
                self.show_error("Cannot open result file", str(exc))
                return
        self.show_error("Cannot open file", f"{path}: run records and sweeps open in the Results dock, "
                                            "which is not available in this installation")

    def _loaded(self, loaded: LoadedGraph, name: str, remember: Path | None, order: int | None = None) -> GraphDocument:
        document = self.document_from_loaded(loaded, name)
        self.add_document(document, order=order)
        if remember is not None:
            self.settings.add_recent_file(remember)
        est = loaded.estimate
        extra = f" (estimated {format_bytes(est['peak_bytes'])} to load)" if est else ""
        self.log("info", f"opened {loaded.source or name}: {document.num_vertices:,} vertices, "
                         f"{document.num_edges:,} edges{extra}")
        for note in loaded.notes:
            self.log("info", f"{name}: {note}")
        if loaded.slotted_reason:
            self.show_warning(f"{name} opens read-only: {loaded.slotted_reason}")
        self.statusBar().showMessage(f"opened {name}", 5000)
        return document

    @staticmethod
    def document_from_loaded(loaded: LoadedGraph, name: str) -> GraphDocument:
        document = GraphDocument(name=name, csr=loaded.csr, slotted=loaded.slotted, source=loaded.source,
                                 not_editable_reason=loaded.slotted_reason, info=loaded.info,
                                 page_size=loaded.page_size)
        document.mark_synced()        # nothing is on a device yet; see GraphDocument.mark_synced
        return document

    def _load_failed(self, what: str, task: Task) -> None:
        if not is_user_error(task.exception):
            self.log("debug", task.details)
        self.show_error("Cannot open graph", f"{what} was not opened: {task.error}")
        self.loadFailed.emit(what, task.error)

    # ==== generating ================================================================================
    def generate_dialog(self) -> None:
        dialog = GenerateDialog(self)
        if dialog.exec() and dialog.choice():
            self.generate(*dialog.choice())

    def generate(self, kind: str, options: dict) -> Task:
        text = ", ".join(f"{k}={v}" for k, v in options.items())
        task = Task(f"generating {kind}", generate_job(kind, options, self.default_page_size), self)
        order = next(self._order)
        task.finished.connect(lambda loaded: self._loaded(loaded, loaded.csr.name, None, order))
        task.failed.connect(lambda _message: self._load_failed(f"generated graph {kind} ({text})", task))
        self.log("info", f"generating {kind} ({text})")
        return self._track(task)

    # ==== editing ==================================================================================
    def push_command(self, command) -> bool:
        """Perform an edit command on its document; a refused edit is reported, nothing changes."""
        document = command.document
        try:
            commands.push(document, command)
        except GraphKernelsError as exc:
            self.show_error("Edit refused", f"{document.name}: {exc}")
            return False
        except Exception as exc:  # noqa: BLE001 - a bug must not lose the user's graph
            self.show_error("Edit failed", f"{document.name}: the edit failed ({describe_error(exc)}); "
                                           "the graph is as it was before the edit, if the check below passes")
            self.check_invariants(document)
            return False
        return True

    def change_page_size(self, page_size: int, document: GraphDocument | None = None) -> Task | None:
        """Rebuild a graph on pages of another size, in the background; one undo step."""
        document = document or self._current
        if document is None or not document.editable:
            return None
        if page_size == document.page_size:
            self.statusBar().showMessage(f"{document.name} already uses pages of {page_size} words", 5000)
            return None
        snapshot = commands.structure_snapshot(document.slotted)
        revision = document.revision

        def job(control):
            control.progress(None, f"rebuilding {document.name} on pages of {page_size} words")
            return commands.rebuild_structure(snapshot, page_size)

        task = Task(f"rebuilding {document.name}", job, self)

        def done(new_structure):
            if document.revision != revision:
                self.show_warning(f"{document.name} changed while it was being rebuilt: rebuild again to "
                                  f"use pages of {page_size} words")
                return
            self.push_command(commands.change_page_size(document, new_structure))

        task.finished.connect(done)
        task.failed.connect(lambda message: self.show_error("Rebuild failed", f"{document.name}: {message}"))
        return self._track(task)

    def page_size_dialog(self) -> None:
        d = self._current
        if d is None or not d.editable:
            return
        from explorer.docks.structure_dock import PAGE_SIZES

        items = [str(s) for s in PAGE_SIZES]
        current = items.index(str(d.page_size)) if str(d.page_size) in items else 0
        text, ok = QInputDialog.getItem(self, "Page size", "Rebuild on pages of (words):", items, current, False)
        if ok:
            self.change_page_size(int(text))

    def default_page_size_dialog(self) -> None:
        from explorer.docks.structure_dock import PAGE_SIZES

        auto = "auto (256 small, 512 mid-size, 1024 large graphs)"
        items = [auto] + [str(s) for s in PAGE_SIZES]
        current = items.index(str(self.default_page_size)) if str(self.default_page_size) in items else 0
        text, ok = QInputDialog.getItem(self, "Default page size", "Page size for graphs opened from now on:",
                                        items, current, False)
        if ok:
            self.default_page_size = AUTO_PAGE_SIZE if text == auto else int(text)
            self.settings.set_default_page_size(self.default_page_size)

    def check_invariants(self, document: GraphDocument | None = None) -> bool:
        document = document or self._current
        if document is None or document.slotted is None:
            return True
        try:
            document.slotted.check_invariants()
        except AssertionError as exc:
            self.show_error("Layout check failed", f"{document.name}: {exc}")
            return False
        self.statusBar().showMessage(f"{document.name}: every page passes the layout check", 6000)
        self.log("info", f"{document.name}: layout invariants hold ({document.slotted.num_pages} pages)")
        return True

    def forget_dirty_marks(self) -> None:
        if self._current is not None:
            self._current.mark_synced()
            self.log("info", f"{self._current.name}: dirty marks cleared")

    def _step_page(self, step: int) -> None:
        tab = self.current_tab()
        if tab is None or tab.page_map.stats is None:
            return
        n = len(tab.page_map.stats["fill"])
        if n:
            current = tab.page_map.selected if tab.page_map.selected is not None else -step
            tab.select_page((current + step) % n)

    def rename_dialog(self) -> None:
        d = self._current
        if d is None:
            return
        name, ok = QInputDialog.getText(self, "Rename graph", "Name:", text=d.name)
        if ok:
            d.set_name(name)

    def duplicate_current(self) -> GraphDocument | None:
        d = self._current
        if d is None:
            return None
        copy = GraphDocument(name=f"{d.name} (copy)", csr=d.csr(),
                             slotted=d.slotted.copy() if d.slotted is not None else None,
                             source=d.source, not_editable_reason=d.not_editable_reason)
        self.add_document(copy)
        self.log("info", f"duplicated {d.name}")
        return copy

    def export_graph_dialog(self) -> None:
        d = self._current
        if d is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export graph", str(Path(self.settings.last_directory()) /
                                                                       f"{d.name}.mtx"), GRAPH_FILE_FILTER)
        if path:
            self.export_graph(path, d)

    def export_graph(self, path: str, document: GraphDocument | None = None) -> bool:
        from kernels.graph.io import write_graph

        document = document or self._current
        try:
            write_graph(document.csr(), path)
        except (GraphKernelsError, OSError) as exc:
            self.show_error("Cannot export graph", f"{path}: {describe_error(exc)}")
            return False
        self.log("info", f"exported {document.name} to {path}")
        return True

    # ==== sessions ==================================================================================
    def _dock_states(self) -> dict:
        states = {}
        for dock in self.compute_docks:
            getter = getattr(dock, "session_state", None)
            if getter is None:
                continue
            try:
                states[dock.objectName()] = getter()
            except Exception as exc:  # noqa: BLE001
                self.log("warning", f"{dock.objectName()}: its state was not saved ({describe_error(exc)})")
        return states

    def collect_session(self):
        from explorer import session

        docs = self._documents
        positions = [dict(self.tab_for(d).node_link.positions) for d in docs]
        current = docs.index(self._current) if self._current in docs else 0
        return session.collect(docs, current=current, window_geometry=bytes(self.saveGeometry().data()),
                               window_state=bytes(self.saveState().data()), docks=self._dock_states(),
                               positions=positions)

    def save_session(self) -> Task | None:
        if self.session_path:
            return self.save_session_to(self.session_path)
        return self.save_session_as()

    def save_session_as(self) -> Task | None:
        suffix = _session_suffix()
        start = self.session_path or str(Path(self.settings.last_directory()) / f"session{suffix}")
        path, _ = QFileDialog.getSaveFileName(self, "Save session", start, f"Sessions (*{suffix})")
        if not path:
            return None
        if not path.endswith(suffix):
            path += suffix
        return self.save_session_to(path)

    def save_session_to(self, path: str, *, autosave: bool = False) -> Task:
        """Save everything to ``path`` (the file is written in the background, atomically)."""
        from explorer import session

        data = self.collect_session()
        clean_stacks = [d.undo_stack for d in self._documents]
        task = Task(f"saving session {Path(path).name}",
                              lambda control: session.write(data, path, progress=lambda f: control.progress(f)), self)

        def saved(_result):
            if not autosave:
                self.session_path = path
                for stack in clean_stacks:
                    stack.setClean()
                self.settings.set_last_directory(Path(path).parent)
            self.log("info", f"session saved to {path}")
            self.statusBar().showMessage(f"session saved to {path}", 6000)
            self.sessionSaved.emit(path)

        task.finished.connect(saved)
        task.failed.connect(lambda message: self.show_error(
            "Session not saved", f"{path}: {message} (the previous file, if any, is intact)"))
        return self._track(task)

    def open_session_dialog(self) -> None:
        suffix = _session_suffix()
        path, _ = QFileDialog.getOpenFileName(self, "Open session", self.settings.last_directory(),
                                              f"Sessions (*{suffix});;All files (*)")
        if path:
            self.open_session(path)

    def open_session(self, path: str, *, replace: bool = False) -> Task:
        """Read a session in the background and open its graphs as new tabs (``replace``: close
        the current ones first; they stay in Reopen Closed Graph)."""
        from explorer import session

        task = Task(f"opening session {Path(path).name}", lambda control: session.read(path), self)
        task.finished.connect(lambda data: self.restore_session(data, path, replace=replace))
        task.failed.connect(lambda _message: self._load_failed(f"session {Path(path).name}", task))
        self.log("info", f"opening session {path}")
        return self._track(task)

    def restore_session(self, data, path: str = "", *, replace: bool = False) -> list[GraphDocument]:
        from explorer import session

        if replace:
            self.close_all_documents()
        opened = []
        for rec in data.documents:
            slotted = None
            reason = rec.not_editable_reason
            if rec.structure is not None and rec.structure >= 0:
                slotted = data.structures[rec.structure]
            elif rec.structure == -1:
                try:
                    from kernels.graph.slotted import SlottedGraph

                    size = self.default_page_size or auto_page_size(rec.csr)
                    slotted = SlottedGraph.from_csr(rec.csr, page_size=size)
                except GraphKernelsError as exc:
                    reason = str(exc)
            document = GraphDocument(name=rec.name, csr=rec.csr, slotted=slotted, source=rec.source,
                                     not_editable_reason=reason)
            session.restore_undo_history(document, rec, data.structures)
            tab = self.add_document(document, select=False)
            if rec.positions:
                tab.node_link.positions = dict(rec.positions)
                tab.node_link.refresh()
            opened.append(document)
        if opened:
            index = min(max(data.current, 0), len(opened) - 1)
            self.tabs.setCurrentWidget(self.tab_for(opened[index]))
        if data.window_state:
            self.restoreState(QByteArray(data.window_state))
        for dock in self.compute_docks:
            state = data.docks.get(dock.objectName())
            restore = getattr(dock, "restore_session_state", None)
            if state is not None and restore is not None:
                try:
                    restore(state)
                except Exception as exc:  # noqa: BLE001
                    self.log("warning", f"{dock.objectName()}: its saved state was not restored "
                                        f"({describe_error(exc)})")
        unknown = set(data.docks) - {d.objectName() for d in self.compute_docks}
        for name in sorted(unknown):
            self.log("warning", f"the session holds the state of {name}, which is not available here")
        for w in data.warnings:
            self.show_warning(f"{Path(path).name}: {w}")
        if path and Path(path).suffix == _session_suffix() and Path(path) != self.settings.autosave_path():
            self.session_path = path
        self.log("info", f"session {path} opened: {len(opened)} graph(s)")
        self.sessionLoaded.emit(path)
        self._update_actions()
        return opened

    def recover_autosave(self) -> None:
        path = self.settings.autosave_path()
        if path.exists():
            self.open_session(str(path))

    def unsaved_documents(self) -> list[GraphDocument]:
        return [d for d in self._documents if not d.undo_stack.isClean()]

    # ==== drag and drop =============================================================================
    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt override
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        if urls and all(u.isLocalFile() for u in urls):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:  # noqa: N802 - Qt override
        self.dragEnterEvent(event)

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt override
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        paths = [u.toLocalFile() for u in urls if u.isLocalFile()]
        if not paths:
            event.ignore()
            return
        event.acceptProposedAction()
        self.open_paths(paths)

    # ==== layout and closing ========================================================================
    def _restore_layout(self) -> None:
        geometry = self.settings.window_geometry()
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = self.settings.window_state()
        if state is not None:
            self._layout_restored = self.restoreState(state) or self._layout_restored

    def reset_layout(self) -> None:
        self.restoreState(self._default_state)
        for dock in self.docks():
            dock.show()
        self.apply_default_sizes()

    def ask_unsaved(self, unsaved: list[GraphDocument]) -> str:
        """Ask what to do with unsaved edits on quitting: "save", "discard" or "cancel"."""
        names = ", ".join(d.name for d in unsaved[:5]) + (" …" if len(unsaved) > 5 else "")
        box = QMessageBox(QMessageBox.Icon.Question, "Unsaved edits",
                          f"{len(unsaved)} graph(s) have edits not saved in a session: {names}.", parent=self)
        box.setInformativeText("Save the session before quitting? Closing without saving keeps the edits for "
                               "File ▸ Recover Autosaved Session until the next time.")
        box.setStandardButtons(QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                               | QMessageBox.StandardButton.Cancel)
        box.button(QMessageBox.StandardButton.Discard).setText("Close Without Saving")
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        self._quit_box = box
        answer = box.exec()
        return {QMessageBox.StandardButton.Save: "save",
                QMessageBox.StandardButton.Discard: "discard"}.get(QMessageBox.StandardButton(answer), "cancel")

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        unsaved = self.unsaved_documents()
        if unsaved and self.dialogs and self.isVisible():
            choice = self.ask_unsaved(unsaved)
            if choice == "cancel":
                event.ignore()
                return
            if choice == "save" and not self._save_before_quitting():
                event.ignore()
                return
            unsaved = self.unsaved_documents()
        self.settings.save_window(self.saveGeometry(), self.saveState())
        if unsaved:
            # never lose edits: keep them in the autosave session (File ▸ Recover Autosaved Session)
            try:
                from explorer import session

                session.write(self.collect_session(), self.settings.autosave_path())
                self.log("info", f"unsaved edits kept in {self.settings.autosave_path()}")
            except Exception as exc:  # noqa: BLE001
                self.log("error", f"could not keep the unsaved edits: {describe_error(exc)}")
        self.shutdown()
        self.log_handler.detach()
        super().closeEvent(event)

    def _save_before_quitting(self) -> bool:
        """Save the session now (not in the background: the window is closing)."""
        from explorer import session

        path = self.session_path
        if not path:
            suffix = _session_suffix()
            path, _ = QFileDialog.getSaveFileName(self, "Save session", str(Path(self.settings.last_directory())
                                                                             / f"session{suffix}"),
                                                  f"Sessions (*{suffix})")
            if not path:
                return False
            path = path if path.endswith(suffix) else path + suffix
        try:
            session.write(self.collect_session(), path)
        except (GraphKernelsError, OSError) as exc:
            self.show_error("Session not saved", f"{path}: {describe_error(exc)}")
            return False
        self.session_path = path
        for d in self._documents:
            d.undo_stack.setClean()
        return True

    def shutdown(self) -> None:
        """Stop everything that runs in the background (tasks, layouts, compute docks)."""
        self.cancel_tasks()
        for task in list(self._tasks):
            task.wait(30)
        for i in range(self.tabs.count()):
            self.tabs.widget(i).shutdown()
        self.graph_dock.statistics.cancel()
        for dock in self.compute_docks:
            stop = getattr(dock, "shutdown", None)
            if stop is not None:
                try:
                    stop()
                except Exception as exc:  # noqa: BLE001
                    self.log("warning", f"{dock.objectName()} did not stop cleanly: {describe_error(exc)}")
        for box in list(self._message_boxes):
            box.close()

    # ==== help and pictures ==========================================================================
    def shortcut_list(self) -> list[tuple[str, str]]:
        """(command, keys) of every menu command with a shortcut, each once (an action in two
        menus, like Open Results…, is listed once)."""
        rows, seen = [], set()
        for menu_action in self.menuBar().actions():
            menu = menu_action.menu()
            for act in menu.actions():
                if act.shortcut().toString() and id(act) not in seen:
                    seen.add(id(act))
                    rows.append((act.text().replace("&", ""), act.shortcut().toString()))
        return rows

    def shortcuts_dialog(self) -> None:
        rows = [f"<tr><td>{html.escape(text)}</td><td><b>{html.escape(keys)}</b></td></tr>"
                for text, keys in self.shortcut_list()]
        QMessageBox.information(self, "Keyboard shortcuts", "<table>" + "".join(rows) + "</table>")

    def about_dialog(self) -> None:
        from kernels import __version__

        QMessageBox.about(self, "About GPU Graph Explorer",
                          f"<b>GPU Graph Explorer {__version__}</b><br>Load a graph, edit it live on slotted "
                          f"pages, run GPU kernels with the launch parameters you choose.<br><br>"
                          f"{self.target_label.text()}")

    def screenshot_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save window picture",
                                              str(Path(self.settings.last_directory()) / "window.png"), "PNG (*.png)")
        if path:
            if self.grab().save(path):
                self.log("info", f"window picture saved to {path}")
            else:
                self.show_error("Picture not saved", f"{path}: could not be written")

    def wait_idle(self, timeout_s: float = 60.0) -> bool:
        """Process events until background work and pending layouts are done (screenshots)."""
        import time

        deadline = time.monotonic() + timeout_s
        app = QApplication.instance()
        while time.monotonic() < deadline:
            app.processEvents()
            pending = self.busy() or any(
                (t := self.tabs.widget(i)).node_link._task is not None and t.node_link._task.running
                for i in range(self.tabs.count()))
            if not pending:
                app.processEvents()
                return True
            time.sleep(0.02)
        return False
