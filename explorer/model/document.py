"""One open graph: the model the views show and the commands edit. Qt-free.

A :class:`GraphDocument` holds either a live :class:`~kernels.graph.slotted.SlottedGraph`
(editable) or, for inputs slotted pages cannot hold (a rectangular matrix, repeated entries),
a read-only :class:`~kernels.graph.csr.CSRGraph` and the reason in words. It owns the undo
stack of its edits (:class:`~explorer.model.undo.UndoStack`). Views read from it and observe
``events`` (``changed(summary)`` after every edit, undo and redo, ``renamed(name)``,
``synced()`` when the dirty marks were cleared); they never write to it: every change goes
through :mod:`explorer.model.commands`, which call :meth:`_structure_changed`. The Qt views
observe it through ``explorer.model_signals``, which re-emits these as Qt signals.

``key`` identifies the content for the compute side: it changes with every edit (the worker
caches graphs by key), and :meth:`csr` returns the snapshot for that key, built once per
revision.
"""

from __future__ import annotations

import contextlib
import itertools

from explorer.model.events import Notifier
from explorer.model.undo import UndoStack
from kernels.compute.documents import EditJournal
from kernels.graph.csr import CSRGraph

_ids = itertools.count(1)
UNDO_LIMIT = 500          # steps kept per graph; a step costs the size of its change


class DocumentEvents:
    """What a document tells its observers."""

    def __init__(self):
        self.changed = Notifier("changed")      # an EditSummary (or None after load / rename)
        self.renamed = Notifier("renamed")      # the new name
        self.synced = Notifier("synced")        # the dirty marks were cleared


class GraphDocument:
    """A graph open in a tab: content, name, undo history, change notifications."""

    def __init__(self, *, name: str, csr: CSRGraph | None = None, slotted=None, source: str = "",
                 not_editable_reason: str = "", info: dict | None = None, page_size: int | None = None):
        if csr is None and slotted is None:
            raise ValueError("a document needs a CSR graph or a slotted graph")
        self.doc_id = next(_ids)
        self._name = name
        self.source = source
        self._slotted = slotted
        self._base_csr = csr if slotted is None else None
        self.not_editable_reason = "" if slotted is not None else (not_editable_reason or "read-only graph")
        self.revision = 0
        self._csr_cache: tuple[int, CSRGraph] | None = None
        if slotted is None and csr is not None:
            self._csr_cache = (0, csr)
        elif slotted is not None and csr is not None and _same_graph(csr, slotted):
            self._csr_cache = (0, csr)            # the loaded CSR is the snapshot of revision 0
        self._info_cache: tuple[int, dict] | None = (0, info) if info is not None else None
        self._page_size = page_size or (slotted.page_size if slotted is not None else None)
        self.events = DocumentEvents()
        self.undo_stack = UndoStack(limit=UNDO_LIMIT)
        self.last_edit = None
        self.busy_reason = ""            # set while a background rebuild owns the structure: edits are refused
        self.tab_order = 0               # where the window shows it among the tabs
        # the deltas of every edit, numbered by revision: a run on the live pages sends the
        # worker's replica only what it lacks (kernels.compute.documents)
        self.journal = EditJournal(slotted, revision=0) if slotted is not None else None
        self.last_sync = None            # (revision, DocumentSync as JSON) of the last run on the live pages

    # ---- identity -------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    def set_name(self, name: str) -> None:
        name = name.strip()
        if name and name != self._name:
            self._name = name
            self.events.renamed.emit(name)

    @property
    def key(self) -> str:
        """Stable while the content is unchanged; a new value after every edit."""
        return f"{self.doc_id}-{self.revision}"

    # ---- content --------------------------------------------------------------------
    @property
    def editable(self) -> bool:
        return self._slotted is not None

    @property
    def slotted(self):
        """The live slotted structure (``None`` for a read-only graph). Read it, never write it:
        edits go through :mod:`explorer.model.commands`."""
        return self._slotted

    @property
    def page_size(self) -> int | None:
        return self._slotted.page_size if self._slotted is not None else self._page_size

    @property
    def directed(self) -> bool:
        return self._slotted.directed if self._slotted is not None else self._base_csr.directed

    @property
    def weighted(self) -> bool:
        return self._slotted.weighted if self._slotted is not None else self._base_csr.weighted

    def csr(self) -> CSRGraph:
        """The CSR snapshot of the current content (built once per revision)."""
        if self._csr_cache is not None and self._csr_cache[0] == self.revision:
            return self._csr_cache[1]
        snapshot = self._slotted.to_csr(name=self._name)
        self._csr_cache = (self.revision, snapshot)
        return snapshot

    def cached_info(self) -> dict | None:
        """Statistics of the current revision if already computed (see :meth:`store_info`)."""
        if self._info_cache is not None and self._info_cache[0] == self.revision:
            return self._info_cache[1]
        return None

    def store_info(self, revision: int, info: dict) -> None:
        if revision == self.revision:
            self._info_cache = (revision, info)

    @property
    def num_vertices(self) -> int:
        return self._slotted.num_vertices if self._slotted is not None else self._base_csr.n_rows

    @property
    def num_edges(self) -> int:
        return self._slotted.num_edges if self._slotted is not None else self._base_csr.num_edges

    # ---- change notification (called by commands only) -------------------------------
    def editing(self):
        """Hold this while writing the structure: a run on another thread sending its pages to a
        worker never sees half an edit."""
        return self.journal.lock if self.journal is not None else contextlib.nullcontext()

    def _structure_changed(self, summary=None, delta=None, forward: bool = True) -> None:
        with self.editing():
            self.revision += 1
            if self.journal is not None and delta is not None:
                self.journal.record(delta, forward, revision=self.revision)
        self.last_edit = summary
        self.events.changed.emit(summary)

    def _replace_structure(self, slotted, summary=None) -> None:
        """Swap in another slotted structure (page-size change, undo of one)."""
        with self.editing():
            self._slotted = slotted
            self.revision += 1
            if self.journal is not None:
                self.journal.replace(slotted, revision=self.revision)
        self.last_edit = summary
        self.events.changed.emit(summary)

    # ---- the live pages on a worker ----------------------------------------------------
    def pending_pages(self) -> int | None:
        """Pages written since the last run on the live pages (what its sync will send); ``None``
        when the next run sends the whole structure (no run yet, or a page-size change since)."""
        if self.journal is None or self.last_sync is None:
            return None
        return self.journal.pending_pages(self.last_sync[0])

    def note_sync(self, revision: int, sync: dict) -> None:
        """A run on the live pages brought a worker's replica to ``revision``."""
        self.last_sync = (revision, sync)
        if self._slotted is not None and revision == self.revision:
            self._slotted.mark_synced()
        self.events.synced.emit()

    # ---- device sync bookkeeping ------------------------------------------------------
    def mark_synced(self) -> None:
        """The pages are now on the device: forget the dirty marks. Called by whoever uploads
        the structure (the compute side), and once after loading: a fresh structure has never
        been uploaded, and its first sync is a full upload anyway, so marking every page of a
        new graph dirty would show nothing useful."""
        if self._slotted is not None:
            self._slotted.mark_synced()
            self.events.synced.emit()

    def __repr__(self) -> str:
        kind = "slotted" if self.editable else "read-only CSR"
        return f"GraphDocument({self._name!r}, key={self.key}, {kind})"


def _same_graph(csr: CSRGraph, slotted) -> bool:
    return (csr.n_rows == slotted.next_vertex_id and csr.nnz == slotted.num_entries
            and csr.directed == slotted.directed and csr.weighted == slotted.weighted
            and slotted.num_vertices == csr.n_rows)
