"""One tuning, two GPUs as a picture (``graph-kernels compare A B --svg/--png``).

The two sweeps' heatmaps side by side on **one** colour scale (the smallest and largest median
time of both, in one unit, one colour bar), drawn by the heatmap picture's own code
(:func:`kernels.results.heatmap_figure.draw_table`: cells, labels, invalid and failed cells, the
best cell framed in red with a star, the cells tied with it dashed), with the other GPU's best
cell marked on each (an orange inner frame and a diamond), each table titled by its device, its
best time and what the other GPU's best costs it, and the comparison's sentence
(:meth:`kernels.results.portability.Portability.sentence`) as the caption. Like the heatmap
picture it is drawn with matplotlib's non-GUI canvases, so a GPU server draws it too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from kernels.errors import GraphKernelsError
from kernels.figure_style import STYLE
from kernels.results.heatmap import HeatmapTable, cell_of, time_unit
from kernels.results.heatmap_figure import PNG_DPI, colour_bar, draw_table, value_range, wrap_to_width
from kernels.results.portability import Portability

OTHER = "#ff8c00"                   # the other GPU's best: orange, apart from the red of this GPU's own
OTHER_MARK = "◆"


def shared_unit(a: HeatmapTable, b: HeatmapTable) -> tuple[str, float]:
    """One time unit for both tables: the one the slower table's largest time reads best in."""
    tops = [float(np.nanmax(t.times)) if np.isfinite(t.times).any() else 0.0 for t in (a, b)]
    return time_unit(a if tops[0] >= tops[1] else b)


def _params(p: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in p.items())


def comparison_figure(a: HeatmapTable, b: HeatmapTable, p: Portability) -> Figure:
    """Draw ``a`` (``p.device_a``'s sweep) and ``b`` side by side on one colour scale."""
    if a.shape != b.shape or a.row_param != b.row_param or a.col_param != b.col_param:
        raise GraphKernelsError("the two tables are not of one grid: they cannot share a picture")
    if a.metric != "time" or b.metric != "time":
        raise GraphKernelsError("a comparison is drawn by median time")
    n_rows, n_cols = a.shape
    unit, scale = shared_unit(a, b)
    values = [a.times * scale, b.times * scale]
    lo, hi = value_range(np.concatenate([v.ravel() for v in values]))
    cell_w = 0.62 if n_cols > 1 else 1.2
    cell_h = 0.40 if n_rows <= 14 else 0.30
    width = max(11.0, 2.2 + 2 * (1.2 + n_cols * cell_w))
    height = max(5.0, 3.4 + n_rows * cell_h)
    fig = Figure(figsize=(width, height), layout="constrained")
    fig.patch.set_facecolor("white")
    axes = fig.subplots(1, 2)
    image = None
    for ax, t, v, own_best, other_best, own_dev, other_dev, own_s, loss in (
            (axes[0], a, values[0], p.best_a, p.best_b, p.device_a, p.device_b, p.best_a_s, p.loss_b_on_a),
            (axes[1], b, values[1], p.best_b, p.best_a, p.device_b, p.device_a, p.best_b_s, p.loss_a_on_b)):
        image = draw_table(ax, t, v, lo, hi)
        where = cell_of(t, other_best)
        if where is not None:
            r, c = where
            ax.add_patch(Rectangle((c + 0.16, r + 0.17), 0.68, 0.66, fill=False, edgecolor=OTHER, linewidth=2.0,
                                   linestyle=(0, (1.5, 1.2)), zorder=6))
            ax.text(c + 0.9, r + 0.2, OTHER_MARK, ha="center", va="center", fontsize=6.5, color=OTHER, zorder=7)
        ax.set_title(f"{own_dev}\nbest {own_s * scale:.4g} {unit} ({_params(own_best)}); {other_dev}'s best "
                     f"{OTHER_MARK} runs here at {loss:.3f}x", fontsize=9.0, color="#202020", pad=8)
    colour_bar(fig, image, list(axes), f"median kernel time ({unit}, log scale), one scale for both", lo, hi, False,
               n_rows, bool(np.isfinite(np.concatenate([v.ravel() for v in values])).any()))

    timing = a.timing_words() if a.timing_words() == b.timing_words() else \
        f"{a.timing_words() or 'timing unknown'} / {b.timing_words() or 'timing unknown'}"
    legend = (f"median kernel time per cell ({unit}), {timing}; ★ red frame: this GPU's best, dashed: tied with it "
              f"(95 %); {OTHER_MARK} orange frame: the other GPU's best; hatched: invalid; red: failed or wrong")
    if a.reduced_over:
        legend += f"; each cell: the best over {', '.join(a.reduced_over)}"
    renderer = FigureCanvasAgg(fig).get_renderer()
    room = fig.bbox.width * 0.96
    title = a.title.replace(f" ({a.title.rsplit('(', 1)[-1]}", "") if "(" in a.title else a.title
    wrap_to_width(fig.suptitle("", fontsize=12.5, fontweight="bold"), [f"One tuning, two GPUs: {title}"], renderer,
                  room)
    # the caption: the comparison's sentence, how to read the marks, where, how and when each sweep ran
    where = [f"{side}: {t.subtitle}" for side, t in (("left", a), ("right", b)) if t.subtitle]
    wrap_to_width(fig.supxlabel("", fontsize=9.0, color="#202020"), [p.sentence(), legend, *where], renderer, room)
    return fig


def save_comparison(a: HeatmapTable, b: HeatmapTable, p: Portability, path, fmt: str | None = None,
                    dpi: int = PNG_DPI) -> None:
    """Write the comparison's picture as ``fmt`` (``png`` or ``svg``; by default the suffix's), a PNG
    at ``dpi`` (the docs' copy is drawn at 100)."""
    fmt = fmt or Path(path).suffix.lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise GraphKernelsError(f"{path}: pictures are written as png or svg, not {fmt!r}")
    with rc_context(STYLE):
        fig = comparison_figure(a, b, p)
        (FigureCanvasAgg if fmt == "png" else FigureCanvasSVG)(fig)     # becomes fig.canvas
        metadata = {"Software": "gpu-graph-explorer"} if fmt == "png" else {"Date": None,
                                                                             "Creator": "gpu-graph-explorer"}
        try:
            fig.savefig(path, format=fmt, dpi=dpi, metadata=metadata)
        except OSError as exc:
            raise GraphKernelsError(f"{Path(path)}: cannot write the picture: {exc.strerror or exc}") from None
