"""Launch shapes, reusable device buffers and small device helpers shared by the operators.

* **Grids.** On a GPU a kernel gets one block per work tile up to :data:`MAX_GRID` (the
  kernels grid-stride over the rest). Kernels whose work size lives in device memory (the
  load-balanced expansion reads its output count there, so the host need not read it) run
  on a *resident* grid: as many blocks as the device holds at once. Under the CUDA simulator
  every CUDA thread is a Python thread (~2 ms each), so every launch is capped at
  :data:`kernels.cuda.simulator.OPERATOR_THREADS` threads.
* **Workspace.** Traversals launch several kernels per level; allocating their scratch
  arrays each time would cost more than the kernels on small levels. A :class:`Workspace`
  keeps named device buffers and grows them (with headroom) only when a call needs more.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda, int64

from kernels.cuda.occupancy import resident_blocks
from kernels.cuda.simulator import OPERATOR_THREADS, capped_blocks
from kernels.measure.targets import simulator_enabled

MAX_GRID = 1 << 16
GROWTH = 1.25


@functools.cache
def on_simulator() -> bool:
    """Whether numba.cuda runs the simulator: read once, as numba (which this module imports)
    fixed it at its import -- launch shapes ask it on every launch, and an environment lookup
    costs a small device batch's host side more than its kernels' launches."""
    return simulator_enabled()


def for_target(table: dict):
    """``table["sim"]`` under the CUDA simulator, else ``table["cuda"]``: launch shapes that
    differ because a simulated thread costs milliseconds."""
    return table["sim" if on_simulator() else "cuda"]


def grid_for(items: int, block: int) -> int:
    """Blocks for ``items`` work items of ``block`` threads each (at least 1, capped)."""
    wanted = max(1, -(-int(items) // block))
    if on_simulator():
        return capped_blocks(wanted, block, OPERATOR_THREADS)
    return min(wanted, MAX_GRID)


def resident_grid(block: int) -> int:
    """Blocks that fill the device once (its resident threads per SM), for kernels that read their
    work size from device memory and grid-stride over it."""
    if on_simulator():
        return max(1, OPERATOR_THREADS // block)
    return resident_blocks(block)


class Workspace:
    """Named device buffers reused between calls; a buffer grows only when a call needs more.

    ``get(name, dtype, size)`` returns a device array with at least ``size`` items (kernels
    are always given the live length explicitly). ``upload`` and ``download`` copy through a
    pinned host buffer kept beside the device one, straight to and from the buffer's start: a
    pageable copy, and numba's slicing of a device array to copy into part of it, cost
    0.1-0.2 ms each on an H100 host (a batch of edge updates makes four or five of them)."""

    def __init__(self):
        from kernels.cuda import fast_launch

        self._buffers: dict[str, object] = {}
        # (name, dtype as given) -> (items, buffer): get's repeat answer without numba's
        # attributes or a dtype made (7-9 µs a call on an H200 host, ~25 calls a small batch)
        self._known: dict[tuple, tuple[int, object]] = {}
        self._held: dict[str, object] = {}
        self._pinned: dict[str, np.ndarray] = {}
        # spans where launches are planned: asked once (an environment lookup), as the kernels'
        # FastKernel wrappers are made once
        self._spans = fast_launch.enabled()

    def get(self, name: str, dtype, size: int):
        given = dtype
        try:
            known = self._known.get((name, given))
        except TypeError:                    # a dtype given as something unhashable: no shortcut
            known = given = None
        if known is not None and size <= known[0]:
            return known[1]
        dtype = np.dtype(dtype)
        size = max(int(size), 1)
        buf = self._buffers.get(name)
        if buf is None or buf.dtype != dtype or buf.size < size:
            buf = cuda.device_array(math.ceil(size * GROWTH), dtype=dtype)
            self._buffers[name] = buf
            for key in [key for key in self._known if key[0] == name]:    # its earlier buffer's
                del self._known[key]
        if given is not None:
            self._known[(name, given)] = (int(buf.size), buf)
        return buf

    def held_span(self, key: str, buffer, offset: int, shape):
        """:meth:`span`, the same object while ``buffer``, ``offset`` and ``shape`` stay: a
        caller that tells its launch's unchanged arguments by identity
        (``FastKernel.launch_known``) sees it unchanged."""
        shape = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
        held = self._held.get(key)
        if held is not None and held[0] is buffer and held[1] == offset and held[2] == shape:
            return held[3]
        span = self.span(buffer, offset, shape)
        self._held[key] = (buffer, offset, shape, span)
        return span

    def span(self, buffer, offset: int, shape):
        """Items ``offset ...`` of ``buffer`` (one of this workspace's, or any 1-D device array)
        seen C-contiguously with ``shape``: a :class:`~kernels.cuda.fast_launch.Span` where
        launches go through plans (it costs nothing to make; numba's slicing and reshaping
        20-90 µs each), numba's view otherwise (the simulator, fast launches switched off).
        Only for kernels wrapped by :func:`kernels.cuda.fast_launch.fast`."""
        from kernels.cuda.fast_launch import Span

        span = Span(buffer, offset, shape)
        return span if self._spans else span.view()

    def _host(self, name: str, dtype, size: int) -> np.ndarray:
        buf = self._pinned.get(name)
        if buf is None or buf.dtype != dtype or buf.size < size:
            buf = cuda.pinned_array(math.ceil(max(size, 1) * GROWTH), dtype=dtype)
            self._pinned[name] = buf
        return buf

    def upload(self, name: str, *parts, dtype=None, asynchronous: bool = False) -> object:
        """The 1-D arrays ``parts``, one after another, copied to the start of device buffer
        ``name`` (of ``dtype``, default the first part's) in one copy; returns the buffer.
        ``asynchronous``: the copy is queued on the default stream (ordered with the kernels
        launched there) and the host goes on; the caller must not upload under ``name`` again
        before the device has taken it (synchronize, or a read-back, first: the pinned buffer
        is refilled by the next upload)."""
        dtype = np.dtype(dtype or np.asarray(parts[0]).dtype)
        n = sum(len(part) for part in parts)
        if n == 0:
            return self.get(name, dtype, n)
        host = self.staging(name, dtype, n)
        at = 0
        for part in parts:
            host[at:at + len(part)] = part
            at += len(part)
        return self.send(name, host, n, asynchronous=asynchronous)

    def staging(self, name: str, dtype, n: int) -> np.ndarray:
        """The host buffer that :meth:`send` copies ``name`` from, at least ``n`` items of
        ``dtype``: pinned, kept between calls (a caller that can write its data there directly
        saves the copy :meth:`upload` makes); a fresh array under the simulator. The same
        rule as ``upload``'s: not refilled before the device has taken an asynchronous send."""
        dtype = np.dtype(dtype)
        if on_simulator():
            return np.empty(max(int(n), 1), dtype=dtype)
        return self._host(name, dtype, int(n))

    def send(self, name: str, host: np.ndarray, n: int, asynchronous: bool = False) -> object:
        """The first ``n`` items of ``host`` (``staging(name, ...)``, or any C-contiguous array
        while the copy is synchronous) copied to the start of device buffer ``name``; returns it."""
        device = self.get(name, host.dtype, n)
        if n == 0:
            return device
        if on_simulator():
            device[:n].copy_to_device(host[:n])
            return device
        if not _direct_copy("cuMemcpyHtoDAsync" if asynchronous else "cuMemcpyHtoD",
                            int(device.device_ctypes_pointer.value), host.ctypes.data, n * host.dtype.itemsize):
            from numba.cuda.cudadrv import driver

            driver.host_to_device(device, host, n * host.dtype.itemsize)
        return device

    def download(self, name: str, device, n: int, asynchronous: bool = False) -> np.ndarray:
        """The first ``n`` items of ``device`` (a device array or a span) on the host (a pinned
        buffer of this workspace's, valid until the next download under ``name``: copy what must
        outlive it). ``asynchronous``: the copy is queued on the default stream and the buffer
        holds the items only once the caller has synchronized."""
        if n <= 0:
            return np.zeros(0, dtype=device.dtype)
        from kernels.cuda.fast_launch import Span

        if on_simulator():
            return device[:n].copy_to_host()
        if n > device.size:
            raise ValueError(f"{n} items asked of a device array of {device.size}")
        host = self._host(f"down.{name}", device.dtype, n)
        address = device.device_pointer if type(device) is Span else int(device.device_ctypes_pointer.value)
        if not _direct_copy("cuMemcpyDtoHAsync" if asynchronous else "cuMemcpyDtoH", host.ctypes.data, address,
                            n * device.dtype.itemsize):
            from numba.cuda.cudadrv import driver

            source = device.view() if type(device) is Span else device
            driver.device_to_host(host, source, n * device.dtype.itemsize)
        return host[:n]

    def release(self) -> None:
        self._buffers.clear()
        self._known.clear()
        self._held.clear()
        self._pinned.clear()

    @property
    def nbytes(self) -> int:
        return int(sum(b.size * b.dtype.itemsize for b in self._buffers.values()))


def _direct_copy(function: str, destination: int, source: int, nbytes: int) -> bool:
    """A copy through the driver's own call (numba's copy functions check the
    context and wrap the pointers: tens of microseconds of host time each on an H100 host, a
    small device batch makes four copies). False where it could not run (no current context:
    another thread's first call), so that the caller takes numba's path, which sets one up."""
    from cuda.bindings import driver

    call = getattr(driver, function)
    if function.endswith("Async"):            # numba's default stream: where the kernels are queued
        from kernels.cuda.fast_launch import default_stream_handle

        err, = call(destination, source, nbytes, default_stream_handle())
    else:
        err, = call(destination, source, nbytes)
    if err == driver.CUresult.CUDA_SUCCESS:
        return True
    if err == driver.CUresult.CUDA_ERROR_INVALID_CONTEXT:
        return False
    from numba.cuda.cudadrv.driver import CudaAPIError

    raise CudaAPIError(int(err), f"{function} failed: {err!r}")


@cuda.jit(device=True)
def rightmost_at_most(values, lo, hi, key):
    """The largest ``i`` in ``[lo, hi]`` with ``values[i] <= key`` (``values`` ascending,
    ``values[lo] <= key`` assumed): which segment of an exclusive scan holds position ``key``."""
    lo = int64(lo)
    hi = int64(hi)
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if values[mid] <= key:
            lo = mid
        else:
            hi = mid - 1
    return lo
