"""The standard logging module in the core (one logger tree under ``kernels``) and on the
command line: -v shows INFO, -vv DEBUG, -q hides warnings; a run's notices are logged too."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

from kernels.cli import main as cli_main
from kernels.graph.csr import CSRGraph
from kernels.log import level_for
from kernels.run.runner import run_variant

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KARATE = os.path.join(ROOT, "resources", "graphs", "karate.mtx")


def env_with_root(**extra) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH", "")) if p)
    env.update(extra)
    return env


def graph_with_a_self_loop() -> CSRGraph:
    # triangles counts on a simple undirected graph: the self-loop is dropped, with a notice
    return CSRGraph.from_edges(3, [0, 1, 2, 1, 2, 0, 0], [1, 2, 0, 0, 1, 2, 0], directed=False, name="loop")


def test_verbosity_levels():
    assert [level_for(v) for v in (-1, 0, 1, 2, 3)] == [logging.ERROR, logging.WARNING, logging.INFO,
                                                         logging.DEBUG, logging.DEBUG]


def test_a_runs_notices_are_logged_as_well_as_recorded(caplog):
    with caplog.at_level(logging.INFO, logger="kernels"):
        rec = run_variant(graph_with_a_self_loop(), "triangles", "cpu-serial", {}, repeat=1, warmup=0).record
    assert rec["notices"], "the input should need a clean-up step"
    logged = [r for r in caplog.records if r.name == "kernels.run.runner" and r.levelno == logging.INFO]
    for notice in rec["notices"]:
        assert any(notice in r.getMessage() and "triangles/cpu-serial" in r.getMessage() for r in logged), notice


def test_minus_v_shows_info_lines_and_the_default_does_not(capsys, tmp_path):
    out = tmp_path / "s.json"
    argv = ["sweep", "spmv", "cpu-serial", KARATE, "--grid", "dtype=fp64", "--repeat", "1", "--warmup", "0",
            "--out", str(out)]
    assert cli_main(argv) == 0
    assert "graph-kernels: info:" not in capsys.readouterr().err
    assert cli_main(["-v", *argv]) == 0
    err = capsys.readouterr().err.splitlines()
    assert any(line.startswith("graph-kernels: info: [1/1] dtype=fp64: ok ") for line in err), err


def test_minus_vv_shows_debug_lines_naming_their_logger(capsys):
    assert cli_main(["info", KARATE, "-vv"]) == 0
    logging.getLogger("kernels.graph.io.api").debug("probe")
    assert "graph-kernels: debug [kernels.graph.io.api]: probe" in capsys.readouterr().err


@pytest.mark.parametrize(("flags", "lines"), [([], 1), (["-q"], 0), (["algorithms", "-q"], 0)])
def test_minus_q_hides_the_warning_of_a_misspelt_plugin(flags, lines):
    argv = flags if "algorithms" in flags else [*flags, "algorithms"]
    out = subprocess.run([sys.executable, "-m", "kernels", *argv], capture_output=True, text=True, timeout=120,
                         env=env_with_root(GRAPH_KERNELS_PLUGINS="nosuchmodule"))
    assert out.returncode == 0 and "spmv:" in out.stdout
    assert out.stderr.count("\n") == lines, out.stderr
    if lines:
        assert out.stderr.startswith("graph-kernels: warning: plug-in 'nosuchmodule'")


def test_errors_still_show_with_minus_q(capsys):
    assert cli_main(["-q", "info", "/nonexistent/graph.mtx"]) == 1
    assert capsys.readouterr().err.startswith("graph-kernels: error: ")
