"""The energy a kernel uses, from NVML's energy counter (``--energy``).

NVML (``nvidia-ml-py``, the ``cuda`` extra) keeps a per-GPU counter of the energy used since the
driver loaded, in millijoules (``nvmlDeviceGetTotalEnergyConsumption``, Volta and later). It is
updated every few milliseconds, far coarser than one of our kernels (microseconds), so the
energy of a run is measured over a window of its own: the timed launch (a CUDA graph's replay,
queued or direct launches, as the run's timing used) repeated for at least :data:`WINDOW_S`,
the counter read before and after. The record's ``energy`` gives joules per launch, the mean
power over the window, the window and the launches, and what NVML says of the clocks then: the
SM and memory clocks and the throttle reasons (power cap, thermal, ...) seen at the window's
end. Where NVML is absent or the GPU has no energy counter, the run says so once, in a notice.

The GPU is found by its UUID (``CUDA_VISIBLE_DEVICES`` renumbers devices for CUDA, not for NVML).
"""

from __future__ import annotations

import functools
import time

WINDOW_S = 0.5                  # the counter moves every few ms: half a second of launches is plenty
MAX_LAUNCHES = 1_000_000

THROTTLE_REASONS = {            # nvmlClocksEventReason* bits (formerly nvmlClocksThrottleReason*)
    0x1: "GPU idle", 0x2: "application clocks setting", 0x4: "software power cap", 0x8: "hardware slowdown",
    0x10: "sync boost", 0x20: "software thermal slowdown", 0x40: "hardware thermal slowdown",
    0x80: "hardware power brake", 0x100: "display clock setting",
}


def _pynvml():
    import pynvml  # nvidia-ml-py

    return pynvml


@functools.cache
def nvml_state() -> tuple[object | None, str | None]:
    """``(pynvml, None)`` once NVML is initialised, else ``(None, why not)``."""
    try:
        nvml = _pynvml()
    except ImportError:
        return None, 'NVML is not installed (pip install nvidia-ml-py, in the "cuda" extra): no energy figures'
    try:
        nvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 - no driver, no permission: say it once
        return None, f"NVML did not start ({type(exc).__name__}: {exc}): no energy figures"
    return nvml, None


def _handle(nvml, uuid: str | None):
    if uuid:
        return nvml.nvmlDeviceGetHandleByUUID(uuid if uuid.startswith("GPU-") else f"GPU-{uuid}")
    return nvml.nvmlDeviceGetHandleByIndex(0)


def _throttles(nvml, handle) -> list[str]:
    try:
        bits = int(nvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle))
    except Exception:  # noqa: BLE001 - an older driver: no reasons
        return []
    return [name for bit, name in THROTTLE_REASONS.items() if bits & bit and bit != 0x1]


def measure_energy(launch, synchronize, uuid: str | None = None, window_s: float = WINDOW_S) -> tuple[dict | None,
                                                                                                         str | None]:
    """``(energy, None)``: ``launch`` repeated for at least ``window_s`` with NVML's counter read
    around it; or ``(None, why not)``."""
    nvml, why = nvml_state()
    if nvml is None:
        return None, why
    try:
        handle = _handle(nvml, uuid)
        synchronize()
        e0 = nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
        t0 = time.perf_counter()
        launches = 0
        while launches < MAX_LAUNCHES:
            launch()
            launches += 1
            if launches & 15 == 0 or launches < 16:
                synchronize()
                if time.perf_counter() - t0 >= window_s:
                    break
        synchronize()
        seconds = time.perf_counter() - t0
        e1 = nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
        sm = nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM)
        mem = nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_MEM)
        throttles = _throttles(nvml, handle)
    except Exception as exc:  # noqa: BLE001 - a GPU without an energy counter (pre-Volta), a lost handle
        return None, f"NVML could not read the energy ({type(exc).__name__}: {exc})"
    joules = (e1 - e0) / 1e3
    if joules <= 0:
        return None, f"NVML's energy counter did not move in {seconds:.2f} s: no energy figures"
    return {"joules_per_launch": joules / launches, "watts": joules / seconds, "window_s": seconds,
            "launches": launches, "sm_clock_mhz": int(sm), "memory_clock_mhz": int(mem),
            "throttle_reasons": throttles, "method": "NVML total energy counter around repeated launches"}, None


def per_watt(metrics: list[dict], energy: dict) -> list[dict]:
    """Each rate metric over the window's mean power (GTEPS/W, GFLOP/s per W...)."""
    out = []
    for m in metrics:
        if isinstance(m.get("value"), (int, float)) and energy.get("watts"):
            out.append({"name": f"{m['name']}/W", "unit": f"{m['unit']}/W", "value": m["value"] / energy["watts"]})
    return out
