"""One tuning, two GPUs as a picture (kernels/results/compare_figure.py, ``graph-kernels compare
--svg/--png``): both tables on one colour scale, each GPU's best and the other's marked, the
comparison as caption; the SVG parses and librsvg draws it like the PNG."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from matplotlib.patches import Rectangle

from kernels.cli import main as cli_main
from kernels.results import load_sweep
from kernels.results.compare_figure import OTHER, comparison_figure, save_comparison, shared_unit
from kernels.results.heatmap import cell_of, heatmap_table
from kernels.results.portability import compare

ROOT = Path(__file__).resolve().parents[1]
H100 = ROOT / "benchmarks/results/sweep/h100-x1/sweep-spmv-warm.json"
H200 = ROOT / "benchmarks/results/sweep/h200-x4-capped/sweep-spmv-cluster-1gpu.json"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def sweep(device, times):
    """A 2 x 2 sweep: ``times`` by (wg, rows)."""
    cells = [{"params": {"wg": wg, "rows": rows}, "status": "ok", "median_s": t} for (wg, rows), t in times.items()]
    return {"family": "spmv", "variant": "gpu-tunable", "target": "cuda", "device": device,
            "grid": {"wg": [32, 64], "rows": [1, 2]}, "input": {"name": "m", "fingerprint": "f"}, "cells": cells}


A = sweep("GPU A", {(32, 1): 1e-3, (32, 2): 2e-3, (64, 1): 3e-3, (64, 2): 4e-3})
B = sweep("GPU B", {(32, 1): 4e-4, (32, 2): 2e-4, (64, 1): 8e-4, (64, 2): 1e-4})


def test_both_tables_share_one_colour_scale_and_each_marks_the_others_best():
    ta, tb, p = heatmap_table(A), heatmap_table(B), compare(A, B)
    assert shared_unit(ta, tb) == ("ms", 1e3)               # the slower table's unit, for both
    fig = comparison_figure(ta, tb, p)
    meshes = [ax.collections[0] for ax in fig.axes[:2]]
    # one norm range: the fastest and slowest time of both sweeps, in ms
    for mesh in meshes:
        assert mesh.norm.vmin == pytest.approx(0.1) and mesh.norm.vmax == pytest.approx(4.0)
    assert len(fig.axes) == 3                               # two tables and one colour bar
    for ax, other in zip(fig.axes[:2], (p.best_b, p.best_a), strict=True):
        r, c = cell_of(heatmap_table(A), other)
        frames = [patch for patch in ax.patches if isinstance(patch, Rectangle) and patch.get_edgecolor()[:3]
                  == pytest.approx((1.0, 140 / 255, 0.0))]
        assert len(frames) == 1 and frames[0].get_x() == pytest.approx(c + 0.16) and frames[0].get_y() == \
            pytest.approx(r + 0.17)
    assert OTHER == "#ff8c00"
    assert "GPU A" in fig.axes[0].get_title() and "runs here at 4.000x" in fig.axes[0].get_title()
    assert "rank correlation" in fig.get_supxlabel().replace("\n", " ")


def test_cell_of_tells_true_from_one():
    t = heatmap_table({**A, "grid": {"wg": [1, True], "rows": [1, 2]},
                       "cells": [{"params": {"wg": True, "rows": 1}, "status": "ok", "median_s": 1.0}]})
    assert cell_of(t, {"wg": True, "rows": 1}) == (1, 0) and cell_of(t, {"wg": 7, "rows": 1}) is None


@pytest.fixture(scope="module")
def pictures(tmp_path_factory):
    out = tmp_path_factory.mktemp("compare")
    assert cli_main(["compare", str(H100), str(H200), "--svg", str(out / "c.svg"), "--png", str(out / "c.png")]) == 0
    return out


def test_the_real_pair_draws_as_svg_and_png(pictures, capsys):
    svg = (pictures / "c.svg").read_text()
    root = ET.fromstring(svg)                                # parses
    assert root.tag.endswith("svg") and "vector-effect" not in svg
    assert (pictures / "c.png").read_bytes()[:8] == PNG_MAGIC
    a, b = load_sweep(H100), load_sweep(H200)
    p = compare(a, b)
    save_comparison(heatmap_table(a), heatmap_table(b), p, pictures / "again.svg")
    assert (pictures / "again.svg").read_text() == svg      # no date or random ids: reproducible


@pytest.mark.skipif(not shutil.which("rsvg-convert"),
                    reason="rsvg-convert is not installed (apt-get install librsvg2-bin); .ci/run installs it")
def test_librsvg_draws_the_svg_like_the_png(pictures):
    from PIL import Image

    with Image.open(pictures / "c.png") as im:
        size = im.size
    subprocess.run(["rsvg-convert", "--width", str(size[0]), "--height", str(size[1]), "--background-color", "white",
                    "--output", str(pictures / "rsvg.png"), str(pictures / "c.svg")], check=True, capture_output=True,
                   timeout=60)
    small = (size[0] // 4, size[1] // 4)

    def grey(path):
        with Image.open(path) as im:
            return np.asarray(im.convert("RGB").resize(small, Image.Resampling.BOX), dtype=float)

    difference = np.abs(grey(pictures / "c.png") - grey(pictures / "rsvg.png")).mean()
    assert difference < 4.0, f"librsvg's rendering differs from the PNG by {difference:.1f} grey levels on average"


def test_a_picture_that_cannot_be_written_is_said_in_one_line(tmp_path, capsys):
    assert cli_main(["compare", str(H100), str(H200), "--svg", str(tmp_path / "missing" / "c.svg")]) != 0
    assert "cannot write the picture" in capsys.readouterr().err


def test_the_png_resolution_is_asked_within_bounds(tmp_path, capsys):
    from PIL import Image

    assert cli_main(["compare", str(H100), str(H200), "--png", str(tmp_path / "c.png"), "--dpi", "50"]) == 0
    with Image.open(tmp_path / "c.png") as im:
        assert im.size[0] < 1000                      # a third of the 150 dpi picture's width
    assert cli_main(["compare", str(H100), str(H200), "--png", str(tmp_path / "c.png"), "--dpi", "5000"]) != 0
    assert "--dpi 5000: use 30 to 600" in capsys.readouterr().err
