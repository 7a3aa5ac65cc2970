"""The GUI on a Dask cluster: Compute ▸ Connect to Cluster…, the workers in the status bar and
the log, the cluster's targets in the Run dock, a run and a live sweep there whose results
appear as local ones do, refusals in words, and back to local after Disconnect.

A real scheduler and two worker processes on the loopback (``LocalCluster(processes=True)``),
the simulator target: no GPU needed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from explorer.compute import ComputeClient
from tests.conftest import data_path
from tests.gui_support import close_window, docks, make_window
from tests.test_gui_run import run_and_wait

distributed = pytest.importorskip("distributed")

pytestmark = [pytest.mark.gui, pytest.mark.slow, pytest.mark.timeout(600)]
ROOT = Path(__file__).resolve().parents[1]
CONNECT_TIMEOUT_MS = 120_000
JOB_TIMEOUT_MS = 240_000


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, env=env) as cl:
        cl.wait_for_workers(2, timeout=120)
        yield cl


@pytest.fixture
def window(qtbot, tmp_path):
    w = make_window(qtbot, tmp_path, data_path("lp_afiro.mtx"))
    yield w
    close_window(w)


def connect(qtbot, w, address: str):
    run, _ = docks(w)
    controls = run.cluster_controls
    with qtbot.waitSignals([controls.connection.connected], timeout=CONNECT_TIMEOUT_MS):
        controls.connect({"address": address})
    return run, controls


def test_connecting_lists_the_workers_and_offers_the_cluster_targets(qtbot, window, cluster):
    run, controls = connect(qtbot, window, cluster.scheduler_address)
    assert controls.label.isVisible()
    assert f"cluster {cluster.scheduler_address}: 2 worker(s)" in controls.label.text()
    assert window.settings.cluster()["address"] == cluster.scheduler_address      # remembered
    assert any("connected: cluster" in m for m in window.log_dock.messages("info"))
    run.choose("spmv", "gpu-tunable")
    offered = [run.target_box.itemData(i) for i in range(run.target_box.count())]
    assert "cluster:sim" in offered and "cluster:cuda" not in offered             # no GPU on these workers
    assert "sim" in offered                                                       # local targets stay
    controls.log_workers()
    assert sum("numba" in m for m in window.log_dock.messages("info")) >= 2       # one line per worker
    with qtbot.waitSignal(controls.connection.disconnected, timeout=30_000):
        controls.disconnect()
    offered = [run.target_box.itemData(i) for i in range(run.target_box.count())]
    assert not any(str(t).startswith("cluster:") for t in offered)
    assert not controls.label.isVisible()


def test_a_run_and_a_sweep_on_the_cluster_land_in_the_results_like_local_ones(qtbot, window, cluster):
    run, controls = connect(qtbot, window, cluster.scheduler_address)
    _, results = docks(window)
    workers = {w.address for w in controls.connection.workers}

    run.choose("spmv", "gpu-tunable", {"wg": "32", "rows": "4"}, target="cluster:sim", repeat=1)
    task = run_and_wait(qtbot, run.run(), timeout=JOB_TIMEOUT_MS)
    assert task.state == "finished", task.error
    record = results.model.records[-1]
    assert record["verified"] and record["target"] == "sim"
    assert record["worker"]["address"] in workers and record["worker"]["cluster"] == cluster.scheduler_address

    run.sweep_panel.choose("wg", [1, 4], "rows", [1, 4])
    task = run_and_wait(qtbot, run.sweep(), timeout=JOB_TIMEOUT_MS)
    assert task.state == "finished", task.error
    sweep = results.current_sweep()
    ran = [c for c in sweep["cells"] if c["status"] != "invalid"]
    assert {c["status"] for c in ran} == {"ok"} and len(ran) == 3                 # rows > wg is ruled out
    assert all(c["worker"] in workers for c in ran)
    assert results.heatmap.table.shape == (2, 2)
    assert ComputeClient.for_window(window).cluster.is_connected


def test_a_scheduler_that_is_not_there_is_one_sentence_and_nothing_is_lost(qtbot, window, monkeypatch):
    from explorer.compute import cluster as cluster_module

    monkeypatch.setattr(cluster_module, "CONNECT_TIMEOUT_S", 3.0)   # nothing listens: no need to wait 20 s
    run, _ = docks(window)
    controls = run.cluster_controls
    doc = window.documents()[0]
    with qtbot.waitSignal(controls.connection.connectFailed, timeout=CONNECT_TIMEOUT_MS) as failed:
        controls.connect({"address": "tcp://127.0.0.1:9"})          # the discard port: nothing listens
    message = failed.args[0]
    assert "could not connect to tcp://127.0.0.1:9" in message and "\n" not in message
    assert not controls.connection.is_connected and window.documents() == [doc]
    run.choose("spmv", "gpu-tunable", target="sim")               # local running is unaffected
    assert run.target_box.currentData() == "sim"


def test_a_plain_text_address_off_the_loopback_is_warned_about_once(qtbot, window, monkeypatch):
    from kernels.compute import backends
    from kernels.errors import ClusterError

    def refuse(address, **_kwargs):            # no packet leaves this machine: the connection is refused here
        raise ClusterError(f"no scheduler answered at {address}")

    monkeypatch.setattr(backends, "open_backend", refuse)
    run, _ = docks(window)
    controls = run.cluster_controls
    with qtbot.waitSignal(controls.connection.connectFailed, timeout=CONNECT_TIMEOUT_MS):
        controls.connect({"address": "tcp://gpu-server.example:8786"})
    warnings = [m for m in window.log_dock.messages("warning") if "not encrypted and not authenticated" in m]
    assert len(warnings) == 1


def test_a_cluster_lost_mid_sweep_marks_the_cells_still_out_lost_and_resume_runs_them_here(qtbot, tmp_path,
                                                                                          monkeypatch):
    """The scheduler goes away after the first cell: the finished cells stay, the rest say "lost",
    an error says how many and why, and Resume Sweep runs them on this machine's worker."""
    import importlib
    import sys

    from distributed import LocalCluster

    from explorer.compute import cluster as cluster_module
    from kernels.algorithms import registry
    from kernels.results import load_sweep
    from tests.test_gui_resume import PLUGIN, _cell_lines

    monkeypatch.setattr(cluster_module, "CONNECT_TIMEOUT_S", 3.0)    # the client's reconnection window
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    monkeypatch.setenv(registry.PLUGINS_ENV, PLUGIN)
    monkeypatch.setenv("PYTHONPATH", path)
    importlib.import_module(PLUGIN)
    doomed = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None, env={"PYTHONPATH": path, registry.PLUGINS_ENV: PLUGIN})
    w = make_window(qtbot, tmp_path, data_path("karate.mtx"))
    try:
        run, controls = connect(qtbot, w, doomed.scheduler_address)
        _, results = docks(w)
        run.choose("sleepy", "cpu-serial", {"seconds": "1"}, target="cluster:cpu", repeat=1)
        run.sweep_panel.choose("cell", list(range(5)))
        task = run.sweep()
        qtbot.waitUntil(lambda: _cell_lines(task.request.out) >= 1, timeout=JOB_TIMEOUT_MS)
        doomed.close()                                                 # the scheduler and its worker go away
        run_and_wait(qtbot, task, timeout=JOB_TIMEOUT_MS)
        assert task.state == "finished", task.error
        statuses = [c["status"] for c in load_sweep(task.request.out)["cells"]]
        assert "ok" in statuses and "lost" in statuses and set(statuses) <= {"ok", "lost"}
        assert any("lost" in row for row in results.heatmap.table.status)
        errors = w.log_dock.messages("error")
        assert any("were lost" in m and "Resume Sweep" in m for m in errors), errors
        assert results.resumable_file() == task.request.out and run.resume_button.isEnabled()

        with qtbot.waitSignal(controls.connection.disconnected, timeout=30_000):
            controls.disconnect()
        run.target_box.setCurrentIndex(run.target_box.findData("cpu"))
        resumed = run_and_wait(qtbot, run.resume_sweep(), timeout=JOB_TIMEOUT_MS)
        assert resumed.state == "finished", resumed.error
        assert [c["status"] for c in load_sweep(task.request.out)["cells"]] == ["ok"] * 5
        assert not run.resume_button.isEnabled()
    finally:
        close_window(w)
        doomed.close()
        registry._FAMILIES.pop("sleepy", None)
        sys.modules.pop(PLUGIN, None)
