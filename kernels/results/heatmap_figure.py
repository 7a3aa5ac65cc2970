"""The sensitivity table as a picture (PNG or SVG), drawn with matplotlib's non-GUI canvases.

One drawing serves both formats, so the SVG and the PNG of a sweep look the same. matplotlib is
used through ``Figure`` and the Agg / SVG canvases directly, never through ``pyplot``: nothing
here selects a backend or can open a window, and a GPU server without any GUI toolkit draws the
same pictures as a desktop. SVG text is written as paths (``svg.fonttype = "path"``) and
matplotlib writes no ``vector-effect`` attributes, so librsvg, browsers and Qt render the file
alike (Qt's own SVG export does not: see ``docs/architecture.md``).

What the picture shows (the GUI's heatmap shows the same): cells coloured by median time on a
log scale with a colour bar in the table's time unit; the parameter values as categorical ticks
(columns on top, the first row on top, as in the printed table); invalid cells hatched and
labelled "invalid"; failed or wrong cells tinted red and labelled; the best cell outlined in
solid red with a star; the cells that cannot be told apart from it (the statistical rule of
:mod:`kernels.results.noise`, 95 %) enclosed by a dashed red outline; the title, and a subtitle
with the input, device and date and a legend of the marks.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.collections import LineCollection
from matplotlib.colors import LogNorm, Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from kernels.errors import GraphKernelsError
from kernels.figure_style import STYLE
from kernels.results.heatmap import HeatmapTable, column_labels, metric_words, shown_unit

PNG_DPI = 150                       # pictures for papers and slides: sharp at twice screen size
MAX_TEXT_CELLS = 400                # beyond this the cells carry colours only (as in the GUI)
RED = "#dc0000"
FAILED_FILL = "#fbe3e3"
INVALID_FILL = "#f2f2f2"
L2_FILL = "#dfe8fb"                 # above the roofline: the input stayed in L2
GRID = "white"


def _cell_size(n_rows: int, n_cols: int) -> tuple[float, float]:
    """Inches per cell: room for a value and a star in small tables, colours only in big ones."""
    if n_rows * n_cols > MAX_TEXT_CELLS:
        return min(0.9, 11.0 / n_cols), min(0.45, 7.0 / n_rows)
    return (0.9 if n_cols <= 12 else 0.7), (0.45 if n_rows <= 14 else 0.34)


def _color_ticks(lo: float, hi: float) -> list[float]:
    """Five ticks spread evenly on the log scale, at 2 significant digits (plain numbers read
    better than 10^x labels across the factor of 2-100 a sweep usually spans). Each tick sits at
    the value it names; the end ones are rounded inwards so that they stay on the bar."""
    ticks = []
    for i, v in enumerate(np.geomspace(lo, hi, 5)):
        step = 10.0 ** (math.floor(math.log10(v)) - 1)
        rounding = math.ceil if i == 0 else math.floor if i == 4 else round
        r = float(f"{rounding(v / step) * step:.2g}")
        if lo <= r <= hi and r not in ticks:
            ticks.append(r)
    return ticks


def _flat_region_edges(mask: np.ndarray) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """The cell edges between the region and the rest: its outline, holes and all."""
    padded = np.pad(mask, 1)
    edges = []
    for r, c in zip(*np.nonzero(mask), strict=True):
        pr, pc = r + 1, c + 1
        if not padded[pr - 1, pc]:
            edges.append(((c, r), (c + 1, r)))
        if not padded[pr + 1, pc]:
            edges.append(((c, r + 1), (c + 1, r + 1)))
        if not padded[pr, pc - 1]:
            edges.append(((c, r), (c, r + 1)))
        if not padded[pr, pc + 1]:
            edges.append(((c + 1, r), (c + 1, r + 1)))
    return edges


def value_range(values: np.ndarray, percent: bool = False) -> tuple[float, float]:
    """The colour scale's ends for ``values`` (NaN: no value): 0-100 for percentages, else the
    smallest and largest value (a range around a single one). Side-by-side tables share one range:
    pass their values together."""
    finite = values[np.isfinite(values)]
    if percent:                                  # a fraction of a limit: 0 to 100 %, linear
        return 0.0, 100.0
    if not finite.size:
        return 1.0, 10.0
    lo, hi = float(finite.min()), float(finite.max())
    if hi <= lo * 1.0001:                        # one time (or one cell): a range around it
        lo, hi = lo / 1.5, hi * 1.5
    return lo, hi


def draw_table(ax, t: HeatmapTable, values: np.ndarray, lo: float, hi: float, percent: bool = False):
    """Draw the table's cells, labels and marks (best, tied with it) into ``ax`` on the colour scale
    ``lo``-``hi`` (``values``: what the cells show, in the picture's unit); returns the cells' mesh
    (for a colour bar)."""
    n_rows, n_cols = t.shape
    # percentages: bright is good (viridis' top); times and joules: dark is good (the low end)
    norm = Normalize(lo, hi) if percent else LogNorm(lo, hi)
    # a mesh of vector quads rather than an image: an SVG keeps sharp cell edges at any zoom
    # (an image would be embedded as a bitmap that renderers smooth when they scale it); thin
    # white cell borders, because SVG renderers antialias each quad's edges and would otherwise
    # show faint seams of their own between neighbouring cells
    image = ax.pcolormesh(np.arange(n_cols + 1), np.arange(n_rows + 1), np.ma.masked_invalid(values),
                          cmap="viridis", norm=norm, shading="flat", edgecolors=GRID, linewidth=0.6)
    ax.set_xlim(0, n_cols)
    ax.set_ylim(n_rows, 0)                       # the first row on top, as in the printed table
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.set_xticks(np.arange(n_cols) + 0.5, column_labels(t))
    ax.set_yticks(np.arange(n_rows) + 0.5, [str(v) for v in t.row_values])
    ax.tick_params(length=0)
    if t.col_param:
        ax.set_xlabel(t.col_param, fontweight="bold")
    ax.set_ylabel(t.row_param, fontweight="bold")
    for spine in ax.spines.values():
        spine.set_color("#808080")

    _draw_cells(ax, t, values, lo, hi, percent)
    if t.best is not None:
        region = t.tied if t.tied is not None else t.within_5pct
        ax.add_collection(LineCollection(_flat_region_edges(region), colors=RED, linewidths=1.6,
                                         linestyles=(0, (4, 2.5)), zorder=4))
        r, c = t.best
        ax.add_patch(Rectangle((c + 0.05, r + 0.06), 0.9, 0.88, fill=False, edgecolor=RED, linewidth=2.8,
                               zorder=5))
    return image


def colour_bar(fig: Figure, image, ax, label: str, lo: float, hi: float, percent: bool, n_rows: int,
               has_values: bool = True):
    """The colour bar of ``image`` beside ``ax`` (an axes, or a list of them sharing the bar),
    ticked in the picture's unit."""
    bar = fig.colorbar(image, ax=ax, pad=0.02, fraction=0.05, aspect=max(12, 3 * n_rows))
    bar.set_label(label)
    bar.minorticks_off()
    if percent:
        bar.set_ticks([0, 25, 50, 75, 100])
    elif has_values:
        ticks = _color_ticks(lo, hi)
        bar.set_ticks(ticks, labels=[f"{v:g}" for v in ticks])
    else:
        bar.set_ticks([])
    return bar


def heatmap_figure(t: HeatmapTable) -> Figure:
    """Draw the table into a new matplotlib ``Figure`` (constrained layout: every label inside)."""
    n_rows, n_cols = t.shape
    unit, _, values = shown_unit(t)
    percent = unit == "%"
    cell_w, cell_h = _cell_size(n_rows, n_cols)
    # one parameter: one column of medians, drawn as a narrow table rather than a wide band
    width = max(7.5 if t.col_param else 6.0, 2.4 + n_cols * cell_w)
    height = max(4.5, 2.3 + n_rows * cell_h)
    fig = Figure(figsize=(width, height), layout="constrained")
    fig.patch.set_facecolor("white")
    ax = fig.add_subplot()

    lo, hi = value_range(values, percent)
    image = draw_table(ax, t, values, lo, hi, percent)
    what = "median kernel time" if t.metric == "time" else metric_words(t).split(" (")[0].split(",")[0]
    colour_bar(fig, image, ax, f"{what} (%)" if percent else f"{what} ({unit}, log scale)", lo, hi, percent,
               n_rows, bool(np.isfinite(values).any()))

    if t.metric == "time":
        legend = f"median kernel time per cell ({unit}); ★ best, dashed: tied with it (95 %); " \
                 "hatched: invalid; red: failed or wrong"
    else:
        legend = f"{metric_words(t)} per cell ({unit}); ★ fastest, dashed: tied with it in time (95 %); " \
                 "hatched: invalid; red: failed or wrong"
        if t.above is not None and t.above.any():
            legend += "; L2: above the roofline (the input stayed in L2), no percentage"
    if any(s == "missing" for row in t.status for s in row):
        legend += "; blank: not measured"
    if t.reduced_over:
        legend += f"; each cell: the best over {', '.join(t.reduced_over)}"
    renderer = FigureCanvasAgg(fig).get_renderer()
    room = fig.bbox.width * 0.96
    wrap_to_width(fig.suptitle("", fontsize=12.5, fontweight="bold"), [t.title], renderer, room)
    subtitle = ax.set_title("", fontsize=9.0, color="#303030", pad=8)
    wrap_to_width(subtitle, [t.subtitle, legend], renderer, room)
    keep_inside(fig, subtitle, [t.subtitle, legend], renderer)
    return fig


def wrap_to_width(text, paragraphs: list[str], renderer, width: float) -> None:
    """Set ``text`` to the paragraphs, each wrapped at spaces (or inside a word longer than a
    line, such as a file name) into the fewest lines that fit ``width`` pixels as drawn."""
    paragraphs = [p for p in paragraphs if p]
    chars = max(len(p) for p in paragraphs) if paragraphs else 0
    while True:
        text.set_text("\n".join(line for p in paragraphs for line in textwrap.wrap(p, max(chars, 1))))
        if chars <= 8 or text.get_window_extent(renderer).width <= width:
            return
        chars = int(chars * 0.92)


def keep_inside(fig: Figure, text, paragraphs: list[str], renderer) -> None:
    """Wrap ``text`` (centred over the axes, which the colour bar pushes left) narrower until,
    laid out, it lies inside the figure: in a narrow picture (one parameter, one column) the
    legend line ran off the left edge."""
    width = text.get_window_extent(renderer).width
    for _attempt in range(12):
        fig.draw_without_rendering()            # constrained layout places the axes and their title
        ext = text.get_window_extent(renderer)
        if ext.x0 >= fig.bbox.x0 and ext.x1 <= fig.bbox.x1:
            return
        width *= 0.9
        wrap_to_width(text, paragraphs, renderer, width)


def _draw_cells(ax, t: HeatmapTable, values: np.ndarray, lo: float, hi: float, percent: bool = False) -> None:
    n_rows, n_cols = t.shape
    texts = n_rows * n_cols <= MAX_TEXT_CELLS
    size = 8.5 if n_rows * n_cols <= 100 else 7.0
    mid = (lo + hi) / 2 if percent else math.sqrt(lo * hi)
    for r in range(n_rows):
        for c in range(n_cols):
            status, v = t.status[r][c], values[r, c]
            text, colour = "", "black"
            if status == "invalid":
                ax.add_patch(Rectangle((c, r), 1, 1, facecolor=INVALID_FILL, hatch="///", edgecolor=GRID,
                                       linewidth=0.6, zorder=2))
                text, colour = "invalid", "#606060"
            elif status in ("failed", "wrong"):
                ax.add_patch(Rectangle((c, r), 1, 1, facecolor=FAILED_FILL, edgecolor=GRID, linewidth=0.6,
                                       zorder=2))
                text, colour = ("failed" if status == "failed" else "✗ wrong"), RED
            elif status == "lost":          # infrastructure, not the kernel: no red
                ax.add_patch(Rectangle((c, r), 1, 1, facecolor=INVALID_FILL, edgecolor=GRID, linewidth=0.6,
                                       zorder=2))
                text, colour = "lost", "#606060"
            elif t.above is not None and t.above[r, c]:     # above the roofline: L2, never "over 100 %"
                ax.add_patch(Rectangle((c, r), 1, 1, facecolor=L2_FILL, hatch="..", edgecolor=GRID, linewidth=0.6,
                                       zorder=2))
                text, colour = "L2" + (" ★" if t.best == (r, c) else ""), "#1f3a93"
            elif math.isfinite(v):
                text = f"{v:.3g}" + (" ★" if t.best == (r, c) else "")
                colour = "white" if v <= mid else "black"     # the dark viridis cells
            if texts and text:
                ax.text(c + 0.5, r + 0.5, text, ha="center", va="center", fontsize=size, color=colour, zorder=6)


def save_heatmap(t: HeatmapTable, path, fmt: str) -> None:
    """Write the table's picture as ``fmt`` (``png`` or ``svg``) to ``path``."""
    with rc_context(STYLE):
        if fmt not in ("png", "svg"):
            raise GraphKernelsError(f"{path}: pictures are written as png or svg, not {fmt!r}")
        fig = heatmap_figure(t)
        # the canvas classes named here (not found by format name at run time), so that
        # PyInstaller sees which of matplotlib's backends the program uses
        (FigureCanvasAgg if fmt == "png" else FigureCanvasSVG)(fig)     # becomes fig.canvas
        # no date in an SVG: the same sweep gives the same bytes
        metadata = {"Software": "gpu-graph-explorer"} if fmt == "png" else {"Date": None,
                                                                             "Creator": "gpu-graph-explorer"}
        try:
            fig.savefig(path, format=fmt, dpi=PNG_DPI, metadata=metadata)
        except OSError as exc:
            raise GraphKernelsError(f"{Path(path)}: cannot write the picture: {exc.strerror or exc}") from None


def write_png(t: HeatmapTable, path) -> None:
    """The table as a PNG picture (matplotlib's Agg canvas: no GUI toolkit)."""
    save_heatmap(t, path, "png")


def write_svg(t: HeatmapTable, path) -> None:
    """The table as an SVG picture, the same drawing as :func:`write_png`."""
    save_heatmap(t, path, "svg")
