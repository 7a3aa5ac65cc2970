"""Draw the application icon: PNGs of 16..512 px and an SVG in ``resources/icons/``.

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/make_icons.py

The motif is the project in one picture: a column of slotted pages (the dynamic graph's
storage, some slots filled) with a small graph drawn over it. It is drawn with QPainter in
a 100 x 100 design space, so the PNGs and the SVG come from the same code; below 32 px the
slots are left out (they would only blur). The generated files are committed: run this
again only after changing the drawing.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
NAME = "gpu-graph-explorer"
OUT = Path(__file__).resolve().parent.parent / "resources" / "icons"

BACKGROUND_TOP = "#1f3b5c"
BACKGROUND_BOTTOM = "#10243a"
PAGE = "#e8eef5"
SLOT_EMPTY = "#b9c7d6"
SLOT_FULL = "#3b82c4"
EDGE = "#f28c28"
VERTEX = "#ffb347"
VERTEX_RIM = "#7a3a00"

# three pages side by side; each a column of slots, True = an occupied slot
PAGES = [
    [True, True, True, False, True, False],
    [True, True, False, False, False, False],
    [True, True, True, True, True, False],
]
# a small graph over the pages (design coordinates) and its edges
VERTICES = [(24, 30), (74, 22), (52, 56), (22, 78), (80, 74)]
EDGES = [(0, 1), (0, 2), (1, 2), (2, 3), (2, 4), (1, 4), (3, 4)]


def paint(painter, size: float, detailed: bool = True) -> None:
    """Draw the icon into a ``size`` x ``size`` square at the painter's origin."""
    from PySide6.QtCore import QPointF, QRectF, Qt
    from PySide6.QtGui import QBrush, QColor, QLinearGradient, QPen

    painter.save()
    painter.setRenderHint(painter.RenderHint.Antialiasing, True)
    painter.scale(size / 100.0, size / 100.0)

    gradient = QLinearGradient(0, 0, 0, 100)
    gradient.setColorAt(0.0, QColor(BACKGROUND_TOP))
    gradient.setColorAt(1.0, QColor(BACKGROUND_BOTTOM))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QBrush(gradient))
    painter.drawRoundedRect(QRectF(2, 2, 96, 96), 18, 18)

    # the pages: light cards with a column of slots each
    page_w, page_h, gap, top = 22.0, 64.0, 6.0, 18.0
    left = (100 - (3 * page_w + 2 * gap)) / 2
    for i, slots in enumerate(PAGES):
        x = left + i * (page_w + gap)
        painter.setBrush(QColor(PAGE))
        painter.drawRoundedRect(QRectF(x, top, page_w, page_h), 3, 3)
        if not detailed:
            continue
        slot_h = (page_h - 8) / len(slots)
        for j, full in enumerate(slots):
            painter.setBrush(QColor(SLOT_FULL if full else SLOT_EMPTY))
            painter.drawRoundedRect(QRectF(x + 3, top + 4 + j * slot_h + 0.8, page_w - 6, slot_h - 1.6), 1.2, 1.2)

    # the graph, drawn over the pages
    painter.setPen(QPen(QColor(EDGE), 4.5 if detailed else 7.0, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
    for a, b in EDGES:
        painter.drawLine(QPointF(*VERTICES[a]), QPointF(*VERTICES[b]))
    radius = 7.0 if detailed else 10.0
    painter.setPen(QPen(QColor(VERTEX_RIM), 2.0))
    painter.setBrush(QColor(VERTEX))
    for x, y in VERTICES:
        painter.drawEllipse(QPointF(x, y), radius, radius)
    painter.restore()


def render_png(size: int, path: Path) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter

    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    paint(painter, size, detailed=size >= 32)
    painter.end()
    if not image.save(str(path)):
        raise OSError(f"could not write {path}")


def render_svg(path: Path) -> None:
    from PySide6.QtCore import QRect, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(QSize(256, 256))
    generator.setViewBox(QRect(0, 0, 256, 256))
    generator.setTitle("GPU Graph Explorer")
    generator.setDescription("Slotted pages with a graph drawn over them")
    painter = QPainter(generator)
    paint(painter, 256)
    painter.end()
    # QSvgGenerator gives the size in millimetres; icon themes expect plain pixels
    text = path.read_text(encoding="utf-8")
    text = re.sub(r'width="[0-9.]+mm" height="[0-9.]+mm"', 'width="256" height="256"', text, count=1)
    path.write_text(text, encoding="utf-8")


def main(out: Path = OUT) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    out.mkdir(parents=True, exist_ok=True)
    for size in SIZES:
        render_png(size, out / f"{NAME}-{size}.png")
    render_svg(out / f"{NAME}.svg")
    print(f"wrote {len(SIZES)} PNGs ({SIZES[0]}..{SIZES[-1]} px) and {NAME}.svg to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
