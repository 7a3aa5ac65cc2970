"""Render result pictures offscreen, without opening a window.

``python -m explorer.render heatmap SWEEP.json OUT.png [--rows NAME] [--cols NAME]`` draws the
sweep's heatmap with the GUI's own widget and writes it (PNG, or SVG by the suffix);
``python -m explorer.render timing RECORDS.jsonl OUT.png [--baseline VARIANT]`` draws the
timing chart of run records (``--metric`` for the heatmap's and the chart's percentages or energy);
``python -m explorer.render roofline RESULTS OUT.png`` the roofline of run records or a sweep's cells;
``python -m explorer.render compare A.json [B.json] OUT.png`` the Compare Sweeps window on two sweeps
(or one mixed-GPU sweep).
The command line draws its own pictures without Qt (``kernels.results.heatmap_figure``,
matplotlib); this module draws the GUI's widgets, for the docs and the tests that compare them.
Exit status 0 when the picture was written, 1 on an error (said in one line on stderr).
"""

from __future__ import annotations

import argparse
import os
import sys


def _parse(argv):
    p = argparse.ArgumentParser(prog="python -m explorer.render", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="what", required=True)
    h = sub.add_parser("heatmap", help="a sweep's heatmap")
    h.add_argument("sweep", help="a sweep JSON written by graph-kernels sweep or the GUI")
    h.add_argument("out", help="OUT.png or OUT.svg")
    h.add_argument("--rows", help="the swept parameter along the rows (default: the first)")
    h.add_argument("--cols", help="the swept parameter along the columns (default: the second)")
    h.add_argument("--size", default="1200x800", metavar="WxH", help="picture size in pixels (default 1200x800)")
    h.add_argument("--metric", default="time", choices=("time", "pct-bandwidth", "pct-bound", "energy"),
                   help="what the cells show (docs/roofline.md)")
    t = sub.add_parser("timing", help="a timing chart of run records")
    t.add_argument("records", help="run records (.jsonl) written by graph-kernels run --record or the GUI")
    t.add_argument("out", help="OUT.png or OUT.svg")
    t.add_argument("--baseline", help="variant to compute speedups against")
    t.add_argument("--linear", action="store_true", help="a linear time axis (default: logarithmic)")
    t.add_argument("--size", default="1200x800", metavar="WxH", help="picture size in pixels (default 1200x800)")
    t.add_argument("--metric", default="time", choices=("time", "pct-bandwidth", "pct-bound"),
                   help="what the bars show (docs/roofline.md)")
    r = sub.add_parser("roofline", help="GPU runs (run records, or a sweep's cells) on their device's roofline")
    r.add_argument("results", help="run records (.jsonl) or a sweep (.json)")
    r.add_argument("out", help="OUT.png or OUT.svg")
    r.add_argument("--size", default="1200x800", metavar="WxH", help="picture size in pixels (default 1200x800)")
    c = sub.add_parser("compare", help="the Compare Sweeps window: two sweeps (or one mixed-GPU sweep) side by side")
    c.add_argument("files", nargs="+", metavar="FILE", help="one or two sweep JSON files, then OUT.png")
    c.add_argument("--size", default="1600x1000", metavar="WxH", help="window size in pixels (default 1600x1000)")
    return p.parse_args(argv)


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise SystemExit(f"explorer.render: --size {text!r}: expected WIDTHxHEIGHT, e.g. 900x620") from None
    return w, h


def render(args) -> None:
    from PySide6.QtWidgets import QApplication

    from explorer.plots.export import save_picture

    app = QApplication.instance() or QApplication(["explorer.render"])
    app.setStyle("Fusion")
    import pyqtgraph as pg

    pg.setConfigOptions(antialias=True, background="w", foreground="k")
    width, height = _size(args.size)
    if args.what == "compare":
        _render_compare(args.files, (width, height), app)
        return
    if args.what == "heatmap":
        from explorer.plots.heatmap_view import HeatmapView
        from kernels.results import load_sweep

        view = HeatmapView()
        view.set_sweep(load_sweep(args.sweep), args.rows, args.cols, args.metric)
    elif args.what == "roofline":
        from explorer.plots.roofline_view import RooflineView
        from kernels.results import load_sweep, read_records
        from kernels.roofline.chart import sweep_records

        view = RooflineView()
        if args.results.lower().endswith(".jsonl"):
            chart = view.set_records(read_records(args.results), "runs")
        else:
            chart = view.set_records(sweep_records(load_sweep(args.results)), "sweep cells")
        if args.out.lower().endswith(".svg") and chart.points:
            # Qt's SVG of pyqtgraph's cached scatter symbols is unreadable to librsvg and browsers: the
            # same chart drawn by matplotlib (kernels/roofline/figure.py), as the benchmarks write it
            from kernels.roofline.figure import save_roofline

            view.close()
            save_roofline(chart, args.out)
            return
    else:
        from explorer.plots.timing_chart import TimingChart
        from kernels.results import read_records

        view = TimingChart()
        view.set_log_scale(not args.linear)
        view.set_records(read_records(args.records), baseline=args.baseline)
        if args.metric != "time":
            view.set_metric(args.metric)
    view.resize(width, height)
    view.show()
    app.processEvents()
    save_picture(view, args.out)
    view.close()


def _render_compare(files: list[str], size: tuple[int, int], app) -> None:
    """The Compare Sweeps window on ``files[:-1]``, grabbed into ``files[-1]`` (a PNG of the window
    as it appears; a refused pair shows its sentence, and is an error here)."""
    from explorer.window.compare_window import CompareWindow
    from kernels.errors import GraphKernelsError

    if len(files) not in (2, 3) or not files[-1].lower().endswith(".png"):
        raise GraphKernelsError("compare takes one or two sweep files, then OUT.png")
    window = CompareWindow()
    window.resize(*size)
    window.show()
    window.open_files(files[:-1])
    app.processEvents()
    try:
        if not window.grab().save(files[-1]):
            raise GraphKernelsError(f"{files[-1]}: the picture could not be written")
        if window.view.portability is None:
            raise GraphKernelsError(f"not compared (the picture shows why): {window.view.refusal}")
    finally:
        window.close()
        app.processEvents()


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from kernels.errors import GraphKernelsError

    try:
        render(args)
    except (GraphKernelsError, OSError) as exc:
        print(f"explorer.render: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
