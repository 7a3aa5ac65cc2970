"""Every edit of a graph as an undoable command storing a page delta. Qt-free.

Use :func:`push`: it puts the command on the document's undo stack
(:class:`~explorer.model.undo.UndoStack`), which performs the edit first (:meth:`~StructureEdit.do`:
a refused edit raises ``GraphKernelsError`` and nothing is pushed or changed). Undo and redo
write the recorded pages back (``SlottedGraph.apply_delta``, see
:mod:`kernels.graph.slotted.delta`), so the structure returns
to exactly the pages it had. A batch is one command, hence one undo step. Changing the page
size swaps whole structures (the old one is kept by the command).

The factories (:func:`add_edge`, :func:`random_batch`...) build commands; the helpers at the
bottom pick random edges for batches and rebuild structures (any thread).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from explorer.model.undo import Command
from kernels.errors import GraphEditError, ParameterError
from kernels.graph.slotted import PageDelta, SlottedGraph
from kernels.graph.update_batches import batch_vertices

# Words a rule case is called in the GUI (the names are the layout's CASE_NAMES).
CASE_WORDS = {
    "add_in_place": "room in the page: later lists shifted",
    "add_move_following": "page full: the following lists moved to a new page",
    "add_move_own": "page full: the source's list moved to a new page",
    "add_become_large": "page full, list alone: it became a large list",
    "add_large_append": "appended to a large list",
    "add_large_new_page": "a page added to a large list",
    "remove_in_page": "swapped with the last entry, records compacted",
    "remove_large": "removed inside a large list",
    "remove_free_trailing_page": "a large list's empty trailing page freed",
    "remove_large_to_ordinary": "a large list became an ordinary page",
    "vertex_to_last_page": "vertex joined the last page",
    "vertex_new_page": "vertex opened a new page",
    "vertex_restore_in_page": "vertex put back in its page",
    "vertex_restore_split": "vertex put back, page split",
    "vertex_restore_new_page": "vertex put back on a page of its own",
    "vertex_remove": "record and slot dropped",
    "vertex_remove_delete_page": "the emptied page was deleted",
    "vertex_remove_large": "a large list's pages were freed",
}


@dataclass
class EditSummary:
    """What an edit (or its undo/redo) did, for views and the status line."""

    text: str
    cases: dict[str, int] = field(default_factory=dict)
    pages: np.ndarray | None = None         # physical pages written (None: all, e.g. a rebuild)
    direction: str = "do"                   # do | undo | redo

    def describe(self) -> str:
        prefix = {"do": "", "undo": "undone: ", "redo": "redone: "}[self.direction]
        how = "; ".join(f"{CASE_WORDS.get(k, k)}" + (f" ×{n}" if n > 1 else "")
                        for k, n in self.cases.items() if n > 0)
        return prefix + self.text + (f" ({how})" if how and self.direction == "do" else "")


class StructureEdit(Command):
    """One edit (single or batch) of a document's slotted structure, as a page delta."""

    kind = "edit"

    def __init__(self, document, text: str, edit: Callable[[SlottedGraph], object],
                 vertices: Iterable[int] | Callable[[SlottedGraph], Iterable[int]] = (),
                 describe_result: Callable[[object], str] | None = None):
        self.document = document
        self.text = text
        self._edit = edit
        self._vertices = vertices
        self._describe_result = describe_result
        self.delta: PageDelta | None = None
        self.structure: SlottedGraph | None = None     # the structure the delta applies to
        self.result = None

    @classmethod
    def recorded(cls, document, text: str, structure: SlottedGraph, delta: PageDelta) -> StructureEdit:
        """An edit already applied to ``structure`` (a session's history): undo and redo only."""
        command = cls(document, text, lambda g: None)
        command.structure, command.delta = structure, delta
        return command

    def do(self) -> None:
        """Perform the edit on the live structure, recording its delta."""
        g = self.document.slotted
        if g is None:
            raise GraphEditError(f"'{self.document.name}' cannot be edited: {self.document.not_editable_reason}")
        if self.document.busy_reason:
            raise GraphEditError(f"'{self.document.name}' is busy: {self.document.busy_reason}")
        with self.document.editing():
            self.result, self.delta = g.record_edit(self._edit, self._vertices)
        self.structure = g
        if self._describe_result is not None:
            self.text = self._describe_result(self.result)
        self.document._structure_changed(self._summary("do"), self.delta, forward=True)

    def _summary(self, direction: str) -> EditSummary:
        return EditSummary(self.text, self.delta.cases(), self.delta.pages, direction)

    def redo(self) -> None:
        with self.document.editing():
            self.structure.apply_delta(self.delta, forward=True)
        self.document._structure_changed(self._summary("redo"), self.delta, forward=True)

    def undo(self) -> None:
        with self.document.editing():
            self.structure.apply_delta(self.delta, forward=False)
        self.document._structure_changed(self._summary("undo"), self.delta, forward=False)


