"""A batch of edge updates: its input checks, its expansion into adjacency entries, the order of
its refusal checks and their messages -- what the host path and the device path share.

A batch holds deletions, insertions and weight changes, applied in that order as one step.
The rules are the host ``SlottedGraph``'s (``remove_edges``/``add_edges``): a batch is refused
as a whole, nothing changes, and the error names the first offending edge, checked in this
order (the first category with a failure wins, then the smallest position in the batch, where
deletions come first, then insertions, then weight changes):

0. every endpoint is a stored vertex (new vertices are added with ``add_vertex`` first);
1. no edge twice in the same list (for an undirected graph ``u -- v`` and ``v -- u`` are one);
2. every deleted edge exists;
3. no inserted edge exists once the batch's deletions are done (an edge deleted and inserted
   by one batch is re-inserted, at the end of its list);
4. a weight change names an edge that exists and that the batch neither deletes nor inserts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kernels.errors import GraphEditError, ParameterError

CATEGORIES = ("vertex", "duplicate", "absent", "present", "reweight")
NO_FAILURE = np.iinfo(np.int64).max


@dataclass
class Batch:
    """A checked batch: int32 endpoints, weights in the pool's dtype (None if unweighted)."""

    delete_u: np.ndarray
    delete_v: np.ndarray
    insert_u: np.ndarray
    insert_v: np.ndarray
    insert_w: np.ndarray | None
    reweight_u: np.ndarray
    reweight_v: np.ndarray
    reweight_w: np.ndarray | None
    directed: bool

    @property
    def size(self) -> int:
        """Edge updates in the batch (an undirected edge counts once)."""
        return len(self.delete_u) + len(self.insert_u) + len(self.reweight_u)

    def edge(self, tag: int) -> tuple[str, int, int]:
        """(kind, u, v) of the edge at position ``tag`` (deletions, then insertions, then weights)."""
        nd, ni = len(self.delete_u), len(self.insert_u)
        if tag < nd:
            return "deletion", int(self.delete_u[tag]), int(self.delete_v[tag])
        if tag < nd + ni:
            return "insertion", int(self.insert_u[tag - nd]), int(self.insert_v[tag - nd])
        t = tag - nd - ni
        return "weight change", int(self.reweight_u[t]), int(self.reweight_v[t])


@dataclass
class BatchReport:
    """What one batch did: sizes, pages written, pages opened and freed, time."""

    path: str                       # "host" or "gpu"
    updates: int                    # edge updates in the batch
    entries_deleted: int
    entries_inserted: int
    weights_changed: int
    pages_touched: np.ndarray = field(repr=False)    # physical pages written (ascending)
    pages_opened: int = 0
    pages_freed: int = 0
    seconds: float = 0.0
    clock: str = "perf_counter"

    @property
    def rate(self) -> float:
        """Edge updates per second (inf for an empty batch timed at zero)."""
        return self.updates / self.seconds if self.seconds > 0 else float("inf")

    def as_dict(self) -> dict:
        return {"path": self.path, "updates": self.updates, "entries_deleted": self.entries_deleted,
                "entries_inserted": self.entries_inserted, "weights_changed": self.weights_changed,
                "pages_touched": int(len(self.pages_touched)), "pages_opened": self.pages_opened,
                "pages_freed": self.pages_freed, "seconds": self.seconds, "rate": self.rate,
                "clock": self.clock}


def _ids(values, name: str) -> np.ndarray:
    arr = np.asarray(values if values is not None else [], dtype=None)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise GraphEditError(f"{name} must be integer vertex ids, not {arr.dtype}")
    return arr.astype(np.int64, copy=False).ravel()


