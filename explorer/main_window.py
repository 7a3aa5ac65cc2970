"""The main window: a tab per open graph, docks around it, menus for everything.

The window assembles its parts and routes between them:

* :class:`~explorer.window.documents.DocumentTabs` (``window.document_tabs``): the documents,
  their tabs, the current one, the closed ones;
* :class:`~explorer.window.session_controller.SessionController` (``window.sessions``): saving,
  opening, autosave and recovery of sessions;
* :func:`~explorer.window.actions.build_menus` (``window.menus``): the menus and actions;
* :class:`~explorer.window.task_status.TaskStatus` (``window.task_status``): the background
  tasks (loading, generating, rebuilding, saving) in the status bar.

Interface for the compute side (Run and Results docks)
------------------------------------------------------
The compute docks never reach into the tabs; they use only this:

* ``window.current_document()`` -> :class:`~explorer.model.document.GraphDocument` (Qt-free)
  or ``None``, and the signal ``window.currentDocumentChanged(object)`` (the new document or ``None``).
  ``window.documents()`` lists every open document.
* ``GraphDocument``: ``key`` (changes whenever the content changes: send ``csr()`` to the
  worker under that key), ``csr()`` (the current :class:`~kernels.graph.csr.CSRGraph`
  snapshot, cached per revision), ``name``, ``undo_stack``, ``editable``, ``slotted``
  (read-only access to the live structure), ``events`` (observed from Qt through
  ``explorer.model_signals.signals(document)``: ``changed`` after every edit, undo, redo) and
  ``mark_synced()`` (call it after uploading the structure's pages to a device: it clears
  the page map's "written since the last sync" marks).
* ``window.log(level, message)`` puts a message in the log panel (``level``: "info",
  "warning" or "error"); ``window.show_error(title, message)`` also tells the user at once;
  ``window.settings``, ``window.dialogs``, ``window.view_menu``, ``window.statusBar()``.
* ``window.add_compute_docks()`` creates ``explorer.docks.run_dock.RunDock(window)`` and
  ``explorer.docks.results_dock.ResultsDock(window)`` when those modules exist. Each is a
  :class:`~explorer.window.compute_dock.ComputeDock`: the window saves and restores their
  ``session_state()``, hands them result files (``open_result_file``), asks them for a view
  (``show_view``, pictures) and stops them (``shutdown``) when it closes.
"""

from __future__ import annotations

import html
import logging
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QApplication, QDockWidget, QFileDialog, QInputDialog, QLabel, QMainWindow, QMessageBox

from explorer.docks.graph_dock import GenerateDialog, GraphDock
from explorer.docks.log_dock import WINDOW_LOGGER, LogDock, LogPanelHandler, normalise_level
from explorer.docks.structure_dock import StructureDock
from explorer.loading import AUTO_PAGE_SIZE, LoadedGraph, generate_job, load_file_job
from explorer.model import commands
from explorer.model.document import GraphDocument
from explorer.settings import AppSettings
from explorer.tasks import Task, describe_error, is_user_error
from explorer.views.graph_tab import GraphTab
from explorer.window.actions import build_menus, shortcut_list
from explorer.window.compute_dock import ComputeDock
from explorer.window.documents import DocumentTabs
from explorer.window.session_controller import SessionController, session_suffix
from explorer.window.status_bar import ElidingStatusBar
from explorer.window.task_status import TaskStatus
from kernels.errors import GraphKernelsError
from kernels.measure.targets import Target, target_label
from kernels.memory import format_bytes

RESULT_SUFFIXES = (".json", ".jsonl")
GRAPH_FILE_FILTER = ("Graph files (*.mtx *.mm *.npz *.graphml *.gml *.net *.pajek *.gr *.clq *.col *.dimacs *.csv "
                     "*.graph *.metis *.chaco *.txt *.tsv *.edges *.el *.wel *.edgelist *.dat *.gz *.bz2 *.xz);;"
                     "All files (*)")
DEFAULT_WINDOW = (1600, 1000)      # the first start (a remembered geometry replaces it), within the screen
# default shares of the window (View ▸ Reset Layout and the first start): the Results area gets
# room for a readable chart, the side docks for their forms without clipping
BOTTOM_SHARE = 0.46
SIDE_WIDTHS = (0.19, 0.25)          # Graph (left), Structure/Run (right), of the window's width
SIDE_MIN = (250, 350)


