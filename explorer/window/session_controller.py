"""Sessions of the window: save (in the background, atomically), open, restore, autosave and
recovery of unsaved edits when the window closes.

The controller reads the window's documents through :class:`~explorer.window.documents.DocumentTabs`
and the compute docks through :class:`~explorer.window.compute_dock.ComputeDock`; the file
format is :mod:`explorer.model.session` (Qt-free). What it asks of the window is
:class:`SessionHost` (the main window is one), not the window's class: the main window imports
this module, so this module does not import it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from PySide6.QtCore import QByteArray, QObject, Signal
from PySide6.QtWidgets import QFileDialog, QStatusBar

from explorer.loading import auto_page_size
from explorer.model.document import GraphDocument
from explorer.tasks import Task, describe_error
from kernels.errors import GraphKernelsError

if TYPE_CHECKING:
    from explorer.settings import AppSettings
    from explorer.window.compute_dock import ComputeDock
    from explorer.window.documents import DocumentTabs
    from explorer.window.task_status import TaskStatus


@runtime_checkable
class SessionHost(Protocol):
    """What the session controller asks of its window (a ``QMainWindow``, the parent of the
    controller and of its file dialogs): the documents, the compute docks, where to say things."""

    settings: AppSettings
    document_tabs: DocumentTabs
    compute_docks: list[ComputeDock]
    task_status: TaskStatus
    default_page_size: int | None

    def documents(self) -> list[GraphDocument]: ...
    def log(self, level: str, message: str) -> None: ...
    def show_error(self, title: str, message: str) -> None: ...
    def show_warning(self, message: str) -> None: ...
    def report_load_failed(self, what: str, task: Task) -> None: ...
    def statusBar(self) -> QStatusBar: ...
    def saveGeometry(self) -> QByteArray: ...
    def saveState(self, version: int = 0) -> QByteArray: ...
    def restoreState(self, state: QByteArray, version: int = 0) -> bool: ...


def session_suffix() -> str:
    from explorer.model.session import SESSION_SUFFIX

    return SESSION_SUFFIX


class SessionController(QObject):
    """Saving and opening the window's sessions."""

    sessionSaved = Signal(str)
    sessionLoaded = Signal(str)

    def __init__(self, window: SessionHost):
        super().__init__(window)
        self.window = window
        self.path: str | None = None          # the session file the window's graphs belong to

    # ---- what a session holds -----------------------------------------------------------------
    def unsaved_documents(self) -> list[GraphDocument]:
        return [d for d in self.window.documents() if not d.undo_stack.is_clean()]

    def dock_states(self) -> dict:
        states = {}
        for dock in self.window.compute_docks:
            try:
                state = dock.session_state()
            except Exception as exc:  # noqa: BLE001 - one dock's bug must not lose the session
                self.window.log("warning", f"{dock.objectName()}: its state was not saved ({describe_error(exc)})")
                continue
            if state is not None:
                states[dock.objectName()] = state
        return states

    def collect(self):
        from explorer.model import session

        window, tabs = self.window, self.window.document_tabs
        docs = tabs.documents()
        positions = [dict(tabs.tab_for(d).node_link.positions) for d in docs]
        current = docs.index(tabs.current_document()) if tabs.current_document() in docs else 0
        return session.collect(docs, current=current, window_geometry=bytes(window.saveGeometry().data()),
                               window_state=bytes(window.saveState().data()), docks=self.dock_states(),
                               positions=positions)

    # ---- saving ----------------------------------------------------------------------------------
    def save(self) -> Task | None:
        if self.path:
            return self.save_to(self.path)
        return self.save_as()

    def save_as(self) -> Task | None:
        suffix = session_suffix()
        start = self.path or str(Path(self.window.settings.last_directory()) / f"session{suffix}")
        path, _ = QFileDialog.getSaveFileName(self.window, "Save session", start, f"Sessions (*{suffix})")
        if not path:
            return None
        if not path.endswith(suffix):
            path += suffix
        return self.save_to(path)

    def save_to(self, path: str, *, autosave: bool = False) -> Task:
        """Save everything to ``path`` (the file is written in the background, atomically)."""
        from explorer.model import session

        window = self.window
        data = self.collect()
        clean_stacks = [d.undo_stack for d in window.documents()]
        task = Task(f"saving session {Path(path).name}",
                    lambda control: session.write(data, path, progress=lambda f: control.progress(f)), window)

        def saved(_result):
            if not autosave:
                self.path = path
                for stack in clean_stacks:
                    stack.set_clean()
                window.settings.set_last_directory(Path(path).parent)
            window.log("info", f"session saved to {path}")
            window.statusBar().showMessage(f"session saved to {path}", 6000)
            self.sessionSaved.emit(path)

        task.finished.connect(saved)
        task.failed.connect(lambda message: window.show_error(
            "Session not saved", f"{path}: {message} (the previous file, if any, is intact)"))
        return window.task_status.track(task)

    def save_now(self) -> bool:
        """Save the session in the foreground (the window is closing); False when not saved."""
        from explorer.model import session

        window = self.window
        path = self.path
        if not path:
            suffix = session_suffix()
            path, _ = QFileDialog.getSaveFileName(window, "Save session",
                                                  str(Path(window.settings.last_directory()) / f"session{suffix}"),
                                                  f"Sessions (*{suffix})")
            if not path:
                return False
            path = path if path.endswith(suffix) else path + suffix
        try:
            session.write(self.collect(), path)
        except (GraphKernelsError, OSError) as exc:
            window.show_error("Session not saved", f"{path}: {describe_error(exc)}")
            return False
        self.path = path
        for d in window.documents():
            d.undo_stack.set_clean()
        return True

    def keep_unsaved(self) -> None:
        """Never lose edits: keep them in the autosave session (File ▸ Recover Autosaved Session)."""
        from explorer.model import session

        autosave = self.window.settings.autosave_path()
        try:
            session.write(self.collect(), autosave)
            self.window.log("info", f"unsaved edits kept in {autosave}")
        except Exception as exc:  # noqa: BLE001 - the window closes either way; say what was lost
            self.window.log("error", f"could not keep the unsaved edits: {describe_error(exc)}")

    # ---- opening ---------------------------------------------------------------------------------
    def open_dialog(self) -> None:
        suffix = session_suffix()
        path, _ = QFileDialog.getOpenFileName(self.window, "Open session", self.window.settings.last_directory(),
                                              f"Sessions (*{suffix});;All files (*)")
        if path:
            self.open(path)

    def open(self, path: str, *, replace: bool = False) -> Task:
        """Read a session in the background and open its graphs as new tabs (``replace``: close
        the current ones first; they stay in Reopen Closed Graph)."""
        from explorer.model import session

        window = self.window
        task = Task(f"opening session {Path(path).name}", lambda control: session.read(path), window)
        task.finished.connect(lambda data: self.restore(data, path, replace=replace))
        task.failed.connect(lambda _message: window.report_load_failed(f"session {Path(path).name}", task))
        window.log("info", f"opening session {path}")
        return window.task_status.track(task)

    def recover_autosave(self) -> None:
        path = self.window.settings.autosave_path()
        if path.exists():
            self.open(str(path))

    def restore(self, data, path: str = "", *, replace: bool = False) -> list[GraphDocument]:
        from explorer.model import session

        window, tabs = self.window, self.window.document_tabs
        if replace:
            tabs.close_all()
        opened = []
        for rec in data.documents:
            document = self._document(rec, data)
            session.restore_undo_history(document, rec, data.structures)
            tab = tabs.add(document, select=False)
            if rec.positions:
                tab.node_link.restore_positions(rec.positions)
            opened.append(document)
        if opened:
            tabs.select(opened[min(max(data.current, 0), len(opened) - 1)])
        if data.window_state:
            window.restoreState(QByteArray(data.window_state))
        self._restore_docks(data.docks)
        for w in data.warnings:
            window.show_warning(f"{Path(path).name}: {w}")
        if path and Path(path).suffix == session_suffix() and Path(path) != window.settings.autosave_path():
            self.path = path
        window.log("info", f"session {path} opened: {len(opened)} graph(s)")
        self.sessionLoaded.emit(path)
        return opened

    def _document(self, rec, data) -> GraphDocument:
        """The document of one session record: its saved structure, or one rebuilt from its CSR."""
        slotted = None
        reason = rec.not_editable_reason
        if rec.structure is not None and rec.structure >= 0:
            slotted = data.structures[rec.structure]
        elif rec.structure == -1:
            try:
                from kernels.graph.slotted import SlottedGraph

                size = self.window.default_page_size or auto_page_size(rec.csr)
                slotted = SlottedGraph.from_csr(rec.csr, page_size=size)
            except GraphKernelsError as exc:
                reason = str(exc)
        return GraphDocument(name=rec.name, csr=rec.csr, slotted=slotted, source=rec.source,
                             not_editable_reason=reason)

    def _restore_docks(self, states: dict) -> None:
        window = self.window
        for dock in window.compute_docks:
            state = states.get(dock.objectName())
            if state is None:
                continue
            try:
                dock.restore_session_state(state)
            except Exception as exc:  # noqa: BLE001 - a session from another version must still open
                window.log("warning", f"{dock.objectName()}: its saved state was not restored "
                                      f"({describe_error(exc)})")
        unknown = set(states) - {d.objectName() for d in window.compute_docks}
        for name in sorted(unknown):
            window.log("warning", f"the session holds the state of {name}, which is not available here")
