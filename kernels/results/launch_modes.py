"""How a record's kernel time was taken (``timing.launch``), and which times may be compared.

* ``direct``: the variant's launches as written, timed with events around them (or, on the CPU
  and the simulator, with ``perf_counter``): the host's launch overhead is inside the time.
* ``graph``: replays of a CUDA graph captured from one launch: the device's time.
* ``queued``: direct launches queued behind a busy kernel, so the events bracket the device's
  work alone: the device's time.

A record without the field was timed ``direct`` (it predates launch modes). ``graph`` and
``queued`` both measure device time and compare like with like; ``direct`` against either
does not: a speedup between them measures launch overhead as much as kernels (docs/results.md,
"Launch modes"). The views (timing chart, speedups, history, heatmap) and the heatmap's text
and pictures say which mode each number used, and mark a cross-mode speedup as such.

Qt-free: the GUI's views and ``graph-kernels heatmap`` share it.
"""

from __future__ import annotations

DIRECT, GRAPH, QUEUED = "direct", "graph", "queued"
DEVICE_TIME = frozenset({GRAPH, QUEUED})
DESCRIPTIONS = {
    DIRECT: "direct launches (host launch overhead included)",
    GRAPH: "CUDA-graph replays (device time)",
    QUEUED: "launches queued behind a busy kernel (device time)",
}


def launch_mode(record: dict | None) -> str:
    """The record's launch mode; ``direct`` for records written before the field existed."""
    timing = (record or {}).get("timing") if isinstance(record, dict) else None
    mode = timing.get("launch") if isinstance(timing, dict) else None
    return mode if mode in DESCRIPTIONS else DIRECT


def comparable(a: str, b: str) -> bool:
    """Whether times taken in modes ``a`` and ``b`` compare like with like."""
    return a == b or (a in DEVICE_TIME and b in DEVICE_TIME)


def cross_mode_note(mode: str, baseline_mode: str) -> str:
    """What a speedup of a ``mode`` run against a ``baseline_mode`` one must say ('' when fair)."""
    if comparable(mode, baseline_mode):
        return ""
    return f"{mode} vs {baseline_mode}: not like with like"


def describe_modes(modes) -> str:
    """The modes of a set of numbers in words: one mode, or the list and whether they compare."""
    found = sorted(set(modes), key=list(DESCRIPTIONS).index)
    if not found:
        return ""
    if len(found) == 1:
        return f"timed as {DESCRIPTIONS[found[0]]}"
    fair = all(m in DEVICE_TIME for m in found)
    return (f"launch modes {', '.join(found)}: "
            + ("all device time, comparable" if fair else "direct includes host launch overhead, not like with like"))
