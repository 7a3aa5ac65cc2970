"""Sweeps and runs through a real Dask cluster on the loopback: a scheduler and two worker
processes (``LocalCluster(processes=True)``, the workers are Nannies as ``dask worker`` starts
them), on the simulator and CPU targets.

The plugin family ``tests/plugins/sleepy_family.py`` (loaded in the workers through
``GRAPH_KERNELS_PLUGINS``) gives slow cells, to see both workers used and to kill a worker
while cells run, and a cell that sleeps past the time limit.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import signal
import sys
from pathlib import Path

import pytest

from kernels.cli import main as cli_main
from kernels.compute.backend import CRASHED, Job
from kernels.compute.dask.backend import DaskBackend
from kernels.compute.dask.connect import plain_text_warning, warn_plain_text
from kernels.compute.local_backend import LocalBackend
from kernels.compute.sweep import run_sweep
from kernels.errors import ClusterError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph
from kernels.results import load_sweep

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]
AFIRO = ROOT / "tests" / "data" / "lp_afiro.mtx"
PLUGIN = "tests.plugins.sleepy_family"
FAULTY = "tests.plugins.faulty_family"
SPMV_GRID = {"wg": [1, 4], "rows": [1, 4]}

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def worker_env() -> dict:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "GRAPH_KERNELS_PLUGINS": f"{PLUGIN},{FAULTY}"}


@pytest.fixture(scope="module")
def sleepy():
    """The plugin family registered here too (sweeps validate their grid in this process)."""
    from kernels.algorithms import registry

    module = importlib.import_module(PLUGIN)
    yield module.FAMILY
    registry._FAMILIES.pop("sleepy", None)
    sys.modules.pop(PLUGIN, None)


@pytest.fixture(scope="module")
def faulty():
    from kernels.algorithms import registry

    module = importlib.import_module(FAULTY)
    yield module.FAMILY
    registry._FAMILIES.pop("faulty", None)
    sys.modules.pop(FAULTY, None)


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, env=worker_env()) as cl:
        yield cl


@pytest.fixture(scope="module")
def backend(cluster, sleepy):
    with DaskBackend(cluster.scheduler_address) as b:
        b.client.wait_for_workers(2, timeout=120)
        yield b


def tiny_graph() -> CSRGraph:
    return CSRGraph.from_edges(4, [0, 1, 1, 3], [1, 0, 2, 3], directed=True, name="tiny")


def cell_map(sweep: dict) -> dict:
    return {tuple(sorted(c["params"].items())): (c["status"], c.get("record", {}).get("result"),
                                                  c.get("record", {}).get("verified"))
            for c in sweep["cells"]}


def test_describe_lists_both_workers_and_says_why_they_cannot_run_gpu_variants(backend):
    workers = backend.describe()
    assert len(workers) == 2
    for w in workers:
        assert w.pid and w.versions["numba"] and w.cpu
        assert not w.can_run_gpu and any("no GPU" in p for p in w.problems)


def test_cluster_sweep_on_the_simulator_matches_a_local_sweep(backend):
    graph = read_graph(str(AFIRO))
    kwargs = dict(target="sim", repeat=1, warmup=0, time_limit=240)
    remote = run_sweep(graph, "spmv", "gpu-tunable", SPMV_GRID, backend=backend, **kwargs)
    with LocalBackend(env={"NUMBA_ENABLE_CUDASIM": "1"}) as local_backend:
        local = run_sweep(graph, "spmv", "gpu-tunable", SPMV_GRID, backend=local_backend, **kwargs)
    assert cell_map(remote) == cell_map(local)
    assert [c["params"] for c in remote["cells"]] == [c["params"] for c in local["cells"]]  # grid order
    assert {c["status"] for c in remote["cells"]} == {"ok", "invalid"}
    ran = [c for c in remote["cells"] if c["status"] == "ok"]
    workers = {w.address for w in backend.describe()}
    assert all(c["worker"] in workers and c["device"] == "CUDA simulator" for c in ran)
    assert remote["backend"] == {"kind": "dask", "address": backend.address}


def test_cells_are_spread_over_both_workers_and_arrive_as_they_finish(backend, tmp_path):
    graph = tiny_graph()
    seen, partial = [], []
    out = tmp_path / "partial.json"

    def progress(done, total, cell):
        seen.append(done)
        partial.append(len(load_sweep(out)["cells"]))

    sweep = run_sweep(graph, "sleepy", "cpu-serial", {"cell": list(range(6)), "seconds": [0.5]}, repeat=1,
                      warmup=0, time_limit=120, backend=backend, progress=progress, out=out)
    assert [c["status"] for c in sweep["cells"]] == ["ok"] * 6
    assert len({c["worker"] for c in sweep["cells"]}) == 2
    assert seen == list(range(1, 7))
    assert partial == seen                        # each cell is on disk when it is reported
    assert len(load_sweep(out)["cells"]) == 6


def test_a_cell_that_hangs_past_the_time_limit_fails_and_later_cells_still_run(backend):
    # distinct values: a grid keeps one cell per value
    sweep = run_sweep(tiny_graph(), "sleepy", "cpu-serial", {"seconds": [0.0, 10000.0, 0.001, 0.002]}, repeat=1,
                      warmup=0, time_limit=8.0, backend=backend)
    cells = sweep["cells"]
    assert [c["status"] for c in cells] == ["ok", "failed", "ok", "ok"], [c.get("reason") for c in cells]
    assert cells[1]["reason"].startswith("timed out")
    assert all(c["record"]["verified"] for c in cells if c["status"] == "ok")
    assert len(backend.describe()) == 2          # the Dask worker survived; only its child was stopped


def test_sweep_command_with_scheduler_on_the_cpu_target_matches_a_local_sweep(cluster, tmp_path, capsys):
    remote, local = tmp_path / "remote.json", tmp_path / "local.json"
    args = ["sweep", "spmv", "cpu-serial", str(AFIRO), "--grid", "dtype=", "--repeat", "1", "--quiet"]
    assert cli_main([*args, "--out", str(remote), "--scheduler", cluster.scheduler_address]) == 0
    assert cli_main([*args, "--out", str(local)]) == 0
    r, lo = load_sweep(remote), load_sweep(local)
    assert cell_map(r) == cell_map(lo) and all(c["status"] == "ok" for c in r["cells"])
    assert r["target"] == "cpu" and r["cells"][0]["worker"].startswith("tcp://127.0.0.1:")


def test_run_command_uses_the_scheduler_from_the_environment(cluster, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GRAPH_KERNELS_SCHEDULER", cluster.scheduler_address)
    out = tmp_path / "y.npy"
    code = cli_main(["run", "spmv", "gpu-tunable", str(AFIRO), "--param", "wg=4", "--param", "rows=2",
                     "--repeat", "1", "--warmup", "0", "--json", "--output", str(out)])
    assert code == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["verified"] and rec["target"] == "sim" and rec["worker"].startswith("tcp://127.0.0.1:")
    assert out.exists()


def test_cluster_command_lists_the_workers(cluster, capsys):
    assert cli_main(["cluster", cluster.scheduler_address]) == 0
    text = capsys.readouterr().out
    assert "2 worker(s), 0 can run GPU variants" in text
    assert text.count("cannot run GPU variants: no GPU found") == 2


def test_killing_a_worker_mid_sweep_costs_only_its_running_cell(backend):
    graph = tiny_graph()
    killed = []

    def progress(done, total, cell):
        if not killed:
            pid = backend.client.run(os.getpid, workers=[cell["worker"]])[cell["worker"]]
            os.kill(pid, signal.SIGKILL)      # it is running its next cell now
            killed.append(cell["worker"])

    sweep = run_sweep(graph, "sleepy", "cpu-serial", {"cell": list(range(8)), "seconds": [1.0]}, repeat=1,
                      warmup=0, time_limit=120, backend=backend, progress=progress)
    assert killed and not sweep["cancelled"]
    cells = sweep["cells"]
    assert len(cells) == 8                    # the sweep finished
    # Dask runs the killed worker's cell again elsewhere; past its retries that cell is lost, never failed
    assert all(c["status"] in ("ok", "lost") or c["reason"].startswith(CRASHED) for c in cells)
    assert sum(c["status"] == "ok" for c in cells) >= 7   # at most the cell it was running is lost
    assert any(c["status"] == "ok" and c["worker"] != killed[0] for c in cells)


def test_a_sweep_on_the_cluster_and_one_here_give_the_same_statuses(backend, faulty):
    """The one worker pool behind both backends: a crash, a hang past the time limit and a good
    cell are recorded the same way on a Dask worker and on this machine."""
    grid = {"mode": ["ok", "crash", "hang"]}
    options = {"repeat": 1, "warmup": 0, "time_limit": 5.0, "target": "cpu"}
    remote = run_sweep(tiny_graph(), "faulty", "cpu-serial", grid, backend=backend, **options)
    with LocalBackend(env=worker_env()) as local:
        here = run_sweep(tiny_graph(), "faulty", "cpu-serial", grid, backend=local, **options)

    def statuses(sweep):
        return {c["params"]["mode"]: (c["status"], (c.get("reason") or "").split(":")[0]) for c in sweep["cells"]}

    assert statuses(remote) == statuses(here) == {"ok": ("ok", ""), "crash": ("failed", CRASHED),
                                                  "hang": ("failed", "timed out")}


def test_warming_the_workers_starts_their_processes_before_any_job(backend):
    """``DaskBackend.warm`` (what ``cluster local`` does for its GPU workers) reaches every worker
    through Client.run, waits for each pool's start-up, and the next job runs in the warmed process."""
    from kernels.compute.dask.tasks import warm_state

    backend.client.wait_for_workers(2, timeout=120)       # a worker killed by another test is back
    states = backend.warm("sim", timeout=300)
    assert len(states) == 2
    assert all(s["state"] == "warm" and s["measuring"]["pid"] > 0 and s["compile_ahead"] == 0
               for s in states.values())
    backend.add_graph("tiny", tiny_graph())
    outcome = backend.run(Job("tiny", "sleepy", "cpu-serial", {"seconds": 0.0}, repeat=1, warmup=0))
    assert outcome.ok, outcome.message
    after = backend.client.run(warm_state)
    # the process serving jobs now is the one warmed (a restart would have reset the state)
    assert {a: s["measuring_pid_now"] for a, s in after.items() if a in states} == {
        a: s["measuring"]["pid"] for a, s in states.items()}


