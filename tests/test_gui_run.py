"""The Run dock and the compute client, driven through the real widgets (offscreen, CUDA simulator).

Kernels run in a real worker process (``python -m kernels worker``): triangles on karate with a
GPU variant, a two-parameter SpMV sweep that fills the heatmap live, Cancel, a worker killed in
the middle of a run, a kernel fault, a hang past the time limit, and parameters refused before
anything runs. Every test waits on signals, and leaves no worker process or job thread behind.
"""

from __future__ import annotations

import importlib
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.compute import ComputeClient
from explorer.plots.history_table import COLUMNS
from kernels.algorithms import registry
from kernels.algorithms.registry import families
from tests.conftest import data_path
from tests.gui_support import close_window, docks, make_window
from tests.process_helpers import process_gone, process_started, wait_until_gone

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parents[1]
PLUGIN = "tests.plugins.faulty_family"
JOB_TIMEOUT_MS = 180_000


@pytest.fixture
def karate_window(qtbot, tmp_path):
    w = make_window(qtbot, tmp_path, data_path("karate.mtx"))
    yield w
    close_window(w)


def run_and_wait(qtbot, task, timeout=JOB_TIMEOUT_MS):
    assert task is not None
    if task.running:
        with qtbot.waitSignal(task.done, timeout=timeout):
            pass
    return task


# ---- the form -------------------------------------------------------------------------------------

def test_the_form_is_generated_from_the_registry_for_every_variant(karate_window):
    run, _ = docks(karate_window)
    assert [run.family_box.itemData(i) for i in range(run.family_box.count())] == list(families())
    for fam_name, fam in families().items():
        for var_name, var in fam.variants.items():
            run.choose(fam_name, var_name)
            params = fam.all_params(var)
            assert list(run.form.fields) == [p.name for p in params]
            for p in params:
                tip = run.form.fields[p.name].toolTip()
                assert p.allowed_text() in tip.replace("&gt;", ">").replace("&lt;", "<")
                assert f"default: {p.default}" in tip
                assert run.form.parse_one(p.name) == p.default      # defaults are filled in
            targets = [run.target_box.itemData(i) for i in range(run.target_box.count())]
            assert set(targets) <= set(var.targets)


def test_invalid_parameter_is_shown_and_nothing_runs(karate_window):
    w = karate_window
    run, results = docks(w)
    run.choose("spmv", "gpu-tunable", {"wg": "48"}, target="sim")
    assert "wg" in run.error_label.text() and "power of two" in run.error_label.text()
    assert run.form.fields["wg"].styleSheet()                     # the field is marked
    assert run.run() is None
    assert ComputeClient.for_window(w).current is None           # nothing was sent anywhere
    assert any("not run" in m and "'wg'" in m for m in w.log_dock.messages("error"))
    assert "wg" in w.statusBar().currentMessage()

    run.choose("spmv", "gpu-tunable", {"wg": "32", "rows": "64"}, target="sim")
    assert "rows <= wg" in run.error_label.text()
    assert run.form.fields["rows"].styleSheet() and run.form.fields["wg"].styleSheet()
    assert run.run() is None
    assert any("rows <= wg" in m for m in w.log_dock.messages("error"))

    run.sweep_panel.choose("wg", ["32", "oops"], "rows", [1, 2])
    assert run.sweep() is None
    assert any("oops" in m for m in w.log_dock.messages("error"))
    assert ComputeClient.for_window(w).current is None and results.model.rowCount() == 0


# ---- runs ---------------------------------------------------------------------------------------------

def test_triangles_gpu_variant_on_karate_counts_45_verified(qtbot, karate_window):
    w = karate_window
    run, results = docks(w)
    run.choose("triangles", "gpu-row-block", {"block_size": 32}, target="sim", repeat=1)
    assert run.error_label.text() == ""
    task = run.run()
    assert task is not None and not run.run_button.isEnabled() and run.cancel_button.isEnabled()
    run_and_wait(qtbot, task)
    assert task.state == "finished", task.error
    rec = results.model.records[-1]
    assert rec["result"] == {"triangles": 45} and rec["verified"] is True
    assert rec["variant"] == "gpu-row-block" and rec["target"] == "sim" and rec["params"]["block_size"] == 32
    row = results.model.rowCount() - 1
    assert results.model.index(row, 0).data() == "✓"
    assert results.model.index(row, COLUMNS.index("result")).data() == "triangles 45"
    assert any("verified ✓" in m for m in w.log_dock.messages("info"))
    assert results.timing_chart.records[-1] is rec                 # the chart shows the new run
    assert run.run_button.isEnabled() and not run.cancel_button.isEnabled()


