"""Make Qt's SVG output render the same in librsvg, browsers and Qt.

``QSvgGenerator`` writes each painter state as a ``<g transform="matrix(...)">`` around
geometry in the item's own coordinates (a heatmap cell is 1 × 1, scaled by ~90 px), and a
cosmetic pen (pyqtgraph's default) as ``vector-effect="non-scaling-stroke"``. Renderers that
ignore that attribute - librsvg, hence GNOME's viewers, Inkscape's export and many converters -
scale the stroke with the geometry: a 4 px outline of a cell becomes a 360 px red polygon and
error bars become black slabs. Brush patterns (the heatmap's hatched cells) are laid out in the
same scaled user space and come out ninety times too coarse. Small images (the heatmap's cells
are one pixel each) are smoothed when scaled, whatever ``image-rendering`` says.

:func:`make_portable` rewrites such a file: the geometry of each transformed group is mapped
into its parent's coordinates and the transform dropped, so strokes, dashes and patterns are
in pixels for every renderer (cosmetic strokes keep their width, other strokes are scaled as the
transform scaled them); small embedded images are enlarged pixel by pixel (nearest neighbour).
Groups holding text or images keep their transform: no stroke is involved there.
"""

from __future__ import annotations

import base64
import math
import re
import xml.etree.ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
GEOMETRY = {"path", "polyline", "polygon", "rect", "line", "ellipse", "circle"}
NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
MIN_IMAGE_PIXELS = 600           # smaller embedded images are enlarged to at least this many pixels across


class _Unsupported(Exception):
    """Geometry this rewriter does not map (left as Qt wrote it)."""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _matrix(text: str | None) -> tuple[float, ...] | None:
    m = re.fullmatch(r"\s*matrix\(([^)]*)\)\s*", text or "")
    if not m:
        return None
    values = tuple(float(v) for v in re.findall(NUMBER, m.group(1)))
    return values if len(values) == 6 else None


def _fmt(v: float) -> str:
    return f"{v:.3f}".rstrip("0").rstrip(".") or "0"


def _mapper(m):
    a, b, c, d, e, f = m

    def apply(x: float, y: float) -> str:
        return f"{_fmt(a * x + c * y + e)},{_fmt(b * x + d * y + f)}"

    return apply


def _mapped(el: ET.Element, m) -> ET.Element:
    """A copy of ``el`` with its geometry mapped through ``m``."""
    apply = _mapper(m)
    tag = _local(el.tag)
    attrs = {k: v for k, v in el.attrib.items() if k != "vector-effect"}

    def num(name: str) -> float:
        return float(attrs.pop(name, "0") or 0)

    if tag == "rect":
        if attrs.get("rx") or attrs.get("ry"):
            raise _Unsupported
        x, y, w, h = num("x"), num("y"), num("width"), num("height")
        tag, attrs["d"] = "path", (f"M{apply(x, y)} L{apply(x + w, y)} L{apply(x + w, y + h)} "
                                   f"L{apply(x, y + h)} Z")
    elif tag == "line":
        x1, y1, x2, y2 = num("x1"), num("y1"), num("x2"), num("y2")
        tag, attrs["d"] = "path", f"M{apply(x1, y1)} L{apply(x2, y2)}"
    elif tag in ("polyline", "polygon"):
        values = [float(v) for v in re.findall(NUMBER, attrs["points"])]
        attrs["points"] = " ".join(apply(x, y) for x, y in zip(values[::2], values[1::2], strict=False))
    elif tag == "path":
        attrs["d"] = _mapped_path(attrs["d"], apply)
    elif tag in ("ellipse", "circle"):
        a, b, c, d, _e, _f = m
        if b or c:
            raise _Unsupported
        cx, cy = num("cx"), num("cy")
        rx = ry = num("r") if tag == "circle" else None
        if tag == "ellipse":
            rx, ry = num("rx"), num("ry")
        tag = "ellipse"
        attrs["cx"], attrs["cy"] = apply(cx, cy).split(",")
        attrs["rx"], attrs["ry"] = _fmt(abs(a) * rx), _fmt(abs(d) * ry)
    else:
        raise _Unsupported
    new = ET.Element(f"{{{SVG_NS}}}{tag}", attrs)
    new.tail = el.tail
    return new


