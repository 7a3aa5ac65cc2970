"""The Graph dock (open, generate, statistics of the current graph) and the Generate dialog.

The dialog is built from the generators registry only: each generator's options become
widgets (a check box for true/false, a list for choices, a text field otherwise, with the
option's help and allowed values as tooltip) and are validated by the registry's own parser
before the dialog closes.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from explorer.views.statistics import StatisticsView
from kernels.errors import GraphKernelsError


class GenerateDialog(QDialog):
    """Choose a generator and its options; :meth:`choice` gives (kind, validated options)."""

    def __init__(self, parent=None, kind: str | None = None):
        super().__init__(parent)
        from kernels.graph.generators import GENERATORS

        self.setWindowTitle("Generate a graph")
        self.generators = GENERATORS
        layout = QVBoxLayout(self)
        top = QFormLayout()
        self.kind_box = QComboBox()
        for name, spec in GENERATORS.items():
            self.kind_box.addItem(f"{name} — {spec.summary}", name)
        top.addRow("generator", self.kind_box)
        layout.addLayout(top)
        self.form_host = QWidget()
        self.form = QFormLayout(self.form_host)
        layout.addWidget(self.form_host)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b01010;")
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Generate")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.fields: dict[str, QWidget] = {}
        self._result: tuple[str, dict] | None = None
        self.kind_box.currentIndexChanged.connect(self._build_form)
        if kind is not None and kind in GENERATORS:
            self.kind_box.setCurrentIndex(list(GENERATORS).index(kind))
        self._build_form()

    @property
    def kind(self) -> str:
        return self.kind_box.currentData()

    def _build_form(self) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields = {}
        self.error.setText("")
        spec = self.generators[self.kind]
        for opt in spec.all_options:
            tip = f"{opt.help}\nallowed: {opt.allowed()}"
            if opt.type is bool:
                w = QCheckBox()
                w.setChecked(bool(opt.default) if not opt.required else False)
            elif opt.choices is not None:
                w = QComboBox()
                for c in opt.choices:
                    w.addItem(str(c), c)
                if not opt.required and opt.default is not None and opt.default in opt.choices:
                    w.setCurrentIndex(list(opt.choices).index(opt.default))
            else:
                w = QLineEdit()
                if opt.required:
                    w.setPlaceholderText("required")
                elif opt.default is None:
                    w.setPlaceholderText("none (automatic)")
                else:
                    w.setText(f"{opt.default:g}" if isinstance(opt.default, float) else str(opt.default))
            w.setToolTip(tip)
            label = QLabel(opt.name.replace("_", " "))
            label.setToolTip(tip)
            self.form.addRow(label, w)
            self.fields[opt.name] = w

    def set_value(self, name: str, text: str) -> None:
        """Fill one field as a user would (tests, scripted screenshots)."""
        w = self.fields[name]
        if isinstance(w, QCheckBox):
            w.setChecked(text.strip().lower() in ("true", "yes", "1", "on"))
        elif isinstance(w, QComboBox):
            w.setCurrentIndex(w.findText(text))
        else:
            w.setText(text)

    def texts(self) -> dict[str, str]:
        out = {}
        for name, w in self.fields.items():
            if isinstance(w, QCheckBox):
                out[name] = "true" if w.isChecked() else "false"
            elif isinstance(w, QComboBox):
                out[name] = w.currentText()
            else:
                out[name] = w.text()
        return out

    def validate(self) -> tuple[str, dict] | None:
        spec = self.generators[self.kind]
        texts = self.texts()
        missing = [n for n, t in texts.items() if not t.strip() and spec.option(n).required]
        if missing:
            self.error.setText("please fill in: " + ", ".join(m.replace("_", " ") for m in missing))
            return None
        try:
            options = spec.parse({n: t for n, t in texts.items() if t.strip() or spec.option(n).optional})
        except GraphKernelsError as exc:
            self.error.setText(str(exc))
            return None
        self.error.setText("")
        return self.kind, options

    def accept(self) -> None:
        result = self.validate()
        if result is None:
            return
        self._result = result
        super().accept()

    def choice(self) -> tuple[str, dict] | None:
        return self._result


class _ShrinkToViewport(QWidget):
    """A scroll area's content that takes the viewport's height while its minimum allows.

    A scroll area asks a widget with word-wrapped labels for its *preferred* height at the
    viewport's width, and scrolls below that; this widget answers with its minimum instead."""

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        layout = self.layout()
        return layout.minimumHeightForWidth(width) if layout is not None else super().heightForWidth(width)


class GraphDock(QDockWidget):
    """Open / generate buttons and the statistics of the current graph."""

    openRequested = Signal()
    generateRequested = Signal()
    sampleRequested = Signal()

    def __init__(self, parent=None):
        super().__init__("Graph", parent)
        self.setObjectName("GraphDock")
        body = _ShrinkToViewport()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        row = QHBoxLayout()
        buttons = (("Open…", self.openRequested, "open graph files (Ctrl+O); or drop files on the window"),
                   ("Generate…", self.generateRequested, "generate a graph (Ctrl+G)"),
                   ("Sample", self.sampleRequested, "open the bundled sample graph"))
        for text, signal, tip in buttons:
            b = QPushButton(text)
            b.setToolTip(tip)
            b.clicked.connect(signal.emit)
            row.addWidget(b)
        layout.addLayout(row)
        hint = QLabel("<small>Drop graph files anywhere on the window to open them.</small>")
        hint.setWordWrap(True)
        layout.addWidget(hint)
        self.statistics = StatisticsView()
        layout.addWidget(self.statistics, 1)
        # scrolled rather than squeezed: what the dock holds (a long read-only reason, "updating
        # statistics…") must not take its height from the Results dock's default share
        scroll = QScrollArea()
        scroll.setWidget(body)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(scroll)

    def set_document(self, document) -> None:
        self.statistics.set_document(document)
