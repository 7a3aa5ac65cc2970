"""Sweeps saved as they run, and resumed: a sweep killed at random moments and resumed yields the
same cells as one that ran straight through; ``--resume`` runs only missing cells and refuses,
in one line naming the difference, a file of another input, variant, grid, fixed parameters,
target, device or strategy."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernels.cli import main as cli_main
from kernels.compute.resume import ResumeRefused
from kernels.compute.sweep import run_sweep
from kernels.graph.csr import CSRGraph
from kernels.results import load_sweep
from kernels.results.records import Strategy
from tests.plugins.synthetic_family import synthetic_time
from tests.sweep_helpers import PLUGIN, FakeBackend, load_synthetic, tiny_graph, unload_synthetic

ROOT = Path(__file__).resolve().parents[1]
GRID = {"a": [5, 6, 7, 8, 9], "b": [0, 3, 6, 9]}
VALID = sum(1 for a in GRID["a"] for b in GRID["b"] if a + b <= 14)


@pytest.fixture(autouse=True)
def synthetic():
    yield load_synthetic()
    unload_synthetic()


def sweep(out, backend=None, graph=None, grid=None, resume=True, **kw):
    return run_sweep(graph or tiny_graph(), "synthetic", "cpu-serial", grid or GRID, target="cpu", repeat=1,
                     warmup=0, backend=backend or FakeBackend(synthetic_time), out=out, resume=resume, **kw)


def statuses(s: dict) -> dict:
    return {(c["params"]["a"], c["params"]["b"]): c["status"] for c in s["cells"]}


def test_resume_runs_only_the_cells_the_file_lacks(tmp_path):
    out = tmp_path / "s.json"
    straight = sweep(out, resume=False)
    lines = out.read_bytes().split(b"\n")
    out.write_bytes(b"\n".join(lines[:8]) + b"\n" + lines[8][:30])      # killed while writing a line
    partial = load_sweep(out)
    assert partial["interrupted"] and len(partial["cells"]) == 7
    backend = FakeBackend(synthetic_time)
    resumed = sweep(out, backend=backend)
    done_before = {(c["params"]["a"], c["params"]["b"]) for c in partial["cells"]}
    assert {(p["a"], p["b"]) for p in backend.ran}.isdisjoint(done_before)
    assert statuses(resumed) == statuses(straight) and not resumed["interrupted"]
    reloaded = load_sweep(out)
    assert statuses(reloaded) == statuses(straight) and len(reloaded["resumed"]) == 1
    assert reloaded["best"]["params"] == straight["best"]["params"]


def test_resuming_a_finished_sweep_runs_nothing(tmp_path):
    out = tmp_path / "s.json"
    sweep(out, resume=False)
    backend = FakeBackend(synthetic_time)
    again = sweep(out, backend=backend)
    assert backend.ran == [] and len(again["cells"]) == 20 and again["stopped"] == "complete"


def test_resume_without_a_file_starts_one(tmp_path):
    out = tmp_path / "new.json"
    assert len(sweep(out)["cells"]) == 20 and load_sweep(out)["resumed"] == []


@pytest.mark.parametrize("change, named", [
    (dict(graph=CSRGraph.from_edges(3, [0, 1], [1, 2], directed=True, name="other")), "input fingerprint"),
    (dict(grid={"a": [5, 6], "b": [0, 3, 6, 9]}), "grid"),
    (dict(grid={"b": [0, 3, 6, 9], "a": [5, 6, 7, 8, 9]}), "grid"),
    (dict(fixed={"seconds": 0.5}), "fixed parameters"),
    (dict(backend=FakeBackend(synthetic_time, device="Another GPU")), "device"),
    (dict(strategy=Strategy("random", seed=1)), "strategy"),
])
def test_resume_refuses_a_file_of_another_sweep_naming_the_difference(tmp_path, change, named):
    out = tmp_path / "s.json"
    sweep(out, resume=False)
    before = out.read_bytes()
    with pytest.raises(ResumeRefused, match=f"its {named} is") as info:
        sweep(out, **change)
    assert "\n" not in str(info.value) and out.read_bytes() == before


# ---- whether a file can be continued here, and how (the decision Resume Sweep shows) -------------
def plan(path, *, why=lambda var: None, local=("cpu",), cluster=(), **kw):
    from kernels.algorithms.registry import families
    from kernels.compute.resume import plan_resume

    return plan_resume(path, families(), why_unavailable=why,
                       offered=lambda var: {"local": list(local), "cluster": list(cluster)},
                       repeat=kw.get("repeat", 9), time_limit=kw.get("time_limit", 99.0))


def cut_short(out: Path, cells: int = 7) -> None:
    lines = out.read_bytes().split(b"\n")
    out.write_bytes(b"\n".join(lines[:cells + 1]) + b"\n")


def test_a_sweep_cut_short_is_continued_as_it_was_measured(tmp_path):
    out = tmp_path / "s.json"
    sweep(out, resume=False)
    cut_short(out)
    p = plan(out)
    assert (p.family, p.variant, p.target, p.place) == ("synthetic", "cpu-serial", "cpu", "local")
    assert p.grid == GRID and p.repeat == 1 and p.warmup == 0 and p.path == str(out)
    assert p.launch == load_sweep(out).get("launch", "direct") and len(p.previous["cells"]) == 7


def test_a_sweep_that_ran_on_a_cluster_continues_there_first(tmp_path):
    out = tmp_path / "s.json"
    sweep(out, resume=False)
    cut_short(out)
    lines = out.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    assert plan(out, cluster=("cpu",)).place == "local"
    header["backend"] = {"kind": "dask"}
    out.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    assert plan(out, cluster=("cpu",)).place == "cluster"
    assert plan(out, cluster=()).place == "local"              # the cluster is gone: here


@pytest.mark.parametrize("case, words", [
    ("missing", "no such file"),
    ("not a sweep", "not a sweep file that cells can be added to"),
    ("complete", "nothing to resume"),
    ("unknown variant", "its variant synthetic/cpu-serial is not available here"),
    ("cannot run", "synthetic/cpu-serial cannot run here: no such library"),
    ("no target", "its target cpu is not available here for synthetic/cpu-serial (here: sim, cuda on the cluster)"),
])
def test_a_file_that_cannot_be_continued_here_is_refused_saying_why(tmp_path, case, words):
    out = tmp_path / "s.json"
    sweep(out, resume=False)
    if case != "complete":
        cut_short(out)
    kw = {}
    if case == "missing":
        out = tmp_path / "nowhere.json"
    elif case == "not a sweep":
        out.write_text("{}\n")
    elif case == "unknown variant":
        unload_synthetic()
    elif case == "cannot run":
        kw["why"] = lambda var: "no such library"
    elif case == "no target":
        kw.update(local=("sim",), cluster=("cuda",))
    with pytest.raises(ResumeRefused) as info:
        plan(out, **kw)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_resume_refuses_another_variant_or_target_from_the_command_line(tmp_path, capsys):
    from kernels.graph.io import read_graph

    out = tmp_path / "s.json"
    sweep(out, resume=False, graph=read_graph(str(ROOT / "tests" / "data" / "karate.mtx")))
    lines = out.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    for field, value in (("variant", "cpu-parallel"), ("target", "sim")):
        out.write_text(json.dumps({**header, field: value}) + "\n" + "".join(lines[1:]))
        code = cli_main(["sweep", "synthetic", "cpu-serial", str(ROOT / "tests" / "data" / "karate.mtx"),
                         "--grid", "a=5,6,7,8,9", "--grid", "b=0,3,6,9", "--target", "cpu", "--out", str(out),
                         "--resume", "--quiet"])
        err = capsys.readouterr().err
        assert code == 1 and f"its {field} is" in err and err.count("\n") == 1


# ---- killed for real -------------------------------------------------------------------------

def _command(out: Path, resume: bool) -> list[str]:
    return [sys.executable, "-m", "kernels", "sweep", "synthetic", "cpu-serial",
            str(ROOT / "tests" / "data" / "karate.mtx"), "--grid", "a=5,6,7,8,9", "--grid", "b=0,3,6,9",
            "--param", "seconds=0.03", "--target", "cpu", "--repeat", "1", "--warmup", "0", "--quiet",
            "--out", str(out), *(["--resume"] if resume else [])]


def _env() -> dict:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "GRAPH_KERNELS_PLUGINS": PLUGIN}


def _cell_lines(out: Path) -> int:
    try:
        return out.read_bytes().count(b'"kind": "cell"')
    except OSError:
        return 0


def _run(out: Path, resume: bool, kill_at: tuple[int, float] | None) -> bool:
    """Run the sweep command; with ``kill_at = (cells, delay)``, SIGKILL it (and its worker)
    ``delay`` seconds after the file holds ``cells`` cell lines. True if it was killed."""
    proc = subprocess.Popen(_command(out, resume), env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        if kill_at is None:
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err.decode()[-2000:]
            return False
        cells, delay = kill_at
        deadline = time.monotonic() + 300
        while proc.poll() is None and _cell_lines(out) < cells and time.monotonic() < deadline:
            time.sleep(0.01)
        try:
            proc.wait(timeout=delay)
            return False                                # it finished first
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)         # the sweep and its worker, at once
            proc.wait()
            return True
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.stderr:
            proc.stderr.close()


@pytest.mark.timeout(600)
def test_a_sweep_killed_at_random_moments_and_resumed_yields_the_same_cells(tmp_path):
    straight = tmp_path / "straight.json"
    _run(straight, resume=False, kill_at=None)
    expected = statuses(load_sweep(straight))
    assert len(expected) == 20 and sum(s != "invalid" for s in expected.values()) == VALID

    seed = int(os.environ.get("RESUME_KILL_SEED", time.time_ns() % 10_000))
    rng = random.Random(seed)
    out = tmp_path / "killed.json"
    kills = 0
    for attempt in range(int(os.environ.get("RESUME_KILLS", "3"))):
        # the first run starts the file, later ones resume it; each is killed at a random moment:
        # a random number of cells in (0: while it starts), then up to 0.15 s more (a cell takes >= 0.06 s)
        have = _cell_lines(out)
        target = have + rng.randint(0, max(0, (20 - have) // 2))
        if _run(out, resume=attempt > 0, kill_at=(target, rng.uniform(0.0, 0.15))):
            kills += 1
        if out.exists():
            load_sweep(out)                     # a killed sweep always leaves a file that opens
    _run(out, resume=out.exists(), kill_at=None)
    resumed = load_sweep(out)
    assert kills >= 1, f"seed {seed}: no kill landed"
    assert statuses(resumed) == expected, f"seed {seed}"
    assert not resumed["interrupted"] and resumed["stopped"] == "complete"
    assert all(c["record"]["verified"] == (c["status"] == "ok") for c in resumed["cells"] if "record" in c)
