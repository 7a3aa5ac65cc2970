"""The Structure dock: edit tools for the current graph's slotted pages, and its edit history.

Ids are typed, or picked by clicking vertices in the node-link view (the first click fills
"u", the second "v"). Every button builds a command (:mod:`explorer.model.commands`) and pushes
it through the window; a refused edit is reported in words and changes nothing. The history
list (:mod:`explorer.docks.history_view`) shows the document's undo stack: clicking an entry
goes back to it.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QIntValidator, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDockWidget,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from explorer.docks.history_view import HistoryView
from explorer.model import commands
from explorer.model_signals import signals
from kernels.errors import GraphEditError, GraphKernelsError

PAGE_SIZES = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
# vectorised random batches of at least this many edits are drawn and applied off the GUI thread
BACKGROUND_BATCH = 100_000
ZERO_BASED = ("Vertex ids count from 0, as in the node-link view and the page inspector. Matrix Market "
              "(.mtx) files count from 1: vertex k of the file is id k − 1 here.")


def sync_text(sync: dict) -> str:
    """A DocumentSync (as JSON) in words: what crossed to the worker, then to the device."""
    from kernels.compute.documents import DocumentSync

    try:
        return DocumentSync(**sync).summary()
    except TypeError:                 # a field this version does not know: say the essentials
        return f"sent {sync.get('sent', '?')}"


class GraphShortcutRouter(QObject):
    """Lets the graph's editing shortcuts win over a text field's own key bindings.

    Before a shortcut fires, Qt sends the focused widget a ``ShortcutOverride`` event, and a
    line edit claims the keys it has a binding for: Ctrl+Z / Ctrl+Shift+Z undo its *text*,
    and on X11 Ctrl+E is "move to the end of the line". In the Structure dock those fields
    hold vertex ids, and "type u, Tab, v, Ctrl+E" must add the edge, so for the key sequences
    of the routed actions the override is refused and the window's shortcut fires instead.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._sequences: list[QKeySequence] = []

    def route(self, actions) -> None:
        self._sequences = [seq for act in actions for seq in act.shortcuts() if not seq.isEmpty()]

    def claims(self, event) -> bool:
        pressed = QKeySequence(event.keyCombination())
        return any(pressed.matches(seq) == QKeySequence.SequenceMatch.ExactMatch for seq in self._sequences)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.ShortcutOverride and self.claims(event):
            event.ignore()           # not the field's key: let the window's shortcut have it
            return True
        return False


