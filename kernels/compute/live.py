"""The replica of one open document where the kernels run: its slotted pages and their device
mirror, kept up to date by page deltas.

The GUI edits a :class:`~kernels.graph.slotted.SlottedGraph`; every edit is a
:class:`~kernels.graph.slotted.delta.PageDelta`. A :class:`LiveDocument` starts from a
snapshot of that structure (:meth:`SlottedGraph.to_arrays`, validated by ``from_arrays``) and
is brought forward by applying the same deltas (``forward`` = redo, else undo): afterwards its
pages equal the GUI's word for word, and the pages the deltas wrote are flagged dirty, so the
next GPU run uploads exactly those (:class:`~kernels.operators.live_pages.LivePages`).

``revision`` is the caller's number for the state the replica holds: the caller sets it with
every snapshot or batch of deltas and reads it back to know which of its edits the replica has.

A delta that does not fit (the replica holds another state: a lost update, a damaged delta)
raises :class:`ReplicaOutOfDate` and leaves the replica as it was (the deltas of the batch
already applied are undone, word for word): the caller sends a snapshot instead.
"""

from __future__ import annotations

from kernels.errors import GraphKernelsError
from kernels.operators.live_pages import LivePages


class ReplicaOutOfDate(GraphKernelsError):
    """Page deltas do not apply to the replica's state: send a snapshot."""


class UnknownDocument(GraphKernelsError):
    """The worker holds no replica of this document (never opened, closed, or the worker restarted)."""


class LiveDocument:
    """A replica of one document's slotted structure, its CSR per revision and its live pages."""

    def __init__(self, key: str, arrays, revision: int, *, name: str | None = None, verify_deltas: bool = False,
                 sync_strategy: str = "auto"):
        from kernels.graph.slotted import SlottedGraph

        self.key = key
        self.graph = SlottedGraph.from_arrays(arrays, name=name or str(key))
        self.verify_deltas = verify_deltas
        self.live = LivePages(self.graph, strategy=sync_strategy)
        self._csr = None
        self._updater = None                   # the device batch updater, made at the first batch
        self._set_revision(revision)

    @property
    def revision(self) -> int:
        return self.live.revision

    def _set_revision(self, revision: int) -> None:
        if isinstance(revision, bool) or not isinstance(revision, int):
            raise ReplicaOutOfDate(f"document {self.key}: revision {revision!r} is not an integer")
        self.live.revision = revision
        self._csr = None

    def apply(self, deltas, revision: int) -> int:
        """Apply ``[(PageDelta, forward), ...]`` in order and take ``revision``; returns the
        number of pages now waiting for the device. All or nothing (:class:`ReplicaOutOfDate`)."""
        from kernels.graph.slotted.delta import PageDeltaError

        done = []
        try:
            for i, item in enumerate(deltas):
                try:
                    delta, forward = item
                    self.graph.apply_delta(delta, bool(forward), verify=self.verify_deltas)
                except PageDeltaError as exc:
                    raise ReplicaOutOfDate(f"document {self.key} at revision {self.revision}: step {i + 1} of "
                                           f"{len(deltas)} does not apply ({exc}); send a snapshot") from None
                except (TypeError, ValueError, AttributeError):
                    raise ReplicaOutOfDate(f"document {self.key}: step {i + 1} is not a (page delta, direction) "
                                           "pair; send a snapshot") from None
                done.append((delta, bool(forward)))
        except ReplicaOutOfDate:
            for delta, forward in reversed(done):
                self.graph.apply_delta(delta, not forward)
            raise
        self._set_revision(revision)
        return int(len(self.live.pending_pages()))

    def csr(self):
        """The CSR of the current state (built once per revision)."""
        if self._csr is None:
            self._csr = self.graph.to_csr()
        return self._csr

    def run(self, family: str, variant: str, params: dict | None = None, *, target: str | None = None,
            repeat: int = 5, warmup: int = 1, seed: int = 0, verify: bool = True, launch: str = "auto"):
        """``run_variant`` on the current state: a ``live_pages`` variant syncs the dirty pages and
        runs on the mirror; others run on the CSR. Returns the :class:`RunResult`."""
        from kernels.run.runner import run_variant

        return run_variant(self.csr(), family, variant, params, target=target, repeat=repeat, warmup=warmup,
                           seed=seed, verify=verify, live=self.live, launch=launch)

    def apply_batch(self, batch: dict, revision: int) -> dict:
        """A batch of edge updates (``insert=(us, vs[, ws])``, ``delete=(us, vs)``,
        ``reweight=(us, vs, ws)``) applied on the device pages by kernels
        (:class:`~kernels.operators.device_updates.DeviceUpdater`), replayed on the replica's
        host structure and checked page for page; the replica then holds ``revision``.

        Returns ``{"report", "delta", "vertices", "verified", "check_s"}``: the batch's
        ``BatchReport`` (rate, pages written, opened, freed), the ``PageDelta`` of the pages it
        wrote (what the caller replays on its own structure, word for word) and the vertices
        whose lists it touched. A refused batch (``GraphEditError``: a duplicate, a present
        insert, an absent delete, an unknown vertex) changes nothing."""
        from kernels.graph.update_batches import batch_vertices
        from kernels.operators.device_updates import DeviceUpdater

        if isinstance(revision, bool) or not isinstance(revision, int):
            raise ReplicaOutOfDate(f"document {self.key}: revision {revision!r} is not an integer")
        batch = {k: v for k, v in batch.items() if k in ("insert", "delete", "reweight") and v is not None}
        self.live.sync()                       # the device holds the replica's pages before the batch
        if self._updater is None or self._updater.mirror is not self.live.mirror:
            self._updater = DeviceUpdater(self.live.mirror)
        vertices = batch_vertices(batch, self.graph.next_vertex_id)
        # the delta is read off the dirty flags: marked synced (the device holds the pages) after
        result, delta = self.graph.record_edit(lambda g: self._updater.apply(**batch, mark_synced=False), vertices)
        self.graph.mark_synced()
        self._set_revision(revision)
        return {"report": result.report, "delta": delta, "vertices": vertices, "verified": result.verified,
                "check_s": result.check_seconds}

    def summary(self) -> dict:
        g = self.graph
        return {"key": self.key, "revision": self.revision, "pages": g.num_pages, "page_size": g.page_size,
                "pending_pages": int(len(self.live.pending_pages())), "vertices": g.num_vertices,
                "edges": g.num_edges, "on_device": self.live.mirror is not None}

    def close(self) -> None:
        self.live.release()
