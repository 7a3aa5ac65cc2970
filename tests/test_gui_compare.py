"""One tuning, two GPUs in the GUI (explorer/plots/compare_view.py, explorer/window/compare_window.py):
the H100 and H200 sweeps of the 132-cell SpMV grid side by side on one colour scale, the other
GPU's best marked, both times on hover; a damaged or mismatched pair said in one sentence, never a
crash; Results ▸ Compare Sweeps…; the window drawn offscreen at 1600 x 1000 and 1366 x 768."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from PySide6.QtTest import QTest

from explorer.plots.compare_view import OTHER_COLOUR, CompareView
from explorer.window.compare_window import SHORTCUT, CompareWindow
from kernels.results import load_sweep
from tests.gui_support import make_window, results_of

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parents[1]
H100 = ROOT / "benchmarks/results/sweep/h100-x1/sweep-spmv-warm.json"
H200 = ROOT / "benchmarks/results/sweep/h200-x4-capped/sweep-spmv-cluster-1gpu.json"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def pair():
    return load_sweep(H100), load_sweep(H200)


@pytest.fixture
def view(qtbot):
    v = CompareView()
    qtbot.addWidget(v)
    v.resize(1400, 800)
    v.show()
    QTest.qWaitForWindowExposed(v)
    return v


def orange_marks(heatmap):
    return [item for item in heatmap._overlays if hasattr(item, "pen") and item.pen().color() == OTHER_COLOUR]


def test_the_real_pair_side_by_side_on_one_scale(view, pair):
    p = view.set_pair(*pair)
    assert p is not None and p.cells == 132 and view.portability is p
    assert p.device_a == "NVIDIA H100 80GB HBM3" and p.device_b == "NVIDIA H200"
    # one scale: both images' and both colour bars' levels are the same, from the fastest to the slowest cell of both
    a, b = view.views
    assert a.image.getLevels() == pytest.approx(b.image.getLevels())
    assert view.levels()[0] == pytest.approx(view.levels()[1])
    times = [t for v in view.views for t in v.table.times.ravel() if math.isfinite(t)]
    assert a.unit == b.unit == "ms"
    assert view.levels()[0] == pytest.approx((math.log10(min(times) * 1e3), math.log10(max(times) * 1e3)))
    # each side: its own best framed in red (the heatmap's mark), the other's best ringed in orange
    for heatmap in view.views:
        assert heatmap.best_item is not None and len(orange_marks(heatmap)) == 1
    assert "NVIDIA H100 80GB HBM3" in a.title_label.text and "NVIDIA H200" in b.title_label.text
    summary = view.summary.text()
    assert "Portability loss" in summary and "1.000x" in summary and "Spearman's ρ = 0.99" in summary
    assert not view.message.isVisible()


def test_a_colour_means_one_time_on_both_sides(view, pair):
    """Drawn alone, each sweep's scale would end at its own fastest and slowest cell; side by side
    they share the scale of both, so the faster GPU's bar reaches below its own fastest cell."""
    view.set_pair(*pair)
    alone = CompareView()
    alone.views[0].set_sweep(pair[1])
    try:
        assert alone.views[0].colorbar.levels() != pytest.approx(view.views[1].colorbar.levels())
    finally:
        alone.close()


def test_hovering_a_cell_gives_both_gpus_times(view, pair, qtbot):
    view.set_pair(*pair)
    a = view.views[0]
    qtbot.wait(50)
    r, c = a.table.best
    QTest.mouseMove(a.viewport(), a.mapFromScene(a.cell_center(r, c)))
    qtbot.waitUntil(lambda: a.hovered == (r, c), timeout=5000)
    text = view.hover_label.text()
    assert text.startswith("wg=128, rows=1: NVIDIA H100 80GB HBM3 106 µs, NVIDIA H200 110 µs")
    assert "NVIDIA H200 takes 1.036× NVIDIA H100 80GB HBM3's time" in text and "best over reduce" in text
    assert view._ghost is not None and view._ghost[0] is view.views[1]          # framed on the other side too
    # an invalid cell says so for both
    assert "invalid" in view.describe(0, (0, 1)) and view.describe(0, (0, 1)).count("invalid") == 2


def test_a_mismatched_pair_is_one_sentence_and_no_heatmap(view, pair):
    other = dict(pair[1], input={**pair[1]["input"], "name": "rmat", "fingerprint": "0123456789abcdef"})
    assert view.set_pair(pair[0], other) is None
    assert view.message.isVisible()
    assert view.message.text() == ("These sweeps cannot be compared: the sweeps ran on different inputs "
                                   "(powerlaw_65536x65536_nnz16_a2 and rmat): a tuning's portability is per input")
    assert all(v.table is None for v in view.views) and view.summary.text() == ""
    assert view.set_pair(pair[0], dict(pair[1], variant="gpu-merge")) is None
    assert "different variants: gpu-tunable and gpu-merge" in view.message.text()
    # a crafted dict that is no sweep at all: still a sentence
    assert view.set_pair(pair[0], {"family": "spmv", "variant": "gpu-tunable", "target": "cuda",
                                   "grid": {"wg": [1], "rows": [1], "reduce": ["shuffle"]},
                                   "input": pair[0]["input"], "cells": [{"params": "x", "status": "ok"}]}) is None
    assert "no cell was verified in both" in view.message.text()
    # and a good pair afterwards draws again
    assert view.set_pair(*pair) is not None and not view.message.isVisible()