class StructureDock(QDockWidget):
    """Edit tools; emits :attr:`editRequested` with a ready command factory result."""

    editRequested = Signal(object)          # a command to push (explorer.model.commands)
    pageSizeRequested = Signal(int)         # rebuild the current graph with this page size
    backgroundBatchRequested = Signal(int, str, int)   # size, mode, seed: a large vectorised batch
    gpuBatchRequested = Signal(object)       # draw() -> (batch, text): applied on the replica's device pages
    errorRaised = Signal(str)

    def __init__(self, parent=None):
        super().__init__("Structure", parent)
        self.setObjectName("StructureDock")
        self.document = None
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        self.state_label = QLabel()
        self.state_label.setWordWrap(True)
        layout.addWidget(self.state_label)
        self.sync_label = QLabel()          # the live pages on a worker: what waits to be synced
        self.sync_label.setWordWrap(True)
        self.sync_label.setToolTip("GPU runs on the live pages (gpu-slotted BFS/SSSP) keep a copy of this graph's "
                                   "pages on the worker; before each run only the pages written since the last one "
                                   "cross to it and to the device")
        layout.addWidget(self.sync_label)

        ids = QGroupBox("vertices and edges (ids from 0)")
        ids.setToolTip(ZERO_BASED)
        grid = QGridLayout(ids)
        validator = QIntValidator(0, 2**31 - 2, self)
        self.u_edit = QLineEdit()
        self.v_edit = QLineEdit()
        self.new_v_edit = QLineEdit()
        for w, tip in ((self.u_edit, "source vertex u (or the vertex to remove)"),
                       (self.v_edit, "target vertex v"),
                       (self.new_v_edit, "new target for 'Edit edge' (u, v) -> (u, new v)")):
            w.setValidator(validator)
            w.setToolTip(f"{tip}<br>{ZERO_BASED}")
            w.setPlaceholderText("id, from 0")
        self.weight_edit = QLineEdit()
        self.weight_edit.setPlaceholderText("1.0")
        self.weight_edit.setToolTip("weight of an added edge (weighted graphs only)")
        grid.addWidget(QLabel("u"), 0, 0)
        grid.addWidget(self.u_edit, 0, 1)
        grid.addWidget(QLabel("v"), 0, 2)
        grid.addWidget(self.v_edit, 0, 3)
        grid.addWidget(QLabel("new v"), 1, 0)
        grid.addWidget(self.new_v_edit, 1, 1)
        grid.addWidget(QLabel("weight"), 1, 2)
        grid.addWidget(self.weight_edit, 1, 3)
        self.pick_box = QCheckBox("pick u, v in the node-link view")
        self.pick_box.setToolTip("clicking a vertex in the node-link view fills u, the next click v")
        self.pick_box.setChecked(True)
        grid.addWidget(self.pick_box, 2, 0, 1, 4)
        self.add_vertex_button = QPushButton("Add vertex")
        self.remove_vertex_button = QPushButton("Remove vertex u")
        self.clean_box = QCheckBox("remove edges to it too")
        self.clean_box.setChecked(True)
        self.clean_box.setToolTip("unchecked: keep the thesis' behaviour (other lists still hold the removed id)")
        self.add_edge_button = QPushButton("Add edge u–v")
        self.remove_edge_button = QPushButton("Remove edge u–v")
        self.edit_edge_button = QPushButton("Edit edge u–v → u–new v")
        grid.addWidget(self.add_vertex_button, 3, 0, 1, 2)
        grid.addWidget(self.remove_vertex_button, 3, 2, 1, 2)
        grid.addWidget(self.clean_box, 4, 0, 1, 4)
        grid.addWidget(self.add_edge_button, 5, 0, 1, 2)
        grid.addWidget(self.remove_edge_button, 5, 2, 1, 2)
        grid.addWidget(self.edit_edge_button, 6, 0, 1, 4)
        layout.addWidget(ids)

        batch = QGroupBox("random batch (one undo step)")
        form = QFormLayout(batch)
        self.batch_size = QSpinBox()
        self.batch_size.setRange(1, 10_000_000)
        self.batch_size.setValue(20)
        self.batch_mode = QComboBox()
        self.batch_mode.addItems(["mixed", "add", "remove"])
        self.batch_mode.setToolTip("add new random edges, remove random existing ones, or half of each")
        self.batch_seed = QSpinBox()
        self.batch_seed.setRange(0, 2**31 - 1)
        self.batch_path = QComboBox()
        self.batch_path.addItem("one by one", "engine")
        self.batch_path.addItem("vectorised", "host")
        self.batch_path.addItem("on the GPU", "gpu")
        self.batch_path.setToolTip("one edit at a time: the thesis' edit rules, edge by edge; vectorised batch: the "
                                   "whole batch at once (touched pages rebuilt, docs/updates.md), its rate and the "
                                   "pages it wrote are shown below; on the GPU: the batch applied by kernels on the "
                                   "device pages of the worker that runs this graph's GPU runs (the Run dock's "
                                   "target, or this machine's GPU or simulator), checked page for page and "
                                   "replayed here. Each is one undo step.")
        self.batch_button = QPushButton("Apply random batch")
        self.batch_file_button = QPushButton("Apply batch file…")
        self.batch_file_button.setToolTip("a text file of '+ u v [weight]', '- u v' and '= u v weight' lines, "
                                          "applied as one batch, vectorised or on the GPU as chosen on the left "
                                          "(one undo step)")
        self.batch_file_button.setText("Batch file…")
        # as many rows as before the batch paths came: the dock must still fit a small screen
        kind_row = QHBoxLayout()
        kind_row.addWidget(self.batch_mode)
        kind_row.addWidget(self.batch_path, 1)
        button_row = QHBoxLayout()
        button_row.addWidget(self.batch_button, 1)
        button_row.addWidget(self.batch_file_button)
        form.addRow("edits", self.batch_size)
        form.addRow("kind", kind_row)
        form.addRow("seed", self.batch_seed)
        form.addRow(button_row)
        layout.addWidget(batch)

        pages = QGroupBox("pages")
        prow = QHBoxLayout(pages)
        self.page_size_box = QComboBox()
        for size in PAGE_SIZES:
            self.page_size_box.addItem(f"{size} words", size)
        self.page_size_box.setToolTip("page size in int32 words; the thesis found 256 best for small graphs, "
                                      "512 for mid-size, ~1280 for large; tiny sizes show splits and large lists")
        self.rebuild_button = QPushButton("Rebuild")
        self.rebuild_button.setToolTip("rebuild the structure on pages of the chosen size (undoable)")
        prow.addWidget(QLabel("page size"))
        prow.addWidget(self.page_size_box, 1)
        prow.addWidget(self.rebuild_button)
        layout.addWidget(pages)

        self.last_edit_label = QLabel()
        self.last_edit_label.setWordWrap(True)
        layout.addWidget(self.last_edit_label)
        layout.addWidget(QLabel("<b>history</b> (click an entry to go back to it)"))
        self.history = HistoryView("loaded")
        self.history.setMinimumHeight(HistoryView.MIN_HEIGHT)
        layout.addWidget(self.history, 1)
        # scrollable, so that the dock never forces the window taller than the screen
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        # never sideways: the fields and buttons shrink to the dock's width instead of being clipped
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(body)
        self.scroll = scroll
        self.setWidget(scroll)

        self.add_vertex_button.clicked.connect(self.add_vertex)
        self.remove_vertex_button.clicked.connect(self.remove_vertex)
        self.add_edge_button.clicked.connect(self.add_edge)
        self.remove_edge_button.clicked.connect(self.remove_edge)
        self.edit_edge_button.clicked.connect(self.edit_edge)
        self.batch_button.clicked.connect(self.apply_batch)
        self.batch_file_button.clicked.connect(lambda: self.apply_batch_file())
        self.rebuild_button.clicked.connect(self.rebuild)
        self._editors = [self.add_vertex_button, self.remove_vertex_button, self.add_edge_button,
                         self.remove_edge_button, self.edit_edge_button, self.batch_button,
                         self.batch_file_button,
                         self.rebuild_button, self.page_size_box]
        self.shortcut_router = GraphShortcutRouter(self)
        for field in body.findChildren(QLineEdit) + body.findChildren(QSpinBox):
            field.installEventFilter(self.shortcut_router)
        self.set_document(None)

    def route_shortcuts(self, actions) -> None:
        """The window's graph-editing actions (undo, redo, edits): their shortcuts act on the
        graph even while a field of this dock has the focus."""
        self.shortcut_router.route(actions)

    # ---- following the current document ------------------------------------------------
    def set_document(self, document) -> None:
        if self.document is not None:
            signals(self.document).changed.disconnect(self._on_changed)
            signals(self.document).syncedChanged.disconnect(self._show_sync)
        self.document = document
        self.history.set_document(document)
        if document is not None:
            signals(document).changed.connect(self._on_changed)
            signals(document).syncedChanged.connect(self._show_sync)
        self._on_changed(None)

    def _show_sync(self) -> None:
        """Pages waiting for the next run on the live pages, and what the last one's sync cost."""
        d = self.document
        if d is None or not d.editable:
            self.sync_label.setText("")
            return
        if d.last_sync is None:
            self.sync_label.setText("<small>live pages: not on a worker yet (the first GPU run on them sends "
                                    "the whole structure)</small>")
            return
        pending = d.pending_pages()
        waiting = ("the whole structure waits to be sent (its pages were rebuilt)" if pending is None
                   else f"{pending:,} page(s) wait to be synced")
        revision, sync = d.last_sync
        self.sync_label.setText(f"<small>live pages: {waiting}; last sync (revision {revision}): "
                                f"{html.escape(sync_text(sync))}</small>")

    def _on_changed(self, summary) -> None:
        self._show_sync()
        d = self.document
        editable = d is not None and d.editable and not d.busy_reason
        for w in self._editors:
            w.setEnabled(editable)
        if d is None:
            self.state_label.setText("no graph open")
        elif not d.editable:
            self.state_label.setText(f"<b>{d.name}</b> is read-only: {d.not_editable_reason}")
        else:
            g = d.slotted
            kind = "directed" if g.directed else "undirected"
            busy = f" · <i>{d.busy_reason}</i>" if d.busy_reason else ""
            self.state_label.setText(
                f"<b>{d.name}</b>: {g.num_vertices:,} vertices, {g.num_edges:,} edges ({kind}), "
                f"{g.num_pages:,} pages of {g.page_size} words{busy}")
            index = self.page_size_box.findData(g.page_size)
            if index < 0:
                self.page_size_box.addItem(f"{g.page_size} words", g.page_size)
                index = self.page_size_box.count() - 1
            self.page_size_box.setCurrentIndex(index)
            self.weight_edit.setEnabled(g.weighted)
        if summary is not None:
            self.last_edit_label.setText(summary.describe())

    # ---- picking ---------------------------------------------------------------------------
    def vertex_picked(self, v: int) -> None:
        """A vertex was clicked in the node-link view: fill u, then v, then start over."""
        if not self.pick_box.isChecked():
            return
        if not self.u_edit.text() or (self.u_edit.text() and self.v_edit.text()):
            self.u_edit.setText(str(v))
            self.v_edit.clear()
        else:
            self.v_edit.setText(str(v))

    def picked(self) -> list[int]:
        out = []
        for w in (self.u_edit, self.v_edit):
            if w.text().strip():
                out.append(int(w.text()))
        return out

    # ---- building commands -------------------------------------------------------------------
    def _value(self, w: QLineEdit, name: str) -> int:
        text = w.text().strip()
        if not text:
            raise GraphEditError(f"type a vertex id for {name} (or click a vertex in the node-link view)")
        return int(text)

    def _weight(self):
        text = self.weight_edit.text().strip()
        if not text or not (self.document and self.document.weighted):
            return None
        try:
            return float(text)
        except ValueError:
            raise GraphEditError(f"weight must be a number, not {text!r}") from None

    def _request(self, build) -> None:
        if self.document is None:
            return
        try:
            command = build()
        except GraphKernelsError as exc:
            self.errorRaised.emit(str(exc))
            return
        self.editRequested.emit(command)

    def add_vertex(self) -> None:
        self._request(lambda: commands.add_vertex(self.document))

    def remove_vertex(self) -> None:
        self._request(lambda: commands.remove_vertex(self.document, self._value(self.u_edit, "u"),
                                                     clean=self.clean_box.isChecked()))

    def add_edge(self) -> None:
        self._request(lambda: commands.add_edge(self.document, self._value(self.u_edit, "u"),
                                                self._value(self.v_edit, "v"), self._weight()))

    def remove_edge(self) -> None:
        self._request(lambda: commands.remove_edge(self.document, self._value(self.u_edit, "u"),
                                                   self._value(self.v_edit, "v")))

    def edit_edge(self) -> None:
        self._request(lambda: commands.edit_edge(self.document, self._value(self.u_edit, "u"),
                                                 self._value(self.v_edit, "v"),
                                                 self._value(self.new_v_edit, "new v"), self._weight()))

    def apply_batch(self) -> None:
        if self.batch_path.currentData() == "gpu":
            doc = self.document
            if doc is not None:
                if doc.slotted is None:
                    self.errorRaised.emit(f"'{doc.name}' cannot be edited: {doc.not_editable_reason}")
                    return
                # the snapshot here, the drawing on the task's thread (a large batch takes seconds)
                csr, vertices = doc.csr(), doc.slotted.vertices()
                size, mode, seed = self.batch_size.value(), self.batch_mode.currentText(), self.batch_seed.value()
                self.gpuBatchRequested.emit(lambda: commands.draw_random_batch_from(csr, vertices, size, mode, seed))
            return
        if self.batch_path.currentData() == "host" and self.batch_size.value() >= BACKGROUND_BATCH:
            if self.document is not None:
                self.backgroundBatchRequested.emit(self.batch_size.value(), self.batch_mode.currentText(),
                                                   self.batch_seed.value())
            return
        self._request(lambda: commands.random_batch(self.document, self.batch_size.value(),
                                                    self.batch_mode.currentText(), self.batch_seed.value(),
                                                    path=self.batch_path.currentData()))

    def apply_batch_file(self, path: str | None = None) -> None:
        """Apply a batch file (asked for when ``path`` is None) as one vectorised batch."""
        if self.document is None:
            return
        if path is None:
            from PySide6.QtWidgets import QFileDialog

            path, _ = QFileDialog.getOpenFileName(self, "Apply batch file", "", "Batch files (*.txt *.batch);;All (*)")
            if not path:
                return
        if self.batch_path.currentData() == "gpu":
            from pathlib import Path

            from kernels.graph.update_batches import read_batch_file

            name = Path(path).name
            self.gpuBatchRequested.emit(lambda: (read_batch_file(path), f"batch file {name}"))
            return
        self._request(lambda: commands.file_batch(self.document, path))

    def rebuild(self) -> None:
        if self.document is not None and self.document.editable:
            self.pageSizeRequested.emit(int(self.page_size_box.currentData()))

    # ---- filling in (tests, menus) ------------------------------------------------------------
    def set_ids(self, u=None, v=None, new_v=None) -> None:
        for w, value in ((self.u_edit, u), (self.v_edit, v), (self.new_v_edit, new_v)):
            if value is not None:
                w.setText(str(value))
