"""Looking inside a slotted graph: per-page statistics, one page's layout, the invariants.

``page_stats`` and ``page_layout`` feed the GUI's page map and page inspector (the thesis'
table of header / records / free gap / slots); ``check_invariants`` is the backbone of the
tests: it verifies every word of the layout against the rules in ``layout.py``.
"""

from __future__ import annotations

import numpy as np

from kernels.errors import ParameterError
from kernels.graph.slotted.layout import (
    H_COUNT,
    H_END,
    H_LARGE,
    IDX_FIRST,
    IDX_LCOUNT,
    IDX_LPOS,
    IDX_SLOT,
    M_ENTRIES,
    M_FREE,
    M_HIGH_WATER,
    M_PAGES,
    M_SELF_LOOPS,
    RECORD_START,
    large_entries_per_page,
)


class LayoutInvariantError(AssertionError):
    """The page layout breaks one of its rules (a bug in the structure, never a user error)."""


def _pages_view(g) -> np.ndarray:
    return g._pool.reshape(-1, g.page_size)


def page_stats(g) -> dict[str, np.ndarray]:
    """One entry per logical page: vertices, used / free words, fill, large-list membership,
    dirty flag (and the page's first vertex and physical slot)."""
    n = g.num_pages
    P = g.page_size
    phys = g._index[IDX_SLOT, :n].astype(np.int64)
    pages = _pages_view(g)[phys] if n else np.zeros((0, P), dtype=np.int32)
    vertices = pages[:, H_COUNT].astype(np.int64)
    used = pages[:, H_END].astype(np.int64) + 2 * vertices
    return {
        "page": np.arange(n),
        "physical_page": phys,
        "first_vertex": g._index[IDX_FIRST, :n].astype(np.int64),
        "vertices": vertices,
        "used_words": used,
        "free_words": P - used,
        "fill": used / P,
        "large": g._index[IDX_LCOUNT, :n] > 0,
        "large_position": g._index[IDX_LPOS, :n].astype(np.int64),
        "large_pages": g._index[IDX_LCOUNT, :n].astype(np.int64),
        "dirty": g._dirty[phys].astype(bool),
    }


def page_layout(g, page: int) -> dict:
    """Everything needed to draw logical page ``page`` word by word."""
    n_pages = g.num_pages
    if not isinstance(page, (int, np.integer)) or not 0 <= page < n_pages:
        raise ParameterError("page", page, f"a page number from 0 to {n_pages - 1}")
    page = int(page)
    P = g.page_size
    phys = int(g._index[IDX_SLOT, page])
    words = g._pool[phys * P:(phys + 1) * P].copy()
    weights = g._wpool[phys * P:(phys + 1) * P].copy() if g.weighted else None
    n, end, large = int(words[H_COUNT]), int(words[H_END]), int(words[H_LARGE])
    is_large = int(g._index[IDX_LCOUNT, page]) > 0
    records, slots = [], []
    for s in range(n):
        off, v = int(words[P - 2 - 2 * s]), int(words[P - 1 - 2 * s])
        stored = (end - off - 1) if is_large else int(words[off])
        records.append({
            "vertex": v,
            "degree_word": off,
            "degree": int(words[off]),
            "list_start": off + 1,
            "list_end": off + 1 + stored,
            "neighbors": words[off + 1:off + 1 + stored].tolist(),
            "weights": None if weights is None else weights[off + 1:off + 1 + stored].tolist(),
        })
        slots.append({"words": (P - 2 - 2 * s, P - 1 - 2 * s), "offset": off, "vertex": v})
    large_list = None
    if is_large:
        large_list = {"vertex": int(words[P - 1]), "position": int(g._index[IDX_LPOS, page]),
                      "pages": int(g._index[IDX_LCOUNT, page]), "entries_here": end - RECORD_START - 1}
    return {
        "page": page,
        "physical_page": phys,
        "page_size": P,
        "header": {"vertices": n, "records_end": end, "large": large},
        "records": records,
        "free": (end, P - 2 * n),
        "slots": slots,
        "large_list": large_list,
        "dirty": bool(g._dirty[phys]),
        "words": words,
        "weights": weights,
    }


