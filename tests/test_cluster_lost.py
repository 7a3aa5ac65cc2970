"""A sweep whose cluster is lost: the cells still out are ``lost`` (not failed), the command says
so in one sentence and exits 75, and ``--resume`` runs them again, here on the local backend.

The cluster is ``graph-kernels cluster local`` in a child process (scheduler and Nannies in one
process), killed with SIGKILL once the sweep file holds its first cell; the slow cells come from
the test plugin ``tests/plugins/sleepy_family.py``. The client's reconnection time is set short
(``--connect-timeout``), so the test waits seconds, not Dask's default 20.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kernels.cli import main as cli_main
from kernels.compute.backend import CANCELLED, LOST, ComputeBackend, Job, Outcome
from kernels.compute.sweep import run_sweep
from kernels.graph.csr import CSRGraph
from kernels.results import load_sweep

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = "tests.plugins.sleepy_family"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def sleepy():
    from kernels.algorithms import registry

    module = importlib.import_module(PLUGIN)
    yield module.FAMILY
    registry._FAMILIES.pop("sleepy", None)
    sys.modules.pop(PLUGIN, None)


def plugin_env() -> dict:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "GRAPH_KERNELS_PLUGINS": PLUGIN}


@pytest.fixture
def doomed_cluster():
    """A ``cluster local`` child process of one CPU worker; yields (address, kill)."""
    proc = subprocess.Popen([sys.executable, "-m", "kernels", "cluster", "local", "--gpus", "0", "--workers", "1",
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=plugin_env(), start_new_session=True)
    line = proc.stdout.readline()
    assert line.startswith("scheduler tcp://127.0.0.1:"), line
    address = line.split()[1].rstrip(":")

    def kill():
        # the whole session: the scheduler and Nannies, and the worker processes they started
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)

    yield address, kill
    kill()
    proc.wait(timeout=60)


def write_graph(tmp_path) -> Path:
    path = tmp_path / "tiny.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n4 4 4\n1 2\n2 1\n2 3\n4 4\n")
    return path


def kill_after_first_cell(sweep_file: Path, kill) -> threading.Thread:
    def watch():
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if sweep_file.exists() and any(json.loads(line).get("kind") == "cell"
                                           for line in sweep_file.read_text().splitlines() if line.endswith("}")):
                kill()
                return
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_a_lost_cluster_costs_only_the_cells_still_out_and_resume_runs_them(sleepy, doomed_cluster, tmp_path,
                                                                            monkeypatch, capsys):
    address, kill = doomed_cluster
    graph, out = write_graph(tmp_path), tmp_path / "sweep.json"
    sweep_args = ["sweep", "sleepy", "cpu-serial", str(graph), "--grid", "cell=0,1,2,3,4,5", "--param", "seconds=1",
                  "--repeat", "1", "--warmup", "0", "--out", str(out)]
    watcher = kill_after_first_cell(out, kill)
    code = cli_main([*sweep_args, "--scheduler", address, "--connect-timeout", "3"])
    watcher.join(timeout=5)
    captured = capsys.readouterr()
    assert code == 75, captured.err
    errors = [line for line in captured.err.splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and "were lost" in errors[0] and "--resume" in errors[0], captured.err
    assert "Traceback" not in captured.err and "CommClosedError" not in captured.err
    first = load_sweep(out)
    statuses = [c["status"] for c in first["cells"]]
    assert first["stopped"] == "lost" and not first["cancelled"]
    assert "ok" in statuses and "lost" in statuses and set(statuses) <= {"ok", "lost"}
    lost = [c for c in first["cells"] if c["status"] == "lost"]
    assert all("connection to the scheduler" in c["reason"] for c in lost)

    # the same command with --resume, here on this machine's worker: only the lost cells run
    monkeypatch.setenv("GRAPH_KERNELS_PLUGINS", PLUGIN)
    monkeypatch.setenv("PYTHONPATH", plugin_env()["PYTHONPATH"])
    assert cli_main([*sweep_args, "--resume"]) == 0, capsys.readouterr().err
    second = load_sweep(out)
    assert [c["status"] for c in second["cells"]] == ["ok"] * 6 and second["stopped"] == "complete"
    kept = {json.dumps(c["params"]): c["finished"] for c in first["cells"] if c["status"] == "ok"}
    assert all(c["finished"] == kept[json.dumps(c["params"])] for c in second["cells"]
               if json.dumps(c["params"]) in kept)       # the finished cells were not run again
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sum(line.get("status") == "lost" for line in lines) == len(lost)     # the file keeps its story


class LosingBackend(ComputeBackend):
    """A backend that answers the first ``answer`` jobs and loses the rest, then is unusable."""

    kind = "fake"

    def __init__(self, answer: int):
        super().__init__()
        self.answer, self.alive = answer, True

    @property
    def address(self):
        return "tcp://lost.example:8786"

    def run_command(self, graph, command, result_option, *, target=None, time_limit=None):
        raise AssertionError("a sweep runs no whole commands")

    def describe(self):
        return []

    def default_target(self, family, variant):
        return "cpu"

    def add_graph(self, key, graph):
        pass

    def usable(self):
        return self.alive

    def run_many(self, jobs, *, cancel=None):
        from kernels.run.runner import run_variant

        for i, job in enumerate(jobs):
            if i < self.answer:
                yield Outcome(job, record=run_variant(job_graph(), job.family, job.variant, job.params, target="cpu",
                                                      repeat=1, warmup=0).record, worker="fake")
            else:
                self.alive = False
                yield Outcome(job, failure=LOST, message="the connection to the scheduler was lost")

    def close(self):
        pass


def job_graph():
    return CSRGraph.from_edges(4, [0, 1, 1, 3], [1, 0, 2, 3], directed=True, name="tiny")


def test_lost_cells_are_neither_failed_nor_measured_and_the_sweep_stops_as_lost(sleepy, tmp_path):
    out = tmp_path / "s.json"
    sweep = run_sweep(job_graph(), "sleepy", "cpu-serial", {"cell": [0, 1, 2]}, repeat=1, warmup=0,
                      backend=LosingBackend(answer=1), out=out)
    assert [c["status"] for c in sweep["cells"]] == ["ok", "lost", "lost"]
    assert sweep["stopped"] == "lost" and not sweep["cancelled"] and sweep["best"]["params"] == {"cell": 0}
    again = load_sweep(out)
    assert again["stopped"] == "lost" and [c["status"] for c in again["cells"]] == ["ok", "lost", "lost"]


def test_a_cancelled_outcome_is_not_a_lost_cell():
    assert not Outcome(Job("g", "f", "v"), failure=CANCELLED).lost and Outcome(Job("g", "f", "v"), failure=LOST).lost


def write_lines(path: Path, lines: list[dict]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def sweep_header() -> dict:
    return {"kind": "sweep", "schema": 2, "family": "sleepy", "variant": "cpu-serial", "target": "cpu",
            "input": {"name": "tiny", "fingerprint": "f"}, "grid": {"cell": [0, 1]}, "total_cells": 2,
            "strategy": {"name": "grid"}}


def test_a_cell_run_again_replaces_its_lost_line_and_no_other_repeat_is_accepted(tmp_path):
    from kernels.errors import GraphFormatError
    from kernels.results.kerneltuner import to_kernel_tuner

    path = tmp_path / "s.json"
    lost = {"kind": "cell", "params": {"cell": 1}, "status": "lost", "reason": "the scheduler was lost"}
    ok = {"kind": "cell", "params": {"cell": 0}, "status": "ok", "median_s": 0.5}
    write_lines(path, [sweep_header(), ok, lost])
    sweep = load_sweep(path)
    assert [c["status"] for c in sweep["cells"]] == ["ok", "lost"]
    assert list(to_kernel_tuner(sweep)["cache"]) == ["0"]          # lost: never measured, not exported
    again = {"kind": "cell", "params": {"cell": 1}, "status": "ok", "median_s": 0.25}
    write_lines(path, [sweep_header(), ok, lost, {"kind": "resume", "started": "x"}, again])
    sweep = load_sweep(path)
    assert [c["status"] for c in sweep["cells"]] == ["ok", "ok"] and sweep["best"]["params"] == {"cell": 1}
    write_lines(path, [sweep_header(), ok, dict(ok, median_s=0.1)])
    with pytest.raises(GraphFormatError, match="same parameters"):
        load_sweep(path)