def test_cluster_warm_on_a_running_cluster_says_what_it_warmed(cluster, capsys):
    """``graph-kernels cluster ADDRESS --warm``: these CPU workers have no GPU, so nothing is warmed,
    and it says so before the usual listing."""
    assert cli_main(["cluster", cluster.scheduler_address, "--warm"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no worker can run GPU variants: nothing to warm\n") and "2 worker(s)" in out


def test_the_warm_line_counts_the_processes_and_names_a_failure():
    from kernels.cli.cluster import warm_summary

    states = {"a": {"state": "warm", "compile_ahead_warmed": 15}, "b": {"state": "warm", "compile_ahead_warmed": 14},
              "c": {"state": "failed", "message": "the worker process died (exit status 1)"}}
    line = warm_summary(states, 12.34)
    assert line.startswith("workers warm in 12.3 s: 2 of 3 GPU worker(s)") and "(29 in all)" in line
    assert "not warmed: the worker process died (exit status 1)" in line
    assert warm_summary({}, 0.1) == "no worker can run GPU variants: nothing to warm"


def test_one_job_runs_through_the_backend_with_its_output(backend):
    graph = tiny_graph()
    backend.add_graph("tiny", graph)
    outcome = backend.run(Job("tiny", "sleepy", "cpu-serial", {"seconds": 0.0}, repeat=1, warmup=0))
    assert outcome.ok and outcome.record["verified"] and outcome.output is None
    outcome = backend.run(Job("tiny", "sleepy", "cpu-serial", {"seconds": 0.0}, repeat=1, warmup=0,
                              want_output=True))
    assert list(outcome.output) == [1, 2, 0, 1]


def test_a_name_given_to_a_new_graph_runs_on_the_new_graph(backend):
    job = Job("slot", "sleepy", "cpu-serial", {"seconds": 0.0}, repeat=1, warmup=0, want_output=True)
    backend.add_graph("slot", tiny_graph())
    assert list(backend.run(job).output) == [1, 2, 0, 1]
    backend.add_graph("slot", CSRGraph.from_edges(3, [0, 0, 2], [1, 2, 0], directed=True, name="edited"))
    assert list(backend.run(job).output) == [2, 0, 1]


@pytest.mark.parametrize("address, warned", [
    ("tcp://10.1.2.3:8786", True), ("gpu-server.example.org:8786", True), ("tcp://[2001:db8::1]:8786", True),
    ("tls://10.1.2.3:8786", False), ("tcp://127.0.0.1:8786", False), ("localhost:8786", False),
    ("tcp://[::1]:8786", False)])
def test_plain_tcp_off_the_loopback_is_warned_about(address, warned):
    assert (plain_text_warning(address) is not None) == warned


def test_the_plain_text_warning_is_printed_once():
    stream = io.StringIO()
    for _ in range(3):
        warn_plain_text("tcp://192.0.2.7:8786", stream=stream)
    assert stream.getvalue().count("not encrypted and not authenticated") == 1


def test_no_scheduler_at_the_address_is_one_cluster_error():
    with pytest.raises(ClusterError, match="cannot connect to the Dask scheduler at tcp://127.0.0.1:9"):
        DaskBackend("tcp://127.0.0.1:9", connect_timeout=2)


def test_a_tls_address_without_certificates_is_refused_before_connecting(capsys):
    assert cli_main(["cluster", "tls://127.0.0.1:9"]) == 1
    assert "give --tls-ca-file" in capsys.readouterr().err


def test_cluster_local_starts_a_scheduler_with_cpu_workers_and_stops_on_ctrl_c(tmp_path):
    import subprocess

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    # stderr to a file, not a pipe: nothing reads a pipe while the cluster runs, and a full one blocks it
    err = (tmp_path / "stderr.txt").open("w+")
    proc = subprocess.Popen([sys.executable, "-m", "kernels", "cluster", "local", "--gpus", "0", "--workers", "2",
                             "--port", "0"], stdout=subprocess.PIPE, stderr=err, text=True, env=env)
    try:
        line = proc.stdout.readline()
        err.seek(0)
        assert line.startswith("scheduler tcp://127.0.0.1:") and "2 CPU worker(s)" in line, err.read()
        address = line.split()[1].rstrip(":")
        with DaskBackend(address) as b:
            b.client.wait_for_workers(2, timeout=120)
            workers = b.describe()
        assert len(workers) == 2 and all(w.nthreads == 1 for w in workers)
        proc.send_signal(signal.SIGINT)
        # the process ends once its Nannies closed; its own watchdog ends it 80 s after Ctrl-C at the
        # latest, so waiting far longer than that (a loaded machine) still says what it printed
        try:
            code = proc.wait(timeout=300)
        except subprocess.TimeoutExpired:
            err.seek(0)
            pytest.fail(f"cluster local did not end 300 s after Ctrl-C; it wrote: {err.read()[-2000:]}")
        err.seek(0)
        text = err.read()
        assert code == 0, text
        assert "stopping the cluster" in text
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        err.close()


def test_dynamic_command_runs_the_experiment_on_a_worker(cluster, tmp_path, capsys):
    records = tmp_path / "rounds.jsonl"
    code = cli_main(["dynamic", str(ROOT / "tests" / "data" / "karate.mtx"), "--algorithm", "bfs", "--batch", "0.05",
                     "--rounds", "1", "--page-size", "16", "--param", "block=32",
                     "--scheduler", cluster.scheduler_address, "--records", str(records), "--time-limit", "300"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "dynamic experiment on tcp://127.0.0.1:" in captured.out and "[sim]" in captured.out
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert len(lines) == 2 and all(r["dynamic"]["verified"] and r["static"]["verified"] for r in lines)


class _StuckCluster:
    """A cluster whose close never returns by itself (a Nanny that does not answer)."""

    def __init__(self):
        import threading

        self.release = threading.Event()
        self.closed_with = None

    def close(self, timeout=None):
        self.closed_with = timeout
        self.release.wait(30)


def test_a_cluster_that_does_not_close_ends_the_process_after_the_deadline(monkeypatch, capsys):
    # Ctrl-C on `cluster local` must end the process even when the close hangs: the watchdog
    # says so in one line and exits with status 1 (here recorded instead of exiting).
    from kernels.cli import cluster as cluster_cli

    monkeypatch.setattr(cluster_cli, "EXIT_MARGIN_S", 0.2)
    stuck, exits = _StuckCluster(), []

    def exit_now(code):
        exits.append(code)
        stuck.release.set()                  # lets the hung close return, as the process's end would

    cluster_cli.close_cluster(stuck, timeout=0.1, exit_now=exit_now)
    assert exits == [1] and stuck.closed_with == 0.1
    err = capsys.readouterr().err
    assert "the cluster did not stop within" in err and "stopped without waiting for the workers" in err


def test_a_cluster_that_closes_cancels_its_watchdog(monkeypatch):
    import time as _time

    from kernels.cli import cluster as cluster_cli

    monkeypatch.setattr(cluster_cli, "EXIT_MARGIN_S", 0.1)
    done, exits = _StuckCluster(), []
    done.release.set()                       # closes at once
    cluster_cli.close_cluster(done, timeout=0.05, exit_now=exits.append)
    _time.sleep(0.5)                         # well past the deadline: a cancelled watchdog stays silent
    assert exits == []


def test_a_gpu_batch_runs_in_the_order_it_was_given(sleepy, monkeypatch):
    """GPU jobs carry the ``GPU`` resource; a Dask worker runs such tasks last-submitted first
    (after the first) unless they have priorities, which put the measuring process at the far end
    of the grid from the compile-ahead processes. The batch gives them in order: outcomes of a
    one-thread worker arrive in the order the jobs were given."""
    from distributed import LocalCluster

    # no compile-ahead processes (they would open real CUDA contexts on a machine with a GPU), no cache
    env = {**worker_env(), "GRAPH_KERNELS_COMPILE_AHEAD": "0", "GRAPH_KERNELS_KERNEL_CACHE": "off"}
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
                      env=env, resources={"GPU": 1}) as cl, DaskBackend(cl.scheduler_address) as b:
        b.client.wait_for_workers(1, timeout=120)
        worker = next(iter(b.client.scheduler_info()["workers"]))
        monkeypatch.setattr(DaskBackend, "choose_workers", lambda self, target: ([worker], []))
        b.add_graph("tiny", tiny_graph())
        # the sleepy family has no cuda target: each job ends at once with that error, in the order run
        jobs = [Job("tiny", "sleepy", "cpu-serial", {"seconds": 0.001 * i}, target="cuda", repeat=1, warmup=0)
                for i in range(8)]
        order = [round(o.job.params["seconds"] * 1000) for o in b.run_many(jobs)]
        assert order == list(range(8))
        again = [Job("tiny", "sleepy", "cpu-serial", {"seconds": 0.001 * i}, target="cuda", repeat=1, warmup=0)
                 for i in range(8, 12)]
        assert [round(o.job.params["seconds"] * 1000) for o in b.run_many(again)] == list(range(8, 12))
