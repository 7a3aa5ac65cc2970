"""Pictures of plots: PNG through pyqtgraph's ``ImageExporter``, SVG by painting the widget
into a ``QSvgGenerator``.

pyqtgraph 0.14's ``SVGExporter`` raises ``ValueError`` (in ``correctCoordinates``) under
PySide6 6.12 for every plot we tried; painting the widget with a ``QPainter`` on a
``QSvgGenerator`` gives a correct vector file instead, which :mod:`explorer.plots.svg_portable`
then rewrites so that renderers other than Qt's draw it the same.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QApplication, QWidget

from explorer.plots.svg_portable import make_portable
from kernels.errors import GraphKernelsError

PNG_SCALE = 2                 # pictures for papers: twice the on-screen resolution
EXPORT_SIZE = (1200, 800)     # exports are drawn at this size, whatever the panel's size on screen


def save_png(widget: QWidget, path, scale: int = PNG_SCALE) -> None:
    """Write ``widget`` (a pyqtgraph ``GraphicsView``, or any widget) as a PNG."""
    QApplication.processEvents()
    item = getattr(widget, "ci", None)            # a GraphicsLayoutWidget's whole layout
    if item is not None:
        from pyqtgraph.exporters import ImageExporter

        exporter = ImageExporter(item)
        width = max(int(item.sceneBoundingRect().width() * scale), 16)
        exporter.parameters()["width"] = width
        exporter.parameters()["antialias"] = True
        ok = exporter.export(str(path))
        ok = ok is not False and Path(path).exists()
    else:
        ok = widget.grab().save(str(path), "PNG")
    if not ok:
        raise GraphKernelsError(f"{path}: the picture could not be written")


def save_svg(widget: QWidget, path, title: str = "") -> None:
    """Write ``widget`` as an SVG (vector lines and text, embedded images for heatmap cells)."""
    QApplication.processEvents()
    size: QSize = widget.size()
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(size)
    generator.setViewBox(QRect(0, 0, size.width(), size.height()))
    # the widget's own resolution: at QSvgGenerator's default 72 dpi, point-sized fonts and
    # cosmetic pens are scaled against pixel geometry and the axes drift from the data
    generator.setResolution(widget.logicalDpiX())
    generator.setTitle(title or widget.windowTitle() or "GPU Graph Explorer plot")
    generator.setDescription("written by GPU Graph Explorer")
    painter = QPainter()
    if not painter.begin(generator):
        raise GraphKernelsError(f"{path}: cannot write an SVG file there")
    try:
        widget.render(painter)
    finally:
        painter.end()
    if not Path(path).exists() or Path(path).stat().st_size == 0:
        raise GraphKernelsError(f"{path}: the SVG file could not be written")
    # Qt's SVG relies on vector-effect and scaled patterns that librsvg & co. do not honour
    try:
        make_portable(path)
    except (OSError, ET.ParseError) as exc:
        raise GraphKernelsError(f"{path}: the SVG file could not be finished: {exc}") from None


def save_picture(widget: QWidget, path, title: str = "") -> None:
    """PNG or SVG by the file name's suffix."""
    suffix = Path(path).suffix.lower()
    if suffix == ".png":
        save_png(widget, path)
    elif suffix == ".svg":
        save_svg(widget, path, title)
    else:
        raise GraphKernelsError(f"{path}: pictures are written as .png or .svg")


def save_offscreen(view: QWidget, path, title: str = "", size: tuple[int, int] = EXPORT_SIZE) -> None:
    """Write ``view`` - a fresh copy of a plot, never the one on screen - drawn at ``size``.

    A picture for a paper must not depend on how large the user's Results panel happens to be:
    at 20 px tall the chart on screen drops its labels. The copy is laid out at ``size``
    without appearing on any screen, written, then closed."""
    view.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
    view.resize(*size)
    view.show()
    QApplication.processEvents()
    try:
        save_picture(view, path, title)
    finally:
        view.close()
        view.deleteLater()
