"""One tuning, two GPUs in the GUI: two sweeps' heatmaps side by side on one colour scale.

Two :class:`~explorer.plots.heatmap_view.HeatmapView` share one range of times (the fastest and
slowest cell of both sweeps, in one unit), so a colour means the same time in both. Each is
headed by its device and its best time; its own best cell is framed in red with a star (the
heatmap's own mark) and the **other** GPU's best is framed in dotted orange. Under them, the
comparison of :func:`kernels.results.portability.compare` in words: each GPU's best, the
portability loss both ways, the rank correlation of the cells' times and the overall speed ratio.
Hovering a cell on either side gives both GPUs' times for it and frames it on the other side.

The sweeps are untrusted: a pair that is not one tuning space on one input (another family,
variant, target, grid, fixed parameters or input) or that shares no verified cell is refused in
one sentence shown in place of the heatmaps, never a crash.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from explorer.plots.format import format_seconds, time_unit
from explorer.plots.heatmap_view import HeatmapView
from explorer.tasks import describe_error
from kernels.errors import GraphKernelsError
from kernels.results.heatmap import HeatmapTable, cell_of
from kernels.results.portability import Portability, compare

OTHER_COLOUR = QColor(255, 140, 0)          # the other GPU's best: orange, apart from the red of the own best
HOVER_COLOUR = QColor(255, 255, 255)        # the hovered cell, shown on the other side
REFUSED_STYLE = "color: #a00000; font-weight: bold;"


def _pen(colour: QColor, width: float, style: Qt.PenStyle) -> QPen:
    pen = QPen(colour, width)
    pen.setCosmetic(True)
    pen.setStyle(style)
    return pen


def _params(p: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in p.items())


class CompareView(QWidget):
    """Two sweeps of one grid side by side; :meth:`set_pair` draws them, or says why it cannot."""

    compared = Signal(object)           # the Portability, or None when refused

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.message)
        self.pair_area = QWidget()             # hidden while there is nothing to draw: the sentence alone
        row = QHBoxLayout(self.pair_area)
        row.setContentsMargins(0, 0, 0, 0)
        self.views = (HeatmapView(), HeatmapView())
        for view in self.views:
            row.addWidget(view, 1)
        layout.addWidget(self.pair_area, 1)
        self.hover_label = QLabel(" ")
        self.hover_label.setStyleSheet("font-weight: bold;")
        layout.addWidget(self.hover_label)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        layout.addWidget(self.summary)
        self.portability: Portability | None = None
        self.sweeps: tuple[dict, dict] | None = None
        self.refusal = ""
        self._ghost = None                  # (view, item): the hovered cell framed on the other side
        for i, view in enumerate(self.views):
            view.cellHovered.connect(lambda cell, i=i: self._hovered(i, cell))
        self.show_message("open two sweeps of one grid made on different GPUs, or one cluster sweep whose "
                          "cells ran on two kinds of GPU")

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        # each heatmap is closed by its own close(): two left to the destructor crashed the process
        # when Qt deleted them (their colour bar's axis moved while the scene was being cleared)
        for view in self.views:
            if not getattr(view, "closed", False):
                view.close()
        super().closeEvent(event)

    # ---- drawing -------------------------------------------------------------------------------
    def show_message(self, text: str, refused: bool = False) -> None:
        """Say ``text`` in place of a comparison (both heatmaps emptied)."""
        self.portability = None
        self.sweeps = None
        self.refusal = text if refused else ""
        self._ghost = None
        for view in self.views:
            view.shared_range = None
            view.heading = view.legend = None
            view.clear_sweep("not compared" if refused else "no sweep")
        self.message.setText(f"These sweeps cannot be compared: {text}" if refused else text)
        self.message.setStyleSheet(REFUSED_STYLE if refused else "")
        self.message.setVisible(True)
        self.pair_area.setVisible(False)
        self.summary.setText("")
        self.hover_label.setText(" ")

    def set_pair(self, a: dict, b: dict, rows: str | None = None, cols: str | None = None) -> Portability | None:
        """Compare sweep ``a`` with sweep ``b`` and draw both; ``None`` (and the reason said in the
        view) when they cannot be compared."""
        try:
            p = compare(a, b)
            self._draw(a, b, p, rows, cols)
        except GraphKernelsError as exc:
            self.show_message(str(exc), refused=True)
            self.compared.emit(None)
            return None
        except Exception as exc:  # noqa: BLE001 - a crafted file must never take the window down
            self.show_message(f"the sweeps could not be read ({describe_error(exc)})", refused=True)
            self.compared.emit(None)
            return None
        self.compared.emit(p)
        return p

    def _draw(self, a: dict, b: dict, p: Portability, rows, cols) -> None:
        from kernels.results.heatmap import heatmap_table

        tables = [heatmap_table(a, rows, cols), heatmap_table(b, rows, cols)]
        self.pair_area.setVisible(True)         # before drawing: the heatmaps fit their rows to their height
        times = np.concatenate([t.times.ravel() for t in tables])
        finite = times[np.isfinite(times)]
        shared = (float(finite.min()), float(finite.max())) if finite.size else None
        unit, scale = time_unit(list(shared or ()))
        self._ghost = None
        bests = (p.best_a, p.best_b)
        best_s = (p.best_a_s, p.best_b_s)
        losses = (p.loss_b_on_a, p.loss_a_on_b)
        devices = (p.device_a, p.device_b)
        for i, (view, sweep) in enumerate(zip(self.views, (a, b), strict=True)):
            other = 1 - i
            view.shared_range = shared
            # short: a title wider than the view widens its layout and pushes the columns off the side
            view.heading = (f"<b>{devices[i]}</b> — best {best_s[i] * scale:.4g} {unit}; the other's best "
                            f"<span style='color:#ff8c00'>(orange)</span> here: {losses[i]:.3f}×")
            timing = tables[i].timing_words().replace("timed as ", "")
            view.legend = (f"median time ({unit}){', ' + timing if timing else ''}; ★ best, dashed: tied (95 %), "
                           "– invalid" + (f"; best over {', '.join(tables[i].reduced_over)}"
                                          if tables[i].reduced_over else ""))
            view.set_sweep(sweep, rows, cols)
            where = cell_of(view.table, bests[other])
            if where is not None:
                # a ring round the cell, outside the red frame of its own best: inside it crossed the number
                item = view.add_mark(*where, _pen(OTHER_COLOUR, 3, Qt.PenStyle.DotLine), inset=-0.05)
                item.setToolTip(f"the best on {devices[other]}")
        self.portability = p
        self.sweeps = (a, b)
        self.refusal = ""
        self.message.setVisible(False)
        self.hover_label.setText(" ")
        lines = p.lines()
        lines.insert(2, "One colour scale for both: a colour is the same time on either side. Red frame ★: "
                        "each GPU's own best; dotted orange ring: the other GPU's best.")
        self.summary.setText("<br>".join(lines))

    # ---- reading cells ---------------------------------------------------------------------------
    def levels(self) -> list[tuple[float, float]]:
        """Each heatmap's colour levels (log10 of its unit's time): equal when the scale is shared."""
        return [tuple(view.colorbar.levels()) for view in self.views]

    def describe(self, side: int, cell: tuple[int, int]) -> str:
        """Both GPUs' times for the cell at ``cell`` of side ``side`` (0: A, 1: B)."""
        if self.portability is None:
            return ""
        t: HeatmapTable = self.views[side].table
        r, c = cell
        params = {t.row_param: t.row_values[r]}
        if t.col_param is not None:
            params[t.col_param] = t.col_values[c]
        where = ", ".join(f"{k}={v}" for k, v in params.items())
        devices = (self.portability.device_a, self.portability.device_b)
        times = []
        parts = []
        for i, view in enumerate(self.views):
            pos = cell_of(view.table, params)
            v = view.table.times[pos] if pos is not None else math.nan
            times.append(v)
            if math.isfinite(v):
                parts.append(f"{devices[i]} {format_seconds(v)}")
            else:
                status = view.table.status[pos[0]][pos[1]] if pos is not None else "not in this grid"
                words = {"invalid": "invalid", "failed": "failed", "wrong": "wrong result", "missing": "not run",
                         "lost": "lost to the cluster"}
                parts.append(f"{devices[i]} {words.get(status, status)}")
        text = f"{where}: " + ", ".join(parts)
        if all(math.isfinite(v) for v in times):
            text += f" — {devices[1]} takes {times[1] / times[0]:.3f}× {devices[0]}'s time"
        if t.reduced_over:
            text += f" (each: the best over {', '.join(t.reduced_over)})"
        return text

    def _hovered(self, side: int, cell) -> None:
        if self._ghost is not None:
            view, item = self._ghost
            view.remove_mark(item)
            self._ghost = None
        if cell is None or self.portability is None:
            self.hover_label.setText(" ")
            return
        text = self.describe(side, cell)
        self.hover_label.setText(text)
        self.views[side].setToolTip(text)
        other = self.views[1 - side]
        t = self.views[side].table
        params = {t.row_param: t.row_values[cell[0]]}
        if t.col_param is not None:
            params[t.col_param] = t.col_values[cell[1]]
        pos = cell_of(other.table, params)
        if pos is not None:
            self._ghost = (other, other.add_mark(*pos, _pen(HOVER_COLOUR, 2, Qt.PenStyle.SolidLine), inset=0.02, z=7))
