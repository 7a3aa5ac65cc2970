"""The worker process trusts only installed packages and declared plug-ins, and ends with its parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from kernels.compute.local.client import WorkerClient
from kernels.graph.csr import CSRGraph
from tests.process_helpers import process_gone, wait_until_gone

ROOT = Path(__file__).resolve().parent.parent


def plant(folder: Path, name: str, marker: Path) -> None:
    """A module that leaves a marker file behind if anything imports it."""
    (folder / f"{name}.py").write_text(f"open({str(marker)!r}, 'w').write('imported')\n")


def tiny_graph() -> CSRGraph:
    return CSRGraph.from_edges(3, [0, 1, 2], [1, 2, 0], directed=True, name="cycle")


def test_modules_in_the_callers_folder_never_run_in_the_worker(tmp_path, monkeypatch):
    marker = tmp_path / "marker"
    folder = tmp_path / "project"
    folder.mkdir()
    for name in ("numpy", "kernels", "scipy", "cupy"):
        plant(folder, name, marker)
    monkeypatch.chdir(folder)
    with WorkerClient() as client:
        client.add_graph("g", tiny_graph())
        assert client.run("g", "spmv", "cpu-serial", repeat=1, warmup=0, timeout=120)["record"]["verified"]
    assert not marker.exists(), "a module planted in the current directory ran in the worker"


DEMO_PLUGIN = textwrap.dedent("""
    import numpy as np
    from kernels.algorithms.execution import HostExecution
    from kernels.algorithms.registry import Family, Metric, Problem, Variant, Verification, register_family

    FAMILY = register_family(Family(
        name="demo-plugin", title="row lengths", description="a plug-in outside the project",
        prepare=lambda graph, params, seed: Problem(graph=graph, size={"rows": graph.n_rows}),
        reference=lambda problem, params: np.diff(problem.graph.indptr),
        verify=lambda out, ref, problem, params: Verification(bool(np.array_equal(out, ref)), "numpy", ""),
        summarize=lambda output, problem: {},
        metrics=(Metric("rows/s", "rows/s", lambda problem, seconds: problem.size["rows"] / seconds),),
        reference_name="numpy"))
    FAMILY.add(Variant("cpu-serial", "cpu-serial", "np.diff",
                       lambda problem, params, target: HostExecution(np.diff, problem.graph.indptr)))
""")


def test_declared_plugins_load_in_the_worker_and_installed_packages_win_next_to_them(tmp_path, monkeypatch):
    marker = tmp_path / "marker"
    folder = tmp_path / "my-plugins"
    folder.mkdir()
    (folder / "gge_demo_plugin.py").write_text(DEMO_PLUGIN)
    plant(folder, "numpy", marker)             # beside the plug-in, shadowed by the installed numpy
    monkeypatch.syspath_prepend(str(folder))   # the caller finds its plug-in here (as ``python -m`` from there)
    monkeypatch.chdir(tmp_path)
    with WorkerClient(env={"GRAPH_KERNELS_PLUGINS": "gge_demo_plugin"}) as client:
        client.add_graph("g", tiny_graph())
        reply = client.run("g", "demo-plugin", "cpu-serial", repeat=1, warmup=0, timeout=120)
        assert reply["record"]["verified"]
    assert not marker.exists()


PARENT = textwrap.dedent("""
    import sys, time
    from kernels.compute.local.client import WorkerClient
    client = WorkerClient()
    client.ping(timeout=120)
    print(client.pid, flush=True)
    if sys.argv[1] == "busy":
        client.request({"op": "sleep", "seconds": 600})
    time.sleep(600)
""")


@pytest.mark.parametrize("state", ["idle", "busy"])
def test_a_worker_ends_when_its_parent_is_killed(tmp_path, state):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    parent = subprocess.Popen([sys.executable, "-c", PARENT, state], stdout=subprocess.PIPE, text=True,
                              cwd=tmp_path, env=env)
    try:
        worker = int(parent.stdout.readline())
        time.sleep(0.5 if state == "busy" else 0)     # the worker is inside its job now
        assert not process_gone(worker)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
        assert wait_until_gone(worker), f"worker {worker} outlived its killed parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_a_worker_started_from_a_thread_outlives_the_thread():
    # PR_SET_PDEATHSIG fires when the starting *thread* ends; the GUI starts workers from job threads
    client = WorkerClient()
    try:
        starter = threading.Thread(target=client.ping, kwargs={"timeout": 120})
        starter.start()
        starter.join()
        pid = client.pid
        time.sleep(1.0)
        assert client.ping(timeout=60)["pid"] == pid
    finally:
        client.close()
