"""``SlottedGraph``: a dynamic graph stored on slotted pages (the thesis' "AE" layout).

Policies (see docs/slotted.md):

* **Vertex ids** are assigned in increasing order and never reused by :meth:`add_vertex`;
  a removed id can be put back explicitly with ``add_vertex(vertex=v)`` (the inverse of
  :meth:`remove_vertex`, for undo). :meth:`to_csr` spans ids ``0 .. next_vertex_id - 1``;
  removed ids become isolated rows.
* **Duplicate edges are refused** (adding an existing edge raises ``GraphEditError``);
  **self-loops are allowed** and stored once.
* An **undirected** graph stores both directions; its edge count counts an edge once.
* **Weights** are float64 by default (``weight_dtype=np.float32`` halves the pool), stored in
  a pool parallel to the pages, word for word. An edge added without a weight gets 1.0. A
  weight is a finite real number (Python or NumPy int or float, not bool); NaN, infinities,
  strings, complex numbers and sequences are refused with ``ParameterError``.
* **Vertex ids** given to edits are integers (Python or NumPy, not bool); anything else is a
  ``GraphEditError``.
* Every public edit validates first and raises ``GraphEditError`` (or ``ParameterError``)
  without changing anything; a batch is refused as a whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from kernels.errors import GraphEditError, ParameterError
from kernels.graph.csr import CSRGraph
from kernels.graph.page_size import DEFAULT_PAGE_SIZE  # the one default, for a structure with no graph
from kernels.graph.slotted import build, delta, engine, snapshot
from kernels.graph.slotted.layout import (
    CASE_NAMES,
    IDX_FIRST,
    IDX_LCOUNT,
    IDX_LPOS,
    IDX_SLOT,
    INDEX_ROWS,
    M_ENTRIES,
    M_FREE,
    M_HIGH_WATER,
    M_INDEX_DIRTY,
    M_PAGE_SIZE,
    M_PAGES,
    M_SELF_LOOPS,
    M_WEIGHTED,
    META_LEN,
    N_CASES,
    NEW_VERTEX_FREE_FRACTION,
    PAGE_SIZE_RULE,
    valid_page_size,
)

DEFAULT_FILL = 0.9
WEIGHT_RULE = "a finite real number (int or float, not bool)"


class PageIndex(NamedTuple):
    """The page index in logical page order (read-only views)."""

    first_vertex: np.ndarray
    large_position: np.ndarray
    large_pages: np.ndarray
    physical_page: np.ndarray


@dataclass(frozen=True)
class RemovedVertex:
    """What :meth:`SlottedGraph.remove_vertex` took away, enough to put it back:
    ``g.add_vertex(vertex=r.vertex); g.add_edges(r.sources, r.targets, r.weights)`` (edges whose
    other end is still stored)."""

    vertex: int
    sources: np.ndarray
    targets: np.ndarray
    weights: np.ndarray | None


class SlottedGraph:
    """A graph on fixed-size int32 pages that supports edits in place."""

    def __init__(self, page_size: int = DEFAULT_PAGE_SIZE, directed: bool = False,
                 weighted: bool = False, *, weight_dtype=np.float64, name: str = "slotted",
                 _capacity_pages: int = 4):
        if isinstance(page_size, np.integer):
            page_size = int(page_size)
        if not valid_page_size(page_size):
            raise ParameterError("page_size", page_size, PAGE_SIZE_RULE)
        weight_dtype = np.dtype(weight_dtype)
        if weight_dtype not in (np.float32, np.float64):
            raise ParameterError("weight_dtype", weight_dtype, "float32 or float64")
        self.name = name
        self._P = page_size
        self._directed = bool(directed)
        self._weighted = bool(weighted)
        self._wdtype = weight_dtype
        cap = max(1, _capacity_pages)
        self._pool = np.zeros(cap * page_size, dtype=np.int32)
        self._wpool = np.zeros(cap * page_size if weighted else 0, dtype=weight_dtype)
        self._index = np.zeros((INDEX_ROWS, cap), dtype=np.int32)
        self._meta = np.zeros(META_LEN, dtype=np.int64)
        self._meta[M_PAGE_SIZE] = page_size
        self._meta[M_WEIGHTED] = int(weighted)
        self._free = np.zeros(cap, dtype=np.int32)
        self._dirty = np.zeros(cap, dtype=np.uint8)
        self._counts = np.zeros(N_CASES, dtype=np.int64)
        self._alive = np.zeros(16, dtype=np.bool_)
        self._next_id = 0
        self._n_alive = 0
        # set once a removal leaves entries pointing to a removed vertex (clean=False):
        # from then on the two directions of an undirected edge may disagree
        self._one_sided_entries = False
        self._min_free_words = int(np.ceil(NEW_VERTEX_FREE_FRACTION * page_size))
        self._restate()

    def _restate(self) -> None:
        self._st = (self._pool, self._wpool, self._index, self._meta, self._free, self._dirty,
                    self._counts)

    # ---- construction ------------------------------------------------------------------
    @classmethod
    def from_csr(cls, csr: CSRGraph, page_size: int = DEFAULT_PAGE_SIZE, *, fill: float = DEFAULT_FILL,
                 weight_dtype=np.float64, check_symmetry: bool = True, live=None,
                 one_sided: bool = False) -> SlottedGraph:
        """Bulk build from a square CSR graph without duplicate entries.

        ``fill`` (0 < fill <= 1) is the share of each page's usable words the packing fills.
        ``live`` (ids to keep; default all) and ``one_sided`` rebuild a structure that had
        removed ids and ``clean=False`` removals (a page-size change): the other ids are
        removed, their rows must be empty."""
        if live is not None or one_sided:
            g = cls.from_csr(csr, page_size, fill=fill, weight_dtype=weight_dtype,
                             check_symmetry=check_symmetry and not one_sided)
            if live is not None:
                keep = np.zeros(g._next_id, dtype=bool)
                keep[g._vertex_array(live, "live ids")] = True
                for v in np.flatnonzero(~keep).tolist():
                    if g.degree(v):
                        raise GraphEditError(f"vertex {v} is not in 'live' but has {g.degree(v)} neighbours")
                    g.remove_vertex(v, clean=False)      # holds no entries; what points to it stays
            g._one_sided_entries = bool(one_sided)
            return g
        if not 0.0 < float(fill) <= 1.0:
            raise ParameterError("fill", fill, "0 < fill <= 1")
        g = cls(page_size, directed=csr.directed, weighted=csr.weighted, weight_dtype=weight_dtype,
                name=csr.name, _capacity_pages=1)
        build.check_buildable(csr, check_symmetry)
        n_pages, _ = build.count_pages(csr.indptr, g._P, fill)
        pool, wpool, index = build.write_pages(csr, g._P, fill, n_pages, g._wdtype)
        cap = max(n_pages, 1)
        if n_pages == 0:
            pool = np.zeros(g._P, dtype=np.int32)
            wpool = np.zeros(g._P if g._weighted else 0, dtype=g._wdtype)
            index = np.zeros((INDEX_ROWS, 1), dtype=np.int32)
        g._pool, g._wpool, g._index = pool, wpool, index
        g._free = np.zeros(cap, dtype=np.int32)
        g._dirty = np.ones(cap, dtype=np.uint8)
        g._dirty[n_pages:] = 0
        g._meta[M_PAGES] = n_pages
        g._meta[M_HIGH_WATER] = n_pages
        g._meta[M_INDEX_DIRTY] = 1
        g._meta[M_ENTRIES] = csr.nnz
        g._meta[M_SELF_LOOPS] = csr.num_self_loops
        n = csr.n_rows
        g._alive = np.ones(max(n, 16), dtype=np.bool_)
        g._alive[n:] = False
        g._next_id = n
        g._n_alive = n
        g._restate()
        return g

    def copy(self) -> SlottedGraph:
        """An independent copy (same layout, same case counts, same dirty flags)."""
        g = SlottedGraph.__new__(SlottedGraph)
        g.__dict__.update(self.__dict__)
        for name in ("_pool", "_wpool", "_index", "_meta", "_free", "_dirty", "_counts", "_alive"):
            setattr(g, name, getattr(self, name).copy())
        g._restate()
        return g

    # ---- capacity ----------------------------------------------------------------------
    def _reserve(self, pages: int) -> None:
        """Room for ``pages`` new pages and index columns (capacity doubles when it grows)."""
        P, meta = self._P, self._meta
        cap = len(self._pool) // P
        spare = int(meta[M_FREE]) + cap - int(meta[M_HIGH_WATER])
        if spare < pages:
            new_cap = max(2 * cap, cap + pages - spare)
            used = int(meta[M_HIGH_WATER]) * P
            pool = np.zeros(new_cap * P, dtype=np.int32)
            pool[:used] = self._pool[:used]
            self._pool = pool
            if self._weighted:
                wpool = np.zeros(new_cap * P, dtype=self._wdtype)
                wpool[:used] = self._wpool[:used]
                self._wpool = wpool
            for name in ("_free", "_dirty"):
                old = getattr(self, name)
                grown = np.zeros(new_cap, dtype=old.dtype)
                grown[:cap] = old
                setattr(self, name, grown)
        icap = self._index.shape[1]
        if icap - int(meta[M_PAGES]) < pages:
            new_icap = max(2 * icap, int(meta[M_PAGES]) + pages)
            index = np.zeros((INDEX_ROWS, new_icap), dtype=np.int32)
            index[:, :icap] = self._index
            self._index = index
        self._restate()

    def _grow_ids(self, n: int) -> None:
        if n > len(self._alive):
            alive = np.zeros(max(n, 2 * len(self._alive)), dtype=np.bool_)
            alive[:len(self._alive)] = self._alive
            self._alive = alive

    # ---- validation --------------------------------------------------------------------
    @staticmethod
    def _as_id(v, what: str) -> int:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise GraphEditError(f"{what} {v!r} is not an integer vertex id")
        return int(v)

    def _vertex(self, v, what: str = "vertex") -> int:
        """``v`` as an int, if it is a stored vertex."""
        iv = self._as_id(v, what)
        if not (0 <= iv < self._next_id) or not self._alive[iv]:
            raise GraphEditError(self._missing_vertex_text(iv, what))
        return iv

    def _entry_target(self, u: int, v) -> int:
        """``v`` as an int, if u's list holds it (it may be a removed id: clean=False)."""
        iv = self._as_id(v, "target")
        if not (0 <= iv < self._next_id) or not engine.has_entry(self._st, u, iv):
            raise GraphEditError(f"edge {self._edge_text(u, iv)} does not exist")
        return iv

    def _missing_vertex_text(self, v: int, what: str = "vertex") -> str:
        if 0 <= v < self._next_id:
            return f"{what} {v} was removed (ids are not reused; add_vertex(vertex={v}) restores it)"
        return f"{what} {v} does not exist (ids run from 0 to {self._next_id - 1})"

    def _vertex_array(self, xs, what: str) -> np.ndarray:
        arr = np.asarray(xs)
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise GraphEditError(f"{what} must be integer vertex ids, not {arr.dtype}")
        arr = arr.astype(np.int64, copy=False).ravel()
        bad = (arr < 0) | (arr >= self._next_id)
        if not bad.all():
            inside = np.where(bad, 0, arr)
            bad |= ~self._alive[inside]
        if bad.any():
            raise GraphEditError(self._missing_vertex_text(int(arr[np.argmax(bad)]), what[:-1]))
        return arr.astype(np.int32)

    def _weight(self, weight) -> float:
        if weight is None:
            return 1.0
        if not self._weighted:
            raise ParameterError("weight", weight, "None (this graph is unweighted)")
        if isinstance(weight, (bool, np.bool_)) or not isinstance(weight, (int, float, np.integer, np.floating)):
            raise ParameterError("weight", weight, WEIGHT_RULE)
        w = float(weight)
        with np.errstate(over="ignore"):
            fits = bool(np.isfinite(self._wdtype.type(w)))
        if not fits:
            raise ParameterError("weight", weight, WEIGHT_RULE + f" that fits {self._wdtype}")
        return w

    def _weight_array(self, weights, n: int) -> np.ndarray:
        if not self._weighted:
            raise ParameterError("weights", "an array", "None (this graph is unweighted)")
        try:
            arr = np.asarray(weights)
        except (TypeError, ValueError):
            raise ParameterError("weights", weights, "a sequence of " + WEIGHT_RULE + "s") from None
        mixed_in_bool = not isinstance(weights, np.ndarray) and any(
            isinstance(x, (bool, np.bool_)) for x in np.asarray(weights, dtype=object).ravel())
        if arr.dtype.kind not in "iuf" or mixed_in_bool:
            raise ParameterError("weights", f"an array of {arr.dtype}", "a sequence of " + WEIGHT_RULE + "s")
        ws = arr.astype(np.float64).ravel()
        if len(ws) != n:
            raise ParameterError("weights", f"{len(ws)} weights", f"one per edge ({n})")
        with np.errstate(over="ignore"):
            bad = ~np.isfinite(ws.astype(self._wdtype))
        if bad.any():
            raise ParameterError("weights", float(ws[np.argmax(bad)]), WEIGHT_RULE + f" that fits {self._wdtype}")
        return ws

    def checked_weights(self, weights, n: int) -> np.ndarray:
        """``weights`` as float64, if they are ``n`` finite reals fitting the pool (else
        ``ParameterError``): the one weight check of every batch edit."""
        return self._weight_array(weights, n)

    def _edge_text(self, u: int, v: int) -> str:
        return f"{u} -> {v}" if self._directed else f"{u} -- {v}"

    def _present(self, us: np.ndarray, vs: np.ndarray) -> np.ndarray:
        """Whether each entry us[t] -> vs[t] is stored. Looked up in source order, which
        visits each page once instead of jumping around the pool (3x faster on big batches)."""
        order = np.argsort(us, kind="stable")
        present = np.empty(len(us), dtype=bool)
        present[order] = engine.entries_present(self._st, us[order], vs[order])
        return present

    def _check_absent(self, us: np.ndarray, vs: np.ndarray) -> None:
        present = self._present(us, vs)
        if not self._directed:
            present |= self._present(vs, us)
        if present.any():
            t = int(np.argmax(present))
            raise GraphEditError(f"edge {self._edge_text(int(us[t]), int(vs[t]))} already exists "
                                 "(duplicate edges are refused)")

    def _check_present(self, us: np.ndarray, vs: np.ndarray) -> None:
        present = self._present(us, vs)
        if not present.all():
            t = int(np.argmin(present))
            raise GraphEditError(f"edge {self._edge_text(int(us[t]), int(vs[t]))} does not exist")

    def _check_distinct(self, us: np.ndarray, vs: np.ndarray) -> None:
        a, b = us.astype(np.int64), vs.astype(np.int64)
        if not self._directed:
            a, b = np.minimum(a, b), np.maximum(a, b)
        keys = a * (int(self._next_id) + 1) + b
        uniq, first, counts = np.unique(keys, return_index=True, return_counts=True)
        if len(uniq) != len(keys):
            t = int(first[np.argmax(counts > 1)])
            raise GraphEditError(f"edge {self._edge_text(int(us[t]), int(vs[t]))} appears twice in the batch")

    # ---- vertex edits ------------------------------------------------------------------
    def add_vertex(self, vertex: int | None = None) -> int:
        """Add a vertex and return its id: the next id, or a removed id given as ``vertex``."""
        if vertex is None:
            v = self._next_id
            if v >= 2**31 - 2:
                raise GraphEditError("no vertex ids left (int32)")
            self._reserve(1)
            self._grow_ids(v + 1)
            engine.append_vertex(self._st, v, self._min_free_words)
            self._next_id = v + 1
        else:
            if isinstance(vertex, (bool, np.bool_)) or not isinstance(vertex, (int, np.integer)):
                raise GraphEditError(f"vertex {vertex!r} is not an integer vertex id")
            v = int(vertex)
            if not (0 <= v < self._next_id):
                raise GraphEditError(f"vertex {vertex!r} cannot be restored: only removed ids "
                                     f"(below {self._next_id}) can; add_vertex() gives a new id")
            if self._alive[v]:
                raise GraphEditError(f"vertex {v} already exists")
            self._reserve(2)
            engine.restore_vertex(self._st, v)
        self._alive[v] = True
        self._n_alive += 1
        return v

    def remove_vertex(self, v: int, clean: bool = True) -> RemovedVertex:
        """Remove ``v`` and its list. ``clean=True`` also removes the edges pointing to ``v``
        (for a directed graph that scans every list); ``clean=False`` leaves them, as the
        thesis does. Returns what was removed."""
        v = self._vertex(v)
        out = self.neighbors(v)
        w_out = self.neighbor_weights(v) if self._weighted else None
        sources = np.full(len(out), v, dtype=np.int32)
        targets = out
        weights = w_out
        if clean:
            if self._directed or self._one_sided_entries:
                # an undirected graph with one-sided entries (clean=False before) may hold
                # entries to v in lists that v's own list does not name: scan them all
                found = self.sources_of(v)
                found = found[found != v]
            else:
                found = out[(out != v) & self._alive[out]]
                found = found[engine.entries_present(self._st, found, np.full(len(found), v, np.int32))]
            into = np.full(len(found), v, dtype=np.int32)
            removed = np.empty(len(found), dtype=np.float64)
            engine.apply_remove_edges(self._st, found, into, False, removed)
            if self._directed or self._one_sided_entries:
                sources = np.concatenate([sources, found])
                targets = np.concatenate([targets, into])
                if self._weighted:
                    weights = np.concatenate([weights, removed.astype(self._wdtype)])
        else:
            self._one_sided_entries = True
        engine.drop_vertex(self._st, v)
        self._alive[v] = False
        self._n_alive -= 1
        return RemovedVertex(v, sources, targets, weights)

    # ---- edge edits --------------------------------------------------------------------
    def add_edge(self, u: int, v: int, weight: float | None = None) -> None:
        """Add the edge u -> v (both directions for an undirected graph)."""
        u = self._vertex(u, "source")
        v = self._vertex(v, "target")
        w = self._weight(weight)
        if engine.has_entry(self._st, u, v) or (not self._directed and engine.has_entry(self._st, v, u)):
            raise GraphEditError(f"edge {self._edge_text(u, v)} already exists (duplicate edges are refused)")
        self._reserve(2)
        engine.add_entry(self._st, u, v, w)
        if not self._directed and u != v:
            engine.add_entry(self._st, v, u, w)

    def add_edges(self, us, vs, weights=None) -> None:
        """Add many edges at once, in the given order; refused as a whole if any is invalid."""
        us = self._vertex_array(us, "sources")
        vs = self._vertex_array(vs, "targets")
        if len(us) != len(vs):
            raise ParameterError("vs", f"{len(vs)} targets", f"one per source ({len(us)})")
        ws = np.ones(len(us), dtype=np.float64) if weights is None else self._weight_array(weights, len(us))
        if len(us) == 0:
            return
        self._check_distinct(us, vs)
        self._check_absent(us, vs)
        done = 0
        while done < len(us):
            self._reserve(2)
            done = engine.apply_add_edges(self._st, us, vs, ws, not self._directed, done)

    def remove_edge(self, u: int, v: int) -> float | None:
        """Remove u -> v (for an undirected graph also v -> u); returns its weight."""
        u = self._vertex(u, "source")
        vv = self._entry_target(u, v)
        removed = np.empty(1, dtype=np.float64)
        engine.apply_remove_edges(self._st, np.array([u], np.int32), np.array([vv], np.int32),
                                  not self._directed, removed)
        return float(removed[0]) if self._weighted else None

    def remove_edges(self, us, vs) -> np.ndarray | None:
        """Remove many edges at once; refused as a whole if any is missing. Returns weights."""
        us = self._vertex_array(us, "sources")
        vs = np.asarray(vs)
        if vs.size and not np.issubdtype(vs.dtype, np.integer):
            raise GraphEditError(f"targets must be integer vertex ids, not {vs.dtype}")
        vs = vs.astype(np.int64).ravel()
        if len(us) != len(vs):
            raise ParameterError("vs", f"{len(vs)} targets", f"one per source ({len(us)})")
        if len(vs) and (vs.min() < 0 or vs.max() >= self._next_id):
            t = int(np.argmax((vs < 0) | (vs >= self._next_id)))
            raise GraphEditError(f"edge {self._edge_text(int(us[t]), int(vs[t]))} does not exist")
        vs = vs.astype(np.int32)
        removed = np.empty(len(us), dtype=np.float64)
        if len(us):
            self._check_distinct(us, vs)
            self._check_present(us, vs)
            engine.apply_remove_edges(self._st, us, vs, not self._directed, removed)
        return removed.astype(self._wdtype) if self._weighted else None

    def edit_edge(self, u: int, old_v: int, new_v: int, weight: float | None = None) -> float | None:
        """Re-point u -> old_v to u -> new_v (remove + add). The weight is kept unless given;
        returns the old weight. ``edit_edge(u, new_v, old_v, old_weight)`` undoes it."""
        u = self._vertex(u, "source")
        old_v = self._entry_target(u, old_v)
        new_v = self._vertex(new_v, "new target")
        w = self._weight(weight) if weight is not None else None
        if new_v != old_v and (engine.has_entry(self._st, u, new_v)
                               or (not self._directed and engine.has_entry(self._st, new_v, u))):
            raise GraphEditError(f"edge {self._edge_text(u, new_v)} already exists "
                                 "(duplicate edges are refused)")
        old_w = self.remove_edge(u, old_v)
        self._reserve(2)
        new_w = w if w is not None else (old_w if old_w is not None else 1.0)
        engine.add_entry(self._st, u, new_v, new_w)
        if not self._directed and u != new_v:
            engine.add_entry(self._st, new_v, u, new_w)
        return old_w

    def apply_updates(self, insert=None, delete=None, reweight=None):
        """Apply a batch of edge updates in one step, vectorised: ``delete=(us, vs)``, then
        ``insert=(us, vs[, weights])``, then ``reweight=(us, vs, weights)``. The batch follows
        the rules of :meth:`remove_edges`/:meth:`add_edges` and is refused as a whole
        (``GraphEditError`` naming the first offending edge); touched pages are rebuilt as
        docs/updates.md describes, the same words the device path writes. Returns a
        ``BatchReport`` (pages written, opened, freed; time and rate)."""
        from kernels.graph.slotted import batch_host, batch_rules

        return batch_host.apply(self, batch_rules.prepare(self, insert, delete, reweight))

    # ---- what the batch paths read (kernels.graph.slotted.batch_host, device_updates) ----
    def engine_state(self) -> tuple:
        """The engine's arrays (pool, weights, index, meta, free stack, dirty flags, case
        counts): live, for the batch-update paths only; they are replaced when capacity grows."""
        return self._st

    def reserve_pages(self, pages: int) -> None:
        """Make room for ``pages`` new pages and index columns (capacity grows by doubling)."""
        self._reserve(int(pages))

    def live_flags(self) -> np.ndarray:
        """Read-only view: ``live_flags()[v]`` for ids ``0 .. next_vertex_id - 1``."""
        view = self._alive[:self._next_id].view()
        view.flags.writeable = False
        return view

    def free_page_stack(self) -> np.ndarray:
        """Read-only view of the freed physical pages, in stack order (the top is last)."""
        view = self._free[:int(self._meta[M_FREE])].view()
        view.flags.writeable = False
        return view

    # ---- page deltas (exact undo) and snapshots ------------------------------------------
    def record_edit(self, edit, vertices=(), full_copy_limit: int = delta.FULL_COPY_LIMIT_BYTES):
        """Run ``edit(self)`` and return ``(its result, PageDelta)``: the pages it wrote, before
        and after (see :mod:`kernels.graph.slotted.delta`). ``vertices`` (or a function of the
        graph giving them) names the vertices whose lists the edit changes; it is used only
        when the pool is larger than ``full_copy_limit`` bytes."""
        return delta.record(self, edit, vertices, full_copy_limit)

    def check_delta(self, page_delta: delta.PageDelta, forward: bool) -> None:
        """Raise ``PageDeltaError`` unless ``page_delta`` applies to this structure's current
        state in this direction (checked without writing anything)."""
        delta.check(self, page_delta, forward)

    def apply_delta(self, page_delta: delta.PageDelta, forward: bool, *, verify: bool = False) -> None:
        """Redo (``forward``) or undo a recorded edit, word for word, after :meth:`check_delta`;
        ``verify`` also checks the invariants afterwards and restores the state if they fail."""
        delta.apply(self, page_delta, forward, verify=verify)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The complete state as named arrays (views; see :mod:`kernels.graph.slotted.snapshot`)."""
        return snapshot.to_arrays(self)

    @classmethod
    def from_arrays(cls, arrays, name: str = "slotted") -> SlottedGraph:
        """The structure :meth:`to_arrays` described, validated (``SnapshotError`` if not)."""
        return snapshot.from_arrays(arrays, cls, name=name)

    # ---- queries -----------------------------------------------------------------------
    @property
    def page_size(self) -> int:
        return self._P

    @property
    def directed(self) -> bool:
        return self._directed

    @property
    def weighted(self) -> bool:
        return self._weighted

    @property
    def weight_dtype(self) -> np.dtype:
        return self._wdtype

    @property
    def num_vertices(self) -> int:
        return self._n_alive

    @property
    def next_vertex_id(self) -> int:
        """The id the next :meth:`add_vertex` returns (one past the largest id ever used)."""
        return self._next_id

    @property
    def num_entries(self) -> int:
        """Stored adjacency entries (an undirected edge counts twice, a self-loop once)."""
        return int(self._meta[M_ENTRIES])

    @property
    def num_self_loops(self) -> int:
        return int(self._meta[M_SELF_LOOPS])

    @property
    def num_edges(self) -> int:
        """Edges as a user counts them: undirected edges once, self-loops once."""
        if self._directed:
            return self.num_entries
        return (self.num_entries + self.num_self_loops) // 2

    @property
    def num_pages(self) -> int:
        return int(self._meta[M_PAGES])

    def vertices(self) -> np.ndarray:
        """Ids of the stored vertices, ascending."""
        return np.flatnonzero(self._alive[:self._next_id]).astype(np.int64)

    def has_vertex(self, v: int) -> bool:
        return (isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                and 0 <= v < self._next_id and bool(self._alive[v]))

    def sources_of(self, v: int) -> np.ndarray:
        """Stored vertices whose list holds ``v`` (a compiled scan of every list): the lists a
        clean removal of ``v`` changes. ``v`` may be a removed id."""
        iv = self._as_id(v, "vertex")
        if not 0 <= iv < self._next_id:
            raise GraphEditError(self._missing_vertex_text(iv))
        buf = np.empty(max(self._next_id, 1), dtype=np.int32)     # at most one entry per list
        return buf[:engine.sources_of(self._st, iv, buf)].copy()

    @property
    def one_sided_entries(self) -> bool:
        """Whether a ``clean=False`` removal left entries pointing to removed ids (from then on
        the two directions of an undirected edge may disagree)."""
        return self._one_sided_entries

    def degree(self, v: int) -> int:
        return int(engine.vertex_degree(self._st, self._vertex(v)))

    def neighbors(self, v: int) -> np.ndarray:
        """v's neighbours in stored order (not sorted: removals swap with the last entry)."""
        v = self._vertex(v)
        out = np.empty(engine.vertex_degree(self._st, v), dtype=np.int32)
        engine.copy_list(self._st, v, out, np.empty(0, dtype=self._wdtype))
        return out

    def neighbor_weights(self, v: int) -> np.ndarray:
        """Weights aligned with :meth:`neighbors` (ones for an unweighted graph)."""
        v = self._vertex(v)
        d = engine.vertex_degree(self._st, v)
        if not self._weighted:
            return np.ones(d, dtype=self._wdtype)
        out = np.empty(d, dtype=np.int32)
        wout = np.empty(d, dtype=self._wdtype)
        engine.copy_list(self._st, v, out, wout)
        return wout

    def has_edge(self, u: int, v: int) -> bool:
        """Whether u's list holds v (u must exist; any v may be asked about)."""
        u = self._vertex(u)
        if not isinstance(v, (int, np.integer)) or not (0 <= v < self._next_id):
            return False
        return bool(engine.has_entry(self._st, u, int(v)))

    def edge_weight(self, u: int, v: int) -> float:
        u = self._vertex(u, "source")
        return float(engine.entry_weight(self._st, u, self._entry_target(u, v)))

    def to_csr(self, name: str | None = None) -> CSRGraph:
        """CSR over ids 0 .. next_vertex_id - 1 (removed ids are empty rows), columns sorted."""
        indptr, cols, w = build.gather_csr(self._pool, self._wpool, self._weighted, self._index,
                                           self.num_pages, self._P, self._next_id, self._wdtype)
        return CSRGraph(indptr, cols, w, n_cols=self._next_id, directed=self._directed,
                        name=name or self.name, source=f"slotted pages (page size {self._P})")

    # ---- layout and introspection ------------------------------------------------------
    @property
    def index(self) -> PageIndex:
        n = self.num_pages
        rows = [self._index[r, :n].view() for r in (IDX_FIRST, IDX_LPOS, IDX_LCOUNT, IDX_SLOT)]
        for r in rows:
            r.flags.writeable = False
        return PageIndex(*rows)

    @property
    def case_counts(self) -> dict[str, int]:
        """How many times each rule case of the layout was taken (see layout.CASE_NAMES)."""
        return {name: int(self._counts[i]) for i, name in enumerate(CASE_NAMES)}

    @property
    def memory_bytes(self) -> int:
        """Bytes of the live pages, their weights and the index (what a device holds)."""
        n = self.num_pages
        per_page = self._P * (4 + (self._wdtype.itemsize if self._weighted else 0))
        return int(n * per_page + n * INDEX_ROWS * 4)

    @property
    def allocated_bytes(self) -> int:
        """Host bytes reserved (pools with headroom, index, bookkeeping)."""
        return int(self._pool.nbytes + self._wpool.nbytes + self._index.nbytes + self._free.nbytes
                   + self._dirty.nbytes + self._alive.nbytes)

    def page_stats(self) -> dict[str, np.ndarray]:
        from kernels.graph.slotted.inspect import page_stats

        return page_stats(self)

    def page_layout(self, page: int) -> dict:
        from kernels.graph.slotted.inspect import page_layout

        return page_layout(self, page)

    def check_invariants(self) -> None:
        from kernels.graph.slotted.inspect import check_invariants

        check_invariants(self)

    # ---- what the device mirror reads --------------------------------------------------
    @property
    def physical_pages_used(self) -> int:
        """Physical page slots handed out so far: the pool's words 0 .. this * page_size."""
        return int(self._meta[M_HIGH_WATER])

    def host_arrays(self):
        """(pool, weight pool, index) as the device mirror copies them (views, not copies):
        pool and weights cover ``physical_pages_used`` pages, the index ``num_pages`` columns."""
        used = self.physical_pages_used * self._P
        return self._pool[:used], (self._wpool[:used] if self._weighted else None), \
            self._index[:, :self.num_pages]

    def dirty_physical_pages(self) -> np.ndarray:
        """Physical page slots changed since the last :meth:`mark_synced` (ascending)."""
        return np.flatnonzero(self._dirty[:self.physical_pages_used])

    @property
    def index_dirty(self) -> bool:
        return bool(self._meta[M_INDEX_DIRTY])

    def mark_synced(self) -> None:
        """Forget the dirty flags (the device mirror calls this after uploading them)."""
        self._dirty[:] = 0
        self._meta[M_INDEX_DIRTY] = 0

    def __repr__(self) -> str:
        kind = "directed" if self._directed else "undirected"
        w = ", weighted" if self._weighted else ""
        return (f"SlottedGraph({self.name!r}, {self.num_vertices} vertices, {self.num_edges} edges, "
                f"{kind}{w}, {self.num_pages} pages of {self._P} words)")
