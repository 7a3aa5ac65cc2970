"""A deliberately faulty family, loaded as a plugin, to test that sweeps survive bad cells.

``faulty/cpu-serial`` computes the row lengths of the graph when ``mode=ok``; with
``mode=crash`` it kills its process (``os.abort``, as a kernel fault would) and with
``mode=hang`` it never returns. Load it in a worker with
``GRAPH_KERNELS_PLUGINS=tests.plugins.faulty_family``.
"""

from __future__ import annotations

import os
import time

import numpy as np

from kernels.algorithms.execution import HostExecution
from kernels.algorithms.registry import Family, Metric, Param, Problem, Variant, Verification, register_family


def _prepare(graph, params, seed) -> Problem:
    return Problem(graph=graph, size={"rows": graph.n_rows})


def _reference(problem, params):
    return np.diff(problem.graph.indptr)


def _verify(output, ref, problem, params) -> Verification:
    same = np.array_equal(np.asarray(output), ref)
    return Verification(bool(same), "numpy", "row lengths match" if same else "row lengths differ")


def _row_lengths(graph, mode: str):
    if mode == "crash":
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file left behind
        except (ImportError, ValueError, OSError):
            pass
        os.abort()
    while mode == "hang":
        time.sleep(1)
    return np.diff(graph.indptr)


FAMILY = register_family(Family(
    name="faulty",
    title="Row lengths that can crash or hang on request (a test plugin)",
    description="Used by the tests to check that sweeps record crashes and hangs as failed cells.",
    prepare=_prepare,
    reference=_reference,
    verify=_verify,
    summarize=lambda output, problem: {"total": int(np.sum(output))},
    metrics=(Metric("rows/s", "rows/s", lambda problem, seconds: problem.size["rows"] / seconds),),
    reference_name="numpy",
))
FAMILY.add(Variant("numpy", "library", "np.diff of the row pointers (the reference)",
                   lambda problem, params, target: HostExecution(np.diff, problem.graph.indptr)))
FAMILY.add(Variant("cpu-serial", "cpu-serial", "row lengths, or a crash / a hang when asked",
                   lambda problem, params, target: HostExecution(_row_lengths, problem.graph, params["mode"]),
                   params=(Param("mode", str, "ok", "ok, crash (os.abort) or hang (sleep forever)",
                                 choices=("ok", "crash", "hang")),)))