def test_a_run_uses_the_graph_as_edited(qtbot, karate_window):
    """The worker gets the current snapshot: after an edit the count changes, and Undo restores it."""
    w = karate_window
    run, results = docks(w)
    d = w.current_document()
    run.choose("triangles", "cpu-serial", repeat=1)
    run_and_wait(qtbot, run.run())
    assert results.model.records[-1]["result"] == {"triangles": 45}
    from explorer.model import commands

    # vertices 0 and 9 have common neighbour 2: adding the edge closes triangles
    w.push_command(commands.add_edge(d, 0, 9))
    run_and_wait(qtbot, run.run())
    added = results.model.records[-1]["result"]["triangles"]
    assert added > 45
    d.undo_stack.undo()
    run_and_wait(qtbot, run.run())
    assert results.model.records[-1]["result"] == {"triangles": 45}


# ---- sweeps ---------------------------------------------------------------------------------------------

@pytest.fixture
def matrix_window(qtbot, tmp_path):
    w = make_window(qtbot, tmp_path, data_path("lp_afiro.mtx"))
    yield w
    close_window(w)


def test_two_parameter_spmv_sweep_fills_the_heatmap_live(qtbot, matrix_window):
    w = matrix_window
    run, results = docks(w)
    run.choose("spmv", "gpu-tunable", {"reduce": "shared"}, target="sim", repeat=1)
    run.sweep_panel.choose("wg", [1, 2, 4], "rows", [1, 2, 4])
    assert "9 configurations, 3 ruled out" in run.sweep_panel.summary.text()
    redraws = []
    results.sweepChanged.connect(lambda i: redraws.append(len(results.sweeps[i]["sweep"]["cells"])))
    task = run.sweep()
    assert task is not None
    run_and_wait(qtbot, task)
    assert task.state == "finished", task.error
    # the heatmap was drawn with some of the cells, then with more: it filled in as they came
    assert any(0 < n < max(redraws) for n in redraws), redraws

    sweep = results.current_sweep()
    assert "live" not in sweep and sweep["best"] is not None
    table = results.heatmap.table
    assert table.shape == (3, 3) and table.row_param == "wg" and table.col_param == "rows"
    invalid = {(r, c) for r in range(3) for c in range(3) if table.status[r][c] == "invalid"}
    assert invalid == {(0, 1), (0, 2), (1, 2)}                       # rows > wg
    image = results.heatmap.image.image                               # (columns, rows): x is the column
    assert image.shape == (3, 3)
    assert all(math.isnan(image[c, r]) for r, c in invalid)           # invalid cells are blank
    assert all(table.status[r][c] == "ok" for r in range(3) for c in range(3) if (r, c) not in invalid)
    best = table.best
    assert table.row_values[best[0]] == sweep["best"]["params"]["wg"]
    assert table.col_values[best[1]] == sweep["best"]["params"]["rows"]
    rect = results.heatmap.best_item.rect()
    assert (math.floor(rect.center().y()), math.floor(rect.center().x())) == best
    assert results.heatmap.describe_cell(0, 1).endswith("invalid (constraint 'rows <= wg' does not hold for "
                                                        "rows=2, wg=1 (each row needs at least one thread))")
    assert "the best" in results.heatmap.describe_cell(*best)


def test_cancelling_a_sweep_keeps_what_finished(qtbot, matrix_window):
    w = matrix_window
    run, results = docks(w)
    run.choose("spmv", "gpu-tunable", {"reduce": "shared"}, target="sim", repeat=1)
    run.sweep_panel.choose("wg", [1, 2, 4, 8, 16, 32], "rows", [1, 2, 4, 8])
    task = run.sweep()
    qtbot.waitUntil(lambda: len([c for c in task.cells if c["status"] == "ok"]) >= 1, timeout=JOB_TIMEOUT_MS)
    with qtbot.waitSignal(task.done, timeout=JOB_TIMEOUT_MS):
        run.cancel_button.click()
    assert task.state == "cancelled"
    sweep = results.current_sweep()
    finished = sweep["cells"]
    assert sweep["cancelled"] is True and 1 <= len(finished) < 24
    assert all(c["status"] in ("ok", "invalid") for c in finished)
    table = results.heatmap.table
    done = sum(1 for row in table.status for s in row if s != "missing")
    assert done == len(finished) and table.best is not None            # drawn, best marked
    assert any("that finished are kept" in m for m in w.log_dock.messages("warning"))
    # the worker was stopped mid-cell; the next job starts a fresh one and works
    run.choose("spmv", "cpu-serial", repeat=1)
    task = run_and_wait(qtbot, run.run())
    assert task.state == "finished" and results.model.records[-1]["verified"]


