"""A family whose module takes seconds to import (as a family with heavy imports or numba
compilation at import time would), loaded as a plugin, to test that a run's time limit counts
the run and not the worker's set-up. Load it with
``GRAPH_KERNELS_PLUGINS=tests.plugins.slow_import_family``; ``SLOW_IMPORT_SECONDS`` sets the delay.
"""

from __future__ import annotations

import os
import time

import numpy as np

from kernels.algorithms.execution import HostExecution
from kernels.algorithms.registry import Family, Metric, Problem, Variant, Verification, register_family

time.sleep(float(os.environ.get("SLOW_IMPORT_SECONDS", "0")))


def _prepare(graph, params, seed) -> Problem:
    return Problem(graph=graph, size={"rows": graph.n_rows})


def _verify(output, ref, problem, params) -> Verification:
    same = np.array_equal(np.asarray(output), ref)
    return Verification(bool(same), "numpy", "row lengths match" if same else "row lengths differ")


FAMILY = register_family(Family(
    name="slowimport",
    title="Row lengths, from a module that is slow to import (a test plugin)",
    description="Used by the tests of time limits.",
    prepare=_prepare,
    reference=lambda problem, params: np.diff(problem.graph.indptr),
    verify=_verify,
    summarize=lambda output, problem: {"total": int(np.sum(output))},
    metrics=(Metric("rows/s", "rows/s", lambda problem, seconds: problem.size["rows"] / seconds),),
    reference_name="numpy",
))
FAMILY.add(Variant("numpy", "library", "np.diff of the row pointers (the reference)",
                   lambda problem, params, target: HostExecution(np.diff, problem.graph.indptr)))
FAMILY.add(Variant("cpu-serial", "cpu-serial", "np.diff again, checked against the reference",
                   lambda problem, params, target: HostExecution(np.diff, problem.graph.indptr)))