def summary(g) -> dict:
    """Page count, fill distribution, large lists and memory, as plain JSON-able values."""
    st = page_stats(g)
    fill = st["fill"]
    heads = st["large_position"] == 0
    large_sizes = st["large_pages"][heads]
    hist, edges = np.histogram(fill, bins=10, range=(0.0, 1.0))
    csr_bytes = 8 * (g.next_vertex_id + 1) + 4 * g.num_entries
    if g.weighted:
        csr_bytes += g.weight_dtype.itemsize * g.num_entries
    return {
        "page_size": g.page_size,
        "pages": g.num_pages,
        "vertices": g.num_vertices,
        "edges": g.num_edges,
        "stored_entries": g.num_entries,
        "fill": {
            "min": float(fill.min()) if len(fill) else 0.0,
            "mean": float(fill.mean()) if len(fill) else 0.0,
            "median": float(np.median(fill)) if len(fill) else 0.0,
            "max": float(fill.max()) if len(fill) else 0.0,
            "histogram": {"edges": [round(float(e), 2) for e in edges], "counts": hist.tolist()},
        },
        "large_lists": {
            "count": int(heads.sum()),
            "pages": int(st["large"].sum()),
            "largest_pages": int(large_sizes.max()) if len(large_sizes) else 0,
        },
        "memory": {
            "slotted_bytes": g.memory_bytes,
            "csr_bytes": int(csr_bytes),
            "ratio_to_csr": (g.memory_bytes / csr_bytes) if csr_bytes else None,
        },
    }


# ---- invariants -------------------------------------------------------------------------
def _fail(message: str):
    raise LayoutInvariantError(message)


def check_invariants(g) -> None:
    """Verify the whole layout; raises :class:`LayoutInvariantError` naming what is wrong.

    It is also run on structures read from files, so it must itself survive any words: an
    indexing error on a broken layout is reported as a broken layout."""
    try:
        _check_invariants(g)
    except (IndexError, ValueError, OverflowError) as exc:
        raise LayoutInvariantError(f"the layout is inconsistent ({type(exc).__name__}: {exc})") from None


