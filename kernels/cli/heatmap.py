"""``graph-kernels heatmap SWEEP.json [--metric time|pct-bandwidth|pct-bound|energy] [--out FILE.png|.svg]
[--csv FILE.csv]``."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("heatmap", help="the sweep's sensitivity table: text, CSV, SVG or PNG")
    p.add_argument("sweep", help="a sweep file written by 'graph-kernels sweep'")
    p.add_argument("--rows", help="parameter along the rows (default: the first swept one)")
    p.add_argument("--cols", help="parameter along the columns (default: the second)")
    p.add_argument("--out", metavar="FILE.png|FILE.svg", help="write an image")
    p.add_argument("--csv", metavar="FILE.csv", help="write the table as CSV")
    p.add_argument("--metric", default="time", choices=("time", "pct-bandwidth", "pct-bound", "energy"),
                   help="what the cells show: median time (default); %% of the measured copy bandwidth or of the "
                        "roofline bound (the device's peaks from 'graph-kernels device-peaks'; a cell above the "
                        "roofline reads L2); energy per launch (a sweep made with --energy)")
    p.set_defaults(func=run)


def run(args) -> int:
    from kernels.errors import GraphKernelsError
    from kernels.results import load_sweep
    from kernels.results.heatmap import heatmap_table, to_text, write_csv

    sweep = load_sweep(args.sweep)          # checked against the sweep schema and the grid bounds
    table = heatmap_table(sweep, args.rows, args.cols, args.metric)
    print(to_text(table))
    if args.out and not args.out.lower().endswith((".svg", ".png")):
        raise GraphKernelsError(f"--out {args.out}: use a .png or .svg file name")
    try:
        if args.csv:
            write_csv(table, args.csv)
        if args.out:
            from kernels.results.heatmap_figure import write_png, write_svg  # matplotlib: only for a picture

            (write_svg if args.out.lower().endswith(".svg") else write_png)(table, args.out)
    except OSError as exc:
        raise GraphKernelsError(f"cannot write {exc.filename or 'the output'}: {exc.strerror or exc}") from None
    return 0
