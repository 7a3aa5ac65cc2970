"""Timing of one execution, stage by stage.

Compile, host→device, kernel and device→host are measured and reported separately. Kernel
time on a real GPU comes from CUDA events over repeated launches after a warm-up; when one
launch is shorter than :data:`LAUNCH_BOUND_SECONDS` (about the launch overhead itself) several
launches are batched between one pair of events and the run is flagged *launch-bound*.
On the CUDA simulator events are meaningless (they report -1 ms), so ``perf_counter`` is used
and the method says so. CPU variants use ``perf_counter`` after a warm-up, which also absorbs
numba's compilation (reported as the compile figure).

On a GPU the ``launch`` callable is either the execution's own launch (``direct``) or a replay
of a CUDA graph captured from it (``graph``, :mod:`kernels.measure.cuda_graphs`); the events
are recorded on the stream that launch queues its work on, so both are timed the same way.
"""

from __future__ import annotations

import functools
import math
import statistics
import time
from dataclasses import asdict, dataclass, field

LAUNCH_BOUND_SECONDS = 50e-6
BATCH_TARGET_SECONDS = 500e-6
MAX_BATCH = 1000


@dataclass
class KernelStats:
    median_s: float
    min_s: float
    max_s: float
    mean_s: float
    cv: float
    samples: list = field(default_factory=list)
    launches_per_sample: int = 1

    @classmethod
    def from_samples(cls, samples: list[float], launches_per_sample: int = 1) -> KernelStats:
        mean = statistics.fmean(samples)
        cv = statistics.pstdev(samples) / mean if len(samples) > 1 and mean > 0 else 0.0
        return cls(median_s=statistics.median(samples), min_s=min(samples), max_s=max(samples),
                   mean_s=mean, cv=cv, samples=list(samples), launches_per_sample=launches_per_sample)


@dataclass
class Timing:
    compile_s: float
    h2d_s: float
    kernel: KernelStats
    d2h_s: float
    method: str
    launch_bound: bool = False
    fits_in_l2: bool | None = None
    repeat: int = 0
    warmup: int = 0
    #: how the timed launches were made: "direct" (numba launches) or "graph" (CUDA graph replays)
    launch: str = "direct"
    #: on a GPU, where the run's kernels came from: the disk cache or the compiler (kernel_cache.CacheStats)
    cache: dict | None = None
    #: host seconds of the run's other steps (prepare, capture, verify) and of the whole run
    stages: dict | None = None

    def to_json(self) -> dict:
        out = asdict(self)
        for optional in ("cache", "stages"):
            if out[optional] is None:
                del out[optional]
        return out



def _now() -> float:
    return time.perf_counter()


def time_stage(fn, sync=None) -> float:
    """Wall time of ``fn()``, synchronising the device after it when ``sync`` is given."""
    t0 = _now()
    fn()
    if sync is not None:
        sync()
    return _now() - t0


def _no_tick() -> None:
    pass


def _time_on_host(launch, sync, repeat: int, warmup: int, reset, tick) -> KernelStats:
    """Warm-up launches, then ``repeat`` samples of one launch each, timed by ``perf_counter``.
    ``sync`` waits for a simulated device (a no-op on the CPU): it is part of each sample."""
    tick = tick or _no_tick
    for _ in range(warmup):
        if reset:
            reset()
        launch()
        tick()
    sync()
    samples = []
    for _ in range(max(repeat, 1)):
        if reset:
            reset()
            sync()
        t0 = _now()
        launch()
        sync()
        samples.append(_now() - t0)
        tick()
    return KernelStats.from_samples(samples)


def time_kernel_cpu(launch, repeat: int, warmup: int, reset=None, tick=None) -> KernelStats:
    """``tick()`` is called after each warm-up and each timed sample (progress; outside the timing)."""
    return _time_on_host(launch, _no_tick, repeat, warmup, reset, tick)


def time_kernel_simulator(launch, sync, repeat: int, warmup: int, reset=None, tick=None) -> KernelStats:
    """Simulator timings are wall-clock times of the simulation, not of any GPU."""
    return _time_on_host(launch, sync, repeat, warmup, reset, tick)


@functools.cache
def _busy_kernel():
    """One warp that sleeps ``rounds`` times ``ns`` nanoseconds: the GPU stays busy while the
    host queues the timed launches behind it (``queued`` timing)."""
    from numba import cuda

    @cuda.jit
    def busy(ns, rounds):
        if cuda.grid(1) == 0:
            for _ in range(rounds):
                cuda.nanosleep(ns)

    return busy


