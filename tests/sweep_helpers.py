"""Shared by the sweep-file, resume and strategy tests: the synthetic plugin family registered
in this process, a fake compute backend that "measures" each cell as a known function of its
parameters (no worker process, no timing noise), and a small graph."""

from __future__ import annotations

import importlib
import sys
import threading

from kernels.compute.backend import ComputeBackend, Outcome, WorkerInfo
from kernels.graph.csr import CSRGraph

PLUGIN = "tests.plugins.synthetic_family"


def load_synthetic():
    return importlib.import_module(PLUGIN)


def unload_synthetic():
    from kernels.algorithms import registry

    registry._FAMILIES.pop("synthetic", None)
    sys.modules.pop(PLUGIN, None)


def tiny_graph(name: str = "tiny") -> CSRGraph:
    return CSRGraph.from_edges(4, [0, 1, 1, 3], [1, 0, 2, 3], directed=True, name=name)


def fake_record(job, seconds: float, device: str) -> dict:
    from kernels.results.records import RunRecord

    wrong = (job.params.get("a"), job.params.get("b")) == (9, 0)
    return RunRecord(
        timestamp="2026-01-01T00:00:00+00:00", family=job.family, variant=job.variant, kind="cpu-serial",
        target="cpu", params=dict(job.params), seed=job.seed,
        input={"name": "tiny", "fingerprint": "f", "rows": 4, "cols": 4, "nnz": 4},
        notices=[], result={"total": 4, "not finite": float("nan")}, verified=not wrong,
        verification={"ok": not wrong, "reference": "numpy", "detail": "row lengths differ" if wrong else "match",
                      "worst": [[0, float("inf")]] if wrong else []},
        timing={"compile_s": 0.0, "h2d_s": 0.0, "d2h_s": 0.0,
                "kernel": {"median_s": seconds, "min_s": seconds, "max_s": seconds, "samples": [seconds, seconds]},
                "method": "fake", "launch_bound": False, "fits_in_l2": None, "repeat": 2, "warmup": 0},
        metrics=[{"name": "rows/s", "unit": "rows/s", "value": 4 / seconds}],
        environment={"device": {"name": device}}).to_json()


class FakeBackend(ComputeBackend):
    """Runs nothing: each job's kernel time is ``time_of(params)``; counts the jobs it ran."""

    kind = "local"

    def __init__(self, time_of, device: str = "Fake GPU", delay: float = 0.0):
        super().__init__()
        self.time_of, self.device, self.delay = time_of, device, delay
        self.ran: list[dict] = []

    def describe(self):
        return [WorkerInfo(address="fake", cpu=self.device, gpu={"name": self.device})]

    @property
    def address(self) -> str:
        return "fake"

    def default_target(self, family, variant):
        return "cpu"

    def add_graph(self, key, graph):
        pass

    def run_many(self, jobs, *, cancel=None):
        cancelled = self._cancel_check(cancel)
        for job in jobs:
            if cancelled():
                return
            if self.delay:
                threading.Event().wait(self.delay)
            self.ran.append(dict(job.params))
            yield Outcome(job, record=fake_record(job, self.time_of(job.params), self.device), worker="fake",
                          device=self.device)

    def run_command(self, *a, **k):
        raise NotImplementedError

    def close(self):
        pass
