"""Whether a sweep file may be continued by this sweep (``--resume``), and if not, why.

A resumed sweep adds cells to the file's; they are comparable only if they measure the same
thing in the same way. Each field below must be equal in the file's header and in the new
sweep's, or the resume is refused in one line naming the first difference: the input's
fingerprint, the family and variant, the grid (names, values and their order), the fixed
parameters, the target, the device name, the launch mode (``direct`` for files written before
launch modes existed: their cells were direct launches) and the strategy (name and seed: a
budget may grow).
Repetitions, warm-ups and the time limit may change (a longer time limit to retry nothing:
failed cells are not "missing" and are not run again).
"""

from __future__ import annotations

from kernels.errors import GraphKernelsError


class ResumeRefused(GraphKernelsError):
    """The sweep file cannot be continued by this sweep."""


def _short(value) -> str:
    text = str(value)
    return text if len(text) <= 80 else text[:80] + "…"


def _fields(sweep: dict) -> dict:
    inp = sweep.get("input") if isinstance(sweep.get("input"), dict) else {}
    strategy = sweep.get("strategy") if isinstance(sweep.get("strategy"), dict) else {"name": "grid"}
    return {
        "input fingerprint": inp.get("fingerprint"),
        "family": sweep.get("family"),
        "variant": sweep.get("variant"),
        "grid": [(name, [(type(v) is bool, v) for v in values]) for name, values in sweep.get("grid", {}).items()],
        "fixed parameters": sorted(((k, (type(v) is bool, v)) for k, v in (sweep.get("fixed") or {}).items()),
                                   key=str),
        "target": sweep.get("target"),
        "device": sweep.get("device"),
        "launch mode": sweep.get("launch", "direct"),
        "strategy": strategy.get("name", "grid"),
        "strategy seed": strategy.get("seed", 0) if strategy.get("name") in ("random", "local", "bayes") else None,
    }


def _show(name: str, sweep: dict) -> str:
    if name == "input fingerprint":
        inp = sweep.get("input") or {}
        return f"{inp.get('name') or '?'} ({_short(inp.get('fingerprint'))})"
    if name == "grid":
        return _short(" ".join(f"{k}={','.join(map(str, v))}" for k, v in sweep.get("grid", {}).items()))
    if name == "fixed parameters":
        return _short(" ".join(f"{k}={v}" for k, v in (sweep.get("fixed") or {}).items()) or "none")
    if name == "launch mode":
        return _fields(sweep)[name]
    if name.startswith("strategy"):
        return _short(_fields(sweep)[name])
    return _short(sweep.get(name))


def check_resumable(previous: dict, header: dict, path) -> None:
    """Refuse, in one line, to continue the sweep ``previous`` (loaded from ``path``) with the
    sweep described by ``header``."""
    old, new = _fields(previous), _fields(header)
    for name in old:
        if old[name] != new[name]:
            raise ResumeRefused(f"cannot resume {path}: its {name} is {_show(name, previous)}, this sweep's is "
                                f"{_show(name, header)} (start a new file, or sweep the same thing)")


def unfinished(sweep: dict) -> bool:
    """Whether ``--resume`` (Resume Sweep) has cells to run in this loaded sweep: it stopped early
    (cancelled, killed, or fewer cells than its grid) or holds cells lost with a cluster."""
    cells = sweep.get("cells", [])
    return bool(sweep.get("cancelled") or sweep.get("stopped") == "lost" or len(cells) < sweep.get("total_cells", 0)
                or any(c.get("status") == "lost" for c in cells))
