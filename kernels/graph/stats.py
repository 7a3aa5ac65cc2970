"""Size, degree and structure statistics of a graph (for ``info`` and the GUI)."""

from __future__ import annotations

import numpy as np
import scipy.sparse.csgraph as csgraph

from kernels.graph.cleanup import duplicate_mask
from kernels.graph.csr import CSRGraph

# the one default page size (kernels.graph.page_size), here too for the callers of the statistics
from kernels.graph.page_size import DEFAULT_PAGE_SIZE, page_size_for  # noqa: F401


def slotted_memory_estimate(g: CSRGraph, page_size: int = DEFAULT_PAGE_SIZE) -> int:
    """Bytes the graph takes as slotted pages: exactly what ``SlottedGraph.from_csr`` builds
    (default fill, float64 weights): int32 pages, the weight pool, a 4-word index entry per page.

    The page count comes from the builder's own packing pass, which costs one sweep over the
    degrees and allocates nothing. A rectangular matrix counts as a directed graph over
    max(rows, cols) vertices."""
    from kernels.graph.slotted.build import count_pages, square_graph_form
    from kernels.graph.slotted.graph import DEFAULT_FILL

    if page_size < 8:                       # no room for a vertex and an entry: no layout
        raise ValueError(f"page size {page_size} is too small for slotted pages")
    pages, _ = count_pages(square_graph_form(g).indptr, int(page_size), DEFAULT_FILL)
    per_page = page_size * (4 + (8 if g.weights is not None else 0))
    return int(pages * per_page + pages * 4 * 4)


def graph_info(g: CSRGraph, *, page_size: int | None = None) -> dict:
    """``page_size``: for the slotted-page estimate (default: :func:`page_size_for` the graph)."""
    page_size = page_size or page_size_for(g)
    """Everything ``graph-kernels info`` reports, as plain JSON-able values."""
    deg = g.degrees()
    info = {
        "name": g.name,
        "source": g.source,
        "fingerprint": g.fingerprint,
        "rows": g.n_rows,
        "cols": g.n_cols,
        "square": g.is_square,
        "directed": g.directed,
        "weighted": g.weighted,
        "vertices": g.n_rows if g.is_square else None,
        "edges": g.num_edges,
        "stored_entries": g.nnz,
        "self_loops": g.num_self_loops,
        "duplicate_entries": int(np.count_nonzero(duplicate_mask(g))),
        "degree": {
            "min": int(deg.min()) if len(deg) else 0,
            "mean": float(deg.mean()) if len(deg) else 0.0,
            "max": int(deg.max()) if len(deg) else 0,
        },
        "isolated_vertices": None,
        "components": None,
        "memory": {
            "csr_bytes": g.memory_bytes(),
            "slotted_bytes_estimate": slotted_memory_estimate(g, page_size),
            "slotted_page_size": page_size,
        },
        "notices": list(g.notices),
    }
    if g.is_square and g.n_rows:
        touched = np.zeros(g.n_rows, dtype=bool)
        touched[deg > 0] = True
        touched[g.indices] = True
        info["isolated_vertices"] = int(g.n_rows - np.count_nonzero(touched))
        n_comp, _ = csgraph.connected_components(g.to_scipy(), directed=True, connection="weak")
        info["components"] = int(n_comp)
    return info

