"""A slotted graph whose device mirror persists across runs: the "live pages" a run may use.

A run normally builds its own device data from the CSR snapshot it is given. A variant that
declares ``live_pages`` (``gpu-slotted`` BFS/SSSP) can instead run on the pages of a
structure that is edited between runs: :class:`LivePages` keeps that structure's
:class:`~kernels.graph.device.DeviceMirror` alive, so the first run uploads every page and each
later run uploads only the pages its edits dirtied (:meth:`sync`). The runner puts the object
in ``Problem.live`` and writes :meth:`record_json` into the run record's ``structure`` field:
the page size, the pages, and what the sync before the run moved (pages, bytes, time).

The mirror is created on the first :meth:`sync`, inside the run, after the runner has chosen
the target: ``numba.cuda`` must not be imported before the simulator switch.
"""

from __future__ import annotations

import numpy as np

from kernels.graph.device import SyncReport

PAGE_NUMBERS_KEPT = 256         # physical page numbers listed in a record (the count is always exact)


class LivePages:
    """One slotted structure and its device mirror, kept between runs."""

    def __init__(self, graph, *, strategy: str = "auto"):
        self.graph = graph
        self.strategy = strategy
        self.mirror = None
        self.last_sync: SyncReport | None = None
        self.last_dirty: np.ndarray = np.zeros(0, dtype=np.int64)
        self.revision: int | None = None      # the caller's name for the state (set by LiveDocument)

    @property
    def page_size(self) -> int:
        return self.graph.page_size

    def pending_pages(self) -> np.ndarray:
        """Physical pages written since the last upload (what the next sync sends)."""
        return self.graph.dirty_physical_pages()

    def sync(self) -> SyncReport:
        """Bring the device copy up to date: a full upload the first time, then the dirty pages
        (and the index if it changed) only."""
        from kernels.graph.device import DeviceMirror

        self.last_dirty = self.pending_pages().astype(np.int64)
        if self.mirror is None:
            self.mirror = DeviceMirror(self.graph, upload=False)
            report = self.mirror.upload_full()
        else:
            report = self.mirror.sync(strategy=self.strategy)
        self.last_sync = report
        return report

    def view(self):
        """The operators' view of the mirror (take it after every :meth:`sync`)."""
        from kernels.operators.views import slotted_view

        return slotted_view(self.mirror)

    def record_json(self) -> dict:
        """The run record's ``structure`` field for a run on these pages."""
        g = self.graph
        out = {"live": True, "page_size": g.page_size, "pages": g.num_pages,
               "physical_pages": g.physical_pages_used, "vertices": g.num_vertices,
               "revision": self.revision}
        if self.last_sync is not None:
            out["dirty_pages"] = int(len(self.last_dirty))
            out["dirty_page_numbers"] = [int(p) for p in self.last_dirty[:PAGE_NUMBERS_KEPT]]
            out["sync"] = self.last_sync.as_dict()
        return out

    def release(self) -> None:
        """Drop the device copy (the next sync is a full upload again)."""
        self.mirror = None
        self.last_sync = None
