"""The default page size of slotted pages: one rule for ``graph-kernels info``, ``pages`` and
``dynamic`` and for the GUI (they disagreed: 1024 words in ``pages`` and ``dynamic``, 256 in
``info`` and the GUI for the same small graph).

The thesis found 256 words best for small graphs, 512 for mid-size ones and ~1280 for large ones
(1024 here: page sizes are powers of two). Light on purpose: the command line's help reads
:data:`PAGE_SIZE_DEFAULT_TEXT` before anything heavy is imported.
"""

from __future__ import annotations

DEFAULT_PAGE_SIZE = 1024            # a structure made with no graph to judge by (SlottedGraph())
SMALL_GRAPH_ENTRIES = 200_000       # stored entries below which a graph is small
LARGE_GRAPH_ENTRIES = 20_000_000
PAGE_SIZE_DEFAULT_TEXT = "by graph size: 256 words below 200,000 stored entries, 512 below 20 M, else 1024"


def page_size_for(g) -> int:
    """The default page size for a graph (anything with ``nnz``, its stored entries)."""
    if g.nnz < SMALL_GRAPH_ENTRIES:
        return 256
    if g.nnz < LARGE_GRAPH_ENTRIES:
        return 512
    return 1024
