"""A plugin family over a 10 × 10 space of two integer parameters, ``a`` and ``b``, with a
constraint (``a + b <= 14``: the corner is invalid) and one cell that answers wrongly
(``a == 9 and b == 0``), to test sweep files, resume and search strategies. Its kernel sleeps
``seconds`` first, so a test can kill a sweep part-way. Load it with
``GRAPH_KERNELS_PLUGINS=tests.plugins.synthetic_family`` (the worker too).

:func:`synthetic_time` is the "kernel time" the strategy tests give each cell through a fake
backend: its one best cell is (6, 3)."""

from __future__ import annotations

import time

import numpy as np

from kernels.algorithms.execution import HostExecution
from kernels.algorithms.registry import (
    Constraint,
    Family,
    Metric,
    Param,
    Problem,
    Variant,
    Verification,
    register_family,
)

BEST = {"a": 6, "b": 3}


def synthetic_time(params: dict) -> float:
    """Seconds; a bowl whose bottom is :data:`BEST`."""
    return 1e-3 * (1 + (params["a"] - BEST["a"]) ** 2 + (params["b"] - BEST["b"]) ** 2)


def _verify(output, ref, problem, params) -> Verification:
    same = np.array_equal(np.asarray(output), ref)
    return Verification(bool(same), "numpy", "row lengths match" if same else "row lengths differ")


def _row_lengths(graph, a: int, b: int, seconds: float):
    time.sleep(seconds)
    out = np.diff(graph.indptr)
    return out + 1 if (a, b) == (9, 0) else out


FAMILY = register_family(Family(
    name="synthetic",
    title="Row lengths over a synthetic a × b space (a test plugin)",
    description="Used by the sweep-file, resume and strategy tests.",
    prepare=lambda graph, params, seed: Problem(graph=graph, size={"rows": graph.n_rows}),
    reference=lambda problem, params: np.diff(problem.graph.indptr),
    verify=_verify,
    summarize=lambda output, problem: {"total": int(np.sum(output))},
    metrics=(Metric("rows/s", "rows/s", lambda problem, seconds: problem.size["rows"] / seconds),),
    reference_name="numpy",
))
FAMILY.add(Variant("numpy", "library", "np.diff of the row pointers (the reference)",
                   lambda problem, params, target: HostExecution(np.diff, problem.graph.indptr)))
FAMILY.add(Variant("cpu-serial", "cpu-serial", "sleep, then the row lengths (wrong ones at a=9, b=0)",
                   lambda problem, params, target: HostExecution(_row_lengths, problem.graph, params["a"],
                                                                 params["b"], params["seconds"]),
                   params=(Param("a", int, 0, "first coordinate", minimum=0, maximum=9),
                           Param("b", int, 0, "second coordinate", minimum=0, maximum=9),
                           Param("seconds", float, 0.0, "how long to sleep first", minimum=0.0, maximum=60.0)),
                   constraints=(Constraint("a + b <= 14", "the far corner is invalid"),)))
