"""Results ▸ Compare Sweeps… (and File ▸ Compare Sweeps…): one tuning, two GPUs in a window of its own.

The window offers every sweep of the Results dock and every file opened here, a sweep whose cells
ran on two kinds of GPU (a ``--mixed-gpus`` cluster sweep) as one entry per kind, in two lists,
A and B, and draws the pair with :class:`~explorer.plots.compare_view.CompareView`. Opening one
mixed sweep picks its two GPUs; opening two files picks them. A file that cannot be read, or a
pair that cannot be compared, is said in one sentence in the window (and in the log), never a
crash. **Save Picture…** writes the same comparison as ``graph-kernels compare --svg/--png``
(matplotlib, :mod:`kernels.results.compare_figure`).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from explorer.plots.compare_view import CompareView
from explorer.tasks import describe_error
from kernels.errors import GraphKernelsError

SHORTCUT = "Ctrl+Alt+C"
DEFAULT_SIZE = (1600, 1000)


def _entry_label(sweep: dict, source: str) -> str:
    inp = (sweep.get("input") or {}).get("name", "?") if isinstance(sweep.get("input"), dict) else "?"
    device = sweep.get("device") or ((sweep.get("environment") or {}).get("device") or {}).get("name") or "?"
    where = f" — {Path(source).name}" if source else ""
    return f"{device}: {sweep.get('family')}/{sweep.get('variant')} on {inp}{where}"


class CompareWindow(QWidget):
    """Two lists of sweeps (A, B) and their comparison."""

    def __init__(self, main_window=None, results=None):
        super().__init__(main_window, Qt.WindowType.Window)
        self.setWindowTitle("Compare sweeps — one tuning, two GPUs")
        self.main_window = main_window
        self.results = results                  # the Results dock (its sweeps are offered), or None
        self.opened: list[tuple[dict, str]] = []   # (sweep, file) opened in this window
        self.entries: list[tuple[dict, str, dict]] = []  # what the lists offer: (sweep, label, the file's sweep)
        layout = QVBoxLayout(self)
        bar = QHBoxLayout()
        self.boxes = (QComboBox(), QComboBox())
        for name, box in zip(("A", "B"), self.boxes, strict=True):
            bar.addWidget(QLabel(name))
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(18)
            box.setToolTip(f"sweep {name}: a sweep of the Results dock or a file opened here (one entry per GPU "
                           "kind of a mixed-GPU cluster sweep)")
            bar.addWidget(box, 1)
        self.open_button = QPushButton("Open Sweeps…")
        self.open_button.setToolTip("two sweep files of one grid made on different GPUs, or one mixed-GPU cluster "
                                    "sweep")
        self.open_button.clicked.connect(self.open_dialog)
        bar.addWidget(self.open_button)
        self.picture_button = QPushButton("Save Picture…")
        self.picture_button.setToolTip("the comparison as PNG or SVG (what graph-kernels compare --png/--svg draws)")
        self.picture_button.clicked.connect(self.picture_dialog)
        bar.addWidget(self.picture_button)
        layout.addLayout(bar)
        self.view = CompareView()
        layout.addWidget(self.view, 1)
        for box in self.boxes:
            box.currentIndexChanged.connect(lambda _i: self.redraw())
        self.view.compared.connect(lambda p: self.picture_button.setEnabled(p is not None))
        self.picture_button.setEnabled(False)
        self.resize(*DEFAULT_SIZE)
        # closed is gone: its heatmaps are closed with it (see CompareView.closeEvent); the action makes a new one
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.refresh_entries()

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        self.view.close()
        if getattr(self.results, "compare_window", None) is self:
            self.results.compare_window = None
        super().closeEvent(event)

    # ---- what the lists offer --------------------------------------------------------------------
    def _sources(self) -> list[tuple[dict, str]]:
        found = [(e["sweep"], e.get("source", "")) for e in getattr(self.results, "sweeps", [])]
        return found + [(s, f) for s, f in self.opened if not any(s is x for x, _ in found)]

    def refresh_entries(self, pick: tuple[int, int] | None = None) -> None:
        """List every sweep (a mixed-GPU one per GPU kind); keep the chosen ones, or pick ``pick``."""
        from kernels.results.portability import split_by_device

        chosen = [self.entries[b.currentIndex()] if 0 <= b.currentIndex() < len(self.entries) else None
                  for b in self.boxes]
        self.entries = []
        for sweep, source in self._sources():
            try:
                parts = split_by_device(sweep)
            except Exception:  # noqa: BLE001 - a sweep without cells is still listed, and refused when chosen
                parts = [sweep]
            for part in parts:
                self.entries.append((part, _entry_label(part, source), sweep))
        for box in self.boxes:
            box.blockSignals(True)
            box.clear()
            for _sweep, label, _origin in self.entries:
                box.addItem(label)
        if pick is None:
            pick = tuple(self.index_of(c[2], c[0]) if c is not None else -1 for c in chosen)
            if pick == (-1, -1) and len(self.entries) >= 2:
                pick = (0, 1)
        for box, index in zip(self.boxes, pick, strict=True):
            box.setCurrentIndex(index if index < len(self.entries) else -1)
            box.blockSignals(False)
        self.redraw()

    def index_of(self, origin: dict, part: dict) -> int:
        """The list entry of ``part`` (a sweep, or one GPU's cells of the mixed sweep ``origin``); -1: none."""
        for i, (sweep, _label, o) in enumerate(self.entries):
            if o is origin and (sweep is part or sweep.get("device") == part.get("device")):
                return i
        return next((i for i, (_s, _l, o) in enumerate(self.entries) if o is origin), -1)

    def choose(self, a: int, b: int) -> None:
        """Compare entry ``a`` with entry ``b`` of the lists."""
        for box, index in zip(self.boxes, (a, b), strict=True):
            box.blockSignals(True)
            box.setCurrentIndex(index)
            box.blockSignals(False)
        self.redraw()

    def redraw(self) -> None:
        ia, ib = (box.currentIndex() for box in self.boxes)
        if not (0 <= ia < len(self.entries) and 0 <= ib < len(self.entries)):
            return
        if ia == ib:
            self.view.show_message("A and B are the same sweep: choose another for B", refused=True)
            return
        p = self.view.set_pair(self.entries[ia][0], self.entries[ib][0])
        if p is None:
            self._log("warning", f"compare: {self.view.refusal}")

    # ---- files -----------------------------------------------------------------------------------
    def open_dialog(self) -> None:
        settings = getattr(self.main_window, "settings", None)
        start = settings.last_directory() if settings is not None else ""
        paths, _ = QFileDialog.getOpenFileNames(self, "Open sweeps to compare", start,
                                                "Sweeps (*.json);;All files (*)")
        if paths:
            self.open_files(paths)

    def open_files(self, paths) -> bool:
        """Open one mixed-GPU sweep or two sweeps and compare them; False (the reason said in the
        view and the log) when a file cannot be read or the files are not a pair."""
        from kernels.results import load_sweep
        from kernels.results.portability import pair_of

        paths = [str(p) for p in paths]
        sweeps = []
        for path in paths:
            try:
                sweeps.append(load_sweep(path))
            except (GraphKernelsError, OSError, ValueError) as exc:
                self.view.show_message(describe_error(exc), refused=True)
                self._log("error", f"compare: {describe_error(exc)}")
                return False
        self.opened += list(zip(sweeps, paths, strict=True))
        try:
            pair = pair_of(sweeps, [Path(p).name for p in paths])
        except GraphKernelsError as exc:
            self.refresh_entries()
            self.view.show_message(str(exc), refused=True)
            self._log("warning", f"compare: {exc}")
            return False
        self.refresh_entries()
        origins = sweeps if len(sweeps) == 2 else sweeps * 2
        index = [self.index_of(origin, part) for origin, part in zip(origins, pair, strict=True)]
        self.choose(*index)
        return self.view.portability is not None

    def picture_dialog(self) -> None:
        settings = getattr(self.main_window, "settings", None)
        start = Path(settings.last_directory() if settings is not None else ".") / "compare.png"
        path, _ = QFileDialog.getSaveFileName(self, "Save the comparison", str(start), "PNG (*.png);;SVG (*.svg)")
        if path:
            self.save_picture(path)

    def save_picture(self, path) -> bool:
        """The comparison as ``graph-kernels compare`` draws it (PNG or SVG by the suffix)."""
        from kernels.results.compare_figure import save_comparison

        if self.view.portability is None or self.view.sweeps is None:
            self._log("warning", "compare: nothing to save, no pair is compared")
            return False
        tables = [v.table for v in self.view.views]
        try:
            save_comparison(tables[0], tables[1], self.view.portability, path)
        except (GraphKernelsError, OSError) as exc:
            self._log("error", f"compare: {describe_error(exc)}")
            return False
        self._log("info", f"comparison written to {path}")
        return True

    def _log(self, level: str, text: str) -> None:
        log = getattr(self.main_window, "log", None)
        if log is not None:
            log(level, text)


def install_compare_action(window, results) -> QAction:
    """Results ▸ Compare Sweeps… and File ▸ Compare Sweeps… (after Open Results…), one action."""
    action = QAction("&Compare Sweeps…", window)
    action.setShortcut(QKeySequence(SHORTCUT))
    action.setStatusTip("two sweeps of one grid on different GPUs side by side, and how each GPU's best carries "
                        "to the other")
    action.triggered.connect(lambda _c=False: show_compare_window(window, results))
    menu = getattr(results, "menu", None)
    opener = getattr(results, "open_action", None)
    if menu is not None:
        actions = menu.actions()
        after = actions.index(opener) + 1 if opener in actions and actions.index(opener) + 1 < len(actions) else None
        menu.insertAction(actions[after], action) if after is not None else menu.addAction(action)
    for top in window.menuBar().actions():
        file_menu = top.menu()
        if file_menu is not None and top.text().replace("&", "") == "File":
            actions = file_menu.actions()
            if opener in actions and actions.index(opener) + 1 < len(actions):
                file_menu.insertAction(actions[actions.index(opener) + 1], action)
            else:
                file_menu.addAction(action)
    return action


def show_compare_window(window, results) -> CompareWindow:
    """The Results dock's one compare window, shown and brought forward (made when there is none)."""
    existing = getattr(results, "compare_window", None)
    if existing is None:
        existing = CompareWindow(window, results)
        if results is not None:
            results.compare_window = existing
    else:
        existing.refresh_entries()
    existing.show()
    existing.raise_()
    existing.activateWindow()
    return existing
