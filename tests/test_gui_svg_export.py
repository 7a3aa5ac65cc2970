"""SVG exports of the GUI's plots render in librsvg (GNOME's viewers, most converters) as they do
in Qt and as the PNG export shows them: Qt's SVG output is rewritten by
``explorer.plots.svg_portable`` (no ``vector-effect``, no scaled patterns, sharp heatmap cells)."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from explorer.plots.svg_portable import portable_svg
from tests.test_gui_results import record, synthetic_sweep

RSVG = shutil.which("rsvg-convert")
needs_rsvg = pytest.mark.skipif(not RSVG, reason="rsvg-convert is not installed (apt-get install librsvg2-bin); "
                                                  ".ci/run installs it")


def qt_like_svg(*groups: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<svg width="100" height="100" '
            'viewBox="0 0 100 100" xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
            'version="1.2" baseProfile="tiny"><g fill="none">' + "".join(groups) + "</g></svg>")


def test_cosmetic_strokes_in_scaled_groups_are_drawn_in_pixels():
    svg = portable_svg(qt_like_svg(
        '<g stroke="#dc0000" stroke-width="4" transform="matrix(10,0,0,20,5,7)">'
        '<rect vector-effect="non-scaling-stroke" x="1" y="1" width="2" height="0.5"/>'
        '<polyline vector-effect="non-scaling-stroke" points="0,0 1,1"/></g>'))
    assert "vector-effect" not in svg and "matrix(" not in svg
    assert 'd="M15,27 L35,27 L35,37 L15,37 Z"' in svg          # the rect mapped into the parent's pixels
    assert 'points="5,7 15,27"' in svg
    assert 'stroke-width="4"' in svg                            # cosmetic: 4 px as on screen


def test_scaled_strokes_keep_the_width_they_were_drawn_with():
    svg = portable_svg(qt_like_svg('<g stroke="black" stroke-width="0.5" stroke-dasharray="1,2" '
                                   'transform="matrix(4,0,0,4,0,0)"><path d="M0,0 L1,0 C1,1 2,2 3,3 Z"/></g>'))
    assert 'd="M 0,0 L 4,0 C 4,4 8,8 12,12 Z"' in svg
    assert 'stroke-width="2"' in svg and 'stroke-dasharray="4,8"' in svg


def test_groups_with_text_or_unknown_path_commands_are_left_as_qt_wrote_them():
    text_group = '<g transform="matrix(2,0,0,2,0,0)"><text x="1" y="1">a</text></g>'
    relative = '<g transform="matrix(2,0,0,2,0,0)"><path vector-effect="non-scaling-stroke" d="m0,0 l1,1"/></g>'
    svg = portable_svg(qt_like_svg(text_group, relative))
    assert svg.count("matrix(2,0,0,2,0,0)") == 2 and 'd="m0,0 l1,1"' in svg


def test_small_embedded_images_are_enlarged_pixel_by_pixel(qapp):
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QColor, QImage

    image = QImage(3, 2, QImage.Format.Format_ARGB32)
    image.fill(QColor("red"))
    image.setPixelColor(1, 1, QColor(0, 0, 255))
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    import base64

    href = "data:image/png;base64," + base64.b64encode(bytes(data.data())).decode()
    svg = portable_svg(qt_like_svg(f'<g transform="matrix(30,0,0,30,0,0)"><image x="0" y="0" width="3" '
                                   f'height="2" xlink:href="{href}"/></g>'))
    new = re.search(r'href="data:image/png;base64,([^"]+)"', svg).group(1)
    big = QImage.fromData(base64.b64decode(new), "PNG")
    assert big.width() >= 600 and big.width() % 3 == 0 and big.height() == big.width() * 2 // 3
    k = big.width() // 3
    assert big.pixelColor(k + k // 2, k + k // 2) == QColor(0, 0, 255)     # nearest neighbour: no blending
    assert big.pixelColor(k - 1, k) == QColor("red") and big.pixelColor(k, k) == QColor(0, 0, 255)


def heatmap_widget():
    from explorer.plots.heatmap_view import HeatmapView

    view = HeatmapView()
    view.set_sweep(synthetic_sweep())
    return view


def timing_widget():
    from explorer.plots.timing_chart import TimingChart

    chart = TimingChart()
    runs = [record("cpu-serial", 2e-3, lo=1e-3, hi=4e-3), record("gpu-a", 2e-5, kind="gpu"),
            record("gpu-b", 1e-4, kind="gpu", verified=False), record("scipy", 5e-4, kind="library")]
    chart.set_records(runs, baseline="cpu-serial")
    return chart


def pixels(path, size):
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im.convert("RGB").resize(size, Image.Resampling.BOX), dtype=float)


def slabs(picture) -> tuple[float, float]:
    """Fractions of strongly red and of black pixels."""
    red = ((picture[..., 0] > 180) & (picture[..., 1] < 60) & (picture[..., 2] < 60)).mean()
    return red, np.all(picture < 30, axis=2).mean()


@needs_rsvg
@pytest.mark.gui
@pytest.mark.parametrize("make", [heatmap_widget, timing_widget], ids=["heatmap", "timing"])
def test_svg_export_renders_in_librsvg_like_the_png_export(qtbot, tmp_path, make):
    from explorer.plots.export import save_png, save_svg

    widget = make()
    qtbot.addWidget(widget)
    widget.resize(900, 620)
    widget.show()
    qtbot.waitExposed(widget)
    save_png(widget, tmp_path / "p.png")
    save_svg(widget, tmp_path / "p.svg")
    assert "vector-effect" not in (tmp_path / "p.svg").read_text()
    from PIL import Image

    with Image.open(tmp_path / "p.png") as im:
        size = im.size
    subprocess.run([RSVG, "--width", str(size[0]), "--height", str(size[1]), "--background-color", "white",
                    "--output", str(tmp_path / "rsvg.png"), str(tmp_path / "p.svg")], check=True, timeout=60)
    small = (size[0] // 6, size[1] // 6)          # shapes and colours, not line widths or antialiasing
    png, svg = pixels(tmp_path / "p.png", small), pixels(tmp_path / "rsvg.png", small)
    difference = np.abs(png - svg).mean()
    assert difference < 5.0, f"librsvg's rendering differs from the PNG by {difference:.1f} levels on average"
    (png_red, png_black), (svg_red, svg_black) = slabs(png), slabs(svg)
    assert svg_red < png_red + 0.02 and svg_black < png_black + 0.02, \
        f"red {svg_red:.1%} (PNG {png_red:.1%}), black {svg_black:.1%} (PNG {png_black:.1%})"
