"""Numbers and labels shared by the result views (Qt-free)."""

from __future__ import annotations

import math

UNITS = (("s", 1.0), ("ms", 1e3), ("µs", 1e6), ("ns", 1e9))


def time_unit(seconds) -> tuple[str, float]:
    """The unit that shows the largest of ``seconds`` with 1-3 digits before the point."""
    values = [s for s in seconds if s is not None and math.isfinite(s) and s > 0]
    top = max(values) if values else 1.0
    for name, scale in UNITS:
        if top * scale >= 1.0:
            return name, scale
    return UNITS[-1]


def format_seconds(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "–"
    unit, scale = time_unit([seconds])
    return f"{seconds * scale:.3g} {unit}"


def format_number(value: float | None) -> str:
    if value is None or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "–"
    if value == 0:
        return "0"
    if abs(value) >= 1e5 or abs(value) < 1e-3:
        return f"{value:.3g}"
    return f"{value:.4g}"


def params_text(params: dict | None, skip_defaults: dict | None = None, sep: str = ", ") -> str:
    items = [(k, v) for k, v in (params or {}).items() if not skip_defaults or skip_defaults.get(k) != v]
    return sep.join(f"{k}={v}" for k, v in items)


def shown_params(record: dict) -> dict:
    """A run record's parameters as the views show them: one asked as ``auto`` with what it
    chose on that input (``rows=auto→16``, from the record's ``resolved_params``)."""
    params = dict(record.get("params") or {})
    resolved = record.get("resolved_params")
    if isinstance(resolved, dict):
        for name, value in params.items():
            chosen = resolved.get(name)
            if value == "auto" and chosen is not None and chosen != "auto":
                params[name] = f"auto→{chosen}"
    return params


def result_text(result: dict | None) -> str:
    """A record's short result (``{"triangles": 45}`` → ``triangles 45``)."""
    if not result:
        return ""
    parts = []
    for k, v in result.items():
        if isinstance(v, float):
            v = format_number(v)
        elif isinstance(v, (list, dict)):
            continue
        parts.append(f"{k} {v}")
    return ", ".join(parts[:3])


def log_ticks(lo: float, hi: float, scale: float = 1.0, max_labels: int | None = None) -> list[list[tuple[float, str]]]:
    """Ticks for an axis whose coordinate is ``log10(value)``: 1-2-5 labels per decade (only
    the decades when the range spans many), minor ticks at the other integers. ``scale``
    multiplies values before they are labelled (seconds shown in ms, say). ``max_labels``:
    at most that many labels (a short axis labels every second or third decade only, since
    pyqtgraph draws every label of the first level even when they overlap)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo <= 0 or hi <= 0:
        return [[], []]
    lo, hi = min(lo, hi), max(lo, hi)
    d0, d1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    decades = d1 - d0
    labelled = (1,) if decades > 4 else (1, 2, 5)
    major, minor = [], []
    for d in range(d0, d1 + 1):
        for m in range(1, 10):
            v = m * 10.0 ** d
            if v < lo / 1.0001 or v > hi * 1.0001:
                continue
            pos = math.log10(v)
            if m in labelled:
                major.append((pos, f"{v * scale:g}"))
            else:
                minor.append((pos, ""))
    if len(major) < 2:           # a narrow range: label its ends too
        for v in (lo, hi):
            major.append((math.log10(v), f"{v * scale:.3g}"))
    if max_labels is not None and len(major) > max(max_labels, 1):
        decades_only = [t for t in major if abs(t[0] - round(t[0])) < 1e-9] or major
        step = math.ceil(len(decades_only) / max(max_labels, 1))
        kept = decades_only[::step]
        minor = minor + [(pos, "") for pos, _t in major if (pos, _t) not in kept]
        major = kept
    return [major, minor]
