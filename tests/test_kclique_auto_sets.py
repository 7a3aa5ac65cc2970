"""The k-clique ``auto`` check sets of ``benchmarks/bench_kclique_auto.py``: the third, fourth and
fifth checks are of graphs no earlier measurement saw (each generator with its parameters new), and
the host-only plan (``--plan``: the graph generated, the features ``kclique_work`` reads, its picks,
an H100 estimate) runs without a GPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench_modules import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "kclique-auto"


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bench_kclique_auto")


def _unseen(bench, name: str, before: tuple[str, ...]) -> set[str]:
    """The check set ``name``'s graphs, asserted absent from the sets ``before`` and from every
    measurement file but its own; returns their generator kinds."""
    checked = getattr(bench, name.upper())
    earlier = set(bench.REAL) | set(bench.GENERATED)
    for other in before:
        earlier |= set(getattr(bench, other))
    for path in RESULTS.rglob("kclique-auto-*.jsonl"):       # the trial/ runs too
        if f"{name}-" in path.name:              # its own measurement
            continue
        earlier |= {json.loads(line)["input"] for line in path.read_text().splitlines()}
    assert len(set(checked)) == len(checked)
    assert all(spec.startswith("gen:") for spec in checked)
    assert not set(checked) & earlier
    return {spec.split(":")[1] for spec in checked}


def test_the_third_kclique_check_is_of_graphs_not_measured_before(bench):
    kinds = _unseen(bench, "check3", ("CHECK", "CHECK2"))
    assert len(bench.CHECK3) >= 10
    assert {"stencil", "geometric", "chung_lu", "gnm", "rmat"} <= kinds       # lattice ... communities


def test_the_kclique_check_plan_runs_on_the_host(bench, capsys):
    seconds = bench.plan(["gen:gnp:n=2000,p=0.01", "gen:stencil:kind=27pt,nx=12,ny=12,nz=12"], (4, 5), 300.0)
    out = capsys.readouterr().out
    assert seconds > 0
    assert "k4 list" in out                                      # sparse pairs, short out-lists
    assert "k5 vertex" in out                                    # the stencil: uniform and clique-rich


def test_the_fourth_kclique_check_is_of_graphs_not_measured_before(bench):
    kinds = _unseen(bench, "check4", ("CHECK", "CHECK2", "CHECK3"))
    assert len(bench.CHECK4) >= 15
    assert {"gnm", "gnp", "chung_lu", "rmat", "powerlaw_matrix", "geometric", "delaunay", "stencil"} <= kinds


def test_the_fifth_kclique_check_is_of_graphs_not_measured_before(bench):
    kinds = _unseen(bench, "check5", ("CHECK", "CHECK2", "CHECK3", "CHECK4"))
    assert len(bench.CHECK5) >= 16
    assert {"gnm", "gnp", "chung_lu", "rmat", "geometric", "delaunay", "stencil"} <= kinds


def test_the_check_plan_reads_the_sampled_depth(bench, capsys):
    # a power-law matrix whose cliques die out at k = 6 (a third-check miss at another size): sorted lists,
    # and G(n, p) with long out-lists (mean d⁺ 60), where the shipped long-list guard picks bitmaps and the
    # fourth check's rule (a), shown in brackets, sorted lists
    bench.plan(["gen:powerlaw_matrix:n_rows=20000,n_cols=20000,avg_nnz_per_row=10,exponent=2.0",
                "gen:gnp:n=1200,p=0.1"], (5, 6), 300.0)
    out = capsys.readouterr().out
    assert "c/e" in out and "k6 list S" in out
    assert "vertex [list]" in out


@pytest.mark.parametrize("name", ["check6", "check7", "check8", "check9", "check10"])
def test_each_trial_check_is_of_graphs_not_measured_before(bench, name):
    """The checks of k-clique's measured trial (kernels/algorithms/kclique/trial.py): each set new
    against every set before it and every measurement file."""
    order = list(bench.CHECK_SETS)
    kinds = _unseen(bench, name, tuple(n.upper() for n in order[:order.index(name)]))
    assert len(bench.CHECK_SETS[name]) >= 15
    assert {"gnm", "gnp", "chung_lu", "rmat", "geometric", "delaunay", "stencil", "powerlaw_matrix"} <= kinds