class ReplaceStructure(Command):
    """Swap the document's structure for another (a rebuild with a new page size)."""

    kind = "replace"

    def __init__(self, document, text: str, new_structure: SlottedGraph):
        self.document = document
        self.text = text
        self.old: SlottedGraph | None = None
        self.new = new_structure

    @classmethod
    def recorded(cls, document, text: str, old: SlottedGraph, new: SlottedGraph) -> ReplaceStructure:
        """A replacement already made (a session's history): undo and redo only."""
        command = cls(document, text, new)
        command.old = old
        return command

    def do(self) -> None:
        self.old = self.document.slotted
        if self.old is None:
            raise GraphEditError(f"'{self.document.name}' cannot be edited: {self.document.not_editable_reason}")
        self.document._replace_structure(self.new, EditSummary(self.text, {}, None, "do"))

    def redo(self) -> None:
        self.document._replace_structure(self.new, EditSummary(self.text, {}, None, "redo"))

    def undo(self) -> None:
        self.document._replace_structure(self.old, EditSummary(self.text, {}, None, "undo"))


def push(document, command: Command) -> object:
    """Perform ``command`` and put it on the document's undo stack; returns its result.

    Raises ``GraphKernelsError`` (nothing changed, nothing pushed) when the edit is refused."""
    document.undo_stack.push(command)
    return getattr(command, "result", None)


# ---- factories ------------------------------------------------------------------------------
def _id(value, what: str) -> int:
    """A vertex id typed or passed by the GUI: an integer, or a string / float holding one."""
    try:
        if isinstance(value, (bool, np.bool_)):
            raise TypeError
        if isinstance(value, (int, np.integer)):
            return int(value)
        number = float(value)
        if number.is_integer():
            return int(number)
    except (TypeError, ValueError):
        pass
    raise GraphEditError(f"{what} must be a vertex id (a whole number), not {value!r}")


def add_vertex(document) -> StructureEdit:
    return StructureEdit(document, "add vertex", lambda g: g.add_vertex(),
                         describe_result=lambda v: f"add vertex {v}")


def remove_vertex(document, v, clean: bool = True) -> StructureEdit:
    v = _id(v, "vertex")
    how = "" if clean else " (edges pointing to it kept)"
    return StructureEdit(document, f"remove vertex {v}{how}", lambda g: g.remove_vertex(v, clean=clean),
                         vertices=lambda g: [v, *g.sources_of(v).tolist()] if g.has_vertex(v) else [v])


def _edge_text(document, u, v) -> str:
    return f"{u} -> {v}" if document.directed else f"{u} -- {v}"


def add_edge(document, u, v, weight: float | None = None) -> StructureEdit:
    u, v = _id(u, "source"), _id(v, "target")
    return StructureEdit(document, f"add edge {_edge_text(document, u, v)}",
                         lambda g: g.add_edge(u, v, weight), vertices=[u, v])


def remove_edge(document, u, v) -> StructureEdit:
    u, v = _id(u, "source"), _id(v, "target")
    return StructureEdit(document, f"remove edge {_edge_text(document, u, v)}",
                         lambda g: g.remove_edge(u, v), vertices=[u, v])


def edit_edge(document, u, old_v, new_v, weight: float | None = None) -> StructureEdit:
    u, old_v, new_v = _id(u, "source"), _id(old_v, "old target"), _id(new_v, "new target")
    return StructureEdit(document, f"edit edge {_edge_text(document, u, old_v)} to {_edge_text(document, u, new_v)}",
                         lambda g: g.edit_edge(u, old_v, new_v, weight), vertices=[u, old_v, new_v])


BATCH_MODES = ("add", "remove", "mixed")
# how a batch reaches the pages: the engine's one edit at a time, or one vectorised host batch
# (SlottedGraph.apply_updates, the rules and layout of docs/updates.md)
BATCH_PATHS = ("engine", "host")


def _batch_text(report) -> str:
    """A vectorised batch's report in words: its rate and the pages it wrote."""
    return (f"{report.updates:,} updates at {report.rate:,.0f} updates/s, "
            f"{len(report.pages_touched):,} page(s) written, {report.pages_opened} opened, "
            f"{report.pages_freed} freed")


def draw_random_batch(document, size: int, mode: str = "mixed", seed: int = 0) -> tuple[dict, str]:
    """``size`` random edge edits for ``document``: new edges, existing edges removed, or half of
    each; the same seed on the same graph picks the same edges. Returns ``(batch, text)``: the
    ``apply_updates`` keywords (``insert``, ``delete``) and the batch in words."""
    g = document.slotted
    if g is None:
        raise GraphEditError(f"'{document.name}' cannot be edited: {document.not_editable_reason}")
    return draw_random_batch_from(document.csr(), g.vertices(), size, mode, seed)


