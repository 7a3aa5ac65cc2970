"""The device's measured limits, measured once per device and kept (``graph-kernels device-peaks``).

A roofline against the data sheet's numbers would put every kernel far below 100 %: an H100's
copy reaches about 90 % of its nominal bandwidth, and numba's code for an add+min is not the
vendor's peak FLOP rate. So the limits are *measured* (:mod:`kernels.roofline.probes`): the
bandwidth of a device-to-device copy, and the peak rates of the operation kinds the work models
count (fp64/fp32 multiply-add, add+min, int32). They are kept in a small JSON file in the user's
cache folder (``$XDG_CACHE_HOME/gpu-graph-explorer/device-peaks.json``, or the file
``GRAPH_KERNELS_PEAKS_FILE`` names), one entry per device, keyed by name, UUID and driver: a new
driver or another card of the same name is measured anew.

Runs never measure peaks (a probe between two timed runs would load the GPU); a GPU run copies
the kept peaks of its device into its record (``roofline.peaks``), so a record shows its
percentages on any machine.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Callable
from pathlib import Path

from kernels.measure.targets import Target

PEAKS_ENV = "GRAPH_KERNELS_PEAKS_FILE"
FORMAT = 1


def peaks_file() -> Path:
    value = os.environ.get(PEAKS_ENV, "").strip()
    if value:
        return Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpu-graph-explorer" / "device-peaks.json"


def device_key(device: dict) -> str | None:
    """``name|uuid|driver`` of a record's ``environment.device``; ``None`` for no real GPU."""
    if not isinstance(device, dict) or Target.read(device.get("target")) != Target.CUDA or not device.get("name") \
            or device.get("name") == "no CUDA device":
        return None
    return f"{device['name']}|{device.get('uuid') or '?'}|{device.get('driver') or '?'}"


def _read() -> dict:
    path = peaks_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        return {}                   # a damaged file is measured anew, never trusted
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("devices"), dict):
        return {}
    return data["devices"]


def _write(devices: dict) -> None:
    path = peaks_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"format": FORMAT, "devices": devices}, indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(path)               # two processes measuring at once: the last complete file wins


def valid_peaks(peaks) -> bool:
    """Peaks with a positive bandwidth and positive rates (what the views may divide by)."""
    if not isinstance(peaks, dict):
        return False
    bw, rates = peaks.get("bandwidth_Bps"), peaks.get("rates")
    return (isinstance(bw, (int, float)) and bw > 0 and isinstance(rates, dict)
            and all(isinstance(v, (int, float)) and v > 0 for v in rates.values()))


def stored_peaks(device: dict) -> dict | None:
    """The kept peaks of ``device`` (a record's ``environment.device``), or ``None``."""
    key = device_key(device)
    if key is None:
        return None
    peaks = _read().get(key)
    return peaks if valid_peaks(peaks) else None


def all_stored() -> dict:
    return {k: v for k, v in _read().items() if valid_peaks(v)}


Probe = Callable[[], dict]


def measure_peaks(device: dict, probe: Probe, *, remeasure: bool = False) -> tuple[dict, bool]:
    """``(peaks, measured now)``: the kept peaks of ``device``, or ``probe()``'s, kept for next time.

    ``probe()`` returns ``{"bandwidth_Bps": ..., "rates": {op kind: ops/s}, "method": {...}}``
    (:func:`kernels.roofline.probes.probe_device` on a real GPU; a fake in the tests)."""
    key = device_key(device)
    if key is None:
        raise ValueError("peaks are measured on a real GPU (target cuda)")
    if not remeasure:
        kept = stored_peaks(device)
        if kept is not None:
            return kept, False
    peaks = dict(probe())
    if not valid_peaks(peaks):
        raise ValueError(f"the probe returned unusable peaks: {peaks!r}")
    peaks["device"] = {k: device.get(k) for k in ("name", "uuid", "driver", "compute_capability")}
    peaks["measured"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    devices = _read()
    devices[key] = peaks
    _write(devices)
    return peaks, True
