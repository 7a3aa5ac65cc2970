"""Arguments a user can get wrong are refused in one line that says what is allowed; inputs at the
edges (an edgeless METIS file, a matrix with NaN entries, a misspelt plug-in) work or are said."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from kernels.algorithms.registry import get_family
from kernels.cli import main as cli_main
from kernels.errors import ParameterError
from kernels.graph.csr import CSRGraph
from kernels.run.runner import run_variant
from tests.conftest import data_path
from tests.process_helpers import wait_until_gone

ROOT = Path(__file__).resolve().parent.parent
KARATE = str(data_path("karate.mtx"))


def env_with_root(**extra) -> dict:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **extra}


BAD_ARGUMENTS = [
    (["run", "spmv", "cpu-serial", KARATE, "--repeat", "0"], "--repeat", "an integer >= 1"),
    (["run", "spmv", "cpu-serial", KARATE, "--repeat", "-3"], "--repeat", "an integer >= 1"),
    (["run", "spmv", "cpu-serial", KARATE, "--warmup", "-5"], "--warmup", "an integer >= 0"),
    (["sweep", "spmv", "cpu-serial", KARATE, "--grid", "dtype=", "--out", "s.json", "--repeat", "0"], "--repeat",
     "an integer >= 1"),
    (["sweep", "spmv", "cpu-serial", KARATE, "--grid", "dtype=", "--out", "s.json", "--time-limit", "nan"],
     "--time-limit", "a finite number of seconds > 0"),
    (["sweep", "spmv", "cpu-serial", KARATE, "--grid", "dtype=", "--out", "s.json", "--time-limit", "inf"],
     "--time-limit", "a finite number of seconds > 0"),
    (["sweep", "spmv", "cpu-serial", KARATE, "--grid", "dtype=", "--out", "s.json", "--time-limit", "0"],
     "--time-limit", "a finite number of seconds > 0"),
    (["sweep", "spmv", "cpu-serial", KARATE, "--grid", "dtype=", "--out", "s.json", "--time-limit", "-1"],
     "--time-limit", "a finite number of seconds > 0"),
]


@pytest.mark.parametrize(("argv", "option", "allowed"), BAD_ARGUMENTS,
                         ids=[" ".join(a[:1] + a[-2:]) for a, _, _ in BAD_ARGUMENTS])
def test_a_bad_argument_is_refused_in_one_line_saying_what_is_allowed(capsys, tmp_path, monkeypatch, argv, option,
                                                                      allowed):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        cli_main(argv)
    err = capsys.readouterr().err
    assert stopped.value.code == 2
    assert err.count("\n") == 1 and f"argument {option}: invalid value" in err and allowed in err
    assert not (tmp_path / "s.json").exists()


@pytest.mark.parametrize("size", ["4", "100000", "1000"])
def test_info_refuses_a_page_size_it_cannot_build_in_one_line(capsys, size):
    assert cli_main(["info", KARATE, "--page-size", size]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"invalid value {size} for parameter '--page-size'" in err
    assert "a multiple of 16" in err


def test_repetitions_and_time_limits_are_checked_by_the_library_too():
    from kernels.compute.sweep import run_sweep

    g = CSRGraph.from_edges(2, [0], [1], directed=True)
    for repeat, warmup in ((0, 1), (-3, 1), (1, -5), (True, 0)):
        with pytest.raises(ParameterError, match="repeat|warmup"):
            run_variant(g, "spmv", "cpu-serial", repeat=repeat, warmup=warmup)
    for limit in (math.nan, math.inf, 0, -1.0):
        with pytest.raises(ParameterError, match="time_limit"):
            run_sweep(g, "spmv", "cpu-serial", {"dtype": ["fp64"]}, time_limit=limit)


def test_a_metis_file_with_no_edges_reads_as_an_edgeless_graph(tmp_path, capsys):
    from kernels.graph.io import read_graph

    path = tmp_path / "isolated.graph"
    path.write_text("3 0\n\n\n\n")
    g = read_graph(str(path))
    assert (g.n_rows, g.nnz) == (3, 0)
    assert cli_main(["info", str(path)]) == 0
    assert "vertices        3" in capsys.readouterr().out


def test_a_misspelt_plugin_is_said_in_one_line_and_everything_else_loads():
    env = env_with_root(GRAPH_KERNELS_PLUGINS="nosuchmodule,tests.plugins.faulty_family")
    out = subprocess.run([sys.executable, "-m", "kernels", "algorithms"], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0
    assert out.stderr.count("\n") == 1 and "nosuchmodule" in out.stderr and "Traceback" not in out.stderr
    families = [line.split(":")[0] for line in out.stdout.splitlines() if line and not line.startswith(" ")]
    assert {"spmv", "triangles", "apsp", "kclique", "bfs", "sssp", "faulty"} <= set(families)


def nan_matrix() -> CSRGraph:
    return CSRGraph.from_edges(4, [0, 1, 2, 3, 3], [1, 2, 3, 0, 1], weights=[1.0, math.nan, 2.0, math.inf, 1.0],
                               directed=True, name="nan")


@pytest.mark.parametrize(("variant", "params", "target"), [("cpu-serial", {}, None), ("cpu-parallel", {}, None),
                                                           ("gpu-tunable", {"wg": 4, "rows": 2}, "sim")])
def test_spmv_on_a_matrix_with_nan_entries_verifies(variant, params, target, tmp_path):
    from kernels.results import append_record, read_records

    rec = run_variant(nan_matrix(), "spmv", variant, params, target=target, repeat=1, warmup=0).record
    assert rec["verified"], rec["verification"]["detail"]
    append_record(tmp_path / "r.jsonl", rec)                    # and the record opens again
    assert read_records(tmp_path / "r.jsonl")[0]["verified"]


def test_spmv_verification_still_catches_a_nan_in_the_wrong_row():
    fam = get_family("spmv")
    graph = nan_matrix()
    params = fam.resolve_params(fam.variant("cpu-serial"), {})
    problem = fam.prepare(graph, params, 0)
    ref = fam.reference(problem, params)
    good = ref["y"].copy()
    assert fam.verify(good, ref, problem, params).ok
    for row, value in ((0, math.nan), (1, 1.0), (3, -math.inf), (3, math.nan)):
        wrong = good.copy()
        wrong[row] = value
        assert not fam.verify(wrong, ref, problem, params).ok, (row, value)
    assert np.isnan(ref["y"][1]) and np.isinf(ref["y"][3])


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(c) for c in text]
    return found


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds the worker through /proc (Linux)")
def test_a_sweep_killed_by_a_signal_takes_its_worker_with_it(tmp_path):
    sweep = subprocess.Popen([sys.executable, "-m", "kernels", "sweep", "faulty", "cpu-serial", KARATE,
                              "--grid", "mode=hang", "--time-limit", "600", "--out", str(tmp_path / "s.json"),
                              "--repeat", "1", "--warmup", "0"],
                             env=env_with_root(GRAPH_KERNELS_PLUGINS="tests.plugins.faulty_family"),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        workers: list[int] = []
        while not workers and time.monotonic() < deadline and sweep.poll() is None:
            time.sleep(0.2)
            workers = _children(sweep.pid)
        assert workers, "the sweep started no worker"
        time.sleep(1.0)                                   # the worker is inside the hanging cell now
        sweep.send_signal(signal.SIGKILL)
        sweep.wait(timeout=30)
        assert all(wait_until_gone(w) for w in workers), f"worker(s) {workers} outlived the killed sweep"
    finally:
        if sweep.poll() is None:
            sweep.kill()
            sweep.wait()
