"""What a GPU server's install (``pip install ".[cuda]"``) and a bare core install can run.

The full proof is ``tools/check_install_paths.py`` (each install path in its own clean virtual
environment, run by ``.ci/run``); these tests keep the pieces honest inside the test environment:
the extras' contents, one-line refusals where the ``cluster`` extra is missing, the GUI-free
self-test, the scheduler's port, and numba's performance warnings turned into notices.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from kernels.cli import main as cli_main
from kernels.errors import ClusterError

ROOT = Path(__file__).resolve().parents[1]
tomllib = pytest.importorskip("tomllib")     # Python 3.11+


def extras() -> tuple[list[str], dict[str, list[str]]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["dependencies"], project["optional-dependencies"]


def names(requirements: list[str]) -> set[str]:
    import re

    return {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].strip().lower() for r in requirements}


def test_the_core_reads_result_files_and_the_server_extra_brings_dask():
    core, optional = extras()
    assert "jsonschema" in names(core)                 # heatmap, export, import and --resume on every install
    assert {"dask", "distributed"} <= names(optional["cluster"])
    for extra in ("cuda", "gui"):
        assert "gpu-graph-explorer[cluster]" in optional[extra], extra
    assert not {"dask", "distributed", "pyside6-essentials", "pyqtgraph"} & names(core)


def run_without_dask(args: list[str]) -> subprocess.CompletedProcess:
    """``graph-kernels ARGS`` in a child whose imports of dask and distributed fail, as on a core install."""
    code = ("import sys; sys.modules['dask'] = None; sys.modules['distributed'] = None\n"
            "from kernels.cli import main; sys.exit(main(sys.argv[1:]))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("args", [
    ["cluster", "local", "--gpus", "0"],
    ["cluster", "tcp://127.0.0.1:9"],
    ["run", "triangles", "cpu-serial", str(ROOT / "tests" / "data" / "karate.mtx"), "--scheduler", "tcp://127.0.0.1:9"],
])
def test_without_the_cluster_extra_a_cluster_command_is_one_sentence_naming_the_extra(args):
    done = run_without_dask(args)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert 'pip install "gpu-graph-explorer[cluster]"' in lines[0]


def test_without_the_cluster_extra_the_rest_of_the_command_line_works(tmp_path):
    out = tmp_path / "s.json"
    karate = str(ROOT / "tests" / "data" / "karate.mtx")
    done = run_without_dask(["sweep", "triangles", "gpu-row-block", karate, "--target", "sim", "--grid",
                             "block_size=32", "--repeat", "1", "--out", str(out), "-q"])
    assert done.returncode == 0, done.stderr
    done = run_without_dask(["heatmap", str(out), "--csv", str(tmp_path / "t.csv")])
    assert done.returncode == 0 and "block_size" in done.stdout, done.stderr


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_graph_kernels_self_test_checks_a_gui_free_install_end_to_end(capsys):
    assert cli_main(["self-test"]) == 0
    out = capsys.readouterr().out
    for check in ("ok    sample graph", "ok    triangles/cpu-serial on cpu", "ok    triangles/gpu-row-block on sim",
                  "ok    sweep file", "ok    cluster (loopback Dask"):
        assert check in out, out
    assert out.strip().endswith("self-test passed")


def test_the_self_test_fails_in_words_when_a_check_fails(monkeypatch, capsys):
    import kernels.selftest as selftest

    monkeypatch.setitem(selftest.KNOWN_TRIANGLES, "karate.mtx", 46)
    assert cli_main(["self-test", "--no-cluster"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  triangles/cpu-serial on cpu: 45 triangles, expected 46" in out
    assert "self-test FAILED: triangles/cpu-serial on cpu" in out


def test_a_taken_scheduler_port_is_named_before_dask_starts():
    from kernels.compute.dask.cluster import check_port_free

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ClusterError, match=f"port {port} on 127.0.0.1 is taken.*--port 0"):
            check_port_free("127.0.0.1", port)
    check_port_free("127.0.0.1", 0)


def test_numba_performance_warnings_become_notices_and_other_warnings_pass_on():
    from numba.core.errors import NumbaPerformanceWarning

    from kernels.run.runner import performance_warnings_as_notices

    notices: list[str] = []
    with warnings.catch_warnings(record=True) as passed:
        warnings.simplefilter("always")
        with performance_warnings_as_notices(notices):
            for _ in range(3):
                warnings.warn(NumbaPerformanceWarning("Grid size 1 will likely result in GPU under-utilization "
                                                      "due to low occupancy."), stacklevel=1)
            warnings.warn("something else", UserWarning, stacklevel=1)
    assert notices == ["numba: Grid size 1 will likely result in GPU under-utilization due to low occupancy."]
    assert [str(w.message) for w in passed] == ["something else"]
