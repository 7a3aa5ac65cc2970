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

    def to_json(self) -> dict:
        return asdict(self)


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


def time_kernel_cuda(launch, repeat: int, warmup: int, reset=None, tick=None,
                     stream=0) -> tuple[KernelStats, bool]:
    """CUDA-event timing. Returns the stats and whether the kernel is launch-bound.

    ``stream`` is the (numba) stream ``launch`` and ``reset`` queue their work on: the events
    are recorded there, so they bracket exactly that work (0: numba's default stream)."""
    from numba import cuda

    tick = tick or _no_tick
    for _ in range(max(warmup, 1)):
        if reset:
            reset()
        launch()
    cuda.synchronize()
    for _ in range(warmup):
        tick()

    def timed(batch: int) -> float:
        if reset:
            reset()
        start, end = cuda.event(), cuda.event()
        start.record(stream)
        for _ in range(batch):
            launch()
        end.record(stream)
        end.synchronize()
        return cuda.event_elapsed_time(start, end) / 1e3 / batch

    probe = timed(1)
    launch_bound = probe < LAUNCH_BOUND_SECONDS
    batch = 1
    if launch_bound and reset is None:
        batch = int(min(MAX_BATCH, max(2, math.ceil(BATCH_TARGET_SECONDS / max(probe, 1e-6)))))
    samples = []
    for _ in range(max(repeat, 1)):
        samples.append(timed(batch))
        tick()
    return KernelStats.from_samples(samples, batch), launch_bound
