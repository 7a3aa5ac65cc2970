"""``graph-kernels pages FILE``: the graph as slotted pages (page count, fill, large lists,
memory, build time); ``--page-sizes 256,512,1024`` compares page sizes (the thesis' fig. 5.1)."""

from __future__ import annotations

import sys
import time

from kernels.cli.common import add_cleanup_flags, apply_cleanup, print_json, read_shown
from kernels.errors import ParameterError
from kernels.graph.page_size import PAGE_SIZE_DEFAULT_TEXT
from kernels.memory import format_bytes


def register(sub) -> None:
    p = sub.add_parser("pages", help="build a graph as slotted pages and describe the layout")
    p.add_argument("file", help="graph file (any supported format)")
    p.add_argument("--format", help="force the input format instead of sniffing it")
    p.add_argument("--page-size", type=int, default=None,
                   help=f"words per page (default: {PAGE_SIZE_DEFAULT_TEXT}, as info and the GUI choose)")
    p.add_argument("--page-sizes", help="comma-separated page sizes to compare, e.g. 256,512,1024,2048")
    p.add_argument("--fill", type=float, default=None,
                   help="share of each page the bulk build fills (default 0.9; 1.0 packs tightly)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_cleanup_flags(p)
    p.set_defaults(func=run)


def _page_sizes(args) -> list[int]:
    from kernels.graph.slotted.layout import PAGE_SIZE_RULE, valid_page_size

    if args.page_sizes is None:
        sizes = [] if args.page_size is None else [args.page_size]     # none: chosen by the graph's size
    else:
        try:
            sizes = [int(x) for x in args.page_sizes.split(",") if x.strip()]
        except ValueError:
            raise ParameterError("--page-sizes", args.page_sizes, "comma-separated integers") from None
    for s in sizes:
        if not valid_page_size(s):
            raise ParameterError("page size", s, PAGE_SIZE_RULE)
    if not sizes and args.page_sizes is not None:
        raise ParameterError("--page-sizes", args.page_sizes, "at least one page size")
    return sizes


def _build(g, page_size: int, fill: float):
    from kernels.graph.slotted import SlottedGraph

    t0 = time.perf_counter()
    s = SlottedGraph.from_csr(g, page_size=page_size, fill=fill)
    return s, time.perf_counter() - t0



def run(args) -> int:
    from kernels.graph.csr import CSRGraph
    from kernels.graph.io import read_graph
    from kernels.graph.page_size import page_size_for
    from kernels.graph.slotted import DEFAULT_FILL, SlottedGraph, square_graph_form, summary

    sizes = _page_sizes(args)
    fill = DEFAULT_FILL if args.fill is None else args.fill
    if not 0.0 < fill <= 1.0:
        raise ParameterError("--fill", fill, "0 < fill <= 1")
    g = read_shown(args, args.file, lambda progress: read_graph(args.file, format=args.format, progress=progress))
    g = apply_cleanup(square_graph_form(g), args)
    sizes = sizes or [page_size_for(g)]
    # compile (or load from numba's cache) before timing, so build times are build times
    SlottedGraph.from_csr(CSRGraph.from_edges(2, [0], [1], directed=True), page_size=sizes[0])

    rows = []
    for size in sizes:
        s, seconds = _build(g, size, fill)
        info = summary(s)
        info["build_seconds"] = seconds
        info["fill_target"] = fill
        rows.append(info)
    head = {"name": g.name, "source": g.source, "directed": g.directed, "weighted": g.weighted,
            "notices": list(g.notices)}
    if args.json:
        print_json({**head, "layouts": rows} if args.page_sizes else {**head, **rows[0]})
        return 0
    for notice in g.notices:
        print(f"note: {notice}", file=sys.stderr)
    first = rows[0]
    print(f"{g.name}  ({first['vertices']:,} vertices, {first['edges']:,} edges, "
          f"{'directed' if g.directed else 'undirected'}{', weighted' if g.weighted else ''})")
    if args.page_sizes:
        _print_table(rows)
    else:
        _print_one(first)
    return 0


def _print_one(info: dict) -> None:
    f, large, mem = info["fill"], info["large_lists"], info["memory"]
    print(f"  page size       {info['page_size']} words")
    print(f"  pages           {info['pages']:,}")
    print(f"  fill            min {f['min']:.0%}, mean {f['mean']:.0%}, median {f['median']:.0%}, "
          f"max {f['max']:.0%} (bulk build target {info['fill_target']:.0%} of the usable words)")
    hist = f["histogram"]
    bars = "  ".join(f"{int(lo * 100)}-{int(hi * 100)}%: {c}"
                     for lo, hi, c in zip(hist["edges"], hist["edges"][1:], hist["counts"], strict=False) if c)
    print(f"  fill histogram  {bars or '-'}")
    print(f"  large lists     {large['count']:,} using {large['pages']:,} pages"
          f" (longest spans {large['largest_pages']} pages)")
    ratio = f" ({mem['ratio_to_csr']:.2f} x CSR)" if mem["ratio_to_csr"] else ""
    print(f"  memory          {format_bytes(mem['slotted_bytes'])}{ratio}, CSR {format_bytes(mem['csr_bytes'])}")
    print(f"  build time      {info['build_seconds'] * 1e3:.1f} ms")


def _print_table(rows: list[dict]) -> None:
    print(f"  {'page size':>9}  {'pages':>9}  {'mean fill':>9}  {'large lists':>11}  {'memory':>10}  "
          f"{'x CSR':>6}  {'build ms':>9}")
    for r in rows:
        mem = r["memory"]
        ratio = f"{mem['ratio_to_csr']:.2f}" if mem["ratio_to_csr"] else "-"
        print(f"  {r['page_size']:>9}  {r['pages']:>9,}  {r['fill']['mean']:>9.0%}  "
              f"{r['large_lists']['count']:>11,}  {format_bytes(mem['slotted_bytes']):>10}  {ratio:>6}  "
              f"{r['build_seconds'] * 1e3:>9.1f}")