def time_kernel_cuda(launch, repeat: int, warmup: int, reset=None, tick=None,
                     stream=0, queued: bool = False) -> tuple[KernelStats, bool]:
    """CUDA-event timing. Returns the stats and whether the kernel is launch-bound.

    ``stream`` is the (numba) stream ``launch`` and ``reset`` queue their work on: the events
    are recorded there, so they bracket exactly that work (0: numba's default stream).

    ``queued``: each sample's launches are queued behind a busy kernel that holds the stream
    longer than the host takes to queue them (checked with an event before the busy kernel,
    and lengthened until it holds), so the events bracket the device's work alone, back to
    back: the launch overhead of the host (numba's dispatcher, a library's Python wrapper) is
    hidden. That is the device time of any variant, vendor libraries included; the
    launch-bound flag then says whether the host's time per launch exceeded the device's."""
    from numba import cuda

    tick = tick or _no_tick
    for _ in range(max(warmup, 1)):
        if reset:
            reset()
        launch()
    sampler = _QueuedSampler(cuda, launch, reset, stream) if queued else _EventSampler(cuda, launch, reset, stream)
    cuda.synchronize()
    for _ in range(warmup):
        tick()
    probe = sampler(1)
    batch = 1
    if probe < LAUNCH_BOUND_SECONDS and reset is None:  # short: several per sample, for the events' resolution
        batch = int(min(MAX_BATCH, max(2, math.ceil(BATCH_TARGET_SECONDS / max(probe, 1e-6)))))
    samples = []
    for _ in range(max(repeat, 1)):
        samples.append(sampler(batch))
        tick()
    stats = KernelStats.from_samples(samples, batch)
    launch_bound = sampler.host_s > stats.median_s if queued else probe < LAUNCH_BOUND_SECONDS
    return stats, launch_bound


class _EventSampler:
    """Seconds per launch of ``batch`` launches between two events on ``stream``."""

    host_s = 0.0

    def __init__(self, cuda, launch, reset, stream):
        self.cuda, self.launch, self.reset, self.stream = cuda, launch, reset, stream

    def __call__(self, batch: int) -> float:
        cuda = self.cuda
        if self.reset:
            self.reset()
        start, end = cuda.event(), cuda.event()
        start.record(self.stream)
        for _ in range(batch):
            self.launch()
        end.record(self.stream)
        end.synchronize()
        return cuda.event_elapsed_time(start, end) / 1e3 / batch


QUEUE_HOLD_START_S = 200e-6   # the busy kernel's first length; doubled until it outlasts the queueing
QUEUE_ATTEMPTS = 8


class _QueuedSampler(_EventSampler):
    """The same, with the launches queued behind a busy kernel (``queued`` timing); ``host_s``
    is the host's time per launch of the last sample."""

    def __init__(self, cuda, launch, reset, stream):
        super().__init__(cuda, launch, reset, stream)
        self.busy = _busy_kernel()
        self.busy[1, 32, stream](1000, 1)           # compiled outside the timed samples
        self.hold_s = QUEUE_HOLD_START_S

    def __call__(self, batch: int) -> float:
        cuda, stream = self.cuda, self.stream
        for _ in range(QUEUE_ATTEMPTS):
            if self.reset:
                self.reset()
            before, start, end = cuda.event(), cuda.event(), cuda.event()
            before.record(stream)
            self.busy[1, 32, stream](1000, max(1, int(self.hold_s * 1e6)))
            start.record(stream)
            t0 = _now()
            for _ in range(batch):
                self.launch()
            host = _now() - t0
            end.record(stream)
            end.synchronize()
            held = cuda.event_elapsed_time(before, start) / 1e3
            if host < 0.9 * held:
                self.host_s = host / batch
                return cuda.event_elapsed_time(start, end) / 1e3 / batch
            self.hold_s = max(2 * self.hold_s, 2 * host)
        raise RuntimeError(f"queued timing: the host took {host * 1e3:.3f} ms to queue {batch} launch(es), longer "
                           f"than the busy kernel held the stream ({held * 1e3:.3f} ms) after {QUEUE_ATTEMPTS} "
                           "tries; time this variant with launch=direct")
