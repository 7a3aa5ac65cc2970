"""The GUI's connection to a Dask cluster of GPU workers (Compute ▸ Connect to Cluster…).

A :class:`ClusterConnection` (one per compute client) holds a
:class:`~kernels.compute.dask.backend.DaskBackend` while connected. Connecting blocks (the
scheduler may be far away, a TLS handshake may fail), so it runs in a plain thread and its
outcome reaches the GUI thread as a queued signal: ``connected(workers)`` or
``connectFailed(message)``; ``disconnected()`` after :meth:`disconnect`. The Run dock offers
the cluster's targets ("cluster: cuda — 2 × NVIDIA H200", ``cluster:cuda`` as a
:class:`~kernels.measure.targets.Target`'s text) beside the local ones, and the compute client
sends a job there when its target is ``on_cluster``.

Nothing here runs kernels: jobs go through the backend from the compute client's job thread.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter

from PySide6.QtCore import QObject, Signal

from kernels.errors import GraphKernelsError
from kernels.measure.targets import Target

CONNECT_TIMEOUT_S = 20.0


def gpu_summary(workers) -> str:
    """``2 × NVIDIA H200`` (kinds counted), or ``no GPU`` when no worker can run GPU variants."""
    kinds = Counter(w.gpu["name"] for w in workers if w.can_run_gpu)
    return ", ".join(f"{n} × {name}" for name, n in kinds.most_common()) or "no GPU"


class ClusterConnection(QObject):
    connected = Signal(object)          # list[WorkerInfo]
    connectFailed = Signal(str)
    disconnected = Signal()
    warned = Signal(str)                # e.g. the plain-text warning for a tcp:// address off the loopback

    def __init__(self, parent=None):
        super().__init__(parent)
        self.backend = None
        self.workers: list = []
        self.address = ""
        self._connecting = False
        self._lock = threading.Lock()

    # ---- state -------------------------------------------------------------------------------
    @property
    def is_connected(self) -> bool:
        return self.backend is not None

    @property
    def connecting(self) -> bool:
        return self._connecting

    def summary(self) -> str:
        """One line for the status bar: where, how many workers, which GPUs."""
        if not self.is_connected:
            return "cluster: not connected"
        return f"cluster {self.address}: {len(self.workers)} worker(s), {gpu_summary(self.workers)}"

    def targets_for(self, variant) -> list[str]:
        """The variant's targets on the cluster, as their text (``cluster:cuda`` only where a worker
        can run GPU variants; every worker runs the simulator and CPU variants)."""
        if not self.is_connected:
            return []
        have_gpu = any(w.can_run_gpu for w in self.workers)
        return [str(t.on_the_cluster()) for t in Target.devices()
                if str(t) in variant.targets and (not t.real_gpu or have_gpu)]

    def describe_target(self, target: Target | str) -> str:
        target = Target.of(target)
        n = len(self.workers)
        if target.real_gpu:
            return f"cluster: {target.device} — {gpu_summary(self.workers)}"
        if target.simulated:
            return f"cluster: {target.device} — CUDA simulator on {n} worker(s) (slow, correct)"
        return f"cluster: {target.device} — numba on {n} worker(s)"

    # ---- connecting ----------------------------------------------------------------------------
    def connect_to(self, address: str, tls=None) -> None:
        """Connect in the background (``tls`` a :class:`~kernels.compute.dask.connect.TlsFiles` or
        ``None``); the answer comes as ``connected`` or ``connectFailed``."""
        address = (address or "").strip()
        if not address:
            self.connectFailed.emit("give the scheduler's address, e.g. tcp://gpu-server:8786 or tls://…")
            return
        with self._lock:
            if self._connecting:
                self.connectFailed.emit("already connecting: wait for the answer")
                return
            self._connecting = True
        from kernels.compute.dask.connect import plain_text_warning

        warning = plain_text_warning(address)
        if warning:
            self.warned.emit(warning)
        threading.Thread(target=self._connect, args=(address, tls), name="cluster-connect", daemon=True).start()

    def _connect(self, address: str, tls) -> None:
        backend = None
        try:
            from kernels.compute.backends import open_backend
            from kernels.compute.dask.connect import make_security

            security = make_security(tls) if tls is not None else None
            backend = open_backend(address, security=security, connect_timeout=CONNECT_TIMEOUT_S)
            workers = backend.describe()
            if not workers:
                raise GraphKernelsError(f"the scheduler at {address} has no workers: start GPU workers with "
                                        "'dask worker ADDRESS --nthreads 1 --resources GPU=1' (docs/cluster.md)")
        except Exception as exc:          # a connection error of any kind is one sentence for the user
            if backend is not None:
                with contextlib.suppress(Exception):    # closing a half-open connection: nothing to tell
                    backend.close()
            self._connecting = False
            text = str(exc) if isinstance(exc, GraphKernelsError) else f"{type(exc).__name__}: {exc}"
            self.connectFailed.emit(f"could not connect to {address}: {text}")
            return
        old = self.backend
        self.backend, self.workers, self.address = backend, workers, address
        self._connecting = False
        if old is not None:
            old.close()
        self.connected.emit(workers)

    def refresh(self) -> list:
        """Ask the scheduler again which workers there are (from a worker thread: it blocks)."""
        if self.backend is not None:
            self.workers = self.backend.describe()
        return self.workers

    def disconnect(self) -> None:
        backend, self.backend, self.workers = self.backend, None, []
        if backend is not None:
            try:
                backend.close()
            finally:
                self.disconnected.emit()
