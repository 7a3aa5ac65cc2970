"""Dynamic graphs on slotted pages (the thesis' "AE" layout) and their introspection.

Modules: ``layout`` (word positions, index rows, rule-case names), ``engine`` (numba-compiled
edits on the page pool), ``build`` (bulk CSR <-> pages), ``graph`` (:class:`SlottedGraph`, the
public API and its policies), ``inspect`` (page statistics, page layout, invariants),
``delta`` (page deltas: exact undo/redo, validated), ``snapshot`` (complete state as arrays,
validated). The
device mirror lives in :mod:`kernels.graph.device`.
"""

from kernels.graph.slotted.build import square_graph_form
from kernels.graph.slotted.delta import PageDelta, PageDeltaError
from kernels.graph.slotted.graph import (
    DEFAULT_FILL,
    DEFAULT_PAGE_SIZE,
    PageIndex,
    RemovedVertex,
    SlottedGraph,
)
from kernels.graph.slotted.inspect import LayoutInvariantError, summary
from kernels.graph.slotted.layout import CASE_NAMES
from kernels.graph.slotted.snapshot import SnapshotError

__all__ = [
    "CASE_NAMES",
    "DEFAULT_FILL",
    "DEFAULT_PAGE_SIZE",
    "LayoutInvariantError",
    "PageDelta",
    "PageDeltaError",
    "PageIndex",
    "RemovedVertex",
    "SlottedGraph",
    "SnapshotError",
    "square_graph_form",
    "summary",
]