def targets_text() -> str:
    """The status bar's words for where kernels can run: the same list the Run dock offers
    (:func:`explorer.compute.targets.machine_targets`), so the two never disagree."""
    from explorer.compute.targets import machine_targets

    try:
        here = machine_targets()
    except GraphKernelsError as exc:
        return f"no target ({exc})"
    chosen = [Target.parse(t) for t in here]
    text = "targets: " + ", ".join(target_label(t) if t.is_gpu else "CPU" for t in chosen)
    return text + ("" if any(t.real_gpu for t in chosen) else " (no GPU)")


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
        self._message_boxes: list[QMessageBox] = []
        self.compute_docks: list[ComputeDock] = []

        self.document_tabs = DocumentTabs(self)
        self.tabs = self.document_tabs.widget
        self.setCentralWidget(self.tabs)
        self.sessions = SessionController(self)

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
        self.structure_dock.backgroundBatchRequested.connect(self.apply_batch_in_background)
        self.structure_dock.gpuBatchRequested.connect(self.apply_batch_on_gpu)
        self.structure_dock.errorRaised.connect(lambda text: self.show_error("Edit refused", text))

        tabs = self.document_tabs
        tabs.currentDocumentChanged.connect(self._on_current_changed)
        tabs.documentAdded.connect(self.documentAdded)
        tabs.documentAdded.connect(self._update_actions)
        tabs.documentClosed.connect(self._on_closed)
        tabs.documentChanged.connect(self._on_document_changed)
        tabs.vertexClicked.connect(self._on_vertex_clicked)
        self.sessions.sessionSaved.connect(self.sessionSaved)
        self.sessions.sessionLoaded.connect(self.sessionLoaded)
        self.sessions.sessionLoaded.connect(self._update_actions)

        self.setStatusBar(ElidingStatusBar(self))      # long messages end in "…", never under the targets
        self.task_status = TaskStatus(self.statusBar(), self)
        self.cancel_button = self.task_status.cancel_button
        self.target_label = QLabel(targets_text())
        self.target_label.setToolTip("where kernels can run here, as the Run dock offers them "
                                     "(GRAPH_KERNELS_TARGET=cuda|sim|cpu forces one)")
        self.statusBar().addPermanentWidget(self.target_label)
        self.menus = build_menus(self)
        self.undo_action, self.redo_action = self.menus.undo_action, self.menus.redo_action
        self.view_menu = self.menus.view_menu
        self._restore_enabled = restore_layout
        self.resize(*self._first_size())     # the first start; a remembered geometry replaces it
        if restore_layout:
            self._restore_layout()
        self._update_actions()

    # ==== the interface used by the compute docks ===============================================
    def current_document(self) -> GraphDocument | None:
        return self.document_tabs.current_document()

    def documents(self) -> list[GraphDocument]:
        return self.document_tabs.documents()

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

    def add_compute_docks(self) -> list[ComputeDock]:
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
            if not isinstance(dock, ComputeDock):
                self.show_error("Dock not available", f"{cls.__name__} does not declare the ComputeDock interface")
                dock.deleteLater()
                continue
            if not dock.objectName():
                dock.setObjectName(cls.__name__)
            self.addDockWidget(area, dock)
            self.compute_docks.append(dock)
            self.view_menu.insertAction(self.menus.view_separator, dock.toggleViewAction())
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

    # ==== background tasks ==========================================================================
    def busy(self) -> bool:
        """Whether background work (loading, generating, rebuilding, saving) is running."""
        return self.task_status.busy()

    def _update_actions(self, *_args) -> None:
        self.menus.update(self)

    # ==== documents and tabs =======================================================================
    def tab_for(self, document: GraphDocument) -> GraphTab | None:
        return self.document_tabs.tab_for(document)

    def current_tab(self) -> GraphTab | None:
        return self.document_tabs.current_tab()

    def add_document(self, document: GraphDocument, *, select: bool = True, order: int | None = None) -> GraphTab:
        """Show a document in a new tab (see :meth:`DocumentTabs.add`)."""
        return self.document_tabs.add(document, select=select, order=order)

    def close_document(self, document: GraphDocument | None) -> None:
        """Close a graph's tab. It is kept (with its history) for File ▸ Reopen Closed Graph."""
        self.document_tabs.close(document)

    def reopen_closed(self) -> None:
        document = self.document_tabs.reopen_closed()
        if document is not None:
            self.log("info", f"reopened {document.name}")

    def duplicate_current(self) -> GraphDocument | None:
        original = self.current_document()
        copy = self.document_tabs.duplicate_current()
        if copy is not None:
            self.log("info", f"duplicated {original.name}")
        return copy

    def _on_current_changed(self, document: GraphDocument | None) -> None:
        self.graph_dock.set_document(document)
        self.structure_dock.set_document(document)
        tab = self.current_tab()
        if tab is not None:
            tab.node_link.set_picked(self.structure_dock.picked())
        title = f"{document.name} — GPU Graph Explorer" if document is not None else "GPU Graph Explorer"
        self.setWindowTitle(title)
        self._update_actions()
        self.currentDocumentChanged.emit(document)

    def _on_closed(self, document: GraphDocument) -> None:
        self.log("info", f"closed {document.name} (File ▸ Reopen Closed Graph brings it back)")
        self.documentClosed.emit(document)
        self._update_actions()

    def _on_document_changed(self, document: GraphDocument) -> None:
        summary = document.last_edit
        if summary is not None:
            self.statusBar().showMessage(f"{document.name}: {summary.describe()}", 8000)
            self.log("info", f"{document.name}: {summary.describe()}")
        if document is self.current_document():
            self._update_actions()

    def _on_vertex_clicked(self, v: int) -> None:
        self.structure_dock.vertex_picked(v)
        tab = self.current_tab()
        if tab is not None:
            tab.node_link.set_picked(self.structure_dock.picked())
        self.statusBar().showMessage(f"picked vertex {v}", 4000)

    # ==== opening ===================================================================================
    def open_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Open graph files", self.settings.last_directory(),
                                                GRAPH_FILE_FILTER + f";;Sessions (*{session_suffix()})"
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
        if p.suffix.lower() == session_suffix():
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
        order = self.document_tabs.next_order()
        task.finished.connect(lambda loaded, p=p, remember=remember, order=order: self._loaded(
            loaded, p.name.split(".")[0], p if remember else None, order))
        task.failed.connect(lambda _message, p=p: self.report_load_failed(f"{p.name}", task))
        task.cancelled.connect(lambda _partial, p=p: self.log("warning", f"loading {p} was cancelled"))
        self.log("info", f"loading {p}")
        return self.task_status.track(task)

    def _open_result_file(self, path: str) -> None:
        for dock in self.compute_docks:
            try:
                if dock.open_result_file(path):
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

    def report_load_failed(self, what: str, task: Task) -> None:
        """Tell the user a graph or session did not open (the traceback too, in the log, when it was a bug)."""
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
        order = self.document_tabs.next_order()
        task.finished.connect(lambda loaded: self._loaded(loaded, loaded.csr.name, None, order))
        task.failed.connect(lambda _message: self.report_load_failed(f"generated graph {kind} ({text})", task))
        self.log("info", f"generating {kind} ({text})")
        return self.task_status.track(task)

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

    def apply_batch_in_background(self, size: int, mode: str, seed: int,
                                  document: GraphDocument | None = None) -> Task | None:
        """A large vectorised random batch: drawn and applied to a copy of the structure in a
        thread, then replayed on the live structure from its page delta; one undo step."""
        document = document or self.current_document()
        if document is None or not document.editable:
            return None
        copy = document.slotted.copy()
        revision = document.revision

        def job(control):
            control.progress(None, f"applying a batch of {size:,} edits to {document.name}")
            return commands.batch_on_copy(copy, size, mode, seed)

        task = Task(f"batch of {size:,} edits on {document.name}", job, self)

        def done(result):
            if document.revision != revision:
                self.show_warning(f"{document.name} changed while the batch was being applied: apply it again")
                return
            text, report, page_delta, vertices = result
            self.push_command(commands.replayed_batch(document, text, report, page_delta, vertices))

        task.finished.connect(done)
        task.failed.connect(lambda message: self.show_error("Batch refused", f"{document.name}: {message}"))
        return self.task_status.track(task)

    def apply_batch_on_gpu(self, draw, document: GraphDocument | None = None):
        """A batch (``draw()`` -> ``(batch, text)``) applied on the device pages of the document's
        replica (the worker of its GPU runs), replayed here as one undo step
        (:mod:`explorer.window.gpu_batches`)."""
        from explorer.window import gpu_batches

        return gpu_batches.submit(self, document or self.current_document(), draw)

    def change_page_size(self, page_size: int, document: GraphDocument | None = None) -> Task | None:
        """Rebuild a graph on pages of another size, in the background; one undo step."""
        document = document or self.current_document()
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
        return self.task_status.track(task)

    def page_size_dialog(self) -> None:
        d = self.current_document()
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
        document = document or self.current_document()
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
        document = self.current_document()
        if document is not None:
            document.mark_synced()
            self.log("info", f"{document.name}: dirty marks cleared")

    def step_page(self, step: int) -> None:
        """Select the next (1) or previous (-1) page of the current graph's page map."""
        tab = self.current_tab()
        if tab is None or tab.page_map.stats is None:
            return
        n = len(tab.page_map.stats["fill"])
        if n:
            current = tab.page_map.selected if tab.page_map.selected is not None else -step
            tab.select_page((current + step) % n)

    def rename_dialog(self) -> None:
        d = self.current_document()
        if d is None:
            return
        name, ok = QInputDialog.getText(self, "Rename graph", "Name:", text=d.name)
        if ok:
            d.set_name(name)

    def export_graph_dialog(self) -> None:
        d = self.current_document()
        if d is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export graph", str(Path(self.settings.last_directory()) /
                                                                       f"{d.name}.mtx"), GRAPH_FILE_FILTER)
        if path:
            self.export_graph(path, d)

    def export_graph(self, path: str, document: GraphDocument | None = None) -> bool:
        from kernels.graph.io import write_graph

        document = document or self.current_document()
        try:
            write_graph(document.csr(), path)
        except (GraphKernelsError, OSError) as exc:
            self.show_error("Cannot export graph", f"{path}: {describe_error(exc)}")
            return False
        self.log("info", f"exported {document.name} to {path}")
        return True

    # ==== sessions (see explorer.window.session_controller) =======================================
    def save_session(self) -> Task | None:
        return self.sessions.save()

    def save_session_to(self, path: str, *, autosave: bool = False) -> Task:
        return self.sessions.save_to(path, autosave=autosave)

    def open_session(self, path: str, *, replace: bool = False) -> Task:
        return self.sessions.open(path, replace=replace)

    def recover_autosave(self) -> None:
        self.sessions.recover_autosave()

    def unsaved_documents(self) -> list[GraphDocument]:
        return self.sessions.unsaved_documents()

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
            if choice == "save" and not self.sessions.save_now():
                event.ignore()
                return
            unsaved = self.unsaved_documents()
        self.settings.save_window(self.saveGeometry(), self.saveState())
        if unsaved:
            self.sessions.keep_unsaved()
        self.shutdown()
        self.log_handler.detach()
        super().closeEvent(event)

    def shutdown(self) -> None:
        """Stop everything that runs in the background (tasks, layouts, compute docks)."""
        self.task_status.stop_all(timeout_s=30)
        self.document_tabs.shutdown()
        self.graph_dock.statistics.cancel()
        for dock in self.compute_docks:
            try:
                dock.shutdown()
            except Exception as exc:  # noqa: BLE001 - the other docks must still stop
                self.log("warning", f"{dock.objectName()} did not stop cleanly: {describe_error(exc)}")
        for box in list(self._message_boxes):
            box.close()

    # ==== help and pictures ==========================================================================
    def shortcut_list(self) -> list[tuple[str, str]]:
        """(command, keys) of every menu command with a shortcut, each once."""
        return shortcut_list(self.menuBar())

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

    def picture_dialog(self) -> None:
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
            pending = self.busy() or any(tab.node_link.busy() for tab in self.document_tabs.tabs())
            if not pending:
                app.processEvents()
                return True
            time.sleep(0.02)
        return False
