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
