"""The device mirror of a slotted graph: its pages, weights and index in GPU memory.

Layout on the device (what the GPU operators read, see docs/slotted.md):

* ``pool``    int32[capacity_pages * page_size]: physical page ``s`` at words ``s * page_size``;
* ``weights`` float64 (or float32) with the same shape, word for word (``None`` if unweighted);
* ``index``   int32[4, index_capacity]: columns ``0 .. num_pages - 1`` in logical page order,
  rows (first vertex, position in large list or -1, pages of that list or -1, physical page);
* ``directory`` (``loc`` int64, ``degree`` int32, one entry per vertex id, with headroom): where
  each vertex's list starts and its length, rebuilt on the device from the pages after every
  change to them (:mod:`kernels.graph.directory`: why, and what a handle means).

Edits on the host mark pages dirty; :meth:`DeviceMirror.sync` uploads only those pages and
the index if it changed, and reports what it moved. Three ways to move the pages:

* ``"runs"``: one host-to-device copy per run of consecutive dirty pages (slices of the
  device pool). Each copy costs a fixed ~75 us through numba on an H200, so this suits a few
  runs only.
* ``"span"``: one copy from the first to the last dirty page, clean pages in between
  included: the choice when most pages between them are dirty.
* ``"staged"``: the dirty pages are gathered into a pinned host buffer, sent in one copy with
  their page numbers, and a small kernel scatters them into the pool (one block per page).

``"auto"`` (the default) takes runs for up to ``STAGE_ABOVE_RUNS`` runs, span when at least
``SPAN_ABOVE_DENSITY`` of the spanned pages are dirty, and staged otherwise; under the
simulator (one Python thread per CUDA thread) it takes runs instead of staging. :meth:`DeviceMirror.upload_full`
and :meth:`DeviceMirror.rebuild_csr_and_upload` are the two baselines the thesis compares
against. A mirror owns the graph's dirty flags: keep one mirror per graph.

Timing: ``time.perf_counter`` around the copies followed by ``cuda.synchronize()``. Under
the CUDA simulator the "device" is host memory, so the times measure NumPy copies and the
reports say so (``simulator=True``); the byte counts are exact either way.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import numpy as np

from kernels.measure.targets import simulator_enabled

DEFAULT_HEADROOM = 1.5
SCATTER_THREADS = 128
STRATEGIES = ("auto", "runs", "span", "staged")
# The auto rule, from benchmarks/bench_slotted.py on an H200 (docs/benchmarks.md): a copy
# costs ~75 us of fixed overhead; a gathered (staged) byte costs about 3x a spanned byte.
STAGE_ABOVE_RUNS = 8
SPAN_ABOVE_DENSITY = 0.3


@dataclass(frozen=True)
class SyncReport:
    """What one transfer moved and how long it took."""

    kind: str                   # "sync", "full" or "csr"
    pages: int                  # pages copied host -> device
    bytes: int                  # bytes copied host -> device (pages, weights, index or CSR)
    seconds: float
    copies: int = 0             # separate host -> device copies issued
    index_bytes: int = 0
    reallocated: bool = False   # the device pool had to grow
    device_copy_bytes: int = 0  # bytes moved device -> device while growing
    rebuild_seconds: float = 0.0  # "csr" only: time to rebuild the CSR on the host
    simulator: bool = False
    strategy: str = ""          # "sync" only: "runs", "span" or "staged"

    @property
    def milliseconds(self) -> float:
        return self.seconds * 1e3

    @property
    def clock(self) -> str:
        if self.simulator:
            return "perf_counter, CUDA simulator (host copies, not device transfers)"
        return "perf_counter around the copies and cuda.synchronize()"

    def as_dict(self) -> dict:
        d = asdict(self)
        d["milliseconds"] = self.milliseconds
        d["clock"] = self.clock
        return d


@dataclass(frozen=True)
class HostCopy:
    """The device arrays copied back (the used part only)."""

    pool: np.ndarray
    weights: np.ndarray | None
    index: np.ndarray


class DeviceMirror:
    """Keeps a slotted graph's pages, weights and index in device memory."""

    def __init__(self, graph, *, headroom: float = DEFAULT_HEADROOM, upload: bool = True):
        from numba import cuda  # imported here: the simulator switch must come first

        if headroom < 1.0:
            raise ValueError("headroom must be >= 1")
        self._cuda = cuda
        self.graph = graph
        self.headroom = float(headroom)
        self.pool = None
        self.weights = None
        self.index = None
        self.csr = None             # (indptr, indices, weights) after rebuild_csr_and_upload
        self.directory = None       # (loc, degree) device arrays: see refresh_directory
        self.num_pages = 0
        self.history: list[SyncReport] = []
        self._simulator = simulator_enabled()
        self._staging = {}          # name -> (pinned host buffer, device buffer), reused
        if upload:
            self.upload_full()

    # ---- sizes -------------------------------------------------------------------------
    @property
    def page_size(self) -> int:
        return self.graph.page_size

    @property
    def capacity_pages(self) -> int:
        return 0 if self.pool is None else len(self.pool) // self.page_size

    @property
    def device_bytes(self) -> int:
        """Device memory held by the mirror (with headroom), CSR baseline excluded."""
        total = 0
        for arr in (self.pool, self.weights, self.index, *(self.directory or ())):
            if arr is not None:
                total += arr.size * arr.dtype.itemsize
        return int(total)

    def _with_headroom(self, pages: int) -> int:
        return max(1, math.ceil(pages * self.headroom))

    # ---- transfers ---------------------------------------------------------------------
    def upload_full(self) -> SyncReport:
        """Allocate device arrays (with headroom) and upload every page and the index."""
        cuda, g = self._cuda, self.graph
        t0 = time.perf_counter()
        pool, wpool, index = g.host_arrays()
        used_pages = g.physical_pages_used
        cap = self._with_headroom(used_pages)
        self.pool = cuda.device_array(cap * self.page_size, dtype=np.int32)
        self.weights = cuda.device_array(cap * self.page_size, dtype=wpool.dtype) if wpool is not None else None
        moved = copies = 0
        if used_pages:
            self.pool[:len(pool)].copy_to_device(pool)
            moved += pool.nbytes
            copies += 1
            if wpool is not None:
                self.weights[:len(wpool)].copy_to_device(wpool)
                moved += wpool.nbytes
                copies += 1
        self.index = cuda.device_array((4, self._with_headroom(index.shape[1])), dtype=np.int32)
        index_bytes, n_copies = self._upload_index(index)
        self._warm_scatter()
        self.refresh_directory()
        cuda.synchronize()
        report = SyncReport("full", used_pages, moved + index_bytes, time.perf_counter() - t0,
                            copies=copies + n_copies, index_bytes=index_bytes, reallocated=True,
                            simulator=self._simulator)
        g.mark_synced()
        self.history.append(report)
        return report

    def sync(self, strategy: str = "auto") -> SyncReport:
        """Upload the pages dirtied since the last transfer, and the index if it changed.

        ``strategy``: "runs", "span", "staged" or "auto" (see the module's docstring)."""
        from kernels.errors import ParameterError

        if strategy not in STRATEGIES:
            raise ParameterError("strategy", strategy, ", ".join(STRATEGIES))
        cuda, g = self._cuda, self.graph
        if self.pool is None:
            return self.upload_full()
        t0 = time.perf_counter()
        pool, wpool, index = g.host_arrays()
        used_pages = g.physical_pages_used
        reallocated, device_copy = False, 0
        if used_pages > self.capacity_pages:
            device_copy = self._grow_pool(self._with_headroom(used_pages))
            reallocated = True
        dirty = g.dirty_physical_pages()
        runs = _runs(dirty)
        if strategy == "auto":
            strategy = self._choose(dirty, runs)
        pages_moved = len(dirty)
        if strategy == "staged" and len(dirty):
            moved, copies = self._upload_staged(dirty, pool, wpool)
        elif strategy == "span" and len(dirty):
            runs = [(runs[0][0], runs[-1][1])]
            pages_moved = runs[0][1] - runs[0][0]
            moved, copies = self._upload_runs(runs, pool, wpool)
        else:
            moved, copies = self._upload_runs(runs, pool, wpool)
        index_bytes = 0
        index_changed = g.index_dirty
        if index_changed:
            if index.shape[1] > self.index.shape[1]:
                self.index = cuda.device_array((4, self._with_headroom(index.shape[1])), dtype=np.int32)
                reallocated = True
            index_bytes, n_copies = self._upload_index(index)
            copies += n_copies
        if pages_moved or index_changed:      # an index shrunk to no columns uploads nothing: still changed
            self.refresh_directory()
        cuda.synchronize()
        report = SyncReport("sync", pages_moved, moved + index_bytes, time.perf_counter() - t0,
                            copies=copies, index_bytes=index_bytes, reallocated=reallocated,
                            device_copy_bytes=device_copy, simulator=self._simulator, strategy=strategy)
        g.mark_synced()
        self.history.append(report)
        return report

    def refresh_directory(self) -> None:
        """Rebuild the vertex directory from the device's pages and index (queued, not waited
        for): after anything that changed them. Grown with headroom as vertex ids are added."""
        from kernels.graph import directory

        directory.build(self.pool, self.index, self.num_pages, self.page_size, *self.directory_arrays())

    def directory_arrays(self):
        """The directory's ``(loc, degree)`` device arrays, grown (with headroom) to the vertex ids
        in use; their contents are whatever the last rebuild left. For a kernel that rebuilds the
        directory itself (the fused device batch)."""
        ids = int(self.graph.next_vertex_id)
        if self.directory is None or len(self.directory[0]) < ids:
            cap = self._with_headroom(ids)
            self.directory = (self._cuda.device_array(cap, dtype=np.int64),
                              self._cuda.device_array(cap, dtype=np.int32))
        return self.directory

    def _choose(self, dirty: np.ndarray, runs: list) -> str:
        if len(runs) <= STAGE_ABOVE_RUNS:
            return "runs"
        span = runs[-1][1] - runs[0][0]
        if len(dirty) >= SPAN_ABOVE_DENSITY * span:
            return "span"
        return "runs" if self._simulator else "staged"

    def _upload_runs(self, runs, pool, wpool) -> tuple[int, int]:
        P = self.page_size
        moved = copies = 0
        for a, b in runs:
            lo, hi = a * P, b * P
            self.pool[lo:hi].copy_to_device(pool[lo:hi])
            moved += (hi - lo) * 4
            copies += 1
            if wpool is not None:
                self.weights[lo:hi].copy_to_device(wpool[lo:hi])
                moved += (hi - lo) * wpool.dtype.itemsize
                copies += 1
        return moved, copies

    def _upload_staged(self, dirty, pool, wpool) -> tuple[int, int]:
        """Gather the dirty pages into pinned memory, send them and their numbers in one
        copy each, and scatter them into the pool with a kernel."""
        P, n = self.page_size, len(dirty)
        scatter = _scatter_kernel()
        h_pages, d_pages = self._staging_buffers("pages", np.int32, n)
        h_pages[:] = dirty
        d_pages[:n].copy_to_device(h_pages)
        moved, copies = n * 4, 1
        for name, host, device in (("words", pool, self.pool), ("weights", wpool, self.weights)):
            if host is None:
                continue
            h_buf, d_buf = self._staging_buffers(name, host.dtype, n * P)
            np.take(host.reshape(-1, P), dirty, axis=0, out=h_buf.reshape(n, P))
            d_buf[:n * P].copy_to_device(h_buf)
            scatter[n, min(SCATTER_THREADS, P)](d_buf, d_pages, device, P)
            moved += h_buf.nbytes
            copies += 1
        return moved, copies

    def _warm_scatter(self) -> None:
        """Compile the page-scatter kernel for the pool's and the weights' types now, so that
        the first timed sync measures a transfer, not a JIT compilation (seen on the H200: the
        first staged sync of a weighted graph took 112-329 ms, later ones 37-61 ms)."""
        if self._simulator:
            return
        scatter = _scatter_kernel()
        cuda, P = self._cuda, self.page_size
        pages = cuda.to_device(np.zeros(1, dtype=np.int32))
        for dtype in {np.dtype(np.int32), *(() if self.weights is None else (self.weights.dtype,))}:
            scratch_src, scratch_dst = cuda.device_array(P, dtype=dtype), cuda.device_array(P, dtype=dtype)
            scatter[1, min(SCATTER_THREADS, P)](scratch_src, pages, scratch_dst, P)

    def _staging_buffers(self, key: str, dtype, size: int):
        """A pinned host buffer of exactly ``size`` items (a view) and a device buffer of at
        least that many, both kept under ``key`` and grown with headroom."""
        host, device = self._staging.get(key, (None, None))
        if host is None or len(host) < size:
            cap = self._with_headroom(size)
            host = self._cuda.pinned_array(cap, dtype=dtype)
            device = self._cuda.device_array(cap, dtype=dtype)
            self._staging[key] = (host, device)
        return host[:size], device

    def rebuild_csr_and_upload(self) -> SyncReport:
        """The static alternative: rebuild the CSR on the host and upload all of it."""
        cuda = self._cuda
        t0 = time.perf_counter()
        csr = self.graph.to_csr()
        t1 = time.perf_counter()
        arrays = [csr.indptr, csr.indices] + ([csr.weights] if csr.weights is not None else [])
        device = [cuda.to_device(a) for a in arrays]
        cuda.synchronize()
        t2 = time.perf_counter()
        self.csr = (device[0], device[1], device[2] if len(device) > 2 else None)
        report = SyncReport("csr", 0, int(sum(a.nbytes for a in arrays)), t2 - t0, copies=len(arrays),
                            rebuild_seconds=t1 - t0, simulator=self._simulator)
        self.history.append(report)
        return report

    def ensure_pages(self, pages: int) -> int:
        """Room for ``pages`` physical pages on the device (grown with headroom, old contents
        copied device to device; the device batch updates open pages there). Returns bytes moved."""
        if pages <= self.capacity_pages:
            return 0
        return self._grow_pool(self._with_headroom(pages))

    def _grow_pool(self, cap: int) -> int:
        """Larger device arrays holding the old contents (device -> device); returns bytes."""
        cuda = self._cuda
        old_words = len(self.pool)
        pool = cuda.device_array(cap * self.page_size, dtype=np.int32)
        pool[:old_words].copy_to_device(self.pool)
        moved = old_words * 4
        self.pool = pool
        if self.weights is not None:
            weights = cuda.device_array(cap * self.page_size, dtype=self.weights.dtype)
            weights[:old_words].copy_to_device(self.weights)
            moved += old_words * self.weights.dtype.itemsize
            self.weights = weights
        return moved

    def _upload_index(self, index: np.ndarray) -> tuple[int, int]:
        n = index.shape[1]
        self.num_pages = n
        if n == 0:
            return 0, 0
        for r in range(4):
            self.index[r, :n].copy_to_device(np.ascontiguousarray(index[r, :n]))
        return 4 * n * 4, 4

    # ---- checking ----------------------------------------------------------------------
    def to_host(self) -> HostCopy:
        """Copy the device arrays back (pages handed out so far, index columns in use)."""
        used = self.graph.physical_pages_used * self.page_size
        pool = self.pool.copy_to_host()[:used]
        weights = self.weights.copy_to_host()[:used] if self.weights is not None else None
        index = self.index.copy_to_host()[:, :self.num_pages]
        return HostCopy(pool, weights, index)

    def differences(self) -> list[str]:
        """What differs between the device and the host (empty after a sync): the index,
        and every live page whose words or weights differ. Freed pages are not compared."""
        host_pool, host_w, host_index = self.graph.host_arrays()
        dev = self.to_host()
        problems = []
        if not np.array_equal(dev.index, host_index):
            problems.append("index")
        P = self.page_size
        for logical, phys in enumerate(host_index[3]):
            words = slice(int(phys) * P, (int(phys) + 1) * P)
            if not np.array_equal(dev.pool[words], host_pool[words]):
                problems.append(f"page {logical} (physical {phys})")
            elif host_w is not None and not np.array_equal(dev.weights[words], host_w[words]):
                problems.append(f"weights of page {logical} (physical {phys})")
        return problems


