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
from dataclasses import dataclass, field

from kernels.errors import GraphKernelsError
from kernels.results.launch_modes import comparable, launch_mode


def _key(params: dict, names: list[str]) -> tuple:
    return tuple((type(params.get(n)) is bool, params.get(n)) for n in names)


def _device(sweep: dict) -> str:
    env = sweep.get("environment") if isinstance(sweep.get("environment"), dict) else {}
    return sweep.get("device") or (env.get("device") or {}).get("name") or "an unnamed device"


def split_by_device(sweep: dict) -> list[dict]:
    """A sweep whose cells ran on several kinds of GPU, as one sweep per kind (``device`` of each
    cell, less its ``CUDA_VISIBLE_DEVICES`` note); a one-device sweep comes back as it is.

    Each part is a sweep of its own: its best cell, the cells tied with it and its environment
    (the first record's that has one) are its cells', never the whole file's, which mixes GPUs."""
    from kernels.results.sweep_file import summarize_best

    kinds: dict[str, list] = {}
    for cell in sweep["cells"]:
        name = str(cell.get("device") or _device(sweep)).split(" (CUDA_VISIBLE_DEVICES")[0]
        kinds.setdefault(name, []).append(cell)
    if len(kinds) <= 1:
        return [sweep]
    parts = []
    for name, cells in sorted(kinds.items()):
        part = {**sweep, "device": name, "cells": cells, "split_from_mixed": True, **summarize_best(cells)}
        part.pop("environment", None)
        env = next((c["record"]["environment"] for c in cells if isinstance(c.get("record"), dict)
                    and isinstance(c["record"].get("environment"), dict)), None)
        if env is not None:
            part["environment"] = env
        parts.append(part)
    return parts


def pair_of(sweeps: list[dict], names: list[str] | None = None) -> tuple[dict, dict]:
    """The two sweeps to compare: two files as they are, or one file whose cells ran on two
    kinds of GPU split by kind; anything else is refused in one sentence (``names``: the files)."""
    names = names or [f"sweep {i + 1}" for i in range(len(sweeps))]
    if len(sweeps) == 1:
        parts = split_by_device(sweeps[0])
        if len(parts) == 2:
            return parts[0], parts[1]
        if len(parts) == 1:
            raise GraphKernelsError(f"{names[0]}: every cell ran on {_device(sweeps[0])}; give a second sweep of the "
                                    "same grid made on another GPU")
        raise GraphKernelsError(f"{names[0]}: its cells ran on {len(parts)} kinds of GPU "
                                f"({', '.join(p['device'] for p in parts)}); compare takes two")
    if len(sweeps) != 2:
        raise GraphKernelsError(f"compare takes two sweeps (or one whose cells ran on two kinds of GPU); "
                                f"got {len(sweeps)}")
    return sweeps[0], sweeps[1]


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
    best_a_s: float = math.nan      # A's best time on A
    best_b_s: float = math.nan      # B's best time on B
    only_a: int = 0                 # cells verified on A only (not compared)
    only_b: int = 0
    notes: list[str] = field(default_factory=list)    # what the reader must know (said after the sentence)

    def to_json(self) -> dict:
        return {k: (list(v) if isinstance(v, list) else v) for k, v in vars(self).items()}

    def sentence(self) -> str:
        def params(p):
            return " ".join(f"{k}={v}" for k, v in p.items())

        rho = f"{self.spearman:.2f}" if self.spearman is not None else "-"
        text = (f"{self.cells} cells verified on both: {self.device_b} is {self.speed_b_over_a:.2f}x as fast as "
                f"{self.device_a} (geometric mean); the best on {self.device_a} ({params(self.best_a)}) runs "
                f"{self.loss_a_on_b:.3f}x the best time on {self.device_b} ({params(self.best_b)}); the other way "
                f"{self.loss_b_on_a:.3f}x; rank correlation of the cells' times {rho}")
        if self.only_a or self.only_b:
            text += (f"; not compared: {self.only_a} cell(s) verified on {self.device_a} only, {self.only_b} on "
                     f"{self.device_b} only")
        return text + "".join(f"; {note}" for note in self.notes)

    def lines(self) -> list[str]:
        """The comparison in words, one finding a line (the GUI's panel)."""
        def params(p):
            return " ".join(f"{k}={v}" for k, v in p.items())

        def loss(x):
            return "nothing lost" if x <= 1.0005 else f"{100 * (x - 1):.1f} % slower than its own best"

        same = self.best_a == self.best_b
        out = [f"Best on {self.device_a}: {params(self.best_a)}, {format_time(self.best_a_s)}. "
               + (f"Best on {self.device_b}: the same cell, {format_time(self.best_b_s)}." if same else
                  f"Best on {self.device_b}: {params(self.best_b)}, {format_time(self.best_b_s)}."),
               f"Portability loss: {self.device_a}'s best run on {self.device_b} takes {self.loss_a_on_b:.3f}x "
               f"{self.device_b}'s best ({loss(self.loss_a_on_b)}); {self.device_b}'s best on {self.device_a} "
               f"{self.loss_b_on_a:.3f}x ({loss(self.loss_b_on_a)})."]
        if self.spearman is None:
            out.append(f"Rank correlation: too few common cells ({self.cells}) to say.")
        else:
            alike = ("order the cells alike" if self.spearman >= 0.9 else
                     "order the cells much alike" if self.spearman >= 0.6 else "order the cells differently")
            out.append(f"Rank correlation of the {self.cells} cells verified on both: Spearman's ρ = "
                       f"{self.spearman:.2f} (the GPUs {alike}).")
        out.append(f"{self.device_b} runs the common cells {self.speed_b_over_a:.2f}x as fast as {self.device_a} "
                   "(geometric mean of the per-cell ratios).")
        if self.only_a or self.only_b:
            out.append(f"Not compared: {self.only_a} cell(s) verified on {self.device_a} only, {self.only_b} on "
                       f"{self.device_b} only.")
        out += [note[0].upper() + note[1:] + "." for note in self.notes]
        return out


