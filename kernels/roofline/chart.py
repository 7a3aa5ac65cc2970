"""What a roofline chart draws, without drawing it: the GUI's roofline view and
``benchmarks/bench_roofline.py`` (matplotlib) both take this.

``roofline_chart(records)`` places every record that has a point (:mod:`kernels.roofline.percent`)
on the roofline of one device (the first record's with peaks; records of other devices are left
out, said in ``skipped``): the measured bandwidth's diagonal, one ceiling per operation kind
present, and the points, each with a label, the run's variant and whether it lies above the
roofline (an L2-resident input).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kernels.roofline import OP_KINDS
from kernels.roofline.peaks import device_key
from kernels.roofline.percent import RooflinePoint, peaks_for, roofline_point, why_not_on_roofline


@dataclass
class ChartPoint:
    point: RooflinePoint
    label: str                  # family/variant params on input
    series: str                 # what points are grouped (coloured) by: family/variant
    record: dict


@dataclass
class RooflineChart:
    device: str = ""
    peaks: dict | None = None
    points: list[ChartPoint] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)      # why some records have no point

    @property
    def ops(self) -> list[str]:
        """The operation kinds of the points, in OP_KINDS order (one ceiling each)."""
        present = {p.point.op for p in self.points}
        return [k for k in OP_KINDS if k in present]

    def x_range(self) -> tuple[float, float]:
        """Intensities to draw: the points' and every ceiling's ridge, a decade of room each side."""
        xs = [p.point.intensity for p in self.points if p.point.intensity > 0]
        if self.peaks:
            xs += [self.peaks["rates"][op] / self.peaks["bandwidth_Bps"] for op in self.ops]
        if not xs:
            return 0.01, 100.0
        return min(xs) / 10, max(xs) * 10

    def roof(self, op: str, x: float) -> float:
        """The roofline of ``op`` at intensity ``x``: min(peak rate, x × bandwidth)."""
        return min(self.peaks["rates"][op], x * self.peaks["bandwidth_Bps"])

    @property
    def above(self) -> list[ChartPoint]:
        return [p for p in self.points if p.point.above]


def _label(record: dict) -> str:
    params = record.get("resolved_params") or record.get("params") or {}
    shown = ", ".join(f"{k}={v}" for k, v in params.items() if k not in ("per_vertex", "source"))
    name = (record.get("input") or {}).get("name") or "?"
    return f"{record.get('family')}/{record.get('variant')}" + (f" ({shown})" if shown else "") + f" on {name}"


def roofline_chart(records) -> RooflineChart:
    chart = RooflineChart()
    key = None
    for record in records:
        why = why_not_on_roofline(record)
        if why is not None:
            if why not in chart.skipped:
                chart.skipped.append(why)
            continue
        device = record["environment"]["device"]
        if key is None:
            key, chart.peaks, chart.device = device_key(device), peaks_for(record), device.get("name", "?")
        elif device_key(device) != key:
            words = f"runs on {device.get('name')} left out: one device's roofline at a time"
            if words not in chart.skipped:
                chart.skipped.append(words)
            continue
        point = roofline_point(record, chart.peaks)
        if point is not None:
            chart.points.append(ChartPoint(point, _label(record), f"{record['family']}/{record['variant']}", record))
    return chart


def sweep_records(sweep: dict) -> list[dict]:
    """The records of a sweep's measured cells (one point per cell)."""
    return [c["record"] for c in sweep.get("cells", [])
            if c.get("status") == "ok" and isinstance(c.get("record"), dict)]
