"""Search strategies on a synthetic 10 × 10 space whose one best cell is known (a=6, b=3, from
``tests/plugins/synthetic_family.py``), measured by a fake backend: every strategy finds it,
budgets are kept, the file says how cells were chosen, and the heatmap leaves unmeasured cells
blank (not "invalid")."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.compute.strategies import SearchSpace, check_strategy
from kernels.compute.sweep import run_sweep
from kernels.errors import ParameterError
from kernels.results import load_sweep
from kernels.results.heatmap import heatmap_table, to_text
from kernels.results.records import Strategy
from tests.plugins.synthetic_family import BEST, synthetic_time
from tests.sweep_helpers import FakeBackend, load_synthetic, tiny_graph, unload_synthetic

GRID = {"a": list(range(10)), "b": list(range(10))}
VALID = sum(1 for a in range(10) for b in range(10) if a + b <= 14)


@pytest.fixture(autouse=True)
def synthetic():
    yield load_synthetic()
    unload_synthetic()


def sweep_with(strategy: Strategy, tmp_path=None, backend=None):
    backend = backend or FakeBackend(synthetic_time)
    out = tmp_path / f"{strategy.name}.json" if tmp_path else None
    sweep = run_sweep(tiny_graph(), "synthetic", "cpu-serial", GRID, target="cpu", repeat=1, warmup=0,
                      backend=backend, out=out, strategy=strategy)
    return sweep, backend


def test_the_grid_measures_every_valid_cell_and_finds_the_best(tmp_path):
    sweep, backend = sweep_with(Strategy("grid"), tmp_path)
    assert sweep["best"]["params"] == BEST
    assert len(backend.ran) == VALID and len(sweep["cells"]) == 100
    assert load_sweep(tmp_path / "grid.json")["strategy"] == {"name": "grid"}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_sampling_keeps_its_cell_budget_and_samples_without_repeats(seed):
    sweep, backend = sweep_with(Strategy("random", budget_cells=30, seed=seed))
    measured = [c for c in sweep["cells"] if c["status"] != "invalid"]
    assert len(backend.ran) == 30 and len(measured) == 30
    assert len({(p["a"], p["b"]) for p in backend.ran}) == 30
    fastest = min((c for c in measured if c["status"] == "ok"), key=lambda c: c["median_s"])
    assert sweep["best"]["params"] == fastest["params"] and sweep["stopped"] == "budget"


def test_random_sampling_with_the_whole_space_as_budget_finds_the_best():
    sweep, backend = sweep_with(Strategy("random", budget_cells=VALID, seed=4))
    assert sweep["best"]["params"] == BEST and len(backend.ran) == VALID


def test_random_order_depends_on_the_seed_only():
    first = sweep_with(Strategy("random", budget_cells=10, seed=7))[1].ran
    again = sweep_with(Strategy("random", budget_cells=10, seed=7))[1].ran
    other = sweep_with(Strategy("random", budget_cells=10, seed=8))[1].ran
    assert first == again and first != other


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_local_search_finds_the_best_cell_measuring_a_fraction_of_the_space(seed, tmp_path):
    sweep, backend = sweep_with(Strategy("local", budget_cells=40, seed=seed), tmp_path)
    assert sweep["best"]["params"] == BEST
    assert len(backend.ran) <= 40
    header = load_sweep(tmp_path / "local.json")["strategy"]
    assert header == {"name": "local", "budget_cells": 40, "seed": seed}


def test_local_search_moves_one_parameter_one_step_at_a_time():
    space = SearchSpace({"a": [1, 2, 4, 8], "b": ["x", "y"]})
    assert space.neighbours({"a": 2, "b": "x"}) == [{"a": 1, "b": "x"}, {"a": 4, "b": "x"}, {"a": 2, "b": "y"}]
    assert space.neighbours({"a": 8, "b": "y"}) == [{"a": 4, "b": "y"}, {"a": 8, "b": "x"}]


def test_local_search_without_a_budget_stops_at_the_optimum():
    sweep, backend = sweep_with(Strategy("local", seed=5))
    assert sweep["best"]["params"] == BEST and len(backend.ran) < VALID
    assert sweep["stopped"] == "complete"


def test_a_seconds_budget_stops_starting_cells():
    # each fake cell takes 20 ms: 80 valid cells cannot all fit in 0.2 s, whatever the machine
    sweep, backend = sweep_with(Strategy("grid", budget_seconds=0.2), backend=FakeBackend(synthetic_time, delay=0.02))
    assert 0 < len(backend.ran) < VALID
    assert sweep["stopped"] == "budget" and not sweep["cancelled"]


def test_the_heatmap_leaves_unmeasured_cells_blank_and_marks_invalid_ones():
    sweep, _ = sweep_with(Strategy("random", budget_cells=40, seed=0))
    table = heatmap_table(sweep)
    status = {s for row in table.status for s in row}
    assert {"missing", "invalid", "ok"} <= status
    text = to_text(table)
    assert "blank: not measured" in text
    r, c = next((r, c) for r, row in enumerate(table.status) for c, s in enumerate(row) if s == "missing")
    assert np.isnan(table.times[r, c])      # nothing drawn


@pytest.mark.parametrize("strategy, problem", [
    (Strategy("annealing"), "strategy"), (Strategy("random", budget_cells=0), "budget_cells"),
    (Strategy("random", budget_seconds=float("nan")), "budget_seconds"),
    (Strategy("local", seed=True), "seed")])
def test_bad_strategy_settings_are_refused_in_one_line(strategy, problem):
    with pytest.raises(ParameterError, match=problem) as info:
        check_strategy(strategy)
    assert "\n" not in str(info.value)