cuda = None          # numba.cuda, bound on first use: the simulator switch must come first
_SCATTER = []


def _scatter_pages(staging, pages, pool, page_size):
    """Block k copies staged page k to physical page ``pages[k]`` (threads stride the page)."""
    k = cuda.blockIdx.x
    dst = pages[k] * page_size
    src = k * page_size
    for w in range(cuda.threadIdx.x, page_size, cuda.blockDim.x):
        pool[dst + w] = staging[src + w]


def _scatter_kernel():
    """The page-scatter kernel, compiled on first use. It is a module-level function reading
    the global ``cuda`` so that the simulator can stand in its own ``cuda`` module."""
    global cuda
    if not _SCATTER:
        from numba import cuda as numba_cuda

        from kernels.cuda.jit import jit as kernel_jit

        cuda = numba_cuda
        _SCATTER.append(kernel_jit(_scatter_pages))
    return _SCATTER[0]


def _runs(pages: np.ndarray):
    """(start, stop) of each run of consecutive page numbers in an ascending array."""
    if len(pages) == 0:
        return []
    breaks = np.flatnonzero(np.diff(pages) != 1) + 1
    starts = np.concatenate([[0], breaks])
    stops = np.concatenate([breaks, [len(pages)]])
    return [(int(pages[a]), int(pages[b - 1]) + 1) for a, b in zip(starts, stops, strict=True)]