def write_sweep(path: Path, header: dict, cells: list[dict]) -> Path:
    lines = [{"kind": "sweep", **header}] + [{"kind": "cell", **c} for c in cells]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def mixed_file(tmp_path) -> Path:
    """One cluster sweep whose cells ran on two kinds of GPU: the H100's cells with wg < 128,
    the H200's from 128 up (the two real files' cells, as a --mixed-gpus sweep writes them)."""
    lines = [json.loads(x) for x in H100.read_text().splitlines()]
    header = {k: v for k, v in lines[0].items() if k not in ("kind", "environment")}
    h100 = [x for x in lines if x["kind"] == "cell"]
    h200 = [json.loads(x) for x in H200.read_text().splitlines() if '"kind": "cell"' in x]
    cells = [c for c in h100 if c["params"]["wg"] < 128] + [c for c in h200 if c["params"]["wg"] >= 128]
    return write_sweep(tmp_path / "mixed.json", header, cells)


def test_the_window_opens_two_files_one_mixed_sweep_and_refuses_bad_ones(qtbot, tmp_path):
    w = CompareWindow()
    qtbot.addWidget(w)
    w.show()
    assert w.open_files([H100, H200])
    assert w.view.portability.device_b == "NVIDIA H200" and w.boxes[0].count() == 2
    # A = B: said, not compared with itself
    w.choose(1, 1)
    assert "same sweep" in w.view.message.text()
    w.choose(0, 1)
    assert w.save_picture(tmp_path / "c.png") and (tmp_path / "c.png").read_bytes()[:8] == PNG_MAGIC
    # a mixed-GPU sweep: its two GPUs are picked, each part with its own cells
    w.open_files([mixed_file(tmp_path)])
    a, b = (w.entries[box.currentIndex()][0] for box in w.boxes)
    assert (a["device"], b["device"]) == ("NVIDIA H100 80GB HBM3", "NVIDIA H200")
    assert w.view.portability is None            # no cell ran on both GPUs: said in one sentence, with why
    assert ("no cell was verified in both sweeps (56 verified on NVIDIA H100 80GB HBM3, 76 on NVIDIA H200): a "
            "--mixed-gpus sweep runs each cell once") in w.view.message.text()
    # damaged: one sentence naming the file
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "sweep", "schema": 2, "family": "spmv"\n')
    assert not w.open_files([bad])
    assert w.view.message.isVisible() and "bad.json" in w.view.message.text()
    # one file of one GPU: asks for a second
    assert not w.open_files([H100])
    assert "every cell ran on NVIDIA H100 80GB HBM3; give a second sweep" in w.view.message.text()
    # of different inputs: refused in one sentence
    lines = H200.read_text().splitlines()
    header = json.loads(lines[0])
    header["input"] = {**header["input"], "fingerprint": "ffffffffffffffff", "name": "other"}
    (tmp_path / "other.json").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    assert not w.open_files([H100, tmp_path / "other.json"])
    assert "different inputs" in w.view.message.text()


def test_results_menu_compare_sweeps_offers_the_docks_sweeps(qtbot, tmp_path):
    win = make_window(qtbot, tmp_path)
    try:
        res = results_of(win)
        for path in (H100, H200):
            assert res.open_result_file(path)
        action = res.compare_action
        assert action.shortcut().toString() == SHORTCUT
        assert action in res.menu.actions()
        file_menu = next(a.menu() for a in win.menuBar().actions() if a.text().replace("&", "") == "File")
        assert action in file_menu.actions()
        action.trigger()
        cw = res.compare_window
        assert isinstance(cw, CompareWindow) and cw.isVisible()
        assert cw.view.portability is not None and cw.view.portability.cells == 132
    finally:
        win.close()
    assert res.compare_window is None             # closed with the main window


@pytest.mark.parametrize("size", [(1600, 1000), (1366, 768)])
def test_the_window_fits_both_screens(qtbot, tmp_path, size):
    w = CompareWindow()
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    QTest.qWaitForWindowExposed(w)
    assert w.open_files([H100, H200])
    qtbot.wait(100)
    # every column and the colour bar inside each heatmap (a wide title had pushed them off the side)
    for heatmap in w.view.views:
        right = heatmap.mapFromScene(heatmap.colorbar.sceneBoundingRect().topRight()).x()
        assert right <= heatmap.width(), f"the colour bar ends at {right} of {heatmap.width()} px"
        assert all(item.isVisible() for item in heatmap.cell_texts())
    assert w.grab().save(str(tmp_path / "w.png"))
