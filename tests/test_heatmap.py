"""The sensitivity table from a sweep: shape, invalid cells, best cell, flat region, outputs."""

from __future__ import annotations

import csv
import math

from kernels.compute.sweep import summarize_best
from kernels.heatmap import heatmap_table, to_text, write_csv, write_svg


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
    sweep = {"kind": "sweep", "family": "spmv", "variant": "gpu-tunable", "target": "sim",
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


def test_text_csv_and_svg(tmp_path):
    t = heatmap_table(fake_sweep())
    text = to_text(t)
    assert "-" in text and "*" in text
    write_csv(t, tmp_path / "h.csv")
    with open(tmp_path / "h.csv") as fh:
        rows = list(csv.reader(fh))
    assert len(rows) == 4 and rows[1][3] == "-"
    write_svg(t, tmp_path / "h.svg")
    svg = (tmp_path / "h.svg").read_text()
    assert svg.startswith("<svg") and svg.count("<rect") >= 10


def test_rows_and_columns_can_be_swapped():
    t = heatmap_table(fake_sweep(), rows="rows", cols="wg")
    assert t.row_param == "rows" and t.best == (0, 1)