def format_time(seconds: float) -> str:
    """A time in the unit that reads best (``105.7 µs``)."""
    if not math.isfinite(seconds):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e3), ("µs", 1e6)):
        if seconds >= 1.0 / scale or unit == "µs":
            return f"{seconds * scale:.4g} {unit}"
    return f"{seconds:.4g} s"


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


def _verified_times(sweep: dict, names: list[str]) -> dict[tuple, dict]:
    """The verified cells with a usable time (finite, above zero), by their grid position; a cell
    measured twice (a resumed sweep) keeps its faster time, as the heatmap does."""
    out: dict[tuple, dict] = {}
    for cell in sweep.get("cells") or []:
        if not isinstance(cell, dict) or cell.get("status") != "ok" or not isinstance(cell.get("params"), dict):
            continue
        m = cell.get("median_s")
        if isinstance(m, bool) or not isinstance(m, (int, float)) or not math.isfinite(m) or m <= 0:
            continue
        key = _key(cell["params"], names)
        if key not in out or m < out[key]["median_s"]:
            out[key] = cell
    return out


def _input_words(sweep: dict) -> str:
    inp = sweep.get("input") if isinstance(sweep.get("input"), dict) else {}
    return str(inp.get("name") or "an unnamed input")


def check_same_space(a: dict, b: dict) -> list[str]:
    """Refuse (``GraphKernelsError``, one sentence) two sweeps that are not one tuning space on
    one input: another family, variant, target, swept or fixed parameters, or input. Returns what
    the comparison must say but does not refuse (an input known by name only)."""
    notes = []
    for what, plural in (("family", "families"), ("variant", "variants"), ("target", "targets")):
        if a.get(what) != b.get(what):
            raise GraphKernelsError(f"the sweeps are of different {plural}: {a.get(what)} and {b.get(what)}")
    ga, gb = a.get("grid"), b.get("grid")
    if not isinstance(ga, dict) or not isinstance(gb, dict) or not ga:
        raise GraphKernelsError("a sweep without its grid of parameters cannot be compared")
    if set(ga) != set(gb):
        raise GraphKernelsError(f"the sweeps vary different parameters: {', '.join(ga)} and {', '.join(gb)}")
    fixed_a, fixed_b = a.get("fixed") or {}, b.get("fixed") or {}
    if fixed_a != fixed_b:
        diff = sorted(set(fixed_a) | set(fixed_b), key=str)
        words = ", ".join(f"{k}={fixed_a.get(k, '-')} and {fixed_b.get(k, '-')}" for k in diff
                          if fixed_a.get(k) != fixed_b.get(k))
        raise GraphKernelsError(f"the sweeps fix other parameters ({words}): they are not one tuning space")
    ia = a.get("input") if isinstance(a.get("input"), dict) else {}
    ib = b.get("input") if isinstance(b.get("input"), dict) else {}
    fa, fb = ia.get("fingerprint"), ib.get("fingerprint")
    if (fa and fb and fa != fb) or (not (fa and fb) and ia.get("name") != ib.get("name")):
        raise GraphKernelsError(f"the sweeps ran on different inputs ({_input_words(a)} and {_input_words(b)}): "
                                "a tuning's portability is per input")
    if not (fa and fb):
        notes.append(f"the input was matched by its name only ({_input_words(a)}): a sweep file without its "
                     "fingerprint cannot show it was the same matrix")
    return notes


