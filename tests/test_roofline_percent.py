"""Runs on the roofline (kernels/roofline/percent.py): the point, the percentages of the measured
limits, L2-resident points above the roofline (never over 100 %), and the heatmap drawn by
percentage or by energy instead of time."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kernels.compute.sweep import summarize_best
from kernels.errors import GraphKernelsError
from kernels.results.heatmap import heatmap_table, to_text, write_csv
from kernels.results.heatmap_figure import write_png
from kernels.roofline import peaks as kept
from kernels.roofline.percent import metric_value, peaks_for, roofline_point, why_not_on_roofline

PEAKS = {"bandwidth_Bps": 2.0e12, "rates": {"int32": 1.0e13, "add+min-fp64": 4.0e12}}
DEVICE = {"target": "cuda", "name": "Fake H100", "uuid": "GPU-9", "driver": "12.8"}


def record(median_s, nbytes=1e9, ops=1e9, op="int32", peaks=PEAKS, fits=False, joules=None):
    r = {"family": "triangles", "variant": "gpu-oriented", "target": "cuda",
         "timing": {"kernel": {"median_s": median_s}, "fits_in_l2": fits},
         "environment": {"device": DEVICE},
         "roofline": {"bytes": int(nbytes), "ops": ops, "op": op}}
    if peaks is not None:
        r["roofline"]["peaks"] = peaks
    if joules is not None:
        r["energy"] = {"joules_per_launch": joules, "watts": 300.0}
    return r


@pytest.fixture(autouse=True)
def no_kept_peaks(tmp_path, monkeypatch):
    monkeypatch.setenv(kept.PEAKS_ENV, str(tmp_path / "peaks.json"))


def test_point_and_percentages():
    # 1 GB and 1 G int ops in 1 ms: 1 TB/s of 2, 1 T ops/s; intensity 1 -> bound min(10 T, 2 T) = 2 T
    p = roofline_point(record(1e-3))
    assert p.intensity == 1.0 and p.memory_bound and not p.above
    assert p.pct_bandwidth == pytest.approx(50.0) and p.pct_bound == pytest.approx(50.0)
    # intensity 20: compute bound at 10 T ops/s; 20 G ops in 4 ms = 5 T ops/s -> 50 % of the bound
    c = roofline_point(record(4e-3, nbytes=1e9, ops=2e10))
    assert not c.memory_bound and c.pct_bound == pytest.approx(50.0)
    assert c.pct_bandwidth == pytest.approx(100.0 * 2.5e11 / 2e12)


def test_above_the_roofline_is_l2_not_over_100_percent():
    p = roofline_point(record(1e-4, fits=True))         # 10 TB/s from a 2 TB/s memory
    assert p.above and p.fits_in_l2 and p.pct_bandwidth is None and p.pct_bound is None
    value, above, why = metric_value(record(1e-4), "pct-bound")
    assert value is None and above and why is None


def test_peaks_from_the_record_or_kept_here():
    r = record(1e-3, peaks=None)
    assert peaks_for(r) is None and "device-peaks" in why_not_on_roofline(r)
    kept.measure_peaks(DEVICE, lambda: dict(PEAKS))
    assert peaks_for(r)["bandwidth_Bps"] == 2.0e12 and roofline_point(r) is not None
    assert "no work model" in why_not_on_roofline({"family": "spmv", "variant": "scipy", "target": "cpu"})
    sim = {**record(1e-3), "target": "sim"}
    assert "real GPU" in why_not_on_roofline(sim) and metric_value(sim, "pct-bandwidth")[0] is None


def test_energy_metric():
    assert metric_value(record(1e-3, joules=0.25), "energy") == (0.25, False, None)
    value, _, why = metric_value(record(1e-3), "energy")
    assert value is None and "--energy" in why
    with pytest.raises(ValueError):
        metric_value(record(1e-3), "speed")


def sweep(with_peaks=True, joules=True):
    cells = []
    for i, b in enumerate((64, 128, 256)):
        t = (4e-4, 1e-3, 2e-3)[i]               # 64: above the roofline (5 TB/s), 128: 50 %, 256: 25 %
        rec = record(t, peaks=PEAKS if with_peaks else None, fits=i == 0, joules=0.3 * t * 1e3 if joules else None)
        cells.append({"params": {"block_size": b}, "status": "ok", "median_s": t, "record": rec})
    cells.append({"params": {"block_size": 512}, "status": "invalid", "reason": "too big"})
    s = {"kind": "sweep", "schema": 2, "family": "triangles", "variant": "gpu-oriented", "target": "cuda",
         "input": {"name": "g"}, "grid": {"block_size": [64, 128, 256, 512]}, "cells": cells}
    s.update(summarize_best(cells))
    return s


def test_heatmap_by_percentage(tmp_path):
    t = heatmap_table(sweep(), metric="pct-bandwidth")
    assert t.above[0, 0] and math.isnan(t.shown[0, 0])
    assert t.shown[1, 0] == pytest.approx(50.0) and t.shown[2, 0] == pytest.approx(25.0)
    text = to_text(t)
    assert "L2*" in text and "50" in text and "25" in text and "% of the measured copy bandwidth" in text
    cells = [line.split()[1] for line in text.splitlines()[2:6]]       # block_size, pct-bandwidth
    assert cells == ["L2*", "50", "25", "-"] and text.splitlines()[1].split() == ["block_size", "pct-bandwidth"]
    write_csv(t, tmp_path / "h.csv")
    assert "L2*" in (tmp_path / "h.csv").read_text()
    write_png(t, tmp_path / "h.png")
    assert (tmp_path / "h.png").stat().st_size > 1000


def test_heatmap_by_energy():
    t = heatmap_table(sweep(), metric="energy")
    assert np.allclose(t.shown[:3, 0], [0.12, 0.3, 0.6]) and "energy per launch" in to_text(t)
    assert " in mJ" in to_text(t) and [line.split()[1] for line in to_text(t).splitlines()[2:5]] == \
        ["120*", "300", "600"]


def test_heatmap_metric_refused_with_the_reason():
    with pytest.raises(GraphKernelsError, match="device-peaks"):
        heatmap_table(sweep(with_peaks=False), metric="pct-bound")
    with pytest.raises(GraphKernelsError, match="--energy"):
        heatmap_table(sweep(joules=False), metric="energy")



def test_run_output_says_where_the_run_sits_and_its_energy():
    from kernels.cli.run import _roofline_and_energy_lines

    r = record(1e-3, joules=0.002)
    r["energy"].update({"window_s": 0.5, "sm_clock_mhz": 1980, "memory_clock_mhz": 2619, "sm_clock_min_mhz": 1410,
                        "sm_clock_max_mhz": 1980, "throttle_reasons": ["software power cap"]})
    text = "\n".join(_roofline_and_energy_lines(r))
    assert "50 % of the measured bandwidth, 50 % of the memory bound" in text
    assert "2 mJ per launch" in text and "SM 1410-1980 MHz" in text and "software power cap" in text
    above = "\n".join(_roofline_and_energy_lines(record(1e-4)))
    assert "stayed in L2" in above and "%" not in above.split("roofline")[1]
    assert "device-peaks" in "\n".join(_roofline_and_energy_lines(record(1e-3, peaks=None)))


def test_roofline_picture_without_qt(tmp_path):
    from kernels.roofline.chart import roofline_chart
    from kernels.roofline.figure import save_roofline

    chart = roofline_chart([record(1e-3), record(4e-3, ops=2e10), record(1e-4, fits=True),
                            {**record(1e-3), "target": "sim"}])
    assert len(chart.points) == 3 and len(chart.above) == 1 and chart.skipped == ["a sim run: the roofline is a "
                                                                                   "real GPU's"]
    save_roofline(chart, tmp_path / "r.svg")
    save_roofline(chart, tmp_path / "r.png")
    assert (tmp_path / "r.png").stat().st_size > 5000 and "<svg" in (tmp_path / "r.svg").read_text()[:400]
