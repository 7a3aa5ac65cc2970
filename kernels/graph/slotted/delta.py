"""Page deltas: what one edit changed in a slotted graph, word for word, and putting it back.

A logical inverse (remove the edge that was added) gives the same graph but not the same
pages: an insertion that split a page leaves the moved lists where they went. Undo must
restore the pages exactly, so :func:`record` runs one edit and keeps, for every physical page
it touched, the page's words (and weights) before and after, plus trimmed differences of the
index, the free stack and the live-id flags, and the few counters. Applying the "before" side
undoes the edit, the "after" side redoes it; both cost the size of the change.

A :class:`PageDelta` is plain data (numpy arrays, ints, a small dict): it pickles, and
:meth:`PageDelta.to_arrays` / :meth:`PageDelta.from_arrays` turn it into named arrays for an
``.npz`` file. The same data is what a device mirror needs to bring its copy up to date
(``pages`` and ``words_after`` / ``weights_after``, plus the index).

Deltas read from files are untrusted: :func:`check` validates one against the graph it is to
be applied to *before anything is written* (types, shapes, page numbers, word ranges, sizes,
and that the side being left equals the graph's current state word for word), so a damaged
delta is refused with :class:`PageDeltaError` and never reaches the numba engine.
``apply(..., verify=True)`` also runs ``check_invariants`` on the result and restores the
previous state if it fails.

This module shares :class:`SlottedGraph`'s arrays, as ``inspect`` does: it is part of the
structure. Code outside ``kernels.graph.slotted`` uses the graph's public methods
(``record_edit``, ``check_delta``, ``apply_delta``).

Which pages an edit touched is read from the structure's own dirty flags (every engine write
marks its page dirty, which the device mirror depends on): the flags are cleared before the
edit and merged back after it. The words a touched page held *before* come from a copy taken
beforehand: the whole pool when it is small (a memory copy of a few milliseconds), else the
pages of the vertices the edit names, which is where the engine writes, plus pages it hands
out fresh (blank before).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from kernels.errors import GraphEditError
from kernels.graph.slotted import engine
from kernels.graph.slotted.layout import (
    CASE_NAMES,
    IDX_LCOUNT,
    IDX_SLOT,
    INDEX_ROWS,
    M_FREE,
    M_HIGH_WATER,
    M_INDEX_DIRTY,
    M_PAGE_SIZE,
    M_PAGES,
    M_WEIGHTED,
    META_LEN,
    N_CASES,
)

FULL_COPY_LIMIT_BYTES = 64 * 2**20   # below this, copy the whole pool before an edit


class PageDeltaError(GraphEditError):
    """A page delta does not fit the structure it is applied to (damaged, or another state)."""


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
    """Everything one edit changed in a slotted graph, before and after.

    ``pages`` are physical page slots (ascending); ``words_*`` / ``weights_*`` hold those pages
    (``(len(pages), page_size)``, int32 / the graph's weight dtype, ``None`` when unweighted);
    ``index``, ``free`` and ``alive`` are trimmed differences of the used index columns, the
    free-slot stack and the live-id flags; ``meta_*`` / ``counts_*`` the engine's counters and
    rule-case counts; ``scalars_*`` ``{"next_id", "n_alive", "one_sided"}``."""

    page_size: int
    pages: np.ndarray
    words_before: np.ndarray
    words_after: np.ndarray
    weights_before: np.ndarray | None
    weights_after: np.ndarray | None
    index: Trimmed
    free: Trimmed
    alive: Trimmed
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

    # ---- as named arrays (sessions) ------------------------------------------------------
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
        """The delta :meth:`to_arrays` wrote; raises :class:`PageDeltaError` when arrays are
        missing or have the wrong type or shape (checked by :func:`check_shapes`)."""
        try:
            def ints(name, n):
                arr = np.asarray(a[name])
                if arr.shape != (n,) or arr.dtype.kind not in "iu":
                    raise PageDeltaError(f"'{name}' should be {n} integers, not {arr.dtype} {arr.shape}")
                return [int(x) for x in arr]

            def trimmed(name):
                p, s, lb, la = ints(f"{name}_shape", 4)
                return Trimmed(p, s, np.asarray(a[f"{name}_before"]), np.asarray(a[f"{name}_after"]), lb, la)

            def scalars(side):
                nid, nal, one = ints(f"scalars_{side}", 3)
                return {"next_id": nid, "n_alive": nal, "one_sided": bool(one)}

            page_size = np.asarray(a["page_size"])
            if page_size.shape != () or page_size.dtype.kind not in "iu":
                raise PageDeltaError(f"'page_size' should be one integer, not {page_size.dtype} {page_size.shape}")
            weighted = "weights_before" in a
            d = cls(int(page_size), np.asarray(a["pages"]), np.asarray(a["words_before"]),
                    np.asarray(a["words_after"]),
                    np.asarray(a["weights_before"]) if weighted else None,
                    np.asarray(a["weights_after"]) if weighted else None,
                    trimmed("index"), trimmed("free"), trimmed("alive"),
                    np.asarray(a["meta_before"]), np.asarray(a["meta_after"]),
                    np.asarray(a["counts_before"]), np.asarray(a["counts_after"]),
                    scalars("before"), scalars("after"))
        except KeyError as exc:
            raise PageDeltaError(f"the undo step lacks its array {exc}") from None
        check_shapes(d)
        return d


# ---- validation ------------------------------------------------------------------------
def _need(ok: bool, message: str) -> None:
    if not ok:
        raise PageDeltaError(message)


def _is_array(x, kind: str, ndim: int) -> bool:
    return isinstance(x, np.ndarray) and x.dtype.kind in kind and x.ndim == ndim


def check_shapes(d: PageDelta) -> None:
    """Checks that need no graph: types, shapes, and that each side's sizes agree."""
    P = d.page_size
    _need(isinstance(P, int) and 16 <= P <= 65536, f"page size {P!r} out of range")
    _need(_is_array(d.pages, "iu", 1), "page numbers are not a list of integers")
    k = len(d.pages)
    _need(k == 0 or (int(d.pages.min()) >= 0 and bool(np.all(np.diff(d.pages) > 0))),
          "page numbers are negative or not strictly ascending")
    for side in ("before", "after"):
        words = getattr(d, f"words_{side}")
        _need(isinstance(words, np.ndarray) and words.dtype == np.int32 and words.shape == (k, P),
              f"words {side}: expected int32 of shape ({k}, {P}), found "
              f"{getattr(words, 'dtype', type(words).__name__)} {getattr(words, 'shape', '')}")
        weights = getattr(d, f"weights_{side}")
        if weights is not None:
            _need(isinstance(weights, np.ndarray) and weights.dtype in (np.float32, np.float64)
                  and weights.shape == (k, P), f"weights {side}: expected float32/64 of shape ({k}, {P})")
        _need(_is_array(getattr(d, f"meta_{side}"), "i", 1) and getattr(d, f"meta_{side}").shape == (META_LEN,),
              f"counters {side}: expected {META_LEN} integers")
        _need(_is_array(getattr(d, f"counts_{side}"), "i", 1) and getattr(d, f"counts_{side}").shape == (N_CASES,),
              f"case counts {side}: expected {N_CASES} integers")
        s = getattr(d, f"scalars_{side}")
        _need(isinstance(s, dict) and all(isinstance(s.get(n), int) and s[n] >= 0 for n in ("next_id", "n_alive"))
              and s["n_alive"] <= s["next_id"] < 2**31 and isinstance(s.get("one_sided"), bool),
              f"vertex counters {side} out of range")
    _need((d.weights_before is None) == (d.weights_after is None)
          and (d.weights_before is None or d.weights_before.dtype == d.weights_after.dtype),
          "weights present on one side only")
    for name, kind, rows in (("index", "i", INDEX_ROWS), ("free", "i", None), ("alive", "b", None)):
        t: Trimmed = getattr(d, name)
        for side in ("before", "after"):
            mid = getattr(t, side)
            ok = _is_array(mid, kind, 1 if rows is None else 2) and mid.dtype.itemsize == (1 if kind == "b" else 4)
            if ok and rows is not None:
                ok = mid.shape[0] == rows
            _need(ok, f"{name} difference ({side}) has the wrong type or shape")
            length = getattr(t, f"length_{side}")
            _need(t.prefix >= 0 and t.suffix >= 0 and length == t.prefix + mid.shape[-1] + t.suffix,
                  f"{name} difference ({side}): {t.prefix} + {mid.shape[-1]} + {t.suffix} words "
                  f"do not make its length {length}")
    for side in ("before", "after"):
        meta = getattr(d, f"meta_{side}")
        _need(int(meta[M_PAGE_SIZE]) == P, f"counters {side}: page size {int(meta[M_PAGE_SIZE])}, delta says {P}")
        _need(int(meta[M_WEIGHTED]) == int(d.weights_before is not None), f"counters {side}: weighted flag")
        _need(int(meta[M_PAGES]) == getattr(d.index, f"length_{side}"), f"counters {side}: page count "
              f"{int(meta[M_PAGES])} but {getattr(d.index, f'length_{side}')} index columns")
        _need(int(meta[M_FREE]) == getattr(d.free, f"length_{side}"), f"counters {side}: free-slot count")
        _need(getattr(d, f"scalars_{side}")["next_id"] == getattr(d.alive, f"length_{side}"),
              f"vertex ids {side}: next id disagrees with the live-id flags")
        _need(bool(np.all(meta >= 0)) and bool(np.all(getattr(d, f"counts_{side}") >= 0)),
              f"counters {side}: a negative count")
        _need(int(meta[M_PAGES]) + int(meta[M_FREE]) == int(meta[M_HIGH_WATER]),
              f"counters {side}: pages + free slots != slots handed out")


def _trimmed_matches(current: np.ndarray, t: Trimmed, forward: bool) -> bool:
    length = t.length_before if forward else t.length_after
    middle = t.before if forward else t.after
    n = current.shape[-1]
    return n == length and np.array_equal(current[..., t.prefix:n - t.suffix], middle)


def check(g, d: PageDelta, forward: bool) -> None:
    """Refuse (``PageDeltaError``) a delta that cannot be applied to ``g`` in this direction.

    Beyond :func:`check_shapes`: the delta's page size and weights match the graph, the side
    being left equals the graph's current state (counters, index, free stack, live ids and
    every listed page, word for word), and the side reached stays within what the delta holds
    (pages handed out are listed pages), so nothing is allocated beyond the data at hand."""
    check_shapes(d)
    P = g.page_size
    _need(d.page_size == P, f"recorded on pages of {d.page_size} words, the structure has {P}")
    _need((d.weights_before is not None) == g.weighted, "weighted delta for an unweighted structure, or the reverse")
    _need(d.weights_before is None or d.weights_before.dtype == g.weight_dtype,
          f"weights of type {getattr(d.weights_before, 'dtype', None)}, the structure holds {g.weight_dtype}")
    leave, arrive = ("before", "after") if forward else ("after", "before")
    meta_leave, meta_arrive = getattr(d, f"meta_{leave}"), getattr(d, f"meta_{arrive}")
    same_meta = np.array_equal(np.delete(g._meta, M_INDEX_DIRTY), np.delete(meta_leave, M_INDEX_DIRTY))
    _need(same_meta, "the structure's counters are not those the step starts from")
    _need(np.array_equal(g._counts, getattr(d, f"counts_{leave}")), "the structure's case counts differ")
    s = getattr(d, f"scalars_{leave}")
    _need(s == {"next_id": g._next_id, "n_alive": g._n_alive, "one_sided": g._one_sided_entries},
          "the structure's vertex counters are not those the step starts from")
    n_pages = int(g._meta[M_PAGES])
    _need(_trimmed_matches(g._index[:, :n_pages], d.index, forward), "the index differs from the step's")
    _need(_trimmed_matches(g._free[:int(g._meta[M_FREE])], d.free, forward), "the free-slot stack differs")
    _need(_trimmed_matches(g._alive[:g._next_id], d.alive, forward), "the live vertex ids differ")
    high = int(g._meta[M_HIGH_WATER])
    high_new = int(meta_arrive[M_HIGH_WATER])
    last = int(d.pages[-1]) if len(d.pages) else -1
    _need(high_new <= max(high, last + 1) and last < max(high, high_new),
          f"page {last} or {high_new} slots handed out lie beyond the pages the step lists")
    cap = len(g._pool) // P
    inside = d.pages[d.pages < cap].astype(np.int64)
    leave_words = getattr(d, f"words_{leave}")
    _need(np.array_equal(g._pool.reshape(-1, P)[inside], leave_words[:len(inside)])
          and not leave_words[len(inside):].any(), "a page's words differ from the step's")
    if g.weighted:
        leave_w = getattr(d, f"weights_{leave}")
        _need(np.array_equal(g._wpool.reshape(-1, P)[inside], leave_w[:len(inside)])
              and not leave_w[len(inside):].any(), "a page's weights differ from the step's")
    middle_leave = d.alive.before if forward else d.alive.after
    middle_arrive = d.alive.after if forward else d.alive.before
    n_alive = g._n_alive - int(middle_leave.sum()) + int(middle_arrive.sum())
    _need(n_alive == getattr(d, f"scalars_{arrive}")["n_alive"], "live vertex count disagrees with the live ids")
    index_new = apply_trimmed(g._index[:, :n_pages], d.index, forward)
    free_new = apply_trimmed(g._free[:int(g._meta[M_FREE])], d.free, forward)
    slots = np.concatenate([index_new[IDX_SLOT].astype(np.int64), free_new.astype(np.int64)])
    _need(len(slots) == 0 or (int(slots.min()) >= 0 and int(slots.max()) < high_new),
          "a physical page slot of the index or free stack lies outside the pages handed out")
    lcount = index_new[IDX_LCOUNT]
    _need(len(lcount) == 0 or int(lcount.max()) <= len(lcount), "a large list longer than the index")


# ---- recording ----------------------------------------------------------------------------
def _scalars(g) -> dict:
    return {"next_id": int(g._next_id), "n_alive": int(g._n_alive), "one_sided": bool(g._one_sided_entries)}


def _pages_of_vertices(g, vertices: Iterable[int]) -> set[int]:
    """Physical pages holding the lists of these vertices (every page of a large list)."""
    out: set[int] = set()
    index = g._index
    for v in vertices:
        v = int(v)
        if not (0 <= v < g._next_id):
            continue
        i, _ = engine.locate(g._st, v)
        if i < 0:
            # a removed id: the page it would go back to, and the page before it
            i = int(engine.rightmost_page_at_or_below(g._st, v))
            for j in (i, i + 1):
                if 0 <= j < g.num_pages:
                    out.add(int(index[IDX_SLOT, j]))
            continue
        count = int(index[IDX_LCOUNT, i])
        for j in range(i, i + max(count, 1)):
            out.add(int(index[IDX_SLOT, j]))
    return out


def record(g, edit: Callable, vertices: Iterable[int] | Callable = (),
           full_copy_limit: int = FULL_COPY_LIMIT_BYTES):
    """Run ``edit(g)`` and return ``(its result, PageDelta)``.

    ``vertices`` names the vertices whose lists the edit may change (or is a function of the
    graph returning them, called only when needed); it matters only for graphs whose pool is
    larger than ``full_copy_limit`` bytes. If ``edit`` raises, nothing was changed (the
    structure validates before it writes) and the exception propagates."""
    P = g.page_size
    used_before = g.physical_pages_used
    pool_words = used_before * P
    full = g._pool.nbytes <= full_copy_limit
    if full:
        saved_pool = g._pool[:pool_words].copy()
        saved_w = g._wpool[:pool_words].copy() if g.weighted else None
    else:
        vertices = list(vertices(g) if callable(vertices) else vertices)
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
        if p >= used_before or p in free_set_before:      # blank before
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


# ---- applying -----------------------------------------------------------------------------
def _ensure_capacity(g, pages: int, index_columns: int, ids: int) -> None:
    """Grow the arrays (never shrink) so a recorded state fits; capacities only ever grow
    within a session, so this matters only for states restored from a file."""
    P = g.page_size
    cap = len(g._pool) // P
    if cap < pages:
        g._pool = np.concatenate([g._pool, np.zeros((pages - cap) * P, dtype=np.int32)])
        if g.weighted:
            g._wpool = np.concatenate([g._wpool, np.zeros((pages - cap) * P, dtype=g._wpool.dtype)])
        g._free = np.concatenate([g._free, np.zeros(pages - cap, dtype=g._free.dtype)])
        g._dirty = np.concatenate([g._dirty, np.zeros(pages - cap, dtype=g._dirty.dtype)])
    if g._index.shape[1] < index_columns:
        grown = np.zeros((g._index.shape[0], index_columns), dtype=g._index.dtype)
        grown[:, :g._index.shape[1]] = g._index
        g._index = grown
    g._grow_ids(ids)
    g._restate()


def _write(g, d: PageDelta, forward: bool) -> None:
    side = "after" if forward else "before"
    meta = getattr(d, f"meta_{side}")
    scalars = getattr(d, f"scalars_{side}")
    pages = d.pages.astype(np.int64)
    P = d.page_size
    n_pages_now = g.num_pages
    n_pages_new = int(meta[M_PAGES])
    need_pages = max(int(meta[M_HIGH_WATER]), int(pages[-1]) + 1 if len(pages) else 0)
    _ensure_capacity(g, need_pages, n_pages_new, scalars["next_id"])
    if len(pages):
        g._pool.reshape(-1, P)[pages] = getattr(d, f"words_{side}")
        if g.weighted:
            g._wpool.reshape(-1, P)[pages] = getattr(d, f"weights_{side}")
    index_new = apply_trimmed(g._index[:, :n_pages_now], d.index, forward)
    g._index[:, :n_pages_new] = index_new
    if n_pages_now > n_pages_new:
        g._index[:, n_pages_new:n_pages_now] = 0
    free_new = apply_trimmed(g._free[:int(g._meta[M_FREE])], d.free, forward)
    g._free[:len(free_new)] = free_new
    alive_new = apply_trimmed(g._alive[:g._next_id], d.alive, forward)
    g._alive[:len(alive_new)] = alive_new
    g._alive[len(alive_new):] = False
    index_was_dirty = bool(g._meta[M_INDEX_DIRTY])
    g._meta[:] = meta
    g._meta[M_INDEX_DIRTY] = int(index_was_dirty or not d.index.empty)
    g._counts[:] = getattr(d, f"counts_{side}")
    g._next_id = scalars["next_id"]
    g._n_alive = scalars["n_alive"]
    g._one_sided_entries = scalars["one_sided"]
    live = set(g._index[IDX_SLOT, :n_pages_new].tolist())
    for p in pages.tolist():
        g._dirty[p] = 1 if p in live else 0      # a page handed back is blank and not uploaded
    g._restate()


def apply(g, d: PageDelta, forward: bool, *, verify: bool = False) -> None:
    """Put ``g`` in the state after (``forward``) or before the recorded edit, word for word.

    :func:`check` runs first: a delta that does not fit raises ``PageDeltaError`` and nothing
    is written. ``verify`` also runs ``check_invariants`` on the result (for deltas read from
    files) and, if it fails, writes the side it left back and raises ``PageDeltaError``. The
    touched pages are flagged dirty (their device copy is now stale), as is the index when it
    changed."""
    from kernels.graph.slotted.inspect import LayoutInvariantError, check_invariants

    check(g, d, forward)
    _write(g, d, forward)
    if verify:
        try:
            check_invariants(g)
        except LayoutInvariantError as exc:
            _write(g, d, not forward)
            raise PageDeltaError(f"the step would break the structure ({exc})") from None