def _check_invariants(g) -> None:
    P = g.page_size
    meta = g._meta
    n_pages = int(meta[M_PAGES])
    high = int(meta[M_HIGH_WATER])
    cap = len(g._pool) // P
    pages = _pages_view(g)
    wpages = g._wpool.reshape(-1, P) if g.weighted else None
    if not 0 <= n_pages <= g._index.shape[1]:
        _fail(f"{n_pages} pages but an index of {g._index.shape[1]} columns")
    if not 0 <= high <= cap:
        _fail(f"high-water mark {high} outside the pool's {cap} pages")
    if len(g._free) < cap or len(g._dirty) < cap or not 0 <= int(meta[M_FREE]) <= len(g._free):
        _fail(f"free-slot stack ({len(g._free)}, {int(meta[M_FREE])} used) or dirty flags "
              f"({len(g._dirty)}) do not cover the pool's {cap} pages")
    if not 0 <= g._next_id <= len(g._alive) or g._alive[g._next_id:].any():
        _fail(f"live-id flags ({len(g._alive)}) do not match the next id {g._next_id}")
    if int(np.count_nonzero(g._alive)) != g._n_alive:
        _fail(f"{int(np.count_nonzero(g._alive))} live ids flagged but the counter says {g._n_alive}")
    if np.any(g._counts < 0):
        _fail("a negative rule-case count")
    phys = g._index[IDX_SLOT, :n_pages].astype(np.int64)
    free = g._free[:int(meta[M_FREE])].astype(np.int64)
    both = np.concatenate([phys, free])
    if len(both) and (both.min() < 0 or both.max() >= high):
        _fail("a physical page slot lies outside the pages handed out")
    if len(np.unique(both)) != len(both) or len(both) != high:
        _fail(f"physical slots: {len(phys)} in the index + {len(free)} free should be {high}, each once")
    spare = np.concatenate([free, np.arange(high, cap)])
    if len(spare) and pages[spare].any():
        _fail("a free or never-used page is not blank")
    if wpages is not None and len(spare) and wpages[spare].any():
        _fail("a free or never-used page has non-zero weights")

    per_large = large_entries_per_page(P)
    order, rows, cols = [], [], []     # vertices in logical page order; every entry (row, col)
    i = 0
    while i < n_pages:
        where = f"page {i} (physical {phys[i]})"
        lcount = int(g._index[IDX_LCOUNT, i])
        if lcount > 0:
            i, entries = _check_large_list(g, pages, wpages, phys, i, lcount, per_large)
            v = int(pages[phys[i - lcount], P - 1])
            order.append(np.array([v]))
            rows.append(np.full(len(entries), v, dtype=np.int64))
            cols.append(entries)
            continue
        words = pages[phys[i]]
        n, end, flag = int(words[H_COUNT]), int(words[H_END]), int(words[H_LARGE])
        if g._index[IDX_LPOS, i] != -1 or lcount != -1:
            _fail(f"{where}: ordinary page with index entry ({g._index[IDX_LPOS, i]}, {lcount})")
        if flag != 0:
            _fail(f"{where}: large-list flag set on an ordinary page")
        if n < 1:
            _fail(f"{where}: empty page kept (empty pages are deleted)")
        if not RECORD_START <= end <= P - 2 * n:
            _fail(f"{where}: records end {end} overlaps the slots zone ({n} slots)")
        offs = words[P - 2 - 2 * np.arange(n)].astype(np.int64)
        vids = words[P - 1 - 2 * np.arange(n)].astype(np.int64)
        if np.any(np.diff(vids) <= 0):
            _fail(f"{where}: slot vertex ids not ascending: {vids.tolist()}")
        if offs.min() < RECORD_START or offs.max() >= end:
            _fail(f"{where}: a slot offset lies outside the records zone [3, {end})")
        degs = words[offs].astype(np.int64)
        expected = RECORD_START + np.concatenate([[0], np.cumsum(1 + degs)[:-1]])
        if np.any(degs < 0) or not np.array_equal(offs, expected) or RECORD_START + int(np.sum(1 + degs)) != end:
            _fail(f"{where}: records are not packed in slot order (offsets {offs.tolist()}, "
                  f"degrees {degs.tolist()}, end {end})")
        if int(g._index[IDX_FIRST, i]) != vids[0]:
            _fail(f"{where}: index first vertex {g._index[IDX_FIRST, i]} but the page starts at {vids[0]}")
        if words[end:P - 2 * n].any():
            _fail(f"{where}: free gap [{end}, {P - 2 * n}) is not zero")
        # packed records: every word of [3, end) that is not a degree word is an entry
        entry = np.zeros(P, dtype=bool)
        entry[RECORD_START:end] = True
        entry[offs] = False
        if wpages is not None and wpages[phys[i]][~entry].any():
            _fail(f"{where}: weight pool has values outside the adjacency entries")
        order.append(vids)
        rows.append(np.repeat(vids, degs))
        cols.append(words[entry].astype(np.int64))
        i += 1

    order = np.concatenate(order) if order else np.zeros(0, dtype=np.int64)
    rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    cols = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    if np.any(np.diff(order) <= 0):
        _fail("vertices are not ascending across pages")
    alive = g.vertices()
    if not np.array_equal(order, alive):
        _fail(f"stored vertices {order[:20].tolist()}... differ from the live ids {alive[:20].tolist()}...")
    if len(cols) != int(meta[M_ENTRIES]):
        _fail(f"{len(cols)} entries stored but the counter says {int(meta[M_ENTRIES])}")
    if len(cols) and (cols.min() < 0 or cols.max() >= g.next_vertex_id):
        bad = int(np.argmax((cols < 0) | (cols >= g.next_vertex_id)))
        _fail(f"vertex {rows[bad]}: entry {cols[bad]} outside the ids 0..{g.next_vertex_id - 1}")
    keys = np.sort(rows * (g.next_vertex_id + 1) + cols)
    if np.any(keys[1:] == keys[:-1]):
        dup = int(keys[1:][keys[1:] == keys[:-1]][0])
        _fail(f"vertex {dup // (g.next_vertex_id + 1)}: duplicate entry {dup % (g.next_vertex_id + 1)}")
    if not g._one_sided_entries and len(cols) and not g._alive[cols].all():
        bad = int(np.argmin(g._alive[cols]))
        _fail(f"vertex {rows[bad]}: entry pointing to removed vertex {cols[bad]} after clean removals only")
    loops = int(np.count_nonzero(rows == cols))
    if loops != int(meta[M_SELF_LOOPS]):
        _fail(f"{loops} self-loops stored but the counter says {int(meta[M_SELF_LOOPS])}")
    if not g.directed and not g._one_sided_entries:
        _check_symmetric(g)


