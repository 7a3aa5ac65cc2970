"""Live documents on a compute backend: what the caller provides, what crosses, and the report.

The GUI edits a slotted structure; the kernels run where the GPU is, on a replica of that
structure (:class:`~kernels.compute.live.LiveDocument`) kept by the worker. Before each run
the backend brings the replica to the caller's current revision by sending, in this order of
preference:

* **nothing**, when the replica already holds that revision;
* **deltas**: the page deltas of the edits since the replica's revision (undo steps are the
  same deltas applied backward), a few pages each;
* a **snapshot** of the whole structure: the first time, after the worker lost the replica
  (restart, crash, a lost Dask worker), when the caller no longer keeps the deltas since the
  replica's revision, or when they do not apply (:class:`ReplicaOutOfDate`).

The caller implements :class:`DocumentSource` (or uses :class:`EditJournal`, which does);
the backend returns the run's :class:`~kernels.compute.backend.Outcome` and a
:class:`DocumentSync`: what crossed, its size and time, and the device sync that followed
(pages and bytes uploaded, time), taken from the run record's ``structure`` field.

A backend reaches a replica through a :class:`DocumentChannel` (the local worker process, or a
Dask actor on a GPU worker); :func:`run_on_channel` is the protocol above, shared by both.
"""

from __future__ import annotations

import pickle
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Protocol, runtime_checkable

from kernels.compute.live import ReplicaOutOfDate, UnknownDocument
from kernels.errors import GraphKernelsError
from kernels.memory import format_bytes

JOURNAL_LIMIT_BYTES = 256 * 2**20       # deltas an EditJournal keeps before forgetting the oldest


@runtime_checkable
class DocumentSource(Protocol):
    """The caller's side of a live document (the GUI's open graph).

    ``revision`` numbers the current state (it grows with every edit, undo and redo);
    ``snapshot()`` returns ``(SlottedGraph.to_arrays() copies, revision)``;
    ``deltas_since(r)`` returns the ``[(PageDelta, forward), ...]`` that take state ``r`` to the
    current one, or ``None`` when they are no longer known (a snapshot is sent instead).
    Both are called on the backend's calling thread: they must not see a half-made edit."""

    @property
    def revision(self) -> int: ...

    def snapshot(self) -> tuple[dict, int]: ...

    def deltas_since(self, revision: int) -> list | None: ...


