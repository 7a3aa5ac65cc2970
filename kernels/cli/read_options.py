"""The reading options of ``read_graph`` as flags, for every command that reads a graph file.

Kept free of heavy imports: building the parser must not load NumPy or SciPy."""

from __future__ import annotations


def add_read_options(parser) -> None:
    """``--format``-independent options for files that do not declare them (edge lists, CSV)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--directed", dest="directed", action="store_const", const=True, default=None,
                       help="read an edge list / CSV as directed (default: undirected unless its header "
                            "says 'Directed')")
    group.add_argument("--undirected", dest="directed", action="store_const", const=False,
                       help="read an edge list / CSV as undirected even if its header says 'Directed'")
    parser.add_argument("--base", type=int, choices=(0, 1), default=None,
                        help="vertex ids of an edge list / CSV start at 0 or 1 (default: detected)")
    parser.add_argument("--relabel", action="store_const", const=True, default=None,
                        help="number the distinct vertex ids of an edge list / CSV 0..n-1 (sparse ids)")


def read_options(args) -> dict:
    """The keyword arguments for :func:`read_graph` from parsed arguments."""
    return {"directed": getattr(args, "directed", None), "base": getattr(args, "base", None),
            "relabel": getattr(args, "relabel", None)}
