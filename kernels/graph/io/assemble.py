"""Turning parsed coordinate lists into a :class:`CSRGraph`, fast and without losing entries.

``CSRGraph.from_edges`` sorts with ``np.lexsort`` (7.6 s for 20 M random entries here); a reader
instead sorts one int64 key ``row * n_cols + col``: ``np.sort`` of the keys alone for pattern
graphs, a stable argsort when weights must follow (see :func:`stable_argsort`) — 0.8 s and
2.2 s for the whole CSR build of those 20 M entries. Duplicates and
explicit zeros survive, in file order, as the project's conventions require.
"""

from __future__ import annotations

import numpy as np

from kernels.graph.csr import CSRGraph
from kernels.graph.io.context import LoadContext

MAX_INDEX = 2**31 - 2  # column indices are int32 and a vertex count must fit too
# A file may declare far more rows than it has entries (``2000000000 2000000000 1``); past
# this many rows, that is treated as a mistake rather than allocating gigabytes of indptr.
SPARSE_ROWS_LIMIT = 2**24
SPARSE_ROWS_PER_ENTRY = 16


def check_dimensions(ctx: LoadContext, n_rows: int, n_cols: int, entries: int,
                     line: int | None = None) -> None:
    """Refuse sizes that cannot be indexed or would waste memory on empty rows."""
    if n_rows > MAX_INDEX + 1 or n_cols > MAX_INDEX + 1:
        raise ctx.too_large(f"{max(n_rows, n_cols):,} vertices/rows are more than the 32-bit "
                            f"indices of a CSR graph can address (at most {MAX_INDEX + 1:,})", line)
    if n_rows > SPARSE_ROWS_LIMIT and n_rows > SPARSE_ROWS_PER_ENTRY * (entries + 1):
        raise ctx.too_large(f"{n_rows:,} rows for only {entries:,} entries would need "
                            f"{(n_rows + 1) * 8 / 2**30:.1f} GiB of row pointers for almost nothing "
                            "(relabel the vertex ids densely)", line)


def mirror_all(rows: np.ndarray, cols: np.ndarray, weights: np.ndarray | None, *, negate: bool = False):
    """Add the reverse of every off-diagonal entry (symmetric Matrix Market storage)."""
    off = rows != cols
    r = np.concatenate([rows, cols[off]])
    c = np.concatenate([cols, rows[off]])
    w = None
    if weights is not None:
        w = np.concatenate([weights, -weights[off] if negate else weights[off]])
    return r, c, w


