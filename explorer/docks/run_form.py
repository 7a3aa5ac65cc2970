"""The Run dock's forms, generated from the algorithm registry's metadata only.

:class:`ParamForm` makes one field per :class:`~kernels.algorithms.registry.Param`: a list
for ``choices``, a check box for true/false, an editable list of the powers of two in range
for power-of-two parameters, a text field otherwise; a parameter with an ``auto`` rule offers
``auto`` first in its list (``docs/defaults.md``). The tooltip carries the help, the
allowed values and the default. Values are read as text and parsed by the registry itself
(``Family.resolve_params``), so the form never disagrees with the command line.

:class:`SweepPanel` picks one or two parameters to sweep and their values (prefilled from
``Param.grid_values()``) and counts the configurations, and the ones a constraint rules out,
before anything runs.
"""

from __future__ import annotations

import html
import itertools
import math

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QLabel,
    QLineEdit,
    QWidget,
)

from kernels.algorithms.registry import AUTO, is_auto
from kernels.errors import ConstraintError, GraphKernelsError, ParameterError

ERROR_STYLE = "border: 1px solid #c01010; background: #fff0f0;"
MAX_POWER_ITEMS = 16
MAX_SWEEP_CELLS = 4096


def param_tooltip(p) -> str:
    text = f"<b>{html.escape(p.name)}</b>"
    if p.help:
        text += f": {html.escape(p.help)}"
    text += f"<br>allowed: {html.escape(p.allowed_text())}<br>default: {html.escape(str(p.default))}"
    return text


def power_values(p) -> list[int]:
    lo = int(max(p.minimum if p.minimum is not None else 1, 1))
    default = 1 if is_auto(p.default) else int(p.default)
    hi = int(p.maximum if p.maximum is not None else max(lo, default) * 8)
    values = [2 ** i for i in range(int(math.log2(lo)) if lo > 1 else 0, int(math.log2(hi)) + 1) if lo <= 2 ** i <= hi]
    return values[:MAX_POWER_ITEMS]


class ParamForm(QWidget):
    """Fields for a variant's parameters (the family's shared ones first)."""

    changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.layout_ = QFormLayout(self)
        self.layout_.setContentsMargins(0, 0, 0, 0)
        self.params: dict = {}
        self.fields: dict[str, QWidget] = {}
        self.labels: dict[str, QLabel] = {}

    def set_params(self, params) -> None:
        """Rebuild the fields for ``params`` (a sequence of registry ``Param``)."""
        while self.layout_.rowCount():
            self.layout_.removeRow(0)
        self.params = {p.name: p for p in params}
        self.fields = {}
        self.labels = {}
        for p in params:
            field = self._make_field(p)
            field.setToolTip(param_tooltip(p))
            field.setObjectName(f"param_{p.name}")
            label = QLabel(p.name)
            label.setToolTip(param_tooltip(p))
            self.fields[p.name] = field
            self.labels[p.name] = label
            self.layout_.addRow(label, field)
        if not params:
            self.layout_.addRow(QLabel("<i>this variant has no parameters</i>"))

    def _make_field(self, p) -> QWidget:
        if p.type is bool:
            box = QCheckBox()
            box.setChecked(bool(p.default))
            box.toggled.connect(self.changed)
            return box
        if p.choices is not None:
            combo = QComboBox()
            # "auto" first where the parameter has a rule: the run chooses from the input
            for c in ((AUTO,) if p.auto is not None else ()) + tuple(p.choices):
                combo.addItem(str(c), c)
            index = combo.findData(p.default)
            combo.setCurrentIndex(max(index, 0))
            combo.currentIndexChanged.connect(self.changed)
            return combo
        if p.power_of_two and p.type is int:
            combo = QComboBox()
            combo.setEditable(True)
            combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
            if p.auto is not None:
                combo.addItem(AUTO)
            for v in power_values(p):
                combo.addItem(str(v))
            combo.setCurrentText(str(p.default))
            combo.editTextChanged.connect(self.changed)
            return combo
        edit = QLineEdit(str(p.default))
        edit.setPlaceholderText(p.allowed_text())
        edit.textChanged.connect(self.changed)
        return edit

    # ---- values ----------------------------------------------------------------------------
    def raw_value(self, name: str):
        """The field's value: a typed value for lists and check boxes, text otherwise."""
        field = self.fields[name]
        if isinstance(field, QCheckBox):
            return field.isChecked()
        if isinstance(field, QComboBox) and not field.isEditable():
            return field.currentData()
        if isinstance(field, QComboBox):
            return field.currentText()
        return field.text()

    def raw_values(self) -> dict:
        return {name: self.raw_value(name) for name in self.fields}

    def texts(self) -> dict:
        """Field values as text (saved in sessions)."""
        return {name: str(v) for name, v in self.raw_values().items()}

    def set_texts(self, texts: dict) -> None:
        for name, text in texts.items():
            field = self.fields.get(name)
            if field is None:
                continue
            if isinstance(field, QCheckBox):
                field.setChecked(str(text).lower() in ("true", "1", "yes"))
            elif isinstance(field, QComboBox) and not field.isEditable():
                index = field.findText(str(text))
                if index >= 0:
                    field.setCurrentIndex(index)
            elif isinstance(field, QComboBox):
                field.setCurrentText(str(text))
            else:
                field.setText(str(text))

    def set_value(self, name: str, value) -> None:
        self.set_texts({name: value})

    def parse_one(self, name: str):
        """The typed value of one field (raises ``ParameterError``)."""
        return self.params[name].parse(self.raw_value(name))

    def mark_errors(self, names) -> None:
        names = set(names)
        for name, field in self.fields.items():
            field.setStyleSheet(ERROR_STYLE if name in names else "")
        self._marked = names & set(self.fields)

    def marked_fields(self) -> list[str]:
        """The fields framed as at fault, by name."""
        return sorted(getattr(self, "_marked", ()))


