"""``graph-kernels convert IN OUT``: change format, with explicit clean-up steps."""

from __future__ import annotations

import sys

from kernels.cli.common import add_cleanup_flags, apply_cleanup, read_shown
from kernels.cli.read_options import add_read_options, read_options


def register(sub) -> None:
    p = sub.add_parser("convert", help="convert a graph file to another format, optionally cleaning it")
    p.add_argument("input")
    p.add_argument("output", help="output file; the format follows the extension (.mtx, .txt, .npz, ...)")
    p.add_argument("--format", help="force the input format")
    add_read_options(p)
    p.add_argument("--to", dest="out_format", help="force the output format")
    add_cleanup_flags(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from kernels.graph.io import read_graph, write_graph

    g = read_shown(args, args.input, lambda progress: read_graph(args.input, format=args.format, progress=progress,
                                                                 **read_options(args)))
    before = len(g.notices)
    g = apply_cleanup(g, args)
    write_graph(g, args.output, format=args.out_format)
    for notice in g.notices[before:]:
        print(notice, file=sys.stderr)
    print(f"wrote {args.output}: {g.n_rows:,} vertices, {g.num_edges:,} edges", file=sys.stderr)
    return 0
