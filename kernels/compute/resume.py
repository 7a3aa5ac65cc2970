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

Before that check, :func:`plan_resume` decides whether a file can be continued *here* at all
and how (the GUI's Resume Sweep shows its decision): a sweep file cells can be added to, of a
variant this installation has and can run, that stopped early (:func:`unfinished`), on a
target offered here or on the connected cluster (where it ran first), measured as the file
was (its repetitions, warm-ups, launch mode and time limit).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kernels.errors import GraphKernelsError
from kernels.measure.targets import Target


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


@dataclass(frozen=True)
class ResumePlan:
    """How a sweep file is continued: the same sweep, where it can run, measured as before."""

    path: str
    previous: dict             # the file as read: its cells are drawn at once, its strategy is kept
    family: str
    variant: str
    grid: dict
    fixed: dict
    place: str                 # "local" or "cluster": where ``target`` is offered
    target: str                # the file's target
    repeat: int
    warmup: int
    launch: str
    time_limit: float



def plan_resume(path, families: Mapping, *, why_unavailable: Callable[[object], str | None],
                offered: Callable[[object], Mapping[str, Sequence[str]]], repeat: int,
                time_limit: float) -> ResumePlan:
    """Whether the sweep file ``path`` can be continued here, and how; else ``ResumeRefused``
    in one line saying why.

    ``families``: the registry's families by name; ``why_unavailable(variant)``: why a variant
    cannot run here (``None`` when it can); ``offered(variant)``: the targets offered for it by
    place (``{"local": [...], "cluster": [...]}``). The file's target is taken on the cluster
    first when the sweep ran on one (its ``backend``), else here first. ``repeat`` and
    ``time_limit`` stand in for a file that does not say. Whether the sweep is the same
    (input, grid, device...) is :func:`check_resumable`'s, when it runs."""
    from kernels.results import load_sweep
    from kernels.results.sweep_file import is_sweep_lines

    path = str(path)
    if not Path(path).is_file():
        raise ResumeRefused(f"cannot resume {path}: no such file")
    if not is_sweep_lines(path):
        raise ResumeRefused(f"cannot resume {path}: not a sweep file that cells can be added to (one written "
                            "by Sweep here or by graph-kernels sweep --out; exports and Kernel Tuner caches "
                            "open with Results ▸ Open Results…)")
    previous = load_sweep(path)
    family, variant = previous.get("family"), previous.get("variant")
    fam = families.get(family)
    if fam is None or variant not in fam.variants:
        raise ResumeRefused(f"cannot resume {path}: its variant {family}/{variant} is not available here")
    var = fam.variants[variant]
    reason = why_unavailable(var)
    if reason:
        raise ResumeRefused(f"cannot resume {path}: {family}/{variant} cannot run here: {reason}")
    if not unfinished(previous):
        raise ResumeRefused(f"nothing to resume in {path}: the sweep ended on its own "
                            f"({previous.get('stopped', 'complete')}, {len(previous['cells'])} configurations)")
    # the file's target, on the cluster it ran on when connected, else here (a lost cluster's cells
    # run again on this machine: check_resumable checks that the device is the same)
    saved = Target.read(previous.get("target"))    # "cluster:cuda" in older files: the device is what counts
    target = str(saved.local()) if saved is not None else str(previous.get("target"))
    places = offered(var)
    ran_on_cluster = (previous.get("backend") or {}).get("kind") == "dask"
    order = ("cluster", "local") if ran_on_cluster else ("local", "cluster")
    place = next((p for p in order if target in places.get(p, ())), None)
    if place is None:
        here = [*places.get("local", ()), *(f"{t} on the cluster" for t in places.get("cluster", ()))]
        raise ResumeRefused(f"cannot resume {path}: its target {target} is not available here for "
                            f"{family}/{variant} (here: {', '.join(here) or 'none'})")
    return ResumePlan(path=path, previous=previous, family=family, variant=variant, grid=previous["grid"],
                      fixed=dict(previous.get("fixed") or {}), place=place, target=target,
                      repeat=int(previous.get("repeat", repeat)), warmup=int(previous.get("warmup", 1)),
                      # a resume keeps the file's launch mode (files before launch modes: direct)
                      launch=str(previous.get("launch", "direct")),
                      time_limit=float(previous.get("time_limit", time_limit)))