def _pairs(g, pair, name: str, with_weights: bool):
    """(u, v, w) of one part of a batch: ``(us, vs)`` or ``(us, vs, ws)``."""
    if pair is None:
        empty = np.zeros(0, dtype=np.int32)
        return empty, empty, (np.zeros(0, dtype=g.weight_dtype) if g.weighted else None)
    if not isinstance(pair, (tuple, list)) or len(pair) not in (2, 3):
        raise ParameterError(name, type(pair).__name__, "a pair (sources, targets) or a triple "
                             "(sources, targets, weights)")
    us, vs = _ids(pair[0], f"{name} sources"), _ids(pair[1], f"{name} targets")
    if len(us) != len(vs):
        raise ParameterError(name, f"{len(us)} sources and {len(vs)} targets", "as many targets as sources")
    n = g.next_vertex_id
    for arr in (us, vs):
        if len(arr) and (arr.min() < 0 or arr.max() >= n):
            bad = int(arr[np.argmax((arr < 0) | (arr >= n))])
            raise GraphEditError(f"vertex {bad} does not exist (ids run from 0 to {n - 1})")
    ws = pair[2] if len(pair) == 3 else None
    if ws is not None and not with_weights:
        raise ParameterError(name, "weights", "(sources, targets) only")
    if ws is not None:
        ws = g.checked_weights(ws, len(us))
    elif g.weighted:
        if name == "reweight":
            raise ParameterError(name, "(sources, targets)", "(sources, targets, weights)")
        ws = np.ones(len(us), dtype=np.float64)
    if ws is not None:
        ws = ws.astype(g.weight_dtype)
    return us.astype(np.int32), vs.astype(np.int32), ws


def prepare(g, insert=None, delete=None, reweight=None) -> Batch:
    """Check the shapes and types of a batch for ``g`` (a ``SlottedGraph``) and the ids' range;
    the other rules are checked by the path that applies it."""
    if g.one_sided_entries:
        raise GraphEditError("batch updates need both directions of every undirected edge; this "
                             "graph has one-sided entries (a vertex was removed with clean=False)")
    if reweight is not None and not g.weighted:
        raise ParameterError("reweight", "weight changes", "None (this graph is unweighted)")
    du, dv, _ = _pairs(g, delete, "delete", with_weights=False)
    iu, iv, iw = _pairs(g, insert, "insert", with_weights=True)
    ru, rv, rw = _pairs(g, reweight, "reweight", with_weights=True)
    return Batch(du, dv, iu, iv, iw, ru, rv, rw, g.directed)


def expand(u: np.ndarray, v: np.ndarray, directed: bool, first_tag: int):
    """The adjacency entries of edges (u, v): (sources, targets, tags, edge of each entry).
    An undirected edge gives u -> v then v -> u (a self-loop one entry); ``tags`` are the
    edges' batch positions."""
    tags = np.arange(first_tag, first_tag + len(u), dtype=np.int64)
    if directed:
        return u, v, tags, np.arange(len(u), dtype=np.int64)
    keep = np.ones(2 * len(u), dtype=bool)
    keep[1::2] = u != v
    src = np.empty(2 * len(u), dtype=np.int32)
    dst = np.empty(2 * len(u), dtype=np.int32)
    src[0::2], src[1::2] = u, v
    dst[0::2], dst[1::2] = v, u
    edge = np.repeat(np.arange(len(u), dtype=np.int64), 2)[keep]
    return src[keep], dst[keep], tags[edge], edge


def refusal(g, batch: Batch, category: int, tag: int) -> GraphEditError:
    """The error for the first failure: ``category`` (index into CATEGORIES), batch position."""
    kind, u, v = batch.edge(int(tag))
    text = f"{u} -> {v}" if batch.directed else f"{u} -- {v}"
    if category == 0:
        bad = u if not g.has_vertex(u) else v
        end = "source" if bad == u else "target"
        n = g.next_vertex_id
        if 0 <= bad < n:
            return GraphEditError(f"{end} {bad} of {kind} {text} was removed (ids are not reused; "
                                  f"add_vertex(vertex={bad}) restores it)")
        return GraphEditError(f"{end} {bad} of {kind} {text} does not exist")
    if category == 1:
        return GraphEditError(f"edge {text} appears twice in the batch's {kind}s")
    if category == 2:
        return GraphEditError(f"edge {text} does not exist")
    if category == 3:
        return GraphEditError(f"edge {text} already exists (duplicate edges are refused)")
    return GraphEditError(f"edge {text} has no weight to change: it does not exist, or this batch "
                          "deletes or inserts it")


def first_failure(failures: np.ndarray):
    """(category, tag) of the first failure in a per-category array of smallest tags, or None."""
    for c, tag in enumerate(failures):
        if tag != NO_FAILURE:
            return c, int(tag)
    return None