def _mapped_path(d: str, apply) -> str:
    """Absolute M/L/C/S/Q/T/Z path data (what Qt writes) mapped point by point."""
    out, numbers = [], []

    def flush():
        if len(numbers) % 2:
            raise _Unsupported
        out.extend(apply(numbers[i], numbers[i + 1]) for i in range(0, len(numbers), 2))
        numbers.clear()

    for token in re.findall(rf"[A-Za-z]|{NUMBER}", d):
        if token.isalpha():
            if token not in "MLCSQTZ":
                raise _Unsupported          # relative commands, H/V/A: not written by Qt
            flush()
            out.append(token)
        else:
            numbers.append(float(token))
    flush()
    return " ".join(out)


def _scale_stroke(g: ET.Element, m) -> None:
    """A non-cosmetic stroke was scaled by the transform: keep its width as drawn."""
    a, b, c, d, _e, _f = m
    s = math.sqrt(abs(a * d - b * c))
    for name in ("stroke-width", "stroke-dashoffset"):
        if g.get(name):
            g.set(name, _fmt(float(g.get(name)) * s))
    if g.get("stroke-dasharray") and g.get("stroke-dasharray") != "none":
        g.set("stroke-dasharray", ",".join(_fmt(float(v) * s) for v in re.findall(NUMBER, g.get("stroke-dasharray"))))


def _flatten(root: ET.Element) -> int:
    """Map the geometry of every transformed group of plain shapes into device space."""
    done = 0
    for g in list(root.iter(f"{{{SVG_NS}}}g")):
        m = _matrix(g.get("transform"))
        kids = list(g)
        if m is None or not kids or any(_local(k.tag) not in GEOMETRY or len(k) for k in kids):
            continue
        try:
            mapped = [_mapped(k, m) for k in kids]
        except (_Unsupported, KeyError, ValueError):
            continue
        cosmetic = any(k.get("vector-effect") == "non-scaling-stroke" for k in kids)
        for old, new in zip(kids, mapped, strict=True):
            g.insert(list(g).index(old), new)
            g.remove(old)
        del g.attrib["transform"]
        if not cosmetic:
            _scale_stroke(g, m)
        done += 1
    return done


def _enlarge_images(root: ET.Element, enlarge) -> None:
    href = f"{{{XLINK_NS}}}href"
    for image in root.iter(f"{{{SVG_NS}}}image"):
        for key in (href, "href"):
            data = image.get(key, "")
            if data.startswith("data:image/png;base64,"):
                bigger = enlarge(base64.b64decode(data.split(",", 1)[1]))
                if bigger is not None:
                    image.set(key, "data:image/png;base64," + base64.b64encode(bigger).decode("ascii"))


def enlarge_png_nearest(data: bytes) -> bytes | None:
    """``data`` (a PNG) enlarged by a whole factor, pixel by pixel; None when already large."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QImage

    image = QImage.fromData(data, "PNG")
    if image.isNull() or max(image.width(), image.height()) >= MIN_IMAGE_PIXELS:
        return None
    factor = math.ceil(MIN_IMAGE_PIXELS / max(image.width(), image.height()))
    big = image.scaled(image.width() * factor, image.height() * factor, Qt.AspectRatioMode.IgnoreAspectRatio,
                       Qt.TransformationMode.FastTransformation)
    out = QByteArray()
    buffer = QBuffer(out)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    big.save(buffer, "PNG")
    buffer.close()
    return bytes(out.data())


def portable_svg(text: str, enlarge=enlarge_png_nearest) -> str:
    """The SVG document ``text`` rewritten as described at the top of this module."""
    ET.register_namespace("", SVG_NS)
    ET.register_namespace("xlink", XLINK_NS)
    root = ET.fromstring(text)
    _flatten(root)
    if enlarge is not None:
        _enlarge_images(root, enlarge)
    return '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + ET.tostring(root, encoding="unicode")


def make_portable(path) -> None:
    """Rewrite the SVG file at ``path`` in place."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(portable_svg(text))
