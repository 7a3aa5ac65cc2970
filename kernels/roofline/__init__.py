"""Roofline: the bytes and operations each GPU variant must do, and the device's measured limits.

A *work model* (:class:`Work`) says, for one run of one variant on one input, the bytes it must
move between DRAM and the chip and the operations it must do, counted from the input (never
from the run's time). With the device's measured copy bandwidth and peak operation rates
(:mod:`kernels.roofline.peaks`) a run's median time becomes a point on a roofline: arithmetic
intensity ``ops / bytes`` against the achieved ``ops / t``, and the fractions of the measured
bandwidth and of the roofline bound (:mod:`kernels.roofline.percent`).

One registry for every family: each family has a small module here (``spmv``, ``triangles``,
``traversal``, ``apsp``, ``kclique``) that registers a model for each of its GPU variants by
name, so a variant added without one is caught by ``tests/test_roofline_models.py``. The
models are written down in the family's doc (docs/<family>.md, "Roofline model") and in
docs/roofline.md.

The bytes are the *compulsory* DRAM traffic: every input array read once, every output written
once, plus the passes over data the algorithm cannot avoid (Floyd–Warshall's pass over the
matrix per k, or per round when tiled). Caches can only lower what DRAM serves below this count
when the data stays in L2 between replays; a point above the roofline is therefore an input
that lives in L2 (``timing.fits_in_l2``), not a kernel faster than the machine.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

#: the measured peak each operation kind is compared with (kernels.roofline.probes measures them)
OP_KINDS = {
    "fma-fp64": "fp64 multiply-adds",
    "fma-fp32": "fp32 multiply-adds",
    "add+min-fp64": "fp64 add+min pairs (one relaxation)",
    "add+min-fp32": "fp32 add+min pairs (one relaxation)",
    "int32": "int32 operations (compare, add, and)",
}

#: the family modules of this package, imported on first use
FAMILY_MODELS = {
    "spmv": "kernels.roofline.spmv",
    "triangles": "kernels.roofline.triangles",
    "bfs": "kernels.roofline.traversal",
    "sssp": "kernels.roofline.traversal",
    "apsp": "kernels.roofline.apsp",
    "kclique": "kernels.roofline.kclique",
}


@dataclass(frozen=True)
class Work:
    """What one run must do: ``bytes`` of DRAM traffic and ``ops`` operations of kind ``op``."""

    bytes: int
    ops: float
    op: str
    model: str          # one line: what was counted (shown in views and kept in the record)

    def __post_init__(self):
        if self.op not in OP_KINDS:
            raise ValueError(f"unknown operation kind {self.op!r} (known: {', '.join(OP_KINDS)})")

    @property
    def intensity(self) -> float:
        """Operations per byte (the roofline's x axis)."""
        return self.ops / self.bytes if self.bytes else float("inf")

    def to_json(self) -> dict:
        return {"bytes": int(self.bytes), "ops": float(self.ops), "op": self.op,
                "intensity": self.intensity if self.bytes else None, "model": self.model}


#: ``problem, params, result -> Work``: ``result`` is the record's result summary (counts found)
Model = Callable[[object, dict, dict], Work]

_MODELS: dict[tuple[str, str], Model] = {}


_COUNTS: dict = {}
_COUNTS_KEPT = 16


def counted(key: tuple, count: Callable[[], float]):
    """``count()``, kept for the last few keys: a sweep runs one input dozens of times, and a
    count over a large graph's entries (R-MAT scale 22: 10⁸ of them) takes a second each time."""
    if key not in _COUNTS:
        if len(_COUNTS) >= _COUNTS_KEPT:
            _COUNTS.pop(next(iter(_COUNTS)))
        _COUNTS[key] = count()
    return _COUNTS[key]


def register(family: str, variants, model: Model) -> None:
    """Register ``model`` for each of ``variants`` of ``family``."""
    for v in variants:
        _MODELS[(family, v)] = model


def model_for(family: str, variant: str) -> Model | None:
    """The work model of ``family/variant``, or ``None`` (a CPU variant, a plug-in without one)."""
    module = FAMILY_MODELS.get(family)
    if module is not None:
        importlib.import_module(module)
    return _MODELS.get((family, variant))


def work_of(family: str, variant: str, problem, params: dict, result: dict) -> Work | None:
    model = model_for(family, variant)
    return None if model is None else model(problem, params, result)