# ---- the worker dies, hangs, or is killed ------------------------------------------------------------------

@pytest.fixture
def faulty_window(qtbot, tmp_path, monkeypatch):
    """A window whose worker also loads the test plugin family that crashes or hangs on request."""
    monkeypatch.setenv(registry.PLUGINS_ENV, PLUGIN)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    importlib.import_module(PLUGIN)                 # registered in this process too (the form reads it)
    w = make_window(qtbot, tmp_path, data_path("karate.mtx"))
    yield w
    close_window(w)
    registry._FAMILIES.pop("faulty", None)
    sys.modules.pop(PLUGIN, None)


def test_killing_the_worker_during_a_run_is_reported_and_the_next_run_works(qtbot, faulty_window):
    w = faulty_window
    run, results = docks(w)
    client = ComputeClient.for_window(w)
    run.choose("faulty", "cpu-serial", {"mode": "hang"}, repeat=1)
    task = run.run()
    qtbot.waitUntil(lambda: task.worker_pid is not None, timeout=JOB_TIMEOUT_MS)
    victim = task.worker_pid
    with qtbot.waitSignal(task.done, timeout=JOB_TIMEOUT_MS):
        os.kill(victim, signal.SIGKILL)
    assert task.state == "failed"
    assert "worker process died (killed by signal 9 (SIGKILL))" in task.error
    errors = w.log_dock.messages("error")
    assert any("died" in m and "graphs and edits are safe" in m for m in errors)
    assert "died" in w.statusBar().currentMessage()
    assert client.restarts == 1 and process_gone(victim)
    assert client.worker_pid("cpu") not in (None, victim)                 # a fresh worker is up already
    # carries on: the same graph, a new run
    run.choose("faulty", "cpu-serial", {"mode": "ok"}, repeat=1)
    task = run_and_wait(qtbot, run.run())
    assert task.state == "finished" and results.model.records[-1]["verified"] is True
    assert w.current_document().num_edges == 78                            # the user's graph is untouched


def test_a_kernel_fault_and_a_hang_past_the_time_limit_restart_the_worker(qtbot, faulty_window):
    w = faulty_window
    run, results = docks(w)
    run.choose("faulty", "cpu-serial", {"mode": "crash"}, repeat=1)
    task = run_and_wait(qtbot, run.run())
    assert task.state == "failed" and "SIGABRT" in task.error
    run.choose("faulty", "cpu-serial", {"mode": "hang"}, repeat=1)
    run.time_limit_box.setValue(2)
    task = run_and_wait(qtbot, run.run())
    assert task.state == "failed" and "stopped after 2 s, the time limit set in the Run dock" in task.error
    assert sum("stopped after 2 s" in m for m in w.log_dock.messages()) == 1      # said once
    assert ComputeClient.for_window(w).restarts == 2
    run.choose("faulty", "cpu-serial", {"mode": "ok"}, repeat=1)
    assert run_and_wait(qtbot, run.run()).state == "finished"
    assert [r["verified"] for r in results.model.records] == [True]


def test_cancelling_a_run_stops_its_worker(qtbot, faulty_window):
    w = faulty_window
    run, _ = docks(w)
    run.choose("faulty", "cpu-serial", {"mode": "hang"}, repeat=1)
    task = run.run()
    qtbot.waitUntil(lambda: task.worker_pid is not None, timeout=JOB_TIMEOUT_MS)
    pid = task.worker_pid
    started = process_started(pid)
    with qtbot.waitSignal(task.done, timeout=30_000):
        run.cancel()
    assert task.state == "cancelled" and wait_until_gone(pid, started)
    assert any("cancelled" in m for m in w.log_dock.messages("warning"))


# ---- the GUI process never touches CUDA ----------------------------------------------------------------------

def test_the_gui_process_never_imports_numba_cuda(tmp_path):
    code = (
        "import sys, tempfile\n"
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication([])\n"
        "from explorer.main_window import MainWindow\n"
        "from explorer.settings import AppSettings\n"
        "w = MainWindow(AppSettings.ephemeral(tempfile.mkdtemp()), restore_layout=False, dialogs=False)\n"
        "w.add_compute_docks()\n"
        "run = [d for d in w.compute_docks if d.objectName() == 'RunDock'][0]\n"
        "for fam in run.families:\n"
        "    for var in run.families[fam].variants:\n"
        "        run.choose(fam, var)\n"
        "w.close()\n"
        "print('numba.cuda' in sys.modules)\n"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False"
