"""The sensitivity table from a sweep: shape, invalid cells, best cell, flat region, outputs."""

from __future__ import annotations

import csv
import math
import shutil
import subprocess

import numpy as np
import pytest

from kernels.compute.sweep import summarize_best
from kernels.results.heatmap import heatmap_table, to_text, write_csv
from kernels.results.heatmap_figure import write_png, write_svg


def fake_sweep():
    cells = []
    for wg in (4, 8, 16):
        for rows in (1, 4, 16):
            p = {"wg": wg, "rows": rows}
            if rows > wg:
                cells.append({"params": p, "status": "invalid", "reason": "rows <= wg"})
            else:
                cells.append({"params": p, "status": "ok", "median_s": 1e-3 * (1 + abs(wg - 8) + rows / 100)})
    cells[0] = {"params": {"wg": 4, "rows": 1}, "status": "failed", "reason": "crashed"}
    sweep = {"kind": "sweep", "schema": 1, "family": "spmv", "variant": "gpu-tunable", "target": "sim",
             "input": {"name": "m"}, "grid": {"wg": [4, 8, 16], "rows": [1, 4, 16]}, "cells": cells}
    sweep.update(summarize_best(cells))
    return sweep


def test_table_shape_invalid_cells_and_best():
    t = heatmap_table(fake_sweep())
    assert t.shape == (3, 3)
    assert t.status[0][2] == "invalid" and math.isnan(t.times[0, 2])
    assert t.status[0][0] == "failed"
    assert t.best == (1, 0)  # wg=8, rows=1
    assert t.within_5pct[1, 0] and t.within_5pct[1, 1]
    assert not t.within_5pct[2, 0]


def test_best_and_flat_region_in_the_sweep_summary():
    s = fake_sweep()
    assert s["best"]["params"] == {"wg": 8, "rows": 1}
    assert {"wg": 8, "rows": 4} in s["within_5pct"]
    assert len(s["within_10pct"]) >= len(s["within_5pct"])


def test_text_and_csv(tmp_path):
    t = heatmap_table(fake_sweep())
    text = to_text(t)
    assert "-" in text and "*" in text
    write_csv(t, tmp_path / "h.csv")
    with open(tmp_path / "h.csv") as fh:
        rows = list(csv.reader(fh))
    assert len(rows) == 4 and rows[1][3] == "-"


def test_rows_and_columns_can_be_swapped():
    t = heatmap_table(fake_sweep(), rows="rows", cols="wg")
    assert t.row_param == "rows" and t.best == (0, 1)


# ---- pictures ------------------------------------------------------------------------------------------

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def provenanced_sweep(name="m"):
    """The fake sweep as written on a GPU server: input sizes, device, date, a wrong cell."""
    s = fake_sweep()
    s["input"] = {"name": name, "rows": 4096, "nnz": 110592}
    s["environment"] = {"device": {"name": "NVIDIA H100 80GB HBM3"}}
    s["target"] = "cuda"
    s["finished"] = "2026-11-25T10:00:00+00:00"
    s["cells"][4] = {"params": {"wg": 8, "rows": 4}, "status": "wrong"}
    return s


def triangular_sweep(n=8):
    """A sweep like the SpMV paper's table: rows <= wg, most of the upper triangle invalid."""
    values = [2 ** i for i in range(n)]
    cells = [{"params": {"wg": wg, "rows": rows}, "status": "invalid", "reason": "rows <= wg"} if rows > wg else
             {"params": {"wg": wg, "rows": rows}, "status": "ok",
              "median_s": 1e-4 * (1 + (math.log2(wg) - 5) ** 2 + (math.log2(wg / rows) - 2) ** 2)}
             for wg in values for rows in values]
    sweep = {"kind": "sweep", "schema": 1, "family": "spmv", "variant": "gpu-tunable", "target": "cuda",
             "input": {"name": "stencil27"}, "grid": {"wg": values, "rows": values}, "cells": cells}
    sweep.update(summarize_best(cells))
    return sweep


