"""Compiling ahead (kernels/compute/precompile.py) and the one worker pool (kernels/compute/pool.py),
without a GPU: cells are compiled once per host across pools, in sweep order; a cell the measuring
process reaches while still queued is taken back, one being compiled is waited for; a claim whose
process died is taken over; the pool restarts a crashed process and only that cell fails."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from kernels.compute import precompile
from kernels.compute.backend import CRASHED, Job
from kernels.compute.local_backend import LocalBackend
from kernels.compute.pool import WorkerPool
from kernels.compute.precompile import Claims, CompileAhead, cell_key
from kernels.graph.csr import CSRGraph


def tiny() -> CSRGraph:
    return CSRGraph.from_edges(4, [0, 1, 1, 3], [1, 0, 2, 3], directed=True, name="tiny")


class FakeChild:
    """Stands in for a compile-ahead worker process: records what it was asked to compile."""

    log: list = []
    lock = threading.Lock()
    delay = 0.05
    fail_start = 0               # this many of the next processes fail their start-up

    def __init__(self, target=None, env=None):
        self.graphs = {}

    def warm(self):
        from kernels.compute.local.client import WorkerDied

        time.sleep(self.delay)
        with self.lock:
            if FakeChild.fail_start > 0:
                FakeChild.fail_start -= 1
                raise WorkerDied("the worker process died (exit status 1) while starting")
        return {"pid": id(self), "import_s": 0.0, "context_s": self.delay}

    def add_graph(self, key, graph):
        self.graphs[key] = graph

    def compile(self, key, family, variant, params, *, target, seed, timeout):
        time.sleep(self.delay)
        with self.lock:
            FakeChild.log.append((params["cell"], id(self)))
        return {"compiled": 2, "compile_s": self.delay}

    def ask_to_quit(self):
        pass

    def finish_closing(self):
        pass


@pytest.fixture
def fake_children(monkeypatch):
    import kernels.compute.local.client as client_module

    FakeChild.log = []
    FakeChild.fail_start = 0
    monkeypatch.setattr(client_module, "WorkerClient", FakeChild)
    yield FakeChild


def jobs(n: int) -> list[Job]:
    return [Job("g", "spmv", "gpu-tunable", {"cell": i}, target="cuda") for i in range(n)]


def pool_with_graph() -> WorkerPool:
    pool = WorkerPool()
    pool.add_graph("g", tiny())
    return pool


def wait_for(condition, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert condition()


def test_two_pools_of_a_host_compile_each_cell_once_in_sweep_order(tmp_path, fake_children):
    pools = [pool_with_graph(), pool_with_graph()]
    aheads = [CompileAhead(pool, 3, tmp_path) for pool in pools]
    for ahead in aheads:
        ahead.submit(jobs(20))
    wait_for(lambda: all(not a.queue for a in aheads) and len(FakeChild.log) >= 20)
    time.sleep(0.2)
    compiled = [cell for cell, _ in FakeChild.log]
    assert sorted(compiled) == list(range(20))                   # once each, across both pools
    assert set(compiled[:6]) <= set(range(12))                   # taken in the order the sweep runs
    assert sum(a.stats.cells for a in aheads) == 20
    for ahead in aheads:
        ahead.close()


def test_the_measuring_process_takes_back_a_queued_cell_and_waits_for_one_in_progress(tmp_path, fake_children):
    FakeChild.delay = 0.5
    pool = pool_with_graph()
    ahead = CompileAhead(pool, 1, tmp_path)
    cells = jobs(5)
    ahead.submit(cells)
    wait_for(lambda: ahead.claims.in_progress(cell_key(cells[0], tiny().fingerprint)))
    started = time.monotonic()
    ahead.before_run(cells[0])                                   # being compiled: wait for it
    assert time.monotonic() - started > 0.2 and ahead.claims.done(cell_key(cells[0], tiny().fingerprint))
    ahead.before_run(cells[4])                                   # still queued: the measuring process compiles it
    assert ahead.stats.taken_back == 1 and cells[4] not in ahead.queue
    ahead.close()
    FakeChild.delay = 0.05


def test_warming_starts_every_process_first_and_says_which_failed(tmp_path, fake_children):
    """A warmed pool's processes did their start-up (imports, CUDA context) before any cell: warm()
    waits for all of them, counts those that failed, and the rest still compile the sweep."""
    pool = pool_with_graph()
    fake_children.fail_start = 1
    ahead = CompileAhead(pool, 3, tmp_path)
    assert ahead.warm(timeout=60) is False             # one of three failed its start-up
    assert ahead.stats.warmed == 2 and "start-up" in ahead.stats.errors[0]
    assert ahead.stats.warm_s > 0 and fake_children.log == []       # nothing compiled yet
    ahead.submit(jobs(6))
    wait_for(lambda: len(fake_children.log) >= 6)
    assert sorted(cell for cell, _ in fake_children.log) == list(range(6))
    assert ahead.warm(timeout=5) is False and ahead.stats.warmed == 2        # asked again: no new processes
    ahead.close()
    fake_children.fail_start = 0
    again = CompileAhead(pool, 2, tmp_path / "b")
    assert again.warm(timeout=60) is True and again.stats.to_json()["warmed"] == 2
    again.close()


def test_a_warmed_pool_runs_its_jobs_in_the_process_it_warmed():
    """WorkerPool.warm starts the measuring process and its start-up; the next job runs there
    (the simulator's: without a GPU no compile-ahead process is started)."""
    pool = WorkerPool()
    try:
        report = pool.warm("sim", timeout=300)
        assert report["compile_ahead"] == 0 and report["measuring"]["pid"] > 0
        pool.add_graph("g", tiny())
        outcome = pool.run(Job("g", "spmv", "scipy", {}, target="cpu", repeat=1, warmup=0))
        assert outcome.ok, outcome.message
        assert pool.worker("sim").pid == report["measuring"]["pid"]
        pool.warm_in_background("sim")
        deadline = time.monotonic() + 120
        while pool.warm_state()["state"] == "warming" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pool.warm_state()["state"] == "warm"
        assert pool.warm_state()["measuring"]["pid"] == report["measuring"]["pid"]
    finally:
        pool.close()


def test_a_claim_of_a_process_that_died_is_taken_over(tmp_path):
    claims = Claims(tmp_path)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (claims.root / "abc.claim").write_text(f"{os.uname().nodename} {int(dead.stdout)}\n")
    assert not claims.in_progress("abc")
    assert claims.claim("abc") and claims.in_progress("abc") and not claims.claim("abc")
    claims.finish("abc")
    assert claims.done("abc") and not claims.claim("abc")


def test_compiling_ahead_is_off_on_small_machines_and_by_the_environment(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.delenv(precompile.COMPILE_AHEAD_ENV, raising=False)
    assert precompile.default_processes(1) == 0
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    # warmed before the sweeps: a GPU's share of the cores, at most 15; started by a sweep: 16 a host
    assert precompile.default_processes(4, warmed=True) == 15 and precompile.default_processes(1, warmed=True) == 15
    assert precompile.default_processes(4) == 4 and precompile.default_processes(1) == 16
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert precompile.default_processes(1, warmed=True) == 15 and precompile.default_processes(2, warmed=True) == 7
    assert precompile.default_processes(1) == 15
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert precompile.default_processes(1) == 7 == precompile.default_processes(1, warmed=True)
    monkeypatch.setenv(precompile.COMPILE_AHEAD_ENV, "0")
    assert precompile.default_processes(4) == 0
    monkeypatch.setenv(precompile.COMPILE_AHEAD_ENV, "3")
    assert precompile.default_processes(4) == 3


@pytest.fixture
def faulty():
    import importlib

    from kernels.algorithms import registry

    module = importlib.import_module("tests.plugins.faulty_family")
    yield module.FAMILY
    registry._FAMILIES.pop("faulty", None)
    sys.modules.pop("tests.plugins.faulty_family", None)


@pytest.mark.slow
def test_the_pool_restarts_a_crashed_process_and_only_its_cell_fails(faulty):
    """A sweep whose first cell kills its worker process: that cell is `crashed`, the next runs in
    a restarted process, and the pool keeps serving."""
    from kernels.compute.sweep import run_sweep

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
           "GRAPH_KERNELS_PLUGINS": "tests.plugins.faulty_family"}
    with LocalBackend(env=env) as backend:
        pids = []
        sweep = run_sweep(tiny(), "faulty", "cpu-serial", {"mode": ["crash", "ok"]}, repeat=1, warmup=0,
                          backend=backend, target="cpu",
                          progress=lambda d, t, c: pids.append(backend.client_for("cpu").pid))
        statuses = {c["params"]["mode"]: (c["status"], c.get("reason", "")) for c in sweep["cells"]}
        assert statuses["ok"][0] == "ok"
        assert statuses["crash"][0] == "failed" and statuses["crash"][1].startswith(CRASHED)
        assert len(set(pids)) == 2 and backend.client_for("cpu").alive     # one restart, still serving


def test_a_sweep_file_says_where_its_time_went(tmp_path, faulty, capsys, monkeypatch):
    """The end line's ``time``: wall clock, cells and their rate, timed launches, compiling and the
    kernel cache's hits; the command prints it in one line."""
    from kernels.cli import main as cli_main
    from kernels.results import load_sweep

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("GRAPH_KERNELS_PLUGINS", "tests.plugins.faulty_family")
    out = tmp_path / "s.json"
    graph = tmp_path / "g.mtx"
    graph.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n")
    assert cli_main(["sweep", "faulty", "cpu-serial", str(graph), "--grid", "mode=ok", "--repeat", "3",
                     "--out", str(out), "-q"]) == 0
    assert "time: " in capsys.readouterr().out
    t = load_sweep(out)["time"]
    assert t["cells"] == 1 and t["wall_s"] > 0 and t["cells_per_s"] > 0
    assert t["timed_gpu_s"] > 0 and t["compiled_here"] == 0 and t["cache_hits"] == 0


def test_a_dask_worker_queues_the_batch_with_the_graphs_it_holds(monkeypatch):
    """``compile_ahead`` runs in each GPU worker through ``Client.run``: it finds the scattered graph
    in the worker's data and hands the cells to that worker's pool."""
    from kernels.compute.dask import tasks

    queued = []

    class FakeWorker:
        address = "tcp://127.0.0.1:1"
        data = {"graph-kernels-abc": tiny()}
        plugins = {}

    monkeypatch.setattr(WorkerPool, "compile_ahead", lambda self, jobs: queued.extend(jobs))
    cells = jobs(3) + [Job("missing", "spmv", "gpu-tunable", {"cell": 9}, target="cuda")]
    assert tasks.compile_ahead(cells, {"g": "graph-kernels-abc"}, dask_worker=FakeWorker()) == 3
    wait_for(lambda: len(queued) == 3)          # handed over in a thread, off the worker's event loop
    assert [j.params["cell"] for j in queued] == [0, 1, 2]
    tasks._fallback.clear()


def test_the_measuring_process_claims_a_cell_nobody_took_and_nobody_compiles_it_twice(tmp_path, fake_children):
    """The first cells run before the compile-ahead processes have started: the measuring process
    claims them, compiles them itself, and marks them done; the processes skip them."""
    pool = pool_with_graph()
    ahead = CompileAhead(pool, 2, tmp_path)
    cells = jobs(4)
    claim = ahead.before_run(cells[0])           # nothing queued yet: the measuring process takes it
    assert claim is not None and ahead.claims.in_progress(claim)
    ahead.submit(cells)
    wait_for(lambda: len(FakeChild.log) >= 3)
    ahead.after_run(claim)
    assert ahead.claims.done(claim)
    time.sleep(0.2)
    assert sorted(cell for cell, _ in FakeChild.log) == [1, 2, 3]
    ahead.close()


def test_compile_ahead_processes_run_at_a_lower_priority(monkeypatch):
    from kernels.compute.local import launch

    seen = []
    monkeypatch.setenv(launch.NICE_ENV, "10")
    monkeypatch.setattr(os, "nice", lambda n: seen.append(n))
    launch.lower_priority()
    assert seen == [10] and launch.NICE_ENV not in os.environ


def test_a_cell_finished_between_the_first_look_and_the_claim_is_not_claimed_again(tmp_path, monkeypatch):
    # process A marks the cell done, then removes its claim; B looked (not done) before A's mark
    # and creates its claim after A's removal: B must see the mark and step back
    from kernels.compute.precompile import Claims

    claims = Claims(tmp_path)
    looks = iter([False, True])
    monkeypatch.setattr(claims, "done", lambda key: next(looks))
    assert not claims.claim("cell")
    assert not (tmp_path / "claims" / "cell.claim").exists()


def test_a_dask_sweeps_compile_ahead_counts_are_the_batchs_summed_over_the_workers():
    from kernels.compute.dask.backend import merge_ahead_stats

    before = {"a": {"cells": 10, "compile_s": 5.0, "processes": 15, "warmed": 15, "warm_s": 3.0}, "b": None}
    now = {"a": {"cells": 25, "compile_s": 12.5, "processes": 15, "warmed": 15, "warm_s": 3.0},
           "b": {"cells": 7, "compile_s": 2.25, "processes": 15, "warmed": 14, "warm_s": 4.5}, "c": None}
    assert merge_ahead_stats(before, now) == {"cells": 22, "compile_s": 9.75, "processes": 30, "warmed": 29,
                                              "warm_s": 4.5}
    assert merge_ahead_stats({}, {"a": None}) is None


def test_warming_in_the_background_never_waits_for_a_running_job():
    """On a Dask worker the warm hint runs on the event loop, and a running job holds the pool's lock
    while its cancel checks need that loop: asking to warm must return at once, and the warm
    goes on once the job is done."""
    pool = WorkerPool()
    held, release = threading.Event(), threading.Event()

    def job():
        with pool.lock:
            held.set()
            release.wait(120)

    runner = threading.Thread(target=job)
    runner.start()
    try:
        assert held.wait(60)
        asked = time.monotonic()
        pool.warm_in_background("sim")
        assert time.monotonic() - asked < 60           # a wait would last until release (120 s)
        assert pool.warm_state()["state"] == "warming"
        release.set()
        wait_for(lambda: pool.warm_state()["state"] != "warming", timeout=300)
        assert pool.warm_state()["state"] == "warm"
        pool.restart()
        assert pool.warm_state() is None                # the processes warmed are gone
    finally:
        release.set()
        runner.join()
        pool.close()
