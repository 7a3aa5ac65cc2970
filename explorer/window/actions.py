"""The window's menus and actions, their shortcuts, and which are enabled when.

:func:`build_menus` fills the window's menu bar with actions bound to the window's commands
and returns them as :class:`WindowMenus`, which also knows when each action applies. What they
ask of the window is :class:`MenuHost` (the main window is one), not the window's class: the
main window imports this module, so this module does not import it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMenu, QMenuBar

if TYPE_CHECKING:
    from explorer.model.document import GraphDocument
    from explorer.settings import AppSettings
    from explorer.window.documents import DocumentTabs
    from explorer.window.session_controller import SessionController


class StructureCommands(Protocol):
    """The Structure dock's edits the Structure menu triggers (a ``QDockWidget``)."""

    def add_vertex(self) -> None: ...
    def remove_vertex(self) -> None: ...
    def add_edge(self) -> None: ...
    def remove_edge(self) -> None: ...
    def edit_edge(self) -> None: ...
    def apply_batch(self) -> None: ...
    def route_shortcuts(self, actions: list[QAction]) -> None: ...
    def toggleViewAction(self) -> QAction: ...


@runtime_checkable
class MenuHost(Protocol):
    """What the menus ask of the window they fill (a ``QMainWindow``): its parts, and the
    commands the actions call."""

    settings: AppSettings
    sessions: SessionController
    document_tabs: DocumentTabs
    structure_dock: StructureCommands
    graph_dock: QDockWidget
    log_dock: QDockWidget

    def menuBar(self) -> QMenuBar: ...
    def current_document(self) -> GraphDocument | None: ...
    def documents(self) -> list[GraphDocument]: ...
    def open_paths(self, paths) -> list: ...
    def open_dialog(self) -> None: ...
    def open_sample(self) -> None: ...
    def reopen_closed(self) -> None: ...
    def export_graph_dialog(self) -> None: ...
    def picture_dialog(self) -> None: ...
    def close_document(self, document: GraphDocument | None) -> None: ...
    def close(self) -> bool: ...
    def generate_dialog(self) -> None: ...
    def rename_dialog(self) -> None: ...
    def duplicate_current(self) -> None: ...
    def default_page_size_dialog(self) -> None: ...
    def page_size_dialog(self) -> None: ...
    def step_page(self, step: int) -> None: ...
    def check_invariants(self) -> None: ...
    def forget_dirty_marks(self) -> None: ...
    def reset_layout(self) -> None: ...
    def shortcuts_dialog(self) -> None: ...
    def about_dialog(self) -> None: ...


def with_platform_keys(main: str, standard: QKeySequence.StandardKey) -> list[QKeySequence]:
    """``main`` first, then the platform's own bindings for the same command, each once (a
    sequence listed twice makes Qt call the shortcut ambiguous and do nothing)."""
    keys = [QKeySequence(main)]
    for k in QKeySequence.keyBindings(standard):
        if k.toString() not in {x.toString() for x in keys}:
            keys.append(k)
    return keys


def shortcut_list(menu_bar: QMenuBar) -> list[tuple[str, str]]:
    """(command, keys) of every menu command with a shortcut, each once (an action in two
    menus, like Open Results…, is listed once)."""
    rows, seen = [], set()
    for menu_action in menu_bar.actions():
        for act in menu_action.menu().actions():
            if act.shortcut().toString() and id(act) not in seen:
                seen.add(id(act))
                rows.append((act.text().replace("&", ""), act.shortcut().toString()))
    return rows


@dataclass
class WindowMenus:
    """The actions whose state changes, and the menus others add to."""

    recent_menu: QMenu
    view_menu: QMenu
    view_separator: QAction               # compute docks' toggles go above it
    undo_action: QAction
    redo_action: QAction
    reopen_action: QAction
    save_session_action: QAction
    recover_action: QAction
    export_action: QAction
    close_action: QAction
    rename_action: QAction
    clone_action: QAction
    structure_actions: list[QAction] = field(default_factory=list)

    def update(self, window: MenuHost) -> None:
        """Enable what applies to the current document and the window's state."""
        d = window.current_document()
        for act in (self.export_action, self.close_action, self.rename_action, self.clone_action):
            act.setEnabled(d is not None)
        editable = d is not None and d.editable
        for act in self.structure_actions:
            act.setEnabled(editable)
        self.reopen_action.setEnabled(window.document_tabs.has_closed())
        self.recover_action.setEnabled(window.settings.autosave_path().exists())
        self.save_session_action.setEnabled(bool(window.documents()))


def _action(window: MenuHost, menu: QMenu, text: str, slot: Callable[[], object], shortcut=None,
            tip: str = "") -> QAction:
    act = QAction(text, window)
    if shortcut is not None:
        act.setShortcut(QKeySequence(shortcut))
    if tip:
        act.setStatusTip(tip)
        act.setToolTip(tip)
    act.triggered.connect(lambda _checked=False: slot())
    menu.addAction(act)
    return act


def _fill_recent_menu(window: MenuHost, menu: QMenu) -> None:
    menu.clear()
    files = window.settings.recent_files()
    if not files:
        menu.addAction("(none yet)").setEnabled(False)
        return
    for n, path in enumerate(files, 1):
        act = menu.addAction(f"&{n % 10} {Path(path).name}")
        act.setToolTip(path)
        act.triggered.connect(lambda _c=False, p=path: window.open_paths([p]))
    menu.addSeparator()
    menu.addAction("Clear List", window.settings.clear_recent_files)


