"""A plugin family whose one variant sleeps for ``seconds`` and then counts row lengths, to test
where cluster cells run, lost workers and hangs past the time limit. Load it with
``GRAPH_KERNELS_PLUGINS=tests.plugins.sleepy_family`` (in the Dask workers too)."""

from __future__ import annotations

import time

import numpy as np

from kernels.algorithms.execution import HostExecution
from kernels.algorithms.registry import Family, Metric, Param, Problem, Variant, Verification, register_family


def _verify(output, ref, problem, params) -> Verification:
    same = np.array_equal(np.asarray(output), ref)
    return Verification(bool(same), "numpy", "row lengths match" if same else "row lengths differ")


def _sleep_then_count(graph, seconds: float):
    time.sleep(seconds)
    return np.diff(graph.indptr)


FAMILY = register_family(Family(
    name="sleepy",
    title="Row lengths after a sleep (a test plugin)",
    description="Used by the cluster tests: slow cells, and a cell that sleeps past the time limit.",
    prepare=lambda graph, params, seed: Problem(graph=graph, size={"rows": graph.n_rows}),
    reference=lambda problem, params: np.diff(problem.graph.indptr),
    verify=_verify,
    summarize=lambda output, problem: {"total": int(np.sum(output))},
    metrics=(Metric("rows/s", "rows/s", lambda problem, seconds: problem.size["rows"] / seconds),),
    reference_name="numpy",
))
FAMILY.add(Variant("numpy", "library", "np.diff of the row pointers (the reference)",
                   lambda problem, params, target: HostExecution(np.diff, problem.graph.indptr)))
FAMILY.add(Variant("cpu-serial", "cpu-serial", "sleep, then the row lengths",
                   lambda problem, params, target: HostExecution(_sleep_then_count, problem.graph, params["seconds"]),
                   params=(Param("seconds", float, 0.0, "how long to sleep first", minimum=0.0, maximum=1e6),
                           Param("cell", int, 0, "a label, to make many cells", minimum=0, maximum=1000))))
