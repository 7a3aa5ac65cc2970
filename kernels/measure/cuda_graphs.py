"""Launch mode of the kernel timing: direct launches, or replays of a CUDA graph.

A numba launch through the dispatcher costs tens of microseconds of host time (its
per-argument marshalling: 47.8 µs for 8 device arrays and 2 scalars on an H100), which is
more than the whole SpMV on the matrices users load. A CUDA graph captured from the same
launches replays at about 1 µs per kernel node. ``graph`` mode captures one
``execution.launch()`` into a graph and times replays of it: what a solver that captures its
SpMV (or its Floyd–Warshall schedule) once and replays it would see.

Capture goes through CuPy (``Stream.begin_capture`` in relaxed mode, so numba's own driver
calls during a launch are allowed): the execution's ``stream`` is set to a non-blocking CuPy
stream wrapped for numba (``cuda.external_stream``), one direct launch on it warms up
(compiles, loads modules, lets CuPy size its buffers), then one launch is captured. CuPy
allocations made during the capture (cuSPARSE's work buffer) are kept alive with the graph,
since the graph's nodes keep pointing at them.

Anything that prevents it — a target other than ``cuda``, an execution that does not say
``capturable``, no CuPy, or any error while capturing — falls back to direct launches, and the
plan says why in one sentence, for the run's notices.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from kernels.errors import ParameterError
from kernels.measure.targets import needs_gpu

logger = logging.getLogger(__name__)

LAUNCH_MODES = ("auto", "graph", "direct", "queued")


def check_launch_mode(mode) -> str:
    """``mode`` if it is one of :data:`LAUNCH_MODES`, else a one-line :class:`ParameterError`."""
    if mode not in LAUNCH_MODES:
        raise ParameterError("launch", mode, f"one of {', '.join(LAUNCH_MODES)}")
    return mode


def _nothing() -> None:
    pass


@dataclass
class LaunchPlan:
    """What the kernel timer calls and on which stream it records its events.

    ``mode`` is what runs (``"graph"``, ``"queued"`` or ``"direct"``); ``reason`` why a graph was not used
    (``None`` when it was, or when none was tried); ``notice`` the sentence for the record."""

    mode: str
    launch: Callable[[], None]
    stream: object = 0
    requested: str = "auto"
    reason: str | None = None
    close: Callable[[], None] = field(default=_nothing)

    @property
    def notice(self) -> str | None:
        if self.reason is None:
            return None
        if self.requested == "auto" and self.mode == "queued":
            return (f"launch=auto timed queued launches (device time, as a graph's replays are): {self.reason}")
        if self.requested in ("graph", "queued") or self.reason_is_unexpected:
            return f"launch={self.requested if self.requested != 'auto' else 'graph'} fell back to direct launches: " \
                   f"{self.reason}"
        return None

    @property
    def reason_is_unexpected(self) -> bool:
        """Under ``auto``, only a capture that should have worked is worth a notice."""
        return not (self.reason.startswith(NOT_CAPTURABLE) or self.reason.startswith(NOT_CUDA))


NOT_CAPTURABLE = "this variant's launch is not a fixed kernel sequence"
NOT_CUDA = "CUDA graphs and queued timing need a real GPU"


class CupyCapturer:
    """The CuPy side of a capture: a non-blocking stream (and its numba wrapper), stream
    capture in relaxed mode, replays. CuPy allocations during the capture are kept until
    :meth:`close`, because the captured nodes keep using their addresses."""

    def __init__(self):
        import cupy
        from numba import cuda

        self.cupy = cupy
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.numba_stream = cuda.external_stream(self.stream.ptr)
        self._kept = []

    def synchronize(self) -> None:
        self.stream.synchronize()

    def capture(self, fn):
        cp = self.cupy
        pool = cp.get_default_memory_pool()
        kept = self._kept

        def keeping(size):
            memory = pool.malloc(size)
            kept.append(memory)
            return memory

        stream = self.stream
        with stream, cp.cuda.using_allocator(keeping):
            stream.begin_capture(cp.cuda.runtime.streamCaptureModeRelaxed)
            try:
                fn()
            except BaseException:
                # leave capture mode; the capture is lost anyway and the launch's error is the one to report
                with contextlib.suppress(Exception):
                    stream.end_capture()
                raise
            return stream.end_capture()

    def replay(self, graph) -> None:
        graph.launch(self.stream)

    def close(self) -> None:
        self.synchronize()
        self._kept.clear()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def plan_launches(execution, target: str, mode: str = "auto", capturer_factory=None) -> LaunchPlan:
    """How ``execution``'s timed launches are made on ``target`` for the requested ``mode``.

    ``auto`` times device time wherever it can: a CUDA graph's replays when the launch can be
    captured; when it cannot be captured but never waits for the device (CuPy refuses to capture
    cuSPARSE, or CuPy is missing), its launches queued behind a busy kernel (``queued``), so that a
    speedup of a graph replay over it compares device time with device time; direct launches only
    for a launch that reads back to the host (which neither mode can time).
    ``capturer_factory`` makes the capturer (default :class:`CupyCapturer`; tests inject
    fakes). The caller must call ``plan.close()`` when the timing is over: it waits for the
    capture stream and puts the execution back on the default stream."""
    check_launch_mode(mode)
    direct = LaunchPlan("direct", execution.launch, execution.stream, requested=mode)
    if mode == "direct":
        return direct
    if mode == "queued":
        if not needs_gpu(target):
            direct.reason = f"{NOT_CUDA}; this run's target is '{target}'"
            return direct
        if not getattr(execution, "capturable", False):  # a read-back inside launch() would wait for the busy kernel
            direct.reason = f"{NOT_CAPTURABLE} (queued timing needs launches that do not wait for the device)"
            return direct
        return LaunchPlan("queued", execution.launch, execution.stream, requested=mode)
    if not needs_gpu(target):
        direct.reason = f"{NOT_CUDA}; this run's target is '{target}'"
        return direct
    if not getattr(execution, "capturable", False):
        direct.reason = f"{NOT_CAPTURABLE} on one stream (it reads back to the host or allocates)"
        return direct

    def without_graph(why: str) -> LaunchPlan:
        """No graph for a launch that never waits for the device: ``auto`` queues it (device
        time, like a graph's replays), ``graph`` times direct launches as asked."""
        if mode == "auto":
            return LaunchPlan("queued", execution.launch, 0, requested=mode, reason=why)
        direct.launch, direct.stream, direct.reason = execution.launch, 0, why
        return direct

    try:
        capturer = (capturer_factory or CupyCapturer)()
    except ImportError:
        return without_graph("CuPy is not installed (graphs are captured through CuPy: pip install cupy-cuda12x)")
    except Exception as exc:  # noqa: BLE001 - any failure to set up means: no graph
        return without_graph(f"no capture stream could be made ({_one_line(exc)})")

    def abandon(why: str) -> LaunchPlan:
        with contextlib.suppress(Exception):  # already falling back: the first error is the reason
            capturer.close()
        execution.stream = 0
        logger.info("CUDA graph capture abandoned: %s", why)
        return without_graph(why)

    execution.stream = capturer.numba_stream
    try:
        if getattr(execution, "needs_reset", False):
            execution.reset()
        execution.launch()  # warm-up on the capture stream: compiles, loads modules, sizes buffers
        capturer.synchronize()
        graph = capturer.capture(execution.launch)
    except Exception as exc:  # noqa: BLE001 - a capture that fails is timed another way, and said
        return abandon(f"capturing one launch into a CUDA graph failed ({_one_line(exc)})")

    def close() -> None:
        try:
            capturer.close()
        finally:
            execution.stream = 0

    return LaunchPlan("graph", lambda: capturer.replay(graph), capturer.numba_stream, requested=mode,
                      close=close)