def names_in(expression: str, names) -> list[str]:
    import re

    words = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", expression))
    return [n for n in names if n in words]


def check_params(family, variant, form: ParamForm, skip: set | None = None) -> tuple[dict | None, str, list[str]]:
    """Resolve the form through the registry. Returns (params or None, error text, fields
    at fault). ``skip``: swept parameters, checked by the sweep panel instead (constraints are
    then checked per configuration: a broken one makes an invalid cell, not an error)."""
    skip = skip or set()
    if skip:
        values, bad = {}, []
        errors = []
        for name in form.fields:
            if name in skip:
                continue
            try:
                values[name] = form.parse_one(name)
            except ParameterError as exc:
                errors.append(str(exc))
                bad.append(name)
        return (None if errors else values), "; ".join(errors), bad
    try:
        return family.resolve_params(variant, form.raw_values()), "", []
    except ParameterError as exc:
        return None, str(exc), [exc.parameter]
    except ConstraintError as exc:
        culprits = []
        for c in variant.constraints:
            culprits += names_in(c.expression, form.fields)
        return None, str(exc), culprits
    except GraphKernelsError as exc:
        return None, str(exc), []


class SweepPanel(QWidget):
    """Rows parameter and values, columns parameter (or none) and values, a cell count."""

    changed = Signal()
    NONE = "(none)"

    def __init__(self, parent=None):
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        self.rows_param = QComboBox()
        self.cols_param = QComboBox()
        self.rows_values = QLineEdit()
        self.cols_values = QLineEdit()
        for w in (self.rows_values, self.cols_values):
            w.setPlaceholderText("values, comma separated")
            w.textChanged.connect(self.changed)
        for combo in (self.rows_param, self.cols_param):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.rows_param.setToolTip("the swept parameter along the heatmap's rows")
        self.cols_param.setToolTip("a second swept parameter, along the heatmap's columns (optional)")
        grid.addWidget(QLabel("rows"), 0, 0)
        grid.addWidget(self.rows_param, 0, 1)
        grid.addWidget(self.rows_values, 0, 2)
        grid.addWidget(QLabel("columns"), 1, 0)
        grid.addWidget(self.cols_param, 1, 1)
        grid.addWidget(self.cols_values, 1, 2)
        grid.setColumnStretch(2, 1)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        grid.addWidget(self.summary, 2, 0, 1, 3)
        self.params: dict = {}
        self.rows_param.currentIndexChanged.connect(lambda _i: self._param_chosen(self.rows_param, self.rows_values))
        self.cols_param.currentIndexChanged.connect(lambda _i: self._param_chosen(self.cols_param, self.cols_values))

    def set_params(self, params) -> None:
        """Offer ``params``; the first two with more than one sweep value are preselected."""
        self.params = {p.name: p for p in params}
        sweepable = [p.name for p in params if len(p.grid_values()) > 1] or [p.name for p in params]
        for combo in (self.rows_param, self.cols_param):
            combo.blockSignals(True)
            combo.clear()
        self.cols_param.addItem(self.NONE)
        for p in params:
            self.rows_param.addItem(p.name)
            self.cols_param.addItem(p.name)
        for combo in (self.rows_param, self.cols_param):
            combo.blockSignals(False)
        self.setEnabled(bool(params))
        if sweepable:
            self.rows_param.setCurrentText(sweepable[0])
            self._param_chosen(self.rows_param, self.rows_values)
            self.cols_param.setCurrentText(sweepable[1] if len(sweepable) > 1 else self.NONE)
            self._param_chosen(self.cols_param, self.cols_values)
        else:
            self.rows_values.clear()
            self.cols_values.clear()
        self.changed.emit()

    def _param_chosen(self, combo: QComboBox, values: QLineEdit) -> None:
        p = self.params.get(combo.currentText())
        values.setEnabled(p is not None)
        values.setText(", ".join(str(v) for v in p.grid_values()) if p is not None else "")
        if p is not None:
            values.setToolTip(param_tooltip(p))
        self.changed.emit()

    def choose(self, rows: str, rows_values: list | None = None, cols: str | None = None,
               cols_values: list | None = None) -> None:
        """Set the swept parameters (and values) as a user would."""
        self.rows_param.setCurrentText(rows)
        if rows_values is not None:
            self.rows_values.setText(", ".join(str(v) for v in rows_values))
        self.cols_param.setCurrentText(cols or self.NONE)
        if cols and cols_values is not None:
            self.cols_values.setText(", ".join(str(v) for v in cols_values))

    def swept(self) -> list[str]:
        names = [self.rows_param.currentText()]
        if self.cols_param.currentText() not in (self.NONE, "") and self.cols_param.currentText() != names[0]:
            names.append(self.cols_param.currentText())
        return [n for n in names if n in self.params]

    def grid(self) -> dict:
        """The typed grid; raises ``GraphKernelsError`` naming the bad value."""
        rows, cols = self.rows_param.currentText(), self.cols_param.currentText()
        if rows not in self.params:
            raise GraphKernelsError("choose a parameter to sweep")
        if cols == rows:
            raise GraphKernelsError(f"'{rows}' is chosen for both rows and columns: choose another for the columns")
        grid = {}
        for name, edit in ((rows, self.rows_values), (cols, self.cols_values)):
            if name not in self.params:
                continue
            p = self.params[name]
            texts = [t for t in edit.text().replace(";", ",").split(",") if t.strip()]
            if not texts:
                example = ", ".join(map(str, p.grid_values()))
                raise GraphKernelsError(f"give the values of '{name}' to sweep (e.g. {example})")
            values = []
            for t in texts:
                v = p.parse(t)
                if v not in values:
                    values.append(v)
            grid[name] = values
        cells = math.prod(len(v) for v in grid.values())
        if cells > MAX_SWEEP_CELLS:
            raise GraphKernelsError(f"{cells} configurations is too many for one sweep (at most {MAX_SWEEP_CELLS})")
        return grid

    def count(self, family, variant, fixed: dict) -> tuple[int, int, str]:
        """(configurations, invalid ones, the first broken constraint) for ``fixed`` + grid."""
        grid = self.grid()
        names = list(grid)
        invalid, first = 0, ""
        total = 0
        for combo in itertools.product(*(grid[n] for n in names)):
            total += 1
            params = {**fixed, **dict(zip(names, combo, strict=True))}
            reason = family.constraint_violation(variant, params)
            if reason:
                invalid += 1
                first = first or reason
        return total, invalid, first
