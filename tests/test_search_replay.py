"""``--strategy bayes`` replayed on real grid sweeps (benchmarks/diag/search_replay.py): the H100
SpMV and triangle grids of bench_bayes and bench_sweep, answered from their files with 1 % noise
on each measurement, batches of four as on a four-GPU host. The rule the goal asks for: within
2 % of the grid's best, measuring 30 % of the valid cells. The strategy's first version (TPE over
categories, no polish) found it on 1 of 3 seeds of each on four H100s."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from kernels.results import load_sweep

pytest.importorskip("optuna")

ROOT = Path(__file__).resolve().parents[1]
GRIDS = {
    "spmv": ROOT / "benchmarks/results/bayes/h100-x4-before-polish/spmv-grid.json",
    "triangles": ROOT / "benchmarks/results/sweep/h100-x1/sweep-triangles-warm.json",
}


def _replay():
    spec = importlib.util.spec_from_file_location("search_replay", ROOT / "benchmarks/diag/search_replay.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.replay


@pytest.mark.parametrize("name", sorted(GRIDS))
def test_bayes_finds_the_best_of_a_real_grid_measuring_under_a_third(name):
    replay, sweep = _replay(), load_sweep(GRIDS[name])
    rows = [replay(sweep, "bayes", 0.30, seed, 4, 0.01) for seed in range(1, 11)]
    assert all(r["cells"] <= 0.30 * r["valid"] for r in rows)
    hits = [r["seed"] for r in rows if r["ratio"] <= 1.02]
    assert len(hits) >= 9, [(r["seed"], round(r["ratio"], 3)) for r in rows]
    assert max(r["ratio"] for r in rows) < 1.05