def test_subtitle_names_input_device_and_date():
    t = heatmap_table(provenanced_sweep())
    assert t.subtitle == ("input m (4,096 rows, 110,592 nnz) · device NVIDIA H100 80GB HBM3 (cuda) · timed as "
                          "direct launches (host launch overhead included) · 2026-11-25")
    # an older file: what it has (no launch field: its cells were timed direct)
    assert heatmap_table(fake_sweep()).subtitle == ("input m · target sim · timed as direct launches (host launch "
                                                    "overhead included)")


def drawn_figure(t):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from kernels.results.heatmap_figure import heatmap_figure

    fig = heatmap_figure(t)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return fig, canvas.get_renderer()


def visible_texts(fig):
    from matplotlib.text import Text

    return [a for a in fig.findobj(Text) if a.get_visible() and a.get_text()]


LONG_NAME = "a-very-long-matrix-name-from-the-suitesparse-collection_with_many_parts_2024.mtx"


@pytest.mark.parametrize("sweep", [provenanced_sweep(), provenanced_sweep(LONG_NAME)], ids=["short", "long-name"])
def test_picture_text_lies_inside_the_figure(sweep):
    fig, renderer = drawn_figure(heatmap_table(sweep))
    box = fig.bbox
    texts = visible_texts(fig)
    assert texts
    for text in texts:
        ext = text.get_window_extent(renderer)
        assert ext.x0 >= box.x0 - 1 and ext.x1 <= box.x1 + 1 and ext.y0 >= box.y0 - 1 and ext.y1 <= box.y1 + 1, \
            f"{text.get_text()!r} is clipped: {ext} outside {box}"
    shown = " ".join(t.get_text().replace("\n", " ") for t in texts)
    for part in ("spmv/gpu-tunable", "NVIDIA H100", "2026-11-25", "median kernel time (ms, log scale)"):
        assert part in shown, part


def test_picture_marks_best_flat_region_invalid_and_failed_cells():
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Rectangle

    t = heatmap_table(provenanced_sweep())
    fig, _ = drawn_figure(t)
    ax = fig.axes[0]
    cells = {(round(tx.get_position()[1] - 0.5), round(tx.get_position()[0] - 0.5)): tx.get_text()
             for tx in ax.texts}
    assert cells[(1, 0)].endswith("★") and cells[(0, 0)] == "failed" and cells[(1, 1)] == "✗ wrong"
    assert cells[(0, 2)] == "invalid" and cells[(1, 2)] == "invalid"
    hatched = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_hatch()]
    assert sorted((int(p.get_y()), int(p.get_x())) for p in hatched) == [(0, 2), (1, 2)]
    red = [p for p in ax.patches if isinstance(p, Rectangle) and not p.get_fill()]
    assert len(red) == 1 and (int(red[0].get_y()), int(red[0].get_x())) == t.best
    (outline,) = [c for c in ax.collections if isinstance(c, LineCollection)]
    # the dashed outline: the cells tied with the best (here the best alone: its 4 sides)
    assert int(t.tied.sum()) == 1 and len(outline.get_segments()) == 4
    assert [tl.get_text() for tl in ax.get_xticklabels()] == ["1", "4", "16"]
    assert [tl.get_text() for tl in ax.get_yticklabels()] == ["4", "8", "16"]


def test_flat_region_outline_follows_the_region_boundary():
    from kernels.results.heatmap_figure import _flat_region_edges

    mask = np.array([[1, 1, 0], [1, 0, 0], [0, 0, 0]], bool)       # an L of three cells
    edges = {tuple(map(tuple, e)) for e in _flat_region_edges(mask)}
    assert len(edges) == 8                                        # the L's perimeter in cell sides
    assert ((1, 0), (1, 1)) not in edges                          # not between two cells of the region


def test_png_and_svg_pictures_are_written(tmp_path):
    t = heatmap_table(provenanced_sweep())
    write_png(t, tmp_path / "h.png")
    write_svg(t, tmp_path / "h.svg")
    assert (tmp_path / "h.png").read_bytes()[:8] == PNG_MAGIC
    svg = (tmp_path / "h.svg").read_text()
    assert "<svg" in svg and "</svg>" in svg
    # the cause of librsvg's giant polygons in Qt's SVG; matplotlib never writes it
    assert "vector-effect" not in svg
    write_svg(t, tmp_path / "again.svg")
    assert (tmp_path / "again.svg").read_text() == svg          # no date or random ids: reproducible