def compare(a: dict, b: dict) -> Portability:
    """The portability of ``a``'s tuning on ``b``'s device and back (sweeps as ``load_sweep`` gives);
    two sweeps that are not one tuning space on one input, or share no verified cell, are refused
    with one sentence (``GraphKernelsError``)."""
    notes = check_same_space(a, b)
    names = list(a["grid"])
    ta, tb = _verified_times(a, names), _verified_times(b, names)
    common = [k for k in ta if k in tb]
    if not common:
        why = (": a --mixed-gpus sweep runs each cell once, on whichever GPU is free; sweep the grid on each kind "
               "of GPU to compare them" if a.get("split_from_mixed") and b.get("split_from_mixed") else
               ": nothing to compare")
        raise GraphKernelsError(f"no cell was verified in both sweeps ({len(ta)} verified on {_device(a)}, "
                                f"{len(tb)} on {_device(b)}){why}")
    best_a = min(common, key=lambda k: ta[k]["median_s"])
    best_b = min(common, key=lambda k: tb[k]["median_s"])
    xs = [ta[k]["median_s"] for k in common]
    ys = [tb[k]["median_s"] for k in common]
    speed = math.exp(statistics.fmean(math.log(x / y) for x, y in zip(xs, ys, strict=True)))
    if _device(a) == _device(b):
        notes.append(f"both sweeps ran on {_device(a)}: this compares two runs of one kind of GPU")
    modes_a = {launch_mode(ta[k].get("record")) for k in common if isinstance(ta[k].get("record"), dict)}
    modes_b = {launch_mode(tb[k].get("record")) for k in common if isinstance(tb[k].get("record"), dict)}
    if any(not comparable(x, y) for x in modes_a for y in modes_b):
        notes.append(f"the GPUs' cells were timed differently ({', '.join(sorted(modes_a))} on {_device(a)}, "
                     f"{', '.join(sorted(modes_b))} on {_device(b)}): the speed ratio is not like with like")
    return Portability(
        device_a=_device(a), device_b=_device(b), cells=len(common),
        best_a=ta[best_a]["params"], best_b=tb[best_b]["params"],
        loss_a_on_b=tb[best_a]["median_s"] / tb[best_b]["median_s"],
        loss_b_on_a=ta[best_b]["median_s"] / ta[best_a]["median_s"],
        spearman=spearman(xs, ys), speed_b_over_a=speed,
        best_a_s=ta[best_a]["median_s"], best_b_s=tb[best_b]["median_s"],
        only_a=len(ta) - len(common), only_b=len(tb) - len(common), notes=notes)
