"""``--strategy bayes`` (kernels/compute/strategies.py) on synthetic spaces with a known optimum:
it proposes batches as large as the backend's GPUs, never an invalid cell nor one already
measured, and finds the optimum of a smooth space measuring a fraction of it."""

from __future__ import annotations

import math

import pytest

from kernels.compute.strategies import SearchSpace, search
from kernels.results.records import Strategy

pytest.importorskip("optuna")

GRID = {"wg": [2 ** i for i in range(11)], "rows": [2 ** i for i in range(11)], "reduce": ["shuffle", "shared"]}


def valid(combo: dict) -> bool:
    return combo["rows"] <= combo["wg"]


def time_of(combo: dict) -> float:
    """A smooth bowl with its floor at wg=128, rows=4, shuffle (about the SpMV table's shape)."""
    return 1e-4 * (1 + (math.log2(combo["wg"]) - 7) ** 2 + 0.5 * (math.log2(combo["wg"] / combo["rows"]) - 5) ** 2
                   + (0.3 if combo["reduce"] == "shared" else 0.0))


class Harness:
    def __init__(self, space: SearchSpace, budget: int):
        self.space, self.budget = space, budget
        self.batches: list[list[dict]] = []
        self.measured: dict = {}

    def evaluate(self, combos, limit=None):
        self.batches.append(list(combos))
        out = []
        for combo in combos:
            key = self.space.key(combo)
            assert valid(combo), f"an invalid cell was sent to a GPU: {combo}"
            assert key not in self.measured, f"a measured cell was sent again: {combo}"
            self.measured[key] = time_of(combo)
            out.append({"params": combo, "status": "ok", "median_s": self.measured[key]})
        return out

    def exhausted(self) -> bool:
        return len(self.measured) >= self.budget


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_model_finds_the_floor_of_a_smooth_space_measuring_under_a_third(seed):
    space = SearchSpace(GRID)
    n_valid = sum(valid(c) for c in space.combos())                # 132 cells, like the SpMV sweep's
    harness = Harness(space, budget=int(0.3 * n_valid))
    search(Strategy("bayes", budget_cells=int(0.3 * n_valid), seed=seed), space, harness.evaluate, harness.exhausted,
           valid=valid, batch=4)
    best = min(harness.measured.values())
    optimum = min(time_of(c) for c in space.combos() if valid(c))
    assert n_valid == 132 and len(harness.measured) <= int(0.3 * n_valid) + 4
    assert best <= optimum * 1.02, (best, optimum)
    assert all(len(b) <= 4 for b in harness.batches) and max(len(b) for b in harness.batches) == 4


def test_a_small_space_is_measured_whole_and_then_the_search_stops():
    space = SearchSpace({"wg": [1, 2, 4], "rows": [1, 2, 4], "reduce": ["shuffle"]})
    harness = Harness(space, budget=10 ** 6)
    search(Strategy("bayes", seed=0), space, harness.evaluate, harness.exhausted, valid=valid, batch=2)
    assert len(harness.measured) == 6                              # every valid cell once, no more


def test_bayes_sweeps_run_through_the_sweep_with_a_default_budget(tmp_path):
    from kernels.compute.sweep import run_sweep
    from kernels.graph.csr import CSRGraph

    graph = CSRGraph.from_edges(4, [0, 1, 2], [1, 2, 3], directed=True, name="tiny")
    sweep = run_sweep(graph, "spmv", "cpu-serial", {"dtype": ["fp64", "fp32"]}, repeat=1, warmup=0,
                      strategy=Strategy("bayes", seed=3), out=tmp_path / "s.json")
    assert sweep["strategy"]["name"] == "bayes" and sweep["strategy"]["budget_cells"] == 4
    assert len(sweep["cells"]) == 2 and {c["status"] for c in sweep["cells"]} == {"ok"}


def test_without_a_cell_budget_the_model_stops_when_it_stops_improving_and_polishes():
    # a time budget only (the harness stops at 60 cells): the descent still reaches the floor
    space = SearchSpace(GRID)
    harness = Harness(space, budget=60)
    search(Strategy("bayes", seed=2), space, harness.evaluate, harness.exhausted, valid=valid, batch=4)
    assert min(harness.measured.values()) == min(time_of(c) for c in space.combos() if valid(c))


def test_the_polish_follows_a_diagonal_ridge():
    # the floor lies on a ridge where wg / rows is constant; one-parameter steps from a cell on
    # it only climb, the two-parameter step walks down it
    space = SearchSpace(GRID)
    ridge = {"wg": 512, "rows": 16, "reduce": "shuffle"}
    assert {"wg": 256, "rows": 8, "reduce": "shuffle"} in space.neighbours(ridge, diagonal=True)
    assert {"wg": 256, "rows": 8, "reduce": "shuffle"} not in space.neighbours(ridge)
    assert len(space.neighbours(ridge, diagonal=True)) == 5 + 2 * 2 + 2 * 1 + 2 * 1   # reduce has one other value