def rendered_by_librsvg(svg, size, out):
    subprocess.run(["rsvg-convert", "--width", str(size[0]), "--height", str(size[1]), "--background-color",
                    "white", "--output", str(out), str(svg)], check=True, capture_output=True, timeout=60)
    return out


def grey(path, size):
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im.convert("RGB").resize(size, Image.Resampling.BOX), dtype=float)


@pytest.mark.skipif(not shutil.which("rsvg-convert"),
                    reason="rsvg-convert is not installed (apt-get install librsvg2-bin); .ci/run installs it")
@pytest.mark.parametrize("sweep", [provenanced_sweep(), provenanced_sweep(LONG_NAME), triangular_sweep()],
                         ids=["small", "long-name", "triangular"])
def test_svg_renders_in_librsvg_like_the_png(tmp_path, sweep):
    from PIL import Image

    t = heatmap_table(sweep)
    write_png(t, tmp_path / "h.png")
    write_svg(t, tmp_path / "h.svg")
    with Image.open(tmp_path / "h.png") as im:
        size = im.size
    rendered_by_librsvg(tmp_path / "h.svg", size, tmp_path / "rsvg.png")
    small = (size[0] // 4, size[1] // 4)          # compare shapes and colours, not antialiasing
    png, svg = grey(tmp_path / "h.png", small), grey(tmp_path / "rsvg.png", small)
    difference = np.abs(png - svg).mean()
    assert difference < 4.0, f"librsvg's rendering differs from the PNG by {difference:.1f} grey levels on average"
    for name, picture in (("PNG", png), ("librsvg", svg)):
        red = np.all(picture == [255, 0, 0], axis=2).mean() + ((picture[..., 0] > 200) & (picture[..., 1] < 40)
                                                               & (picture[..., 2] < 40)).mean()
        black = np.all(picture < 20, axis=2).mean()
        assert red < 0.05 and black < 0.05, f"{name}: a slab of red ({red:.0%}) or black ({black:.0%})"


# ---- a one-parameter sweep (issue 25: its header read "wg \ None") ----------------------------------------------

def one_parameter_sweep():
    cells = [{"params": {"wg": 32}, "status": "ok", "median_s": 0.5065},
             {"params": {"wg": 64}, "status": "ok", "median_s": 0.7406}]
    sweep = {"kind": "sweep", "schema": 2, "family": "spmv", "variant": "gpu-tunable", "target": "sim",
             "input": {"name": "lp_afiro", "rows": 27, "nnz": 102}, "grid": {"wg": [32, 64]}, "cells": cells}
    sweep.update(summarize_best(cells))
    return sweep


def test_a_one_parameter_table_names_its_column_not_none(tmp_path):
    t = heatmap_table(one_parameter_sweep())
    lines = to_text(t).splitlines()
    assert "None" not in to_text(t)
    assert lines[1].split() == ["wg", "median"] and lines[2].split() == ["32", "506.5*"]
    write_csv(t, tmp_path / "one.csv")
    with open(tmp_path / "one.csv") as fh:
        rows = list(csv.reader(fh))
    assert rows == [["wg", "median (ms)"], ["32", "506.5*"], ["64", "740.6"]]


def test_a_one_parameter_picture_names_its_column_and_keeps_its_text_inside():
    fig, renderer = drawn_figure(heatmap_table(one_parameter_sweep()))
    texts = visible_texts(fig)
    shown = [t.get_text() for t in texts]
    assert "median" in shown and "None" not in " ".join(shown)
    for text in texts:
        ext = text.get_window_extent(renderer)
        assert ext.x0 >= fig.bbox.x0 - 1 and ext.x1 <= fig.bbox.x1 + 1, f"{text.get_text()!r} is clipped"
