"""A run on the roofline: its point, the fractions of the measured limits, and the views' metrics.

``roofline_point(record)`` places a GPU record (or a sweep cell's record) on the roofline of its
device: arithmetic intensity ``ops / bytes`` from the work model (``record["roofline"]``),
achieved rate ``ops / median time``, the bound ``min(peak rate, intensity × bandwidth)``, and the
fractions of the measured bandwidth and of the bound. The peaks are the ones the record carries
(kept on its device before the run), else the ones kept on this machine for the record's device.

A run faster than its bound moved fewer DRAM bytes than the model's compulsory count: its input
stayed in L2 between the timed replays. Such a point is *above the roofline*: its fractions are
not given (``None``), it is marked L2-resident, never "over 100 %".
"""

from __future__ import annotations

from dataclasses import dataclass

from kernels.measure.targets import Target
from kernels.roofline.peaks import stored_peaks, valid_peaks

#: what a heatmap or chart can show instead of time: name -> (words, unit)
METRICS = {
    "time": ("median kernel time", "s"),
    "pct-bandwidth": ("% of the measured copy bandwidth (the model's bytes / time)", "%"),
    "pct-bound": ("% of the roofline bound, min(measured peak rate, intensity × measured bandwidth): "
                  "the add+min bound for SSSP and APSP", "%"),
    "energy": ("energy per launch (NVML, --energy)", "J"),
}
L2_TEXT = "L2"          # what a cell above the roofline shows instead of a percentage


@dataclass(frozen=True)
class RooflinePoint:
    intensity: float            # operations per byte
    rate: float                 # achieved operations per second
    bandwidth: float            # achieved bytes per second (the model's bytes / time)
    op: str
    peak_bandwidth: float
    peak_rate: float
    fits_in_l2: bool | None     # the record's timing.fits_in_l2

    @property
    def bound(self) -> float:
        """The roofline at this intensity: the lower of the compute and the memory ceilings."""
        return min(self.peak_rate, self.intensity * self.peak_bandwidth)

    @property
    def memory_bound(self) -> bool:
        return self.intensity * self.peak_bandwidth < self.peak_rate

    @property
    def above(self) -> bool:
        """Faster than the roofline allows: the input was L2-resident (see the module)."""
        return self.rate > self.bound * (1 + 1e-9) or self.bandwidth > self.peak_bandwidth * (1 + 1e-9)

    @property
    def pct_bound(self) -> float | None:
        return None if self.above else 100.0 * self.rate / self.bound

    @property
    def pct_bandwidth(self) -> float | None:
        return None if self.above else 100.0 * self.bandwidth / self.peak_bandwidth


def peaks_for(record: dict) -> dict | None:
    """The peaks to judge ``record`` by: its own, else the ones kept here for its device."""
    roof = record.get("roofline") if isinstance(record, dict) else None
    if isinstance(roof, dict) and valid_peaks(roof.get("peaks")):
        return roof["peaks"]
    device = ((record.get("environment") or {}).get("device") or {}) if isinstance(record, dict) else {}
    return stored_peaks(device)


def _median(record: dict) -> float | None:
    m = ((record.get("timing") or {}).get("kernel") or {}).get("median_s")
    return m if isinstance(m, (int, float)) and m > 0 else None


def why_not_on_roofline(record: dict) -> str | None:
    """``None`` when ``record`` has a point, else why not, in words."""
    if not isinstance(record, dict):
        return "no record"
    roof = record.get("roofline")
    if not isinstance(roof, dict) or not roof.get("bytes") or not roof.get("ops"):
        return f"{record.get('family')}/{record.get('variant')} has no work model in this record (GPU runs only)"
    if Target.read(record.get("target")) != Target.CUDA:
        return f"a {record.get('target')} run: the roofline is a real GPU's"
    if _median(record) is None:
        return "no kernel time"
    if peaks_for(record) is None:
        name = ((record.get("environment") or {}).get("device") or {}).get("name", "its device")
        return f"no measured peaks for {name}: run 'graph-kernels device-peaks' on it"
    if roof.get("op") not in peaks_for(record)["rates"]:
        return f"the peaks have no {roof.get('op')} rate: remeasure them (graph-kernels device-peaks --remeasure)"
    return None


def roofline_point(record: dict, peaks: dict | None = None) -> RooflinePoint | None:
    """``record`` on its device's roofline, or ``None`` (:func:`why_not_on_roofline` says why)."""
    if why_not_on_roofline(record) is not None and peaks is None:
        return None
    peaks = peaks or peaks_for(record)
    roof, t = record.get("roofline") or {}, _median(record)
    if not peaks or t is None or not roof.get("bytes") or roof.get("op") not in peaks["rates"]:
        return None
    fits = (record.get("timing") or {}).get("fits_in_l2")
    return RooflinePoint(intensity=roof["ops"] / roof["bytes"], rate=roof["ops"] / t, bandwidth=roof["bytes"] / t,
                         op=roof["op"], peak_bandwidth=float(peaks["bandwidth_Bps"]),
                         peak_rate=float(peaks["rates"][roof["op"]]),
                         fits_in_l2=fits if isinstance(fits, bool) else None)


def metric_value(record: dict, metric: str) -> tuple[float | None, bool, str | None]:
    """``(value, above the roofline, why no value)`` of ``metric`` (a :data:`METRICS` name) for a
    record: seconds, a percentage, or joules per launch."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r} (known: {', '.join(METRICS)})")
    if metric == "time":
        return _median(record), False, None
    if metric == "energy":
        j = (record.get("energy") or {}).get("joules_per_launch") if isinstance(record, dict) else None
        if isinstance(j, (int, float)) and j > 0:
            return float(j), False, None
        return None, False, "no energy figures: the runs were made without --energy (or without NVML)"
    why = why_not_on_roofline(record)
    if why is not None:
        return None, False, why
    point = roofline_point(record)
    value = point.pct_bandwidth if metric == "pct-bandwidth" else point.pct_bound
    return value, point.above, None

