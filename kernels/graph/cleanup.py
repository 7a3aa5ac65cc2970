"""Explicit, reported clean-up of a graph: each step says what it changed.

Every function returns a new :class:`CSRGraph` whose ``notices`` end with a sentence for the
user ("removed 25 self-loops"); a step that changes nothing says so too, so that a user who
asked for it is never left guessing.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse.csgraph as csgraph

from kernels.graph.csr import CSRGraph


def _with_notice(g: CSRGraph, notice: str) -> CSRGraph:
    return g.with_(notices=(*g.notices, notice))


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _rebuild(g: CSRGraph, keep: np.ndarray, **changes) -> CSRGraph:
    """Keep the entries where ``keep`` is true (rows unchanged)."""
    rows = g.row_of_entry()[keep]
    counts = np.bincount(rows, minlength=g.n_rows)
    indptr = np.zeros(g.n_rows + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    w = None if g.weights is None else g.weights[keep]
    fields = dict(indptr=indptr, indices=g.indices[keep], weights=w)
    fields.update(changes)
    return g.with_(**fields)


def symmetrize(g: CSRGraph) -> CSRGraph:
    """Make the graph undirected: add the reverse of every entry that lacks one.

    Where both directions exist with different weights, each direction keeps its own
    stored weight for the forward entry and the reverse entry copies it; duplicates
    created by this step are not added."""
    g.require(square=True, what="symmetrize")
    rows = g.row_of_entry().astype(np.int64)
    cols = g.indices.astype(np.int64)
    n = g.n_rows
    forward = rows * n + cols
    reverse = cols * n + rows
    missing = ~np.isin(reverse, forward) & (rows != cols)
    # add each missing reverse once, even if the forward entry is duplicated
    _, first = np.unique(reverse[missing], return_index=True)
    add = np.flatnonzero(missing)[first]
    src = np.concatenate([rows, cols[add]])
    dst = np.concatenate([cols, rows[add]])
    w = None if g.weights is None else np.concatenate([g.weights, g.weights[add]])
    out = CSRGraph.from_edges(n, src, dst, w, directed=False, name=g.name, source=g.source,
                              notices=g.notices)
    if len(add) == 0:
        return _with_notice(out, "symmetrized: every entry already had its reverse")
    return _with_notice(out, f"symmetrized: added {_plural(len(add), 'reverse entry', 'reverse entries')}")


def drop_self_loops(g: CSRGraph) -> CSRGraph:
    if not g.is_square:
        return _with_notice(g, "no self-loops to remove (rectangular matrix)")
    keep = g.row_of_entry() != g.indices
    removed = int(len(keep) - np.count_nonzero(keep))
    out = _rebuild(g, keep) if removed else g
    return _with_notice(out, f"removed {_plural(removed, 'self-loop')}")


def duplicate_mask(g: CSRGraph) -> np.ndarray:
    """True for each stored entry that repeats an earlier (row, column) pair."""
    dup = np.zeros(g.nnz, dtype=bool)
    if g.nnz > 1:
        same_row = g.row_of_entry()[1:] == g.row_of_entry()[:-1]
        dup[1:] = same_row & (g.indices[1:] == g.indices[:-1])
    return dup


def drop_duplicates(g: CSRGraph) -> CSRGraph:
    """Remove repeated (row, column) entries, keeping the first one's weight."""
    dup = duplicate_mask(g)
    removed = int(np.count_nonzero(dup))
    out = _rebuild(g, ~dup) if removed else g
    return _with_notice(out, f"removed {_plural(removed, 'duplicate entry', 'duplicate entries')}")


def drop_isolated(g: CSRGraph) -> CSRGraph:
    """Remove vertices with no incident entry (in or out) and renumber the rest in order."""
    g.require(square=True, what="dropping isolated vertices")
    touched = np.zeros(g.n_rows, dtype=bool)
    touched[g.degrees() > 0] = True
    touched[g.indices] = True
    removed = int(g.n_rows - np.count_nonzero(touched))
    if removed == 0:
        return _with_notice(g, "removed 0 isolated vertices")
    return _with_notice(_induced(g, np.flatnonzero(touched)),
                        f"removed {_plural(removed, 'isolated vertex', 'isolated vertices')}")


def keep_largest_component(g: CSRGraph) -> CSRGraph:
    """Keep the largest (weakly) connected component, renumbered in vertex order."""
    g.require(square=True, what="keeping the largest component")
    if g.n_rows == 0:
        return _with_notice(g, "kept the largest component: the graph is empty")
    n_comp, labels = csgraph.connected_components(g.to_scipy(), directed=True, connection="weak")
    sizes = np.bincount(labels)
    biggest = int(np.argmax(sizes))
    keep = np.flatnonzero(labels == biggest)
    notice = (f"kept the largest of {_plural(n_comp, 'component')}: {len(keep)} of "
              f"{g.n_rows} vertices")
    return _with_notice(_induced(g, keep) if n_comp > 1 else g, notice)


def _induced(g: CSRGraph, vertices: np.ndarray) -> CSRGraph:
    """Subgraph on ``vertices`` (sorted), renumbered 0..len-1."""
    new_id = np.full(g.n_rows, -1, dtype=np.int64)
    new_id[vertices] = np.arange(len(vertices))
    rows = new_id[g.row_of_entry()]
    cols = new_id[g.indices]
    keep = (rows >= 0) & (cols >= 0)
    w = None if g.weights is None else g.weights[keep]
    return CSRGraph.from_edges(len(vertices), rows[keep], cols[keep], w, directed=g.directed,
                               name=g.name, source=g.source, notices=g.notices)


def clean(g: CSRGraph, *, symmetrize_: bool = False, self_loops: bool = False,
          duplicates: bool = False, isolated: bool = False,
          largest_component: bool = False) -> CSRGraph:
    """Apply the chosen steps in a fixed order; the notices say what each one changed."""
    if symmetrize_:
        g = symmetrize(g)
    if self_loops:
        g = drop_self_loops(g)
    if duplicates:
        g = drop_duplicates(g)
    if isolated:
        g = drop_isolated(g)
    if largest_component:
        g = keep_largest_component(g)
    return g
