"""The run history: one row per run record, newest last.

A record whose result failed verification cannot be missed: its whole row is red, its
first column a bold ✗, and the tooltip gives the verification's own words. Rows are
selected to compare runs in the timing chart. The "launch" column says how each median was
timed (``direct``, ``graph``, ``queued``: :mod:`kernels.results.launch_modes`), next to the
time and target it qualifies.
"""

from __future__ import annotations

import datetime as _dt

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from explorer.plots.format import format_number, format_seconds, params_text, result_text, shown_params
from explorer.plots.timing_chart import kernel_times
from kernels.results.launch_modes import DESCRIPTIONS, launch_mode

# what users compare first comes first: a narrow history still shows the run, its time and target
COLUMNS = ("✓", "run", "median", "target", "launch", "parameters", "graph", "min – max", "metric", "result", "when")
COLUMN_WIDTHS = (26, 150, 72, 46, 50, 160, 90, 130, 120, 110, 70)
MEDIAN, MIN_MAX, METRIC = COLUMNS.index("median"), COLUMNS.index("min – max"), COLUMNS.index("metric")
LAUNCH = COLUMNS.index("launch")
WRONG_BACKGROUND = QColor(255, 214, 214)
WRONG_TEXT = QColor(170, 0, 0)
OK_TEXT = QColor(0, 130, 60)


def _when(timestamp: str | None) -> str:
    if not timestamp:
        return ""
    try:
        t = _dt.datetime.fromisoformat(timestamp)
    except ValueError:
        return str(timestamp)
    if t.tzinfo is not None:
        t = t.astimezone()
    return t.strftime("%H:%M:%S") if t.date() == _dt.date.today() else t.strftime("%Y-%m-%d %H:%M")


class HistoryModel(QAbstractTableModel):
    """Run records as table rows (the records themselves are kept as given)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.records: list[dict] = []
        self.sources: list[str] = []      # "" for runs made here, else the file it came from

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(self.records)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt override
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return {0: "verified against the reference: ✓ yes, ✗ NO (the row turns red)",
                    MEDIAN: "median kernel time", MIN_MAX: "fastest and slowest repetition",
                    LAUNCH: "how the time was taken: direct launches (host launch overhead included), graph "
                            "(CUDA-graph replays) or queued (launches queued behind a busy kernel); graph and "
                            "queued are device time and compare with each other, not with direct"}.get(section)
        if orientation == Qt.Orientation.Vertical and role == Qt.ItemDataRole.DisplayRole:
            return str(section + 1)
        return None

    def cell_text(self, rec: dict, col: int) -> str:
        times = kernel_times(rec)
        name = COLUMNS[col] if 0 <= col < len(COLUMNS) else ""
        if name == "✓":
            return "✓" if rec.get("verified") else "✗"
        if name == "run":
            return f"{rec.get('family', '?')}/{rec.get('variant', '?')}"
        if name == "target":
            return str(rec.get("target", ""))
        if name == "launch":
            return launch_mode(rec)
        if name == "parameters":
            return params_text(shown_params(rec))
        if name == "graph":
            return str((rec.get("input") or {}).get("name", ""))
        if name == "median":
            return format_seconds(times[0]) if times else "–"
        if name == "min – max":
            return f"{format_seconds(times[1])} – {format_seconds(times[2])}" if times else "–"
        if name == "metric":
            metric = rec.get("metric") or {}
            value = metric.get("value")
            return f"{format_number(value)} {metric.get('unit', '')}".strip() if value is not None else "–"
        if name == "result":
            return result_text(rec.get("result"))
        if name == "when":
            return _when(rec.get("timestamp"))
        return ""

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        rec = self.records[index.row()]
        wrong = rec.get("verified") is False
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.cell_text(rec, col)
        if role == Qt.ItemDataRole.BackgroundRole and wrong:
            return QBrush(WRONG_BACKGROUND)
        if role == Qt.ItemDataRole.ForegroundRole:
            if wrong:
                return QBrush(WRONG_TEXT)
            if col == 0:
                return QBrush(OK_TEXT)
        if role == Qt.ItemDataRole.FontRole and (col == 0 or wrong):
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (0, MEDIAN, MIN_MAX, METRIC):
            return int(Qt.AlignmentFlag.AlignCenter if col == 0 else Qt.AlignmentFlag.AlignRight
                       | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.tooltip(index.row())
        return None

    def tooltip(self, row: int) -> str:
        rec = self.records[row]
        ver = rec.get("verification") or {}
        lines = [f"{rec.get('family')}/{rec.get('variant')} ({rec.get('kind', '')}) on "
                 f"{(rec.get('input') or {}).get('name')}, target {rec.get('target')}"]
        if rec.get("verified") is False:
            lines.append(f"VERIFICATION FAILED against {ver.get('reference', 'the reference')}: "
                         f"{ver.get('detail', '')}")
        elif ver:
            lines.append(f"verified against {ver.get('reference', '')}: {ver.get('detail', '')}")
        timing = rec.get("timing") or {}
        if timing.get("method"):
            lines.append(f"timed with {timing['method']}, {timing.get('repeat', '?')} repetitions")
        lines.append(f"launch mode: {launch_mode(rec)}, {DESCRIPTIONS[launch_mode(rec)]}")
        device = ((rec.get("environment") or {}).get("device") or {}).get("name")
        if device:
            lines.append(f"device: {device}")
        if self.sources[row]:
            lines.append(f"from {self.sources[row]}")
        return "\n".join(lines)

    # ---- changes --------------------------------------------------------------------------
    def add_records(self, records: list[dict], source: str = "") -> range:
        if not records:
            return range(0)
        first = len(self.records)
        self.beginInsertRows(QModelIndex(), first, first + len(records) - 1)
        self.records.extend(records)
        self.sources.extend([source] * len(records))
        self.endInsertRows()
        return range(first, first + len(records))

    def remove_rows(self, rows: list[int]) -> None:
        for row in sorted(set(rows), reverse=True):
            self.beginRemoveRows(QModelIndex(), row, row)
            del self.records[row]
            del self.sources[row]
            self.endRemoveRows()

    def clear(self) -> None:
        self.beginResetModel()
        self.records.clear()
        self.sources.clear()
        self.endResetModel()


class HistoryTable(QTableView):
    """The history view: whole-row, multi-row selection."""

    def __init__(self, model: HistoryModel, parent=None):
        super().__init__(parent)
        self.setModel(model)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.verticalHeader().setDefaultSectionSize(22)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.setMinimumSize(240, 90)           # never collapses to nothing (a restored layout, a small window)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for col, width in enumerate(COLUMN_WIDTHS):
            self.setColumnWidth(col, width)
        self.setToolTip("select runs (Ctrl/Shift-click) to compare them in the timing chart")

    def selected_rows(self) -> list[int]:
        return sorted({i.row() for i in self.selectionModel().selectedRows()})
