"""``graph-kernels compare A.json [B.json]``: one tuning, two GPUs (:mod:`kernels.results.portability`).

Two sweeps of one grid and input made on different GPUs, or one ``--mixed-gpus`` cluster sweep
(split by the GPU kind that ran each cell): both tables on one scale, and the portability loss
of each GPU's best cell on the other."""

from __future__ import annotations

from kernels.cli.common import print_json


def register(sub) -> None:
    p = sub.add_parser("compare", help="how a sweep's best cell carries to another GPU: two sweeps of one grid "
                       "(or one mixed-GPU cluster sweep), the portability loss both ways")
    p.add_argument("sweeps", nargs="+", metavar="SWEEP.json", help="two sweep files, or one with cells of two GPUs")
    p.add_argument("--json", action="store_true", help="the comparison as JSON")
    p.add_argument("--svg", metavar="OUT.svg", help="also draw both heatmaps side by side on one colour scale, "
                   "each GPU's best and the other's marked, the comparison as caption")
    p.add_argument("--png", metavar="OUT.png", help="the same picture as a PNG")
    p.add_argument("--dpi", type=int, default=150, help="the PNG's resolution (default 150; the docs' copy: 100)")
    p.add_argument("--rows", help="the swept parameter along the tables' rows (default: the first)")
    p.add_argument("--cols", help="the swept parameter along the columns (default: the second)")
    p.set_defaults(func=run)


def run(args) -> int:
    from kernels.errors import GraphKernelsError
    from kernels.results import load_sweep
    from kernels.results.heatmap import heatmap_table, to_text
    from kernels.results.portability import compare, pair_of

    if len(args.sweeps) > 2:
        raise GraphKernelsError(f"compare takes two sweeps (or one whose cells ran on two kinds of GPU); "
                                f"got {len(args.sweeps)}")
    if not 30 <= args.dpi <= 600:
        raise GraphKernelsError(f"--dpi {args.dpi}: use 30 to 600")
    sweeps = pair_of([load_sweep(path) for path in args.sweeps], list(args.sweeps))
    result = compare(*sweeps)
    tables = [heatmap_table(sweep, args.rows, args.cols) for sweep in sweeps]
    for out, fmt in ((args.svg, "svg"), (args.png, "png")):
        if out:
            from kernels.results.compare_figure import save_comparison

            save_comparison(tables[0], tables[1], result, out, fmt, dpi=args.dpi)
    if args.json:
        print_json(result.to_json())
        return 0
    for sweep, table in zip(sweeps, tables, strict=True):
        print(f"on {sweep.get('device')}:")
        print(to_text(table))
        print()
    print(result.sentence())
    for out in (args.svg, args.png):
        if out:
            print(f"picture written to {out}")
    return 0
