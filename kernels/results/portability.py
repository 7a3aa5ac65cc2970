"""One tuning, two GPUs: how a sweep's best cell carries from one device to another.

Two sweeps of the same grid on the same input, made on different GPUs (or one cluster sweep with
``--mixed-gpus``, split by the device that ran each cell: :func:`split_by_device`), are compared
cell by cell. The **portability loss** of A's tuning on B is ``t_B(best_A) / t_B(best_B)``: how
much slower B runs with the parameters tuned on A than with its own best (1.0: nothing lost).
It is given both ways, with the cells both sweeps verified, the rank correlation of the two
sweeps' times (Spearman's ρ: do the GPUs order the cells alike?) and the geometric mean of the
per-cell time ratio B/A (how much faster one GPU is overall). CLBlast and GemmKernels.jl users
ask for exactly this when a tuning database made on one card is used on another.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from kernels.errors import GraphKernelsError


def _key(params: dict, names: list[str]) -> tuple:
    return tuple((type(params.get(n)) is bool, params.get(n)) for n in names)


def _device(sweep: dict) -> str:
    env = sweep.get("environment") if isinstance(sweep.get("environment"), dict) else {}
    return sweep.get("device") or (env.get("device") or {}).get("name") or "an unnamed device"


def split_by_device(sweep: dict) -> list[dict]:
    """A sweep whose cells ran on several kinds of GPU, as one sweep per kind (``device`` of each
    cell, less its ``CUDA_VISIBLE_DEVICES`` note); a one-device sweep comes back as it is."""
    kinds: dict[str, list] = {}
    for cell in sweep["cells"]:
        name = (cell.get("device") or _device(sweep)).split(" (CUDA_VISIBLE_DEVICES")[0]
        kinds.setdefault(name, []).append(cell)
    if len(kinds) <= 1:
        return [sweep]
    return [{**sweep, "device": name, "cells": cells} for name, cells in sorted(kinds.items())]


@dataclass
class Portability:
    device_a: str
    device_b: str
    cells: int                      # verified in both
    best_a: dict
    best_b: dict
    loss_a_on_b: float              # t_B(best_A) / t_B(best_B)
    loss_b_on_a: float              # t_A(best_B) / t_A(best_A)
    spearman: float | None
    speed_b_over_a: float           # geometric mean of t_A / t_B over the common cells

    def to_json(self) -> dict:
        return dict(vars(self))

    def sentence(self) -> str:
        def params(p):
            return " ".join(f"{k}={v}" for k, v in p.items())

        rho = f"{self.spearman:.2f}" if self.spearman is not None else "-"
        return (f"{self.cells} cells verified on both: {self.device_b} is {self.speed_b_over_a:.2f}x as fast as "
                f"{self.device_a} (geometric mean); the best on {self.device_a} ({params(self.best_a)}) runs "
                f"{self.loss_a_on_b:.3f}x the best time on {self.device_b} ({params(self.best_b)}); the other way "
                f"{self.loss_b_on_a:.3f}x; rank correlation of the cells' times {rho}")


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0
        i = j + 1
    return ranks


def spearman(xs: list[float], ys: list[float]) -> float | None:
    if len(xs) < 3:
        return None
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    den = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    return num / den if den else None


def compare(a: dict, b: dict) -> Portability:
    """The portability of ``a``'s tuning on ``b``'s device and back (sweeps as ``load_sweep`` gives)."""
    for field in ("family", "variant"):
        if a.get(field) != b.get(field):
            raise GraphKernelsError(f"the sweeps are of different {field}s: {a.get(field)} and {b.get(field)}")
    names = list(a["grid"])
    if set(names) != set(b["grid"]):
        raise GraphKernelsError(f"the sweeps vary different parameters: {', '.join(a['grid'])} and "
                                f"{', '.join(b['grid'])}")
    fa = (a.get("input") or {}).get("fingerprint")
    fb = (b.get("input") or {}).get("fingerprint")
    if fa and fb and fa != fb:
        raise GraphKernelsError(f"the sweeps ran on different inputs ({(a.get('input') or {}).get('name')} and "
                                f"{(b.get('input') or {}).get('name')}): a tuning's portability is per input")
    ta = {_key(c["params"], names): c for c in a["cells"] if c["status"] == "ok" and c.get("median_s")}
    tb = {_key(c["params"], names): c for c in b["cells"] if c["status"] == "ok" and c.get("median_s")}
    common = [k for k in ta if k in tb]
    if not common:
        raise GraphKernelsError("no cell was verified in both sweeps: nothing to compare")
    best_a = min(common, key=lambda k: ta[k]["median_s"])
    best_b = min(common, key=lambda k: tb[k]["median_s"])
    xs = [ta[k]["median_s"] for k in common]
    ys = [tb[k]["median_s"] for k in common]
    speed = math.exp(statistics.fmean(math.log(x / y) for x, y in zip(xs, ys, strict=True)))
    return Portability(
        device_a=_device(a), device_b=_device(b), cells=len(common),
        best_a=ta[best_a]["params"], best_b=tb[best_b]["params"],
        loss_a_on_b=tb[best_a]["median_s"] / tb[best_b]["median_s"],
        loss_b_on_a=ta[best_b]["median_s"] / ta[best_a]["median_s"],
        spearman=spearman(xs, ys), speed_b_over_a=speed)
