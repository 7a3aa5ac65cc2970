"""The CUDA-event timer's logic (warm-up, batching, the launch-bound flag, queued timing's busy
kernel that must outlast the host's queueing), on a scripted device clock: the real timer runs
only on a GPU, where its results are checked by tests/test_launch_modes_gpu.py."""

from __future__ import annotations

import numba.cuda
import pytest

from kernels.measure import timing


class Clock:
    """A scripted device and host: each launch adds ``kernel_s`` to the device's timeline and
    ``host_s`` to the host's; the busy kernel holds the device for its requested length."""

    def __init__(self, kernel_s: float, host_s: float):
        self.kernel_s, self.host_s = kernel_s, host_s
        self.device = 0.0
        self.host = 0.0
        self.launches = 0
        self.holds = []

    def launch(self):
        self.launches += 1
        self.device += self.kernel_s
        self.host += self.host_s

    def event(self):
        clock = self

        class Event:
            def record(self, stream=0):
                self.at = clock.device

            def synchronize(self):
                pass

        return Event()

    def busy(self):
        clock = self

        class Configured:
            def __call__(self, ns, rounds):
                clock.holds.append(ns * rounds * 1e-9)
                clock.device += ns * rounds * 1e-9

        class Busy:
            def __getitem__(self, config):
                return Configured()

        return Busy()


@pytest.fixture
def clock(monkeypatch):
    def install(kernel_s, host_s):
        c = Clock(kernel_s, host_s)
        monkeypatch.setattr(numba.cuda, "event", c.event, raising=False)
        monkeypatch.setattr(numba.cuda, "event_elapsed_time", lambda a, b: (b.at - a.at) * 1e3, raising=False)
        monkeypatch.setattr(numba.cuda, "synchronize", lambda: None, raising=False)
        monkeypatch.setattr(timing, "_now", lambda: c.host)
        monkeypatch.setattr(timing, "_busy_kernel", c.busy)
        return c

    return install


def test_a_long_kernel_is_timed_one_launch_a_sample(clock):
    c = clock(kernel_s=2e-3, host_s=50e-6)
    stats, launch_bound = timing.time_kernel_cuda(c.launch, repeat=3, warmup=1)
    assert stats.median_s == pytest.approx(2e-3) and stats.launches_per_sample == 1
    assert not launch_bound
    assert c.launches == 1 + 1 + 3          # warm-up, probe, samples


def test_a_short_kernel_is_batched_and_flagged_launch_bound(clock):
    c = clock(kernel_s=10e-6, host_s=50e-6)
    stats, launch_bound = timing.time_kernel_cuda(c.launch, repeat=2, warmup=1)
    assert launch_bound and stats.launches_per_sample == 50       # 500 µs of work a sample
    assert stats.median_s == pytest.approx(10e-6)


def test_queued_timing_holds_the_stream_longer_than_the_host_queues_and_reports_device_time(clock):
    c = clock(kernel_s=10e-6, host_s=300e-6)       # the host is 30x slower than the device
    stats, launch_bound = timing.time_kernel_cuda(c.launch, repeat=2, warmup=1, queued=True)
    assert stats.median_s == pytest.approx(10e-6)   # the device's time, not the host's
    assert launch_bound                             # the host's time per launch exceeded it
    queued_holds = c.holds[1:]                      # the first is the compile-only launch
    assert queued_holds[0] == pytest.approx(timing.QUEUE_HOLD_START_S)
    assert queued_holds[-1] > c.host_s * stats.launches_per_sample     # lengthened until it outlasted them


def test_queued_timing_gives_up_in_words_when_the_host_never_finishes_queueing_in_time(clock, monkeypatch):
    c = clock(kernel_s=10e-6, host_s=300e-6)
    monkeypatch.setattr(timing, "QUEUE_ATTEMPTS", 1)
    with pytest.raises(RuntimeError, match="longer than the busy kernel held the stream.*launch=direct"):
        timing.time_kernel_cuda(c.launch, repeat=1, warmup=1, queued=True)
