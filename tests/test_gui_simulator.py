"""Honest numbers from the simulator (issue 15, point 6): the time a GPU variant will take on the
CUDA simulator is estimated from its simulated threads and said before it runs (the Run dock asks
above a limit the user sets; ``graph-kernels run --target sim`` prints it); launches are sized by
their work; simulator times are never set against CPU or GPU times in the speedup view."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from explorer.plots.timing_chart import TimingChart
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph
from kernels.run.sim_estimate import JOB_OVERHEAD_S, SIM_COSTS, estimate
from tests.conftest import data_path
from tests.gui_support import close_window, make_window
from tests.test_gui_results import record
from tests.test_gui_run import JOB_TIMEOUT_MS

ROOT = Path(__file__).resolve().parents[1]


def test_the_estimate_counts_simulated_threads_of_the_launch_configuration():
    afiro = read_graph(data_path("lp_afiro.mtx"))           # 27 rows
    est = estimate("spmv", "gpu-tunable", afiro, {"wg": 128, "rows": 16}, repeat=5)
    assert (est.threads, est.runs) == (2 * 128, 6)
    # 2 row blocks of 4 barrier rounds (1 + log2(8 threads a row)) of 128 threads
    assert est.counts == {"rounds x sqrt(wg)": pytest.approx(2 * 4 * 128 ** 0.5), "entries": afiro.nnz}
    run_s = SIM_COSTS["spmv", "gpu-tunable"].run_seconds(est.counts)        # the variant's measured costs
    assert est.seconds == pytest.approx(JOB_OVERHEAD_S + 6 * run_s)
    assert "simulated threads" in est.describe() and "s" in est.describe()
    naive = estimate("spmv", "gpu-naive", afiro, {"wg": 32}, repeat=1)
    assert naive.threads == 32                               # one thread per row, in whole blocks


def test_k_clique_launches_are_sized_by_the_vertices_not_max_blocks():
    karate = read_graph(data_path("karate.mtx"))             # 34 vertices
    est = estimate("kclique", "gpu-vertex", karate, {"max_blocks": 1024, "block_size": 128})
    assert est.threads == 34 * 128                           # not 1024 x 128 = 131 k simulated threads
    edge = estimate("kclique", "gpu-edge", karate, {"max_blocks": 1024, "block_size": 64})
    assert edge.threads == 78 * 64


def test_a_variant_without_a_launch_model_gets_a_rough_count_that_grows_with_the_graph():
    small = read_graph(data_path("karate.mtx"))
    big = CSRGraph.from_edges(20_000, np.arange(19_999), np.arange(1, 20_000))
    a = estimate("traversal", "gpu-csr", small, {}, repeat=1)
    assert "rough" in a.basis and a.threads >= small.n_rows + small.nnz
    assert estimate("traversal", "gpu-csr", big, {}, repeat=1).seconds > 100 * a.seconds


def test_graph_kernels_run_on_the_simulator_says_the_estimate_first():
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "kernels", "run", "spmv", "gpu-naive", str(data_path("lp_afiro.mtx")),
                          "--target", "sim", "--repeat", "1", "--param", "wg=32"],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "spmv/gpu-naive will take" in out.stderr and "32 simulated threads" in out.stderr


def test_the_run_dock_says_the_estimate_and_refuses_above_the_limit_until_it_is_raised(qtbot, tmp_path):
    w = make_window(qtbot, tmp_path, data_path("lp_afiro.mtx"))
    try:
        run = next(d for d in w.compute_docks if d.objectName() == "RunDock")
        run.choose("spmv", "gpu-naive", {"wg": 32}, target="sim", repeat=1)
        w.settings.set_simulator_ask_above(0.01)
        assert run.run() is None                         # dialogs=False: refused, with the estimate and the way out
        assert "estimated" in run.error_label.text() and "Simulator Time Before Asking" in run.error_label.text()
        assert any("simulated threads" in m for m in w.log_dock.messages("info"))
        w.settings.set_simulator_ask_above(600)
        task = run.run()
        assert task is not None
        assert "lp_afiro" in run.progress_label.text()     # the progress line names the graph
        with qtbot.waitSignal(task.done, timeout=JOB_TIMEOUT_MS):
            pass
        assert task.state == "finished" and "lp_afiro" in run.progress_label.text()
    finally:
        close_window(w)


def _sim(r):
    r["target"] = "sim"
    return r


def test_simulator_runs_are_shown_apart_and_never_compared_with_cpu_runs(qtbot):
    chart = TimingChart()
    qtbot.addWidget(chart)
    chart.resize(900, 600)
    runs = [_sim(record("gpu-a", 0.3, kind="gpu")), record("cpu-serial", 2e-4), _sim(record("gpu-b", 0.1, kind="gpu"))]
    chart.set_records(runs, baseline="cpu-serial")
    assert [r["variant"] for r in chart.records] == ["cpu-serial", "gpu-a", "gpu-b"]     # simulator runs last
    assert chart.speedups == [1.0, None, None]            # no "1,463x slower"
    assert "not GPU times" in chart.title_label.text
    assert any(type(i).__name__ == "InfiniteLine" for i in chart.time_plot.items)     # the dashed line between
    texts = [i.textItem.toPlainText() for i in chart.speed_plot.items if type(i).__name__ == "TextItem"]
    assert any("not" in t and "compared" in t for t in texts)
    chart.set_records(runs, baseline="gpu-a")             # a simulator baseline compares simulator runs only
    assert chart.speedups[0] is None and chart.speedups[1:] == pytest.approx([1.0, 3.0])