def draw_random_batch_from(csr, vertices, size: int, mode: str = "mixed", seed: int = 0) -> tuple[dict, str]:
    """:func:`draw_random_batch` from a CSR snapshot and the live vertex ids (any thread)."""
    if mode not in BATCH_MODES:
        raise ParameterError("mode", mode, "one of " + ", ".join(BATCH_MODES))
    size = int(size)
    if size < 1:
        raise ParameterError("size", size, "a whole number >= 1")
    rng = np.random.default_rng(seed)
    n_remove = {"add": 0, "remove": size, "mixed": size // 2}[mode]
    n_add = size - n_remove
    r_us, r_vs = random_existing_edges(csr, n_remove, rng)
    a_us, a_vs = random_new_edges(csr, vertices, n_add, rng, exclude=(r_us, r_vs))
    parts = []
    if n_add:
        parts.append(f"{len(a_us)} added")
    if n_remove:
        parts.append(f"{len(r_us)} removed")
    text = f"random batch of {len(a_us) + len(r_us)} edge edits ({', '.join(parts)}; seed {seed})"
    return {"insert": (a_us, a_vs), "delete": (r_us, r_vs)}, text


def random_batch(document, size: int, mode: str = "mixed", seed: int = 0, path: str = "engine") -> StructureEdit:
    """``size`` random edge edits as one command (:func:`draw_random_batch`). ``path`` "host"
    applies them as one vectorised batch (the command's text then gives its rate and pages)."""
    if path not in BATCH_PATHS:
        raise ParameterError("path", path, "one of " + ", ".join(BATCH_PATHS))
    batch, text = draw_random_batch(document, size, mode, seed)
    (a_us, a_vs), (r_us, r_vs) = batch["insert"], batch["delete"]

    def edit(g: SlottedGraph):
        if path == "host":
            return g.apply_updates(insert=(a_us, a_vs), delete=(r_us, r_vs))
        if len(r_us):
            g.remove_edges(r_us, r_vs)
        if len(a_us):
            g.add_edges(a_us, a_vs)
        return len(r_us), len(a_us)

    describe = (lambda report: f"{text}, vectorised: {_batch_text(report)}") if path == "host" else None
    return StructureEdit(document, text, edit, vertices=batch_vertices(batch, document.slotted.next_vertex_id),
                         describe_result=describe)


def file_batch(document, path) -> StructureEdit:
    """The updates of a batch file (``+ u v [w]``, ``- u v``, ``= u v w`` lines:
    :mod:`kernels.graph.update_batches`) as one vectorised batch, one command (one undo step)."""
    from pathlib import Path

    from kernels.graph.update_batches import read_batch_file

    g = document.slotted
    if g is None:
        raise GraphEditError(f"'{document.name}' cannot be edited: {document.not_editable_reason}")
    batch = read_batch_file(path)
    vertices = batch_vertices(batch, g.next_vertex_id)
    name = Path(path).name
    return StructureEdit(document, f"batch file {name}", lambda s: s.apply_updates(**batch), vertices=vertices,
                         describe_result=lambda report: f"batch file {name}: {_batch_text(report)}")


def replayed_batch(document, text: str, report, page_delta: PageDelta, vertices, how: str = "vectorised"
                   ) -> StructureEdit:
    """A batch applied elsewhere (to a copy in the background, :func:`batch_on_copy`; on a
    worker's device pages), replayed on the live structure from its page delta (word for word,
    checked), as one command. ``how`` names where it was applied, in the command's text."""
    return StructureEdit(document, text, lambda g: (g.apply_delta(page_delta, forward=True), report)[1],
                         vertices=vertices, describe_result=lambda r: f"{text}, {how}: {_batch_text(r)}")


def batch_on_copy(copy: SlottedGraph, size: int, mode: str, seed: int):
    """For a worker thread: a random batch applied to ``copy`` with the host path.
    Returns ``(text, report, page delta, vertices)``; :func:`replayed_batch` puts it on the
    live structure."""
    from kernels.graph.update_batches import existing_edges, new_edges

    if mode not in BATCH_MODES:
        raise ParameterError("mode", mode, "one of " + ", ".join(BATCH_MODES))
    rng = np.random.default_rng(seed)
    n_remove = {"add": 0, "remove": size, "mixed": size // 2}[mode]
    csr = copy.to_csr()
    r_us, r_vs = existing_edges(csr, min(n_remove, copy.num_edges), rng)
    a_us, a_vs = new_edges(csr, size - n_remove, rng, vertices=copy.vertices())
    vertices = np.unique(np.concatenate([r_us, r_vs, a_us, a_vs])).tolist()
    report, page_delta = copy.record_edit(lambda g: g.apply_updates(insert=(a_us, a_vs), delete=(r_us, r_vs)),
                                          vertices)
    text = f"random batch of {len(a_us) + len(r_us)} edge edits ({len(a_us)} added, {len(r_us)} removed; seed {seed})"
    return text, report, page_delta, vertices


def change_page_size(document, new_structure: SlottedGraph) -> ReplaceStructure:
    old = document.page_size
    return ReplaceStructure(document, f"page size {old} -> {new_structure.page_size} (rebuild)", new_structure)


# ---- helpers (any thread) ------------------------------------------------------------------
def structure_snapshot(g: SlottedGraph) -> dict:
    """What a rebuild needs, taken on the GUI thread so the rebuild can run in another one."""
    return {"csr": g.to_csr(), "live": g.vertices(), "one_sided": g.one_sided_entries,
            "weight_dtype": g.weight_dtype, "name": g.name}


def rebuild_structure(snapshot: dict, page_size: int) -> SlottedGraph:
    """The same graph (same ids, removed ids stay removed) bulk-built on pages of a new size."""
    new = SlottedGraph.from_csr(snapshot["csr"], page_size=page_size, weight_dtype=snapshot["weight_dtype"],
                                live=snapshot["live"], one_sided=snapshot["one_sided"])
    new.name = snapshot["name"]
    return new


def random_existing_edges(csr, k: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """``k`` distinct stored edges (each undirected edge once); fewer if the graph has fewer."""
    if k <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rows = csr.row_of_entry().astype(np.int64)
    cols = csr.indices.astype(np.int64)
    if not csr.directed:
        keep = rows <= cols
        rows, cols = rows[keep], cols[keep]
    if len(rows) == 0:
        raise GraphEditError("the graph has no edges to remove")
    pick = rng.choice(len(rows), size=min(k, len(rows)), replace=False)
    return rows[pick], cols[pick]


def random_new_edges(csr, vertices: np.ndarray, k: int, rng, exclude=None) -> tuple[np.ndarray, np.ndarray]:
    """``k`` distinct absent edges between live vertices (no self-loops)."""
    if k <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    vertices = np.asarray(vertices, dtype=np.int64)
    n_ids = max(csr.n_rows, 1)
    nv = len(vertices)
    possible = nv * (nv - 1) // (1 if csr.directed else 2)
    # rows ascend and columns ascend within rows, so these keys are already sorted
    existing_keys = csr.row_of_entry().astype(np.int64) * n_ids + csr.indices.astype(np.int64)
    excluded = np.zeros(0, np.int64)
    if exclude is not None and len(exclude[0]):
        excluded = np.concatenate([exclude[0] * n_ids + exclude[1], exclude[1] * n_ids + exclude[0]])
    present = csr.nnz if csr.directed else (csr.nnz - csr.num_self_loops) // 2
    if k > possible - present:
        raise GraphEditError(f"only {max(possible - present, 0)} new edges are possible between "
                             f"{nv} vertices; asked for {k}")
    found_u: list[np.ndarray] = []
    found_v: list[np.ndarray] = []
    chosen = np.zeros(0, np.int64)
    for _ in range(64):
        need = k - len(chosen)
        if need <= 0:
            break
        m = max(2 * need, 16)
        u = vertices[rng.integers(0, nv, m)]
        v = vertices[rng.integers(0, nv, m)]
        ok = u != v
        u, v = u[ok], v[ok]
        if not csr.directed:
            u, v = np.minimum(u, v), np.maximum(u, v)
        keys = u * n_ids + v
        pos = np.searchsorted(existing_keys, keys)
        pos = np.minimum(pos, len(existing_keys) - 1) if len(existing_keys) else pos
        absent = (existing_keys[pos] != keys) if len(existing_keys) else np.ones(len(keys), bool)
        absent &= ~np.isin(keys, excluded)
        keys, u, v = keys[absent], u[absent], v[absent]
        _, first = np.unique(keys, return_index=True)
        first.sort()
        keys, u, v = keys[first], u[first], v[first]
        fresh = ~np.isin(keys, chosen)
        keys, u, v = keys[fresh][:need], u[fresh][:need], v[fresh][:need]
        chosen = np.concatenate([chosen, keys])
        found_u.append(u)
        found_v.append(v)
    us = np.concatenate(found_u) if found_u else np.zeros(0, np.int64)
    vs = np.concatenate(found_v) if found_v else np.zeros(0, np.int64)
    if len(us) < k:
        raise GraphEditError(f"could not find {k} new edges at random (found {len(us)}): the graph is nearly complete")
    return us, vs
