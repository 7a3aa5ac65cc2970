"""Cells that cannot be told apart from the best (kernels/results/noise.py) and ``--confirm``
(kernels/compute/confirm.py), on synthetic samples whose answer is known."""

from __future__ import annotations

import math
import random

import pytest

from kernels.compute.backend import Job, Outcome
from kernels.compute.confirm import confirm_best, describe
from kernels.graph.csr import CSRGraph
from kernels.results.noise import PROCESS_SPREAD, cell_uncertainty, process_spread_of, tied_with_best


def cell(params: dict, median: float, spread: float = 0.0, n: int = 5, seed: int = 0) -> dict:
    rng = random.Random(seed)
    samples = [median * math.exp(rng.gauss(0.0, spread)) for _ in range(n)] if spread else [median] * n
    samples.sort()
    samples[n // 2] = median                   # the recorded median is the cell's median
    return {"params": params, "status": "ok", "median_s": median,
            "record": {"timing": {"kernel": {"median_s": median, "samples": samples}}}}


def test_quiet_cells_are_told_apart_at_the_process_spread():
    best = cell({"c": 0}, 1.00e-3)
    near = cell({"c": 1}, 1.04e-3)        # 4 %: inside 1.96 * sqrt(2) * 2 % = 5.5 %
    far = cell({"c": 2}, 1.07e-3)         # 7 %: outside
    assert tied_with_best([best, near, far]) == [{"c": 0}, {"c": 1}]
    assert cell_uncertainty(best) == pytest.approx(PROCESS_SPREAD)


def test_a_noisy_cell_widens_the_band_and_a_quiet_one_does_not():
    best = cell({"c": 0}, 1.00e-3)
    noisy = cell({"c": 1}, 1.10e-3, spread=0.15, n=5, seed=3)     # 10 % slower but its samples scatter 15 %
    quiet = cell({"c": 2}, 1.10e-3)
    tied = tied_with_best([best, noisy, quiet])
    assert {"c": 1} in tied and {"c": 2} not in tied


def test_many_samples_of_noise_still_leave_the_between_process_floor():
    best = cell({"c": 0}, 1.00e-3, spread=0.05, n=1000, seed=1)
    other = cell({"c": 1}, 1.09e-3, spread=0.05, n=1000, seed=2)
    assert tied_with_best([best, other]) == [{"c": 0}]             # 9 % apart, both well measured
    assert cell_uncertainty(best) == pytest.approx(math.hypot(1.2533 * 0.05 / math.sqrt(1000), PROCESS_SPREAD),
                                                   rel=0.1)


def test_failed_wrong_and_invalid_cells_are_never_tied():
    cells = [cell({"c": 0}, 1e-3), {"params": {"c": 1}, "status": "wrong", "median_s": 1e-3},
             {"params": {"c": 2}, "status": "failed"}, {"params": {"c": 3}, "status": "invalid"}]
    assert tied_with_best(cells) == [{"c": 0}]
    assert tied_with_best([]) == []


def test_the_process_spread_is_the_pooled_deviation_of_log_medians():
    exact = {"a": [1.0, 1.0, 1.0], "b": [2.0, 2.0]}
    assert process_spread_of(exact) == 0.0
    assert process_spread_of({"a": [1.0]}) is None
    rho = process_spread_of({"a": [1.0, math.e ** 0.1], "b": [3.0, 3.0 * math.e ** -0.1]})
    assert rho == pytest.approx(math.sqrt(2 * 0.05 ** 2 * 2 / 2))


class ScriptedBackend:
    """Answers each leader with the median the script gives it, process after process."""

    kind = "fake"

    def __init__(self, script: dict):
        self.script, self.round, self.restarts = script, -1, 0

    def add_graph(self, key, graph):
        pass

    def fresh_processes(self):
        self.restarts += 1
        self.round += 1

    def run_many(self, jobs, cancel=None):
        for job in jobs:
            median = self.script[job.tag["c"]][self.round]
            yield Outcome(job, record={"verified": True, "timing": {"kernel": {"median_s": median}}})


def sweep_of(cells: list[dict]) -> dict:
    best = min(cells, key=lambda c: c["median_s"])
    return {"family": "spmv", "variant": "gpu-tunable", "cells": cells, "best": {"params": best["params"]},
            "tied_with_best": tied_with_best(cells), "target": "cuda"}


GRAPH = CSRGraph.from_edges(2, [0], [1], directed=True, name="g")


def test_a_best_that_was_luck_does_not_hold():
    cells = [cell({"c": 0}, 0.95e-3), cell({"c": 1}, 1.00e-3), cell({"c": 2}, 1.30e-3)]
    backend = ScriptedBackend({0: [1.25e-3, 1.26e-3, 1.24e-3], 1: [1.00e-3, 1.00e-3, 1.00e-3],
                               2: [1.3e-3, 1.3e-3, 1.3e-3]})
    verdict = confirm_best(GRAPH, sweep_of(cells), backend, 3)
    assert backend.restarts == 3 and verdict["best"] == {"c": 1} and not verdict["holds"]
    assert "does not hold" in describe(verdict, {"c": 0})


def test_a_best_within_the_noise_holds_and_a_steady_one_holds_outright():
    cells = [cell({"c": 0}, 1.00e-3), cell({"c": 1}, 1.01e-3)]
    noisy = ScriptedBackend({0: [1.02e-3, 0.97e-3], 1: [0.99e-3, 1.03e-3]})
    verdict = confirm_best(GRAPH, sweep_of(cells), noisy, 2)
    assert verdict["holds"] and verdict["spread_measured"]
    steady = ScriptedBackend({0: [1.00e-3, 1.00e-3], 1: [1.20e-3, 1.20e-3]})
    verdict = confirm_best(GRAPH, sweep_of([cell({"c": 0}, 1.00e-3), cell({"c": 1}, 1.2e-3)]), steady, 2)
    assert verdict["holds"] and verdict["best"] == {"c": 0} and verdict["tied"] == [{"c": 0}]
    assert describe(verdict, {"c": 0}).startswith("the best holds: c=0 is the fastest")


def test_the_confirmation_is_kept_in_the_sweep_file(tmp_path):
    import json

    from kernels.results import load_sweep

    header = {"kind": "sweep", "schema": 2, "family": "spmv", "variant": "gpu-tunable", "target": "cuda",
              "input": {"name": "g", "fingerprint": "f"}, "grid": {"c": [0, 1]}, "total_cells": 2,
              "strategy": {"name": "grid"}}
    lines = [header, {"kind": "cell", "params": {"c": 0}, "status": "ok", "median_s": 1e-3},
             {"kind": "cell", "params": {"c": 1}, "status": "ok", "median_s": 2e-3},
             {"kind": "end", "finished": "x", "cancelled": False, "stopped": "complete"},
             {"kind": "confirm", "processes": 2, "best": {"c": 0}, "holds": True, "tied": [{"c": 0}],
              "process_spread": 0.01, "spread_measured": True,
              "cells": [{"params": {"c": 0}, "medians_s": [1e-3, 1e-3], "geomean_s": 1e-3}]}]
    path = tmp_path / "s.json"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    sweep = load_sweep(path)
    assert sweep["confirmation"]["holds"] and sweep["stopped"] == "complete"
    assert sweep["tied_with_best"] == [{"c": 0}]
    lines[-1]["processes"] = "two"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(Exception, match="confirm"):
        load_sweep(path)


def test_jobs_of_a_confirmation_carry_the_sweeps_settings():
    seen = []

    class Recorder(ScriptedBackend):
        def run_many(self, jobs, cancel=None):
            seen.extend(jobs)
            return super().run_many(jobs, cancel)

    sweep = sweep_of([cell({"c": 0}, 1e-3)])
    sweep.update(fixed={"dtype": "fp32"}, repeat=7, warmup=2, launch="queued")
    confirm_best(GRAPH, sweep, Recorder({0: [1e-3]}), 1)
    job: Job = seen[0]
    assert job.params == {"dtype": "fp32", "c": 0} and (job.repeat, job.warmup, job.launch) == (7, 2, "queued")
