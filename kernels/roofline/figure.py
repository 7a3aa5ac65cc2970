"""The roofline as a picture (SVG or PNG) with matplotlib's non-GUI canvases, for machines
without the GUI (``benchmarks/bench_roofline.py`` on a GPU server).

It draws the same :class:`~kernels.roofline.chart.RooflineChart` as the GUI's roofline view:
log-log, the measured copy bandwidth's diagonal bent flat at each measured peak rate on show,
one marker per run coloured by family/variant, and points above the roof as hollow orange
squares labelled "L2" (an L2-resident input, never "over 100 %"). Never ``pyplot``: no backend
is chosen, no window can open (as :mod:`kernels.results.heatmap_figure`).
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure

from kernels.figure_style import STYLE
from kernels.roofline.chart import RooflineChart

GIGA = 1e9
ROOF_COLOURS = {"fma-fp64": "#c81e1e", "fma-fp32": "#e65a5a", "add+min-fp64": "#782800", "add+min-fp32": "#aa5a28",
                "int32": "#3c3c3c"}
L2_COLOUR = "#e67800"


def roofline_figure(chart: RooflineChart, title: str = "") -> Figure:
    fig = Figure(figsize=(10, 6.5), layout="constrained")
    fig.patch.set_facecolor("white")
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    lo, hi = chart.x_range()
    xs = np.logspace(math.log10(lo), math.log10(hi), 400)
    bw = chart.peaks["bandwidth_Bps"]
    # the diagonal is named in the legend: a label on the plot fell on the points beside it
    ax.plot([], [], color="#3c3c3c", linewidth=1.8, label=f"diagonal: {bw / 1e9:,.0f} GB/s measured copy")
    for op in chart.ops:
        ax.plot(xs, np.minimum(chart.peaks["rates"][op], xs * bw) / GIGA, color=ROOF_COLOURS.get(op, "black"),
                linewidth=1.8, label=f"roof of {op}: {chart.peaks['rates'][op] / GIGA:,.0f} G/s")
    series = sorted({p.series for p in chart.points})
    cmap = [f"C{i}" for i in range(10)]
    for i, name in enumerate(series):
        pts = [p for p in chart.points if p.series == name and not p.point.above]
        if pts:
            ax.scatter([p.point.intensity for p in pts], [p.point.rate / GIGA for p in pts], s=36,
                       color=cmap[i % len(cmap)], edgecolors="white", linewidths=0.6, zorder=3, label=name)
    above = chart.above
    if above:
        ax.scatter([p.point.intensity for p in above], [p.point.rate / GIGA for p in above], s=60, marker="s",
                   facecolors="none", edgecolors=L2_COLOUR, linewidths=1.6, zorder=4,
                   label="above the roof: L2-resident input")
        for p in above:
            ax.annotate("L2", (p.point.intensity, p.point.rate / GIGA), xytext=(5, 4), textcoords="offset points",
                        color=L2_COLOUR, fontsize=8, fontweight="bold")
    ax.set_xlabel("arithmetic intensity (operations per DRAM byte, the work model's)")
    ax.set_ylabel("achieved rate (G operations/s)")
    ax.grid(True, which="major", alpha=0.25)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8.5, frameon=False)
    when = (chart.peaks or {}).get("measured", "")[:10]
    fig.suptitle(title or f"Roofline on {chart.device}", fontsize=12.5, fontweight="bold")
    ax.set_title(f"measured copy bandwidth {bw / 1e9:,.0f} GB/s and peak rates (graph-kernels device-peaks"
                 f"{', ' + when if when else ''}); {len(chart.points)} runs, {len(above)} above the roof",
                 fontsize=9, color="#303030")
    return fig


def save_roofline(chart: RooflineChart, path, title: str = "") -> None:
    """Write the chart as SVG or PNG (by the suffix)."""
    fmt = "svg" if str(path).lower().endswith(".svg") else "png"
    with rc_context(STYLE):
        fig = roofline_figure(chart, title)
        (FigureCanvasAgg if fmt == "png" else FigureCanvasSVG)(fig)
        metadata = {"Software": "gpu-graph-explorer"} if fmt == "png" else {"Date": None,
                                                                             "Creator": "gpu-graph-explorer"}
        fig.savefig(path, format=fmt, dpi=150, metadata=metadata)
