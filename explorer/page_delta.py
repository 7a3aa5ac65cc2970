"""Exact undo for slotted-page edits: page-level deltas (Qt-free).

A logical inverse (remove the edge that was added) gives the same graph but not the same
pages: an insertion that split a page leaves the moved lists where they went. Users of this
tool look at the pages, so undo must restore them word for word. :func:`record_edit` runs one
edit and keeps, for every page it touched, the page's words (and weights) before and after,
plus trimmed differences of the index, the free stack and the live-id flags and the few
counters. Applying the "before" side undoes the edit exactly, applying the "after" side redoes
it; both cost the size of the change, not of the graph.

Which pages an edit touched is read from the structure's own dirty flags (every engine write
marks its page dirty, which the device mirror depends on): the flags are cleared before the
edit and merged back after it. The words a touched page held *before* come from a copy taken
beforehand: the whole pool when it is small (a memory copy of a few milliseconds), else the
pages of the vertices the edit names, which is where the engine writes, plus pages it hands
out fresh (blank before).

This module reads :class:`~kernels.graph.slotted.SlottedGraph`'s private arrays; it is the one
place in the GUI that does, and ``tests/test_gui_edit.py`` checks it against ``check_invariants``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from kernels.graph.slotted import CASE_NAMES, SlottedGraph
from kernels.graph.slotted import engine as _engine
from kernels.graph.slotted.layout import (
    IDX_LCOUNT,
    IDX_LPOS,
    IDX_SLOT,
    M_FREE,
    M_HIGH_WATER,
    M_INDEX_DIRTY,
    M_PAGES,
)

FULL_COPY_LIMIT_BYTES = 64 * 2**20   # below this, copy the whole pool before an edit


class DeltaCaptureError(RuntimeError):
    """An edit wrote a page nobody predicted (a bug): the edit stands, but cannot be undone."""


# ---- trimmed differences: what changed between two arrays, as one middle slice ---------------
@dataclass(frozen=True)
class Trimmed:
    """``after = before[..., :prefix] + middle + before[..., len - suffix:]`` along the last axis."""

    prefix: int
    suffix: int
    before: np.ndarray
    after: np.ndarray
    length_before: int
    length_after: int

    @property
    def empty(self) -> bool:
        return self.before.shape[-1] == 0 and self.after.shape[-1] == 0

    def nbytes(self) -> int:
        return self.before.nbytes + self.after.nbytes


def trimmed_diff(before: np.ndarray, after: np.ndarray) -> Trimmed:
    lb, la = before.shape[-1], after.shape[-1]
    m = min(lb, la)
    rows = int(np.prod(before.shape[:-1]))
    b2 = before.reshape(rows, lb)
    a2 = after.reshape(rows, la)
    differ = np.flatnonzero((b2[:, :m] != a2[:, :m]).any(axis=0))
    prefix = int(differ[0]) if len(differ) else m
    room = m - prefix
    if room:
        tail_b = b2[:, lb - room:][:, ::-1]
        tail_a = a2[:, la - room:][:, ::-1]
        differ = np.flatnonzero((tail_b != tail_a).any(axis=0))
        suffix = int(differ[0]) if len(differ) else room
    else:
        suffix = 0
    return Trimmed(prefix, suffix, before[..., prefix:lb - suffix].copy(),
                   after[..., prefix:la - suffix].copy(), lb, la)


def apply_trimmed(current: np.ndarray, t: Trimmed, forward: bool) -> np.ndarray:
    """The array on the other side of ``t`` (``current`` has the length of the side we leave)."""
    middle = t.after if forward else t.before
    n = current.shape[-1]
    head = current[..., :t.prefix]
    tail = current[..., n - t.suffix:] if t.suffix else current[..., n:]
    return np.concatenate([head, middle, tail], axis=-1)


# ---- a recorded edit ----------------------------------------------------------------------
@dataclass
class PageDelta:
    """Everything one edit changed in a slotted graph, before and after."""

    page_size: int
    pages: np.ndarray                 # physical page slots touched (ascending)
    words_before: np.ndarray          # (len(pages), P) int32
    words_after: np.ndarray
    weights_before: np.ndarray | None
    weights_after: np.ndarray | None
    index: Trimmed                    # used index columns
    free: Trimmed                     # used part of the free stack
    alive: Trimmed                    # live-id flags over ids ever used
    meta_before: np.ndarray
    meta_after: np.ndarray
    counts_before: np.ndarray
    counts_after: np.ndarray
    scalars_before: dict
    scalars_after: dict

    def nbytes(self) -> int:
        total = self.words_before.nbytes + self.words_after.nbytes + self.pages.nbytes
        if self.weights_before is not None:
            total += self.weights_before.nbytes + self.weights_after.nbytes
        return total + self.index.nbytes() + self.free.nbytes() + self.alive.nbytes()

    def cases(self) -> dict[str, int]:
        """Which rule cases of the layout the edit took (and how often)."""
        diff = self.counts_after - self.counts_before
        return {CASE_NAMES[i]: int(diff[i]) for i in np.flatnonzero(diff)}

    # ---- saving (sessions) -------------------------------------------------------------
    def to_arrays(self) -> dict[str, np.ndarray]:
        out = {"page_size": np.array(self.page_size), "pages": self.pages,
               "words_before": self.words_before, "words_after": self.words_after,
               "meta_before": self.meta_before, "meta_after": self.meta_after,
               "counts_before": self.counts_before, "counts_after": self.counts_after}
        if self.weights_before is not None:
            out["weights_before"] = self.weights_before
            out["weights_after"] = self.weights_after
        for name in ("index", "free", "alive"):
            t: Trimmed = getattr(self, name)
            out[f"{name}_shape"] = np.array([t.prefix, t.suffix, t.length_before, t.length_after])
            out[f"{name}_before"] = t.before
            out[f"{name}_after"] = t.after
        for side in ("before", "after"):
            s = getattr(self, f"scalars_{side}")
            out[f"scalars_{side}"] = np.array([s["next_id"], s["n_alive"], int(s["one_sided"])], dtype=np.int64)
        return out

    @classmethod
    def from_arrays(cls, a) -> PageDelta:
        def trimmed(name):
            p, s, lb, la = (int(x) for x in a[f"{name}_shape"])
            return Trimmed(p, s, a[f"{name}_before"], a[f"{name}_after"], lb, la)

        def scalars(side):
            nid, nal, one = (int(x) for x in a[f"scalars_{side}"])
            return {"next_id": nid, "n_alive": nal, "one_sided": bool(one)}

        weighted = "weights_before" in a
        return cls(int(a["page_size"]), a["pages"], a["words_before"], a["words_after"],
                   a["weights_before"] if weighted else None, a["weights_after"] if weighted else None,
                   trimmed("index"), trimmed("free"), trimmed("alive"), a["meta_before"], a["meta_after"],
                   a["counts_before"], a["counts_after"], scalars("before"), scalars("after"))


def _scalars(g: SlottedGraph) -> dict:
    return {"next_id": int(g._next_id), "n_alive": int(g._n_alive), "one_sided": bool(g._one_sided_entries)}


def _pages_of_vertices(g: SlottedGraph, vertices: Iterable[int]) -> set[int]:
    """Physical pages holding the lists of these vertices (every page of a large list)."""
    out: set[int] = set()
    index = g._index
    for v in vertices:
        v = int(v)
        if not (0 <= v < g._next_id):
            continue
        i, _ = _engine.locate(g._st, v)
        if i < 0:
            # a removed id: the page it would go back to, and the page before it
            i = int(_engine.rightmost_page_at_or_below(g._st, v))
            for j in (i, i + 1):
                if 0 <= j < g.num_pages:
                    out.add(int(index[IDX_SLOT, j]))
            continue
        count = int(index[IDX_LCOUNT, i])
        for j in range(i, i + max(count, 1)):
            out.add(int(index[IDX_SLOT, j]))
    return out


def record_edit(g: SlottedGraph, edit: Callable[[SlottedGraph], object],
                vertices: Iterable[int] = (), full_copy_limit: int = FULL_COPY_LIMIT_BYTES):
    """Run ``edit(g)`` and return ``(its result, PageDelta)``.

    ``vertices`` names the vertices whose lists the edit may change; it is only needed for
    graphs whose pool is larger than ``full_copy_limit`` bytes. If ``edit`` raises, nothing
    was changed (the structure validates before it writes) and the exception propagates.
    """
    P = g.page_size
    used_before = g.physical_pages_used
    pool_words = used_before * P
    full = g._pool.nbytes <= full_copy_limit
    if full:
        saved_pool = g._pool[:pool_words].copy()
        saved_w = g._wpool[:pool_words].copy() if g.weighted else None
        predicted = None
    else:
        vertices = list(vertices)
        last = g.num_pages - 1
        predicted = _pages_of_vertices(g, vertices)
        if last >= 0:
            predicted.add(int(g._index[IDX_SLOT, last]))
        saved = {p: g._pool[p * P:(p + 1) * P].copy() for p in predicted}
        saved_ws = {p: g._wpool[p * P:(p + 1) * P].copy() for p in predicted} if g.weighted else None
    n_pages = g.num_pages
    index_before = g._index[:, :n_pages].copy()
    free_before = g._free[:int(g._meta[M_FREE])].copy()
    alive_before = g._alive[:g._next_id].copy()
    meta_before = g._meta.copy()
    counts_before = g._counts.copy()
    scalars_before = _scalars(g)
    free_set_before = set(free_before.tolist())
    dirty_before = g._dirty.copy()
    g._dirty[:] = 0
    try:
        result = edit(g)
    finally:
        touched_flags = g._dirty.copy()
        merged = g._dirty                 # the edit may have grown (replaced) the array
        merged[:len(dirty_before)] |= dirty_before
    used_after = g.physical_pages_used
    index_after_cols = set(g._index[IDX_SLOT, :g.num_pages].tolist())
    index_before_cols = set(index_before[IDX_SLOT].tolist())
    freed = index_before_cols - index_after_cols          # released: blank now, not dirty-flagged
    touched = set(np.flatnonzero(touched_flags[:used_after]).tolist()) | freed
    pages = np.array(sorted(touched), dtype=np.int64)
    words_before = np.zeros((len(pages), P), dtype=np.int32)
    weights_before = np.zeros((len(pages), P), dtype=g.weight_dtype) if g.weighted else None
    for k, p in enumerate(pages.tolist()):
        blank = p >= used_before or p in free_set_before
        if blank:
            continue
        if full:
            words_before[k] = saved_pool[p * P:(p + 1) * P]
            if g.weighted:
                weights_before[k] = saved_w[p * P:(p + 1) * P]
        elif p in saved:
            words_before[k] = saved[p]
            if g.weighted:
                weights_before[k] = saved_ws[p]
        else:
            raise DeltaCaptureError(f"the edit changed page {p}, which was not predicted; it cannot be undone")
    pool2 = g._pool.reshape(-1, P)
    words_after = pool2[pages].copy() if len(pages) else np.zeros((0, P), dtype=np.int32)
    weights_after = None
    if g.weighted:
        weights_after = g._wpool.reshape(-1, P)[pages].copy() if len(pages) else np.zeros((0, P), g.weight_dtype)
    delta = PageDelta(
        page_size=P, pages=pages, words_before=words_before, words_after=words_after,
        weights_before=weights_before, weights_after=weights_after,
        index=trimmed_diff(index_before, g._index[:, :g.num_pages]),
        free=trimmed_diff(free_before, g._free[:int(g._meta[M_FREE])]),
        alive=trimmed_diff(alive_before, g._alive[:g._next_id]),
        meta_before=meta_before, meta_after=g._meta.copy(),
        counts_before=counts_before, counts_after=g._counts.copy(),
        scalars_before=scalars_before, scalars_after=_scalars(g))
    return result, delta


def _ensure_capacity(g: SlottedGraph, pages: int, index_columns: int, ids: int) -> None:
    """Grow the arrays (never shrink) so a recorded state fits; capacities only ever grow
    within a session, so this matters only for states restored from a file."""
    P = g.page_size
    cap = len(g._pool) // P
    if cap < pages:
        for name in ("_pool", "_wpool"):
            old = getattr(g, name)
            if name == "_wpool" and not g.weighted:
                continue
            grown = np.zeros(pages * P, dtype=old.dtype)
            grown[:len(old)] = old
            setattr(g, name, grown)
        for name in ("_free", "_dirty"):
            old = getattr(g, name)
            grown = np.zeros(pages, dtype=old.dtype)
            grown[:len(old)] = old
            setattr(g, name, grown)
    if g._index.shape[1] < index_columns:
        grown = np.zeros((g._index.shape[0], index_columns), dtype=g._index.dtype)
        grown[:, :g._index.shape[1]] = g._index
        g._index = grown
    if len(g._alive) < ids:
        g._grow_ids(ids)
    g._restate()


def apply_delta(g: SlottedGraph, delta: PageDelta, forward: bool) -> None:
    """Put ``g`` in the state after (``forward``) or before the recorded edit, word for word.

    The touched pages are flagged dirty (their device copy is now stale), as is the index
    when it changed."""
    if g.page_size != delta.page_size:
        raise ValueError("this delta was recorded on a structure with another page size")
    side = "after" if forward else "before"
    meta = getattr(delta, f"meta_{side}")
    scalars = getattr(delta, f"scalars_{side}")
    pages = delta.pages
    P = delta.page_size
    n_pages_now = g.num_pages
    n_pages_new = int(meta[M_PAGES])
    need_pages = max(int(meta[M_HIGH_WATER]), int(pages.max()) + 1 if len(pages) else 0)
    _ensure_capacity(g, need_pages, n_pages_new, scalars["next_id"])
    words = getattr(delta, f"words_{side}")
    pool2 = g._pool.reshape(-1, P)
    if len(pages):
        pool2[pages] = words
        if g.weighted:
            g._wpool.reshape(-1, P)[pages] = getattr(delta, f"weights_{side}")
    index_now = g._index[:, :n_pages_now]
    index_new = apply_trimmed(index_now, delta.index, forward)
    g._index[:, :n_pages_new] = index_new
    if n_pages_now > n_pages_new:
        g._index[:, n_pages_new:n_pages_now] = 0
    free_now = g._free[:int(g._meta[M_FREE])]
    free_new = apply_trimmed(free_now, delta.free, forward)
    g._free[:len(free_new)] = free_new
    alive_now = g._alive[:g._next_id]
    alive_new = apply_trimmed(alive_now, delta.alive, forward)
    g._alive[:len(alive_new)] = alive_new
    g._alive[len(alive_new):] = False
    index_was_dirty = bool(g._meta[M_INDEX_DIRTY])
    g._meta[:] = meta
    g._meta[M_INDEX_DIRTY] = int(index_was_dirty or not delta.index.empty)
    g._counts[:] = getattr(delta, f"counts_{side}")
    g._next_id = scalars["next_id"]
    g._n_alive = scalars["n_alive"]
    g._one_sided_entries = scalars["one_sided"]
    live = set(g._index[IDX_SLOT, :n_pages_new].tolist())
    for p in pages.tolist():
        g._dirty[p] = 1 if p in live else 0      # a page handed back is blank and not uploaded
    g._restate()


# ---- whole-structure snapshots (page-size changes, sessions) -------------------------------
_ARRAYS = ("_pool", "_wpool", "_index", "_meta", "_free", "_dirty", "_counts", "_alive")


def structure_to_arrays(g: SlottedGraph) -> dict[str, np.ndarray]:
    """The complete state of a slotted graph as plain arrays (what a session stores)."""
    out = {name.lstrip("_"): getattr(g, name) for name in _ARRAYS}
    out["scalars"] = np.array([g.page_size, int(g.directed), int(g.weighted), g._next_id, g._n_alive,
                               int(g._one_sided_entries), np.dtype(g.weight_dtype).itemsize], dtype=np.int64)
    return out


def structure_from_arrays(a, name: str = "slotted") -> SlottedGraph:
    """The slotted graph :func:`structure_to_arrays` described, exactly; raises ``ValueError``
    if the arrays do not form a valid structure."""
    page_size, directed, weighted, next_id, n_alive, one_sided, witem = (int(x) for x in a["scalars"])
    wdtype = np.float32 if witem == 4 else np.float64
    g = SlottedGraph(page_size, directed=bool(directed), weighted=bool(weighted), weight_dtype=wdtype, name=name)
    for key in _ARRAYS:
        arr = np.array(a[key.lstrip("_")])
        expected = getattr(g, key).dtype
        if arr.dtype != expected:
            raise ValueError(f"stored array {key.lstrip('_')} has type {arr.dtype}, expected {expected}")
        setattr(g, key, arr)
    g._next_id = next_id
    g._n_alive = n_alive
    g._one_sided_entries = bool(one_sided)
    g._restate()
    cap = len(g._pool) // page_size
    if len(g._pool) % page_size or len(g._free) != cap or len(g._dirty) != cap:
        raise ValueError("stored page arrays disagree with each other")
    g.check_invariants()
    return g


def large_list_vertices(g: SlottedGraph) -> np.ndarray:
    """Vertices stored as large adjacency lists (for the page map legend)."""
    n = g.num_pages
    heads = (g._index[IDX_LPOS, :n] == 0)
    phys = g._index[IDX_SLOT, :n][heads].astype(np.int64)
    return g._pool.reshape(-1, g.page_size)[phys, g.page_size - 1].astype(np.int64)


def vertices_pointing_to(g: SlottedGraph, v: int) -> np.ndarray:
    """Stored vertices whose list holds ``v`` (for an undirected graph: its neighbours; for a
    directed one a scan of every list): the lists a clean removal of ``v`` changes."""
    if not g.directed:
        return g.neighbors(v).astype(np.int64)
    buf = np.empty(max(g.next_vertex_id, 1), dtype=np.int32)
    count = _engine.sources_of(g._st, int(v), buf)
    return buf[:count].astype(np.int64)
