"""Energy from NVML (kernels/measure/energy.py) with a fake NVML: joules per launch over a window
of repeated launches, the mean power, clocks and throttle reasons; a missing NVML said in words."""

from __future__ import annotations

import time

import pytest

from kernels.measure import energy


class FakeNvml:
    """A GPU drawing ``watts``: the counter (mJ) follows the wall clock."""

    NVML_CLOCK_SM, NVML_CLOCK_MEM = 1, 2

    def __init__(self, watts: float = 300.0, reasons: int = 0x4):
        self.watts, self.reasons, self.t0 = watts, reasons, time.perf_counter()
        self.handles = []

    def nvmlInit(self):
        pass

    def nvmlDeviceGetHandleByUUID(self, uuid):
        self.handles.append(uuid)
        return "h"

    def nvmlDeviceGetHandleByIndex(self, index):
        return "h"

    def nvmlDeviceGetTotalEnergyConsumption(self, handle):
        return int((time.perf_counter() - self.t0) * self.watts * 1e3)

    def nvmlDeviceGetClockInfo(self, handle, which):
        return 1980 if which == self.NVML_CLOCK_SM else 2619

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle):
        return self.reasons


@pytest.fixture
def fake(monkeypatch):
    nvml = FakeNvml()
    monkeypatch.setattr(energy, "_pynvml", lambda: nvml)
    energy.nvml_state.cache_clear()
    yield nvml
    energy.nvml_state.cache_clear()


def test_joules_per_launch_and_power_over_a_window_of_launches(fake):
    launches = []

    def launch():
        launches.append(1)
        time.sleep(0.001)

    figures, why = energy.measure_energy(launch, lambda: None, uuid="GPU-1234", window_s=0.05)
    assert why is None and fake.handles == ["GPU-1234"]
    assert figures["launches"] == len(launches) and figures["window_s"] >= 0.05
    assert figures["watts"] == pytest.approx(300.0, rel=0.2)
    assert figures["joules_per_launch"] == pytest.approx(figures["watts"] * figures["window_s"] / len(launches),
                                                         rel=0.05)
    assert figures["sm_clock_mhz"] == 1980 and figures["throttle_reasons"] == ["software power cap"]


def test_rates_per_watt():
    metrics = [{"name": "GTEPS", "unit": "GTEPS", "value": 60.0}, {"name": "x", "unit": "u", "value": None}]
    assert energy.per_watt(metrics, {"watts": 300.0}) == [{"name": "GTEPS/W", "unit": "GTEPS/W", "value": 0.2}]


def test_without_nvml_the_reason_is_one_sentence(monkeypatch):
    def missing():
        raise ImportError("No module named 'pynvml'")

    monkeypatch.setattr(energy, "_pynvml", missing)
    energy.nvml_state.cache_clear()
    figures, why = energy.measure_energy(lambda: None, lambda: None)
    assert figures is None and "nvidia-ml-py" in why and "\n" not in why
    energy.nvml_state.cache_clear()


def test_a_counter_that_does_not_move_gives_no_figures(fake):
    fake.watts = 0.0
    figures, why = energy.measure_energy(lambda: None, lambda: None, window_s=0.01)
    assert figures is None and "did not move" in why


class BusyNvml(FakeNvml):
    """A newer driver (clock-event reasons under their current name) whose GPU slows down for a
    while in the middle of the window: a thermal slowdown and a lower SM clock, gone by its end."""

    def __init__(self):
        super().__init__(reasons=0x0)
        self.reads = 0

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle):
        self.reads += 1
        return 0x20 if 3 <= self.reads <= 5 else 0x1          # idle bit: never reported as a reason

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle):
        raise AssertionError("the old name is used only where the new one is missing")

    def nvmlDeviceGetClockInfo(self, handle, which):
        if which == self.NVML_CLOCK_SM:
            return 1410 if 3 <= self.reads <= 5 else 1980
        return 2619


def test_reasons_and_clocks_seen_during_the_window_not_only_at_its_end(monkeypatch):
    nvml = BusyNvml()
    monkeypatch.setattr(energy, "_pynvml", lambda: nvml)
    energy.nvml_state.cache_clear()
    try:
        figures, why = energy.measure_energy(lambda: time.sleep(0.001), lambda: None, window_s=0.03)
    finally:
        energy.nvml_state.cache_clear()
    assert why is None and figures["clock_samples"] == nvml.reads > 5
    assert figures["throttle_reasons"] == ["software thermal slowdown"]
    assert (figures["sm_clock_min_mhz"], figures["sm_clock_max_mhz"], figures["sm_clock_mhz"]) == (1410, 1980, 1980)


def test_counts_per_joule():
    assert energy.per_joule({"triangles": 600}, {"joules_per_launch": 0.02}) == \
        [{"name": "triangles/J", "unit": "triangles/J", "value": pytest.approx(30000.0)}]
    assert energy.per_joule({"cliques": 10, "per_vertex": True}, {"joules_per_launch": 2.0})[0]["value"] == 5.0
    assert energy.per_joule({"reached": 5}, {"joules_per_launch": 1.0}) == []