def _check_large_list(g, pages, wpages, phys, i, lcount, per_large):
    """Check the large list starting at logical page i; returns (next page, its entries)."""
    P = g.page_size
    if lcount < 2:
        _fail(f"page {i}: a large list of {lcount} page (one page is an ordinary page)")
    if i + lcount > g.num_pages:
        _fail(f"page {i}: large list of {lcount} pages runs past the last page")
    head = pages[phys[i]]
    v = int(head[P - 1])
    total = int(head[RECORD_START])
    chunks = []
    for p in range(lcount):
        j = i + p
        where = f"page {j} (physical {phys[j]}, large list of vertex {v}, position {p})"
        words = pages[phys[j]]
        if g._index[IDX_LPOS, j] != p or g._index[IDX_LCOUNT, j] != lcount:
            _fail(f"{where}: index says position {g._index[IDX_LPOS, j]} of {g._index[IDX_LCOUNT, j]}")
        if g._index[IDX_FIRST, j] != v:
            _fail(f"{where}: index first vertex {g._index[IDX_FIRST, j]}")
        if words[H_COUNT] != 1 or words[H_LARGE] != 1:
            _fail(f"{where}: header {words[:3].tolist()} (expected 1 vertex, large flag 1)")
        if words[P - 2] != RECORD_START or words[P - 1] != v:
            _fail(f"{where}: slot ({words[P - 2]}, {words[P - 1]}) should be ({RECORD_START}, {v})")
        end = int(words[H_END])
        here = end - RECORD_START - 1
        full = p < lcount - 1
        if (full and here != per_large) or not 1 <= here <= per_large:
            _fail(f"{where}: {here} entries (pages before the last hold {per_large}, the last 1..{per_large})")
        if p > 0 and words[RECORD_START] != here:
            _fail(f"{where}: degree word {words[RECORD_START]} but {here} entries in the page")
        if words[end:P - 2].any():
            _fail(f"{where}: free gap is not zero")
        if wpages is not None and (wpages[phys[j]][:RECORD_START + 1].any() or wpages[phys[j]][end:].any()):
            _fail(f"{where}: weight pool has values outside the adjacency entries")
        chunks.append(words[RECORD_START + 1:end].astype(np.int64))
    entries = np.concatenate(chunks)
    if total != len(entries):
        _fail(f"page {i}: large list of vertex {v} has degree word {total} but {len(entries)} entries")
    return i + lcount, entries


def _check_symmetric(g) -> None:
    csr = g.to_csr().to_scipy()
    t = csr.T.tocsr()
    t.sort_indices()
    if not (np.array_equal(csr.indptr, t.indptr) and np.array_equal(csr.indices, t.indices)):
        _fail("undirected graph: an entry u -> v has no v -> u")
    if g.weighted and not np.array_equal(csr.data, t.data):
        _fail("undirected graph: the two directions of an edge carry different weights")
