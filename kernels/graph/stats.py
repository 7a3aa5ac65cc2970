"""Size, degree and structure statistics of a graph (for ``info`` and the GUI)."""

from __future__ import annotations

import numpy as np
import scipy.sparse.csgraph as csgraph

from kernels.graph.cleanup import duplicate_mask
from kernels.graph.csr import CSRGraph

DEFAULT_PAGE_SIZE = 1024


def slotted_memory_estimate(g: CSRGraph, page_size: int = DEFAULT_PAGE_SIZE) -> int:
    """Bytes the graph would take as slotted pages (int32 words, plus weights and index).

    Each vertex costs a degree word and a two-word slot, each stored entry one word, each
    page a three-word header and a three-word index entry. Pages are assumed filled to the
    bulk-build fill (about 90 %); the exact figure comes from building the structure."""
    words = g.nnz + 3 * g.n_rows
    usable = max(page_size - 3, 1) * 0.9
    pages = max(1, int(np.ceil(words / usable)))
    total = pages * page_size * 4 + pages * 3 * 4
    if g.weights is not None:
        total += pages * page_size * 4
    return int(total)


def graph_info(g: CSRGraph, *, page_size: int = DEFAULT_PAGE_SIZE) -> dict:
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


def degree_histogram(g: CSRGraph, bins: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Counts and bin edges of the degree distribution (log-spaced for skewed graphs)."""
    deg = g.degrees()
    if len(deg) == 0:
        return np.zeros(0), np.zeros(1)
    top = max(int(deg.max()), 1)
    if top > 100:
        edges = np.unique(np.concatenate([[0], np.geomspace(1, top + 1, bins)]).astype(np.int64))
    else:
        edges = np.arange(0, top + 2)
    counts, edges = np.histogram(deg, bins=edges)
    return counts, edges
