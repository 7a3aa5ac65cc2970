"""``graph-kernels info FILE``: sizes, degrees, components and memory of a graph file."""

from __future__ import annotations

from kernels.cli.common import print_json, read_shown
from kernels.cli.read_options import add_read_options, read_options
from kernels.graph.page_size import PAGE_SIZE_DEFAULT_TEXT
from kernels.memory import format_bytes


def register(sub) -> None:
    p = sub.add_parser("info", help="describe a graph or matrix file")
    p.add_argument("file", help="graph file (any supported format, optionally .gz/.bz2)")
    p.add_argument("--format", help="force the input format instead of sniffing it")
    add_read_options(p)
    p.add_argument("--page-size", type=int, default=None,
                   help=f"page size for the slotted-page estimate (default: {PAGE_SIZE_DEFAULT_TEXT}, as the GUI "
                        "chooses)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    from kernels.errors import ParameterError
    from kernels.graph.io import check_fits_memory, read_graph
    from kernels.graph.slotted.layout import PAGE_SIZE_RULE, valid_page_size
    from kernels.graph.stats import graph_info

    if args.page_size is not None and not valid_page_size(args.page_size):   # before reading a large file
        raise ParameterError("--page-size", args.page_size, PAGE_SIZE_RULE)
    check_fits_memory(args.file, format=args.format)  # the GUI's check: refuses before any allocation
    g = read_shown(args, args.file, lambda progress: read_graph(args.file, format=args.format, progress=progress,
                                                              **read_options(args)))
    info = graph_info(g, page_size=args.page_size)
    if args.json:
        print_json(info)
        return 0
    kind = "directed" if info["directed"] else "undirected"
    print(f"{info['name']}  ({info['source']})")
    if info["square"]:
        print(f"  vertices        {info['vertices']:,}")
        print(f"  edges           {info['edges']:,} ({kind}{', weighted' if info['weighted'] else ''})")
    else:
        print(f"  matrix          {info['rows']:,} x {info['cols']:,} (rectangular)")
    print(f"  stored entries  {info['stored_entries']:,}")
    print(f"  self-loops      {info['self_loops']:,}")
    print(f"  duplicates      {info['duplicate_entries']:,}")
    d = info["degree"]
    print(f"  degree          min {d['min']}, mean {d['mean']:.2f}, max {d['max']}")
    if info["components"] is not None:
        print(f"  components      {info['components']:,} (isolated vertices: {info['isolated_vertices']:,})")
    m = info["memory"]
    print(f"  memory          CSR {format_bytes(m['csr_bytes'])}, slotted pages "
          f"(page size {m['slotted_page_size']}) about {format_bytes(m['slotted_bytes_estimate'])}")
    print(f"  fingerprint     {info['fingerprint']}")
    for n in info["notices"]:
        print(f"  note: {n}")
    return 0