def build_menus(window: MenuHost) -> WindowMenus:
    """File, Edit, Graph, Structure, View and Help menus of ``window``."""
    mb = window.menuBar()
    S = QKeySequence.StandardKey
    sessions = window.sessions
    tabs = window.document_tabs

    def a(menu, text, slot, shortcut=None, tip=""):
        return _action(window, menu, text, slot, shortcut, tip)

    file = mb.addMenu("&File")
    a(file, "&Open Graph…", window.open_dialog, S.Open, "open graph files, each in its own tab")
    recent_menu = file.addMenu("Open &Recent")
    recent_menu.aboutToShow.connect(lambda: _fill_recent_menu(window, recent_menu))
    a(file, "Open &Sample Graph", window.open_sample, None, "the bundled karate club graph")
    reopen = a(file, "Reopen Closed &Graph", window.reopen_closed, "Ctrl+Shift+T",
               "bring back the last closed graph with its edits and history")
    file.addSeparator()
    a(file, "Open Sess&ion…", sessions.open_dialog, "Ctrl+Shift+O")
    save_session = a(file, "Save Session", sessions.save, S.Save, "save graphs, edits, history, runs and layout")
    a(file, "Save Session &As…", sessions.save_as, "Ctrl+Alt+S")
    recover = a(file, "Recover Autosaved Session", sessions.recover_autosave, None,
                "the session kept when the window last closed with unsaved edits")
    file.addSeparator()
    export = a(file, "&Export Graph As…", window.export_graph_dialog, "Ctrl+Shift+S",
               "write the current graph (with its edits) to a graph file")
    a(file, "Save Window &Picture…", window.picture_dialog, None, "save the window as a PNG")
    close = a(file, "&Close Graph", lambda: window.close_document(window.current_document()), "Ctrl+W")
    file.addSeparator()
    a(file, "&Quit", window.close, "Ctrl+Q")

    edit = mb.addMenu("&Edit")
    undo = tabs.undo_actions.undo_action          # the current graph's undo stack drives them
    undo.setShortcuts(with_platform_keys("Ctrl+Z", S.Undo))
    redo = tabs.undo_actions.redo_action
    redo.setShortcuts(with_platform_keys("Ctrl+Shift+Z", S.Redo))
    edit.addAction(undo)
    edit.addAction(redo)

    graph = mb.addMenu("&Graph")
    a(graph, "&Generate…", window.generate_dialog, "Ctrl+G", "generate a graph from the registry")
    rename = a(graph, "&Rename…", window.rename_dialog, "F2")
    clone = a(graph, "&Duplicate as New Tab", window.duplicate_current, "Ctrl+Shift+D",
              "a copy of the current graph (pages and all) in a new tab")
    a(graph, "Default &Page Size for New Graphs…", window.default_page_size_dialog)
    graph.addSeparator()
    a(graph, "Next Tab", lambda: tabs.step(1), "Ctrl+PgDown")
    a(graph, "Previous Tab", lambda: tabs.step(-1), "Ctrl+PgUp")

    structure = mb.addMenu("&Structure")
    sd = window.structure_dock
    structure_actions = [
        a(structure, "Add &Vertex", sd.add_vertex, "Ctrl+I"),
        a(structure, "&Remove Vertex u", sd.remove_vertex, "Ctrl+Shift+I"),
        a(structure, "Add &Edge u–v", sd.add_edge, "Ctrl+E"),
        a(structure, "Remove E&dge u–v", sd.remove_edge, "Ctrl+Shift+E"),
        a(structure, "E&dit Edge u–v → u–new v", sd.edit_edge, "Ctrl+Alt+E"),
        a(structure, "Random &Batch", sd.apply_batch, "Ctrl+B"),
        a(structure, "Rebuild with &Page Size…", window.page_size_dialog, "Ctrl+Shift+P"),
    ]
    structure.addSeparator()
    structure_actions += [
        a(structure, "Next Page", lambda: window.step_page(1), "Ctrl+]"),
        a(structure, "Previous Page", lambda: window.step_page(-1), "Ctrl+["),
        a(structure, "&Check Invariants", window.check_invariants, "Ctrl+K", "verify every word of the page layout"),
        a(structure, "&Forget Dirty Marks", window.forget_dirty_marks, None,
          "clear the 'written since the last sync' marks, as a device sync would"),
    ]
    sd.route_shortcuts([undo, redo, *structure_actions])

    view = mb.addMenu("&View")
    for dock in (window.graph_dock, window.structure_dock, window.log_dock):
        view.addAction(dock.toggleViewAction())
    view_separator = view.addSeparator()
    a(view, "Show &Log", lambda: (window.log_dock.show(), window.log_dock.raise_()), "Ctrl+L")
    a(view, "&Reset Layout", window.reset_layout)

    helpm = mb.addMenu("&Help")
    a(helpm, "&Keyboard Shortcuts", window.shortcuts_dialog, "F1")
    a(helpm, "&About", window.about_dialog)

    return WindowMenus(recent_menu=recent_menu, view_menu=view, view_separator=view_separator, undo_action=undo,
                       redo_action=redo, reopen_action=reopen, save_session_action=save_session,
                       recover_action=recover, export_action=export, close_action=close, rename_action=rename,
                       clone_action=clone, structure_actions=structure_actions)