@dataclass
class DocumentSync:
    """What one :meth:`ComputeBackend.run_on_document` sent before the run, and what followed.

    ``sent``: ``"nothing"``, ``"deltas"`` or ``"snapshot"`` (``reason`` says why a snapshot);
    ``steps`` deltas; ``bytes_sent``: their pickled size; ``seconds``: sending and applying
    them on the replica (a round trip); ``revision``: the state the run saw; ``device``: the
    run's device sync (``SyncReport.as_dict()``: ``pages``, ``bytes``, ``seconds``,
    ``strategy``, ``kind`` "full" or "sync"), ``None`` when the variant runs on the CSR;
    ``dirty_pages``: the pages that waited for that sync."""

    sent: str = "nothing"
    reason: str = ""
    steps: int = 0
    bytes_sent: int = 0
    seconds: float = 0.0
    revision: int | None = None
    worker: str = ""
    device: dict | None = None
    dirty_pages: int | None = None

    def to_json(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        """One line for a log: what crossed to the worker, then what crossed to the device."""
        if self.sent == "nothing":
            text = "replica up to date: nothing sent"
        elif self.sent == "deltas":
            text = (f"sent {self.steps} page delta{'s' if self.steps != 1 else ''} "
                    f"({format_bytes(self.bytes_sent)}, {self.seconds * 1e3:.1f} ms)")
        else:
            text = f"sent a snapshot ({format_bytes(self.bytes_sent)}, {self.seconds * 1e3:.1f} ms): {self.reason}"
        if self.device is not None:
            what = "full upload" if self.device.get("kind") == "full" else "device sync"
            text += (f"; {what}: {self.device['pages']} page{'s' if self.device['pages'] != 1 else ''}, "
                     f"{format_bytes(self.device['bytes'])}, {self.device['seconds'] * 1e3:.2f} ms")
        return text


def payload_bytes(obj) -> int:
    """The pickled size of ``obj`` (protocol 5, arrays as out-of-band buffers: nothing is copied)."""
    buffers: list = []
    head = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    return len(head) + sum(memoryview(b.raw()).nbytes for b in buffers)


class ChannelFailure(Exception):
    """The way to the replica failed (a crash, a time limit, a lost worker): an Outcome failure."""

    def __init__(self, failure: str, message: str):
        self.failure = failure
        super().__init__(message)


class DocumentChannel(ABC):
    """How a backend reaches one document's replica. ``revision`` is what the backend believes
    the replica holds (``None``: nothing yet, or lost)."""

    def __init__(self) -> None:
        self.revision: int | None = None
        self.lost_reason = ""           # set by a backend that knows the replica is gone, and why

    @property
    @abstractmethod
    def where(self) -> str:
        """The worker holding the replica, in words."""

    @abstractmethod
    def open(self, arrays: dict, revision: int, name: str | None) -> None:
        """Create (or replace) the replica from a snapshot."""

    @abstractmethod
    def update(self, deltas: list, revision: int) -> None:
        """Apply deltas; raises :class:`UnknownDocument` or :class:`ReplicaOutOfDate`."""

    @abstractmethod
    def run(self, job, cancel: Callable[[], bool] | None):
        """Run the job on the replica; an :class:`Outcome` (failure ``"UnknownDocument"`` when
        the replica is gone)."""

    def apply_batch(self, batch: dict, revision: int) -> dict:
        """Apply a batch of edge updates on the replica's device pages; it then holds
        ``revision`` (see :meth:`kernels.compute.live.LiveDocument.apply_batch`). Raises
        :class:`UnknownDocument`, :class:`ChannelFailure`, or the refusal as a
        :class:`BatchRefused`."""
        raise ChannelFailure("NotSupported", f"{type(self).__name__} cannot apply batches on the device")

    @abstractmethod
    def close(self) -> None:
        """Drop the replica (best effort)."""


def _send(channel: DocumentChannel, source: DocumentSource, name: str | None) -> DocumentSync:
    """Bring the replica to the source's revision (see the module's docstring)."""
    current = source.revision
    known = channel.revision
    if known is not None and known == current:
        return DocumentSync("nothing", revision=current, worker=channel.where)
    reason = channel.lost_reason or "first run on this worker"
    if known is not None:
        deltas = source.deltas_since(known)
        if deltas is None:
            reason = f"the edits since revision {known} are no longer kept"
        else:
            deltas = list(deltas)
            t0 = time.perf_counter()
            try:
                channel.update(deltas, current)
                channel.revision = current
                return DocumentSync("deltas", steps=len(deltas), bytes_sent=payload_bytes(deltas),
                                    seconds=time.perf_counter() - t0, revision=current, worker=channel.where)
            except UnknownDocument:
                reason = channel.lost_reason or "the worker no longer holds the replica (it was restarted)"
            except ReplicaOutOfDate as exc:
                reason = f"the deltas did not apply ({exc})"
            channel.revision = None
    arrays, revision = source.snapshot()
    where = channel.where
    t0 = time.perf_counter()
    channel.open(arrays, revision, name)
    if known is not None and channel.where != where:
        reason += f"; the replica now lives on {channel.where}"
    channel.revision = revision
    channel.lost_reason = ""
    return DocumentSync("snapshot", reason=reason, bytes_sent=payload_bytes(arrays),
                        seconds=time.perf_counter() - t0, revision=revision, worker=channel.where)


def run_on_channel(channel: DocumentChannel, source: DocumentSource, job, cancel=None, *,
                   name: str | None = None):
    """Send what the replica lacks, then run ``job`` there: ``(Outcome, DocumentSync)``.

    A replica lost between the send and the run (the worker restarted) is re-opened from a
    snapshot once, and the run repeated."""
    from kernels.compute.jobs import Outcome

    sync = DocumentSync(worker=channel.where)
    for attempt in (1, 2):
        try:
            sync = _send(channel, source, name)
        except ChannelFailure as exc:
            channel.revision = None
            return Outcome(job, failure=exc.failure, message=str(exc), worker=channel.where), sync
        outcome = channel.run(job, cancel)
        if outcome.failure == UnknownDocument.__name__ and attempt == 1:
            channel.revision = None
            channel.lost_reason = channel.lost_reason or f"the worker lost the replica ({outcome.message})"
            continue
        if outcome.failure is not None and outcome.failure not in _REPLICA_KEEPING_FAILURES:
            channel.revision = None       # a crash, a time limit, a lost worker: the replica may be gone
        break
    structure = (outcome.record or {}).get("structure") or {}
    if structure.get("live"):
        sync.device = structure.get("sync")
        sync.dirty_pages = structure.get("dirty_pages")
    return outcome, sync


#: the replica's answers that refuse a batch before it changes anything (its rules, its parameters)
BATCH_REFUSALS = ("GraphEditError", "ParameterError")


class BatchRefused(GraphKernelsError):
    """The replica refused a batch of edge updates as a whole (its rules: a duplicate edge, an
    insert of a stored edge, a delete of an absent one, an unknown vertex): nothing changed."""


def apply_batch_on_channel(channel: DocumentChannel, source: DocumentSource, batch: dict, revision: int, *,
                           name: str | None = None):
    """Send what the replica lacks, then apply ``batch`` on its device pages; the replica then
    holds ``revision`` (the number the caller's structure takes when it replays the returned
    page delta). Returns ``(result, DocumentSync)``, ``result`` as
    :meth:`kernels.compute.live.LiveDocument.apply_batch` gives it.

    A replica lost between the send and the batch is re-opened from a snapshot once. A refused
    batch (:class:`BatchRefused`) leaves the replica as it was; any other failure leaves it
    unknown (the next run sends a snapshot) and raises :class:`ChannelFailure`."""
    sync = DocumentSync(worker=channel.where)
    for attempt in (1, 2):
        try:
            sync = _send(channel, source, name)
        except ChannelFailure:
            channel.revision = None
            raise
        if revision != sync.revision + 1:
            # the document changed after the batch was made for it: the batch may not fit, and its
            # number would be one the document already gave another state
            raise BatchRefused(f"the document changed while the batch was being prepared (revision {sync.revision}, "
                               f"the batch was made for {revision - 1}): apply it again")
        try:
            result = channel.apply_batch(batch, revision)
        except UnknownDocument as exc:
            channel.revision = None
            channel.lost_reason = channel.lost_reason or f"the worker lost the replica ({exc})"
            if attempt == 1:
                continue
            raise ChannelFailure("UnknownDocument", str(exc)) from None
        except BatchRefused:
            raise                           # the replica still holds what was sent
        except BaseException:
            channel.revision = None
            raise
        channel.revision = revision
        return result, sync
    raise AssertionError("unreachable")


def forget_revision(channels) -> None:
    """The caller's structure did not take a batch its replicas took: they hold a state the
    caller has no number for, so each is sent a snapshot before its next run."""
    for channel in channels:
        channel.revision = None
        channel.lost_reason = "the replica applied a batch the document did not keep"


# failures after which the replica certainly still holds the revision it was sent
_REPLICA_KEEPING_FAILURES = ("ParameterError", "ConstraintError", "InputRequirementError",
                             "TargetUnavailableError", "KernelFailure", "ResourceLimitError")


class EditJournal:
    """A :class:`DocumentSource` for one slotted structure: the deltas of its edits, numbered.

    Call :meth:`record` after every edit, undo (``forward=False``) and redo of the structure,
    and :meth:`replace` when the structure itself is swapped (a page-size change): the history
    is cut there and the next run sends a snapshot. The oldest deltas are forgotten beyond
    ``max_bytes``. Thread use: make an edit and its :meth:`record` under :attr:`lock` when
    runs are sent from another thread (:meth:`snapshot` copies the arrays under it)."""

    def __init__(self, graph, revision: int = 0, *, max_bytes: int = JOURNAL_LIMIT_BYTES):
        self.lock = threading.RLock()
        self._graph = graph
        self._revision = int(revision)
        self._base = int(revision)              # the oldest revision the kept deltas start from
        self._steps: list = []                  # (revision before, revision after, delta, forward)
        self._bytes = 0
        self.max_bytes = int(max_bytes)

    @property
    def graph(self):
        return self._graph

    @property
    def name(self) -> str:
        """The structure's name (the replica's graph takes it)."""
        return self._graph.name

    @property
    def revision(self) -> int:
        return self._revision

    def record(self, delta, forward: bool = True, revision: int | None = None) -> int:
        """Note that ``delta`` was applied (``forward``: redo / the edit itself; else undo);
        the structure is now at ``revision`` (default: one more). Returns the revision."""
        with self.lock:
            after = self._revision + 1 if revision is None else int(revision)
            if after <= self._revision:
                raise ValueError(f"revision {after} does not follow {self._revision}")
            self._steps.append((self._revision, after, delta, bool(forward)))
            self._bytes += delta.nbytes()
            self._revision = after
            while self._bytes > self.max_bytes and self._steps:
                before, first_after, old, _ = self._steps.pop(0)
                self._bytes -= old.nbytes()
                self._base = first_after
            return after

    def replace(self, graph, revision: int | None = None) -> int:
        """A new structure at ``revision`` (default: one more): earlier deltas no longer apply."""
        with self.lock:
            self._graph = graph
            self._revision = self._revision + 1 if revision is None else int(revision)
            self._base = self._revision
            self._steps.clear()
            self._bytes = 0
            return self._revision

    def snapshot(self) -> tuple[dict, int]:
        with self.lock:
            return {k: v.copy() for k, v in self._graph.to_arrays().items()}, self._revision

    def deltas_since(self, revision: int) -> list | None:
        with self.lock:
            if revision == self._revision:
                return []
            if revision < self._base or revision > self._revision:
                return None
            out, at = [], revision
            for before, after, delta, forward in self._steps:
                if after <= revision:
                    continue
                if before != at:
                    return None               # ``revision`` is not a state the steps pass through
                out.append((delta, forward))
                at = after
            return out if at == self._revision else None

    def pending_pages(self, revision: int | None) -> int | None:
        """Physical pages the edits since ``revision`` wrote (what the next device sync will
        upload, give or take pages freed meanwhile); ``None`` when unknown (a snapshot is due)."""
        if revision is None:
            return None
        deltas = self.deltas_since(revision)
        if deltas is None:
            return None
        pages: set = set()
        for delta, _ in deltas:
            pages.update(int(p) for p in delta.pages)
        return len(pages)
