"""The energy a kernel uses, from NVML's energy counter (``--energy``).

NVML (``nvidia-ml-py``, the ``cuda`` extra) keeps a per-GPU counter of the energy used since the
driver loaded, in millijoules (``nvmlDeviceGetTotalEnergyConsumption``, Volta and later). It is
updated every few milliseconds, far coarser than one of our kernels (microseconds), so the
energy of a run is measured over a window of its own: the timed launch (a CUDA graph's replay,
queued or direct launches, as the run's timing used) repeated for at least :data:`WINDOW_S`,
the counter read before and after. The record's ``energy`` gives joules per launch, the mean
power over the window, the window and the launches, and what NVML says of the clocks then: the
SM and memory clocks at the window's end, the lowest and highest SM clock sampled during it,
and every throttle reason (power cap, thermal, ...) seen in any sample (NVML reports the reasons
active *now*, so they are read at each of the window's synchronisations, about every 16 launches,
not only at its end). Where NVML is absent or the GPU has no energy counter, the run says so
once, in a notice.

Rates per watt: every rate metric of the family over the mean power (GTEPS/W, GFLOP/s per W,
edges/s per W: :func:`per_watt`), and what a run counts per joule (triangles/J, cliques/J:
:func:`per_joule`).

The GPU is found by its UUID (``CUDA_VISIBLE_DEVICES`` renumbers devices for CUDA, not for NVML).
"""

from __future__ import annotations

import contextlib
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


def _reason_bits(nvml, handle) -> int:
    """The active clock-event (throttle) reasons: the current name first
    (``nvmlDeviceGetCurrentClocksEventReasons``, drivers 535+), the older one where it is missing."""
    for name in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
        read = getattr(nvml, name, None)
        if read is None:
            continue
        try:
            return int(read(handle))
        except Exception:  # noqa: BLE001 - not supported by this driver: try the other name
            continue
    return 0


def _reason_names(bits: int) -> list[str]:
    return [name for bit, name in THROTTLE_REASONS.items() if bits & bit and bit != 0x1]


class _ClockSamples:
    """SM clock range and the union of reasons over the window's samples."""

    def __init__(self, nvml, handle):
        self.nvml, self.handle = nvml, handle
        self.bits, self.sm, self.count = 0, [], 0

    def take(self) -> None:
        self.count += 1
        self.bits |= _reason_bits(self.nvml, self.handle)
        # a clock NVML cannot read: the range has fewer samples
        with contextlib.suppress(Exception):
            self.sm.append(int(self.nvml.nvmlDeviceGetClockInfo(self.handle, self.nvml.NVML_CLOCK_SM)))


def measure_energy(launch, synchronize, uuid: str | None = None, window_s: float = WINDOW_S) -> tuple[dict | None,
                                                                                                         str | None]:
    """``(energy, None)``: ``launch`` repeated for at least ``window_s`` with NVML's counter read
    around it; or ``(None, why not)``."""
    nvml, why = nvml_state()
    if nvml is None:
        return None, why
    try:
        handle = _handle(nvml, uuid)
        samples = _ClockSamples(nvml, handle)
        synchronize()
        e0 = nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
        t0 = time.perf_counter()
        launches = 0
        while launches < MAX_LAUNCHES:
            launch()
            launches += 1
            if launches & 15 == 0 or launches < 16:
                synchronize()
                samples.take()          # while the GPU is busy with the window's work
                if time.perf_counter() - t0 >= window_s:
                    break
        synchronize()
        seconds = time.perf_counter() - t0
        e1 = nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
        sm = nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM)
        mem = nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_MEM)
        samples.take()
    except Exception as exc:  # noqa: BLE001 - a GPU without an energy counter (pre-Volta), a lost handle
        return None, f"NVML could not read the energy ({type(exc).__name__}: {exc})"
    joules = (e1 - e0) / 1e3
    if joules <= 0:
        return None, f"NVML's energy counter did not move in {seconds:.2f} s: no energy figures"
    out = {"joules_per_launch": joules / launches, "watts": joules / seconds, "window_s": seconds,
           "launches": launches, "sm_clock_mhz": int(sm), "memory_clock_mhz": int(mem),
           "throttle_reasons": _reason_names(samples.bits), "clock_samples": samples.count,
           "method": "NVML total energy counter around repeated launches"}
    if samples.sm:
        out["sm_clock_min_mhz"], out["sm_clock_max_mhz"] = min(samples.sm), max(samples.sm)
    return out, None


def per_watt(metrics: list[dict], energy: dict) -> list[dict]:
    """Each rate metric over the window's mean power (GTEPS/W, GFLOP/s per W...)."""
    out = []
    for m in metrics:
        if isinstance(m.get("value"), (int, float)) and energy.get("watts"):
            out.append({"name": f"{m['name']}/W", "unit": f"{m['unit']}/W", "value": m["value"] / energy["watts"]})
    return out


#: what a run's result counts, per joule: result key -> metric name
PER_JOULE = {"triangles": "triangles/J", "cliques": "cliques/J"}


def per_joule(result: dict, energy: dict) -> list[dict]:
    """The run's counted objects per joule of one launch (triangles/J, cliques/J)."""
    j = energy.get("joules_per_launch")
    out = []
    for key, name in PER_JOULE.items():
        value = (result or {}).get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and j:
            out.append({"name": name, "unit": name, "value": value / j})
    return out