def mirror_missing(rows: np.ndarray, cols: np.ndarray, weights: np.ndarray | None, n: int):
    """Make an undirected edge list symmetric: add a reverse only where the file lacks one.

    A line ``u v`` denotes the undirected edge {u, v}; a file that already lists ``v u`` too
    (as many SNAP files do) gets nothing added. Multiplicities are matched copy by copy: the
    k-th copy of ``u v`` is paired with the k-th copy of ``v u`` and only unpaired copies (the
    later ones in file order) are mirrored, so each direction ends up with max(#uv, #vu)
    copies. Self-loops are never mirrored.

    One sort does it: entries are grouped by (unordered pair, direction) with the key
    ``(lo * n + hi) * 2 + (u < v)``, which puts the two directions of a pair side by side
    (``2 n**2 < 2**63`` for every ``n`` a CSR graph allows)."""
    loops = rows == cols
    if loops.all():
        return rows, cols, weights
    off = np.flatnonzero(~loops) if loops.any() else None  # most files have no loops: no copies then
    r, c = (rows, cols) if off is None else (rows[off], cols[off])
    key = (np.minimum(r, c) * n + np.maximum(r, c)) * 2 + (r < c)
    if weights is None:
        sorted_key = np.sort(key)
        order = None
    else:
        order = stable_argsort(key)
        sorted_key = key[order]
    del key
    new_group = np.empty(len(sorted_key), dtype=bool)
    new_group[0] = True
    np.not_equal(sorted_key[1:], sorted_key[:-1], out=new_group[1:])
    starts = np.flatnonzero(new_group)
    groups = sorted_key[starts]
    counts = np.diff(np.append(starts, len(sorted_key)))
    if weights is None:
        del sorted_key, new_group, starts  # large temporaries, not needed without weights
    # copies in the other direction of the same pair: the neighbouring group, if it is that one
    opposite = np.zeros(len(groups), dtype=np.int64)
    pair = np.flatnonzero((groups[1:] == groups[:-1] + 1) & (groups[:-1] % 2 == 0))
    opposite[pair] = counts[pair + 1]
    opposite[pair + 1] = counts[pair]
    if weights is None:
        extra = counts - opposite
        keep = extra > 0
        g, e = groups[keep], extra[keep]
        lo, hi = (g // 2) // n, (g // 2) % n
        forward = g % 2 == 1  # the group holds (lo, hi); its reverse is (hi, lo)
        add_r = np.repeat(np.where(forward, hi, lo), e)
        add_c = np.repeat(np.where(forward, lo, hi), e)
        return np.concatenate([rows, add_r]), np.concatenate([cols, add_c]), None
    group_of = np.cumsum(new_group) - 1
    rank = np.arange(len(sorted_key)) - starts[group_of]
    unpaired = order[rank >= opposite[group_of]]
    w = np.asarray(weights) if off is None else np.asarray(weights)[off]
    return (np.concatenate([rows, c[unpaired]]), np.concatenate([cols, r[unpaired]]),
            np.concatenate([weights, w[unpaired]]))


# past this share of tied entries, the repair below would cost more memory than a stable sort
MOST_TIES = 1 / 8


def stable_argsort(key: np.ndarray) -> np.ndarray:
    """``np.argsort(key, kind="stable")``, about 2.5x faster on large inputs.

    NumPy's default (introsort) argsort is much faster than its stable one; only entries with
    equal keys (duplicates, rare) can come out of file order, so just those are re-sorted by
    their original position. A file of mostly duplicates (the cheapest file to compress, so the
    one a crafted small file expands to) would make that repair hold five arrays per entry: it
    gets NumPy's stable sort instead."""
    order = np.argsort(key)
    sorted_key = key[order]
    tie = sorted_key[1:] == sorted_key[:-1]
    if np.count_nonzero(tie) > MOST_TIES * len(key):
        del order, sorted_key, tie
        return np.argsort(key, kind="stable")
    if tie.any():
        in_tie = np.zeros(len(key), dtype=bool)
        in_tie[1:] |= tie
        in_tie[:-1] |= tie
        pos = np.flatnonzero(in_tie)
        order[pos] = order[pos][np.lexsort((order[pos], sorted_key[pos]))]
    return order


def build_csr(ctx: LoadContext, n_rows: int, n_cols: int, rows: np.ndarray, cols: np.ndarray,
              weights: np.ndarray | None, *, directed: bool) -> CSRGraph:
    """CSR from 0-based coordinates already checked to lie in range."""
    ctx.check_cancel()
    # again with the real entry count: a header may promise entries that never came
    check_dimensions(ctx, n_rows, n_cols, len(rows))
    width = max(int(n_cols), 1)
    # the key in int64 whatever the coordinates' type (int32 from some readers: rows * width would
    # overflow there), built in place: one new array, which becomes the CSR's columns
    key = np.asarray(rows).astype(np.int64)
    key *= width
    key += np.asarray(cols)
    if weights is None:
        key.sort()
        w = None
    else:
        order = stable_argsort(key)
        key = key[order]
        w = np.asarray(weights, dtype=np.float64)[order]
    ctx.check_cancel()
    # row boundaries by binary search in the sorted keys (no per-entry row array), then the
    # keys turn into column indices in place: the peak stays at one int64 per entry
    indptr = np.searchsorted(key, np.arange(n_rows + 1, dtype=np.int64) * width).astype(np.int64)
    np.remainder(key, width, out=key)
    sorted_cols = key.astype(np.int32)
    del key
    graph = CSRGraph(indptr, sorted_cols, w, n_cols=n_cols, directed=directed, name=ctx.name,
                     source=ctx.path, notices=tuple(ctx.notices))
    ctx.report(1.0)
    return graph
