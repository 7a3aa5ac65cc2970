"""Sweeps started in the GUI write their file as they run, and Resume Sweep continues one.

The test plugin family ``sleepy`` (``tests/plugins/sleepy_family.py``) sleeps in each cell, so a
sweep is still running when the test looks at its file or presses Cancel; it runs on the CPU in
a real worker process. Every test waits on signals (no timing assumption beyond "a cell of a
second is not over before the test reacts to the previous one", with seconds of margin).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

import pytest

from explorer.model import commands
from kernels.algorithms import registry
from kernels.results import load_sweep
from tests.conftest import data_path
from tests.gui_support import close_window, docks, make_window
from tests.test_gui_run import JOB_TIMEOUT_MS, ROOT, run_and_wait

pytestmark = pytest.mark.gui
PLUGIN = "tests.plugins.sleepy_family"
CELLS = list(range(6))


@pytest.fixture
def sleepy_window(qtbot, tmp_path, monkeypatch):
    """A karate window whose worker also loads the sleepy plugin family."""
    monkeypatch.setenv(registry.PLUGINS_ENV, PLUGIN)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    importlib.import_module(PLUGIN)                 # registered in this process too (the form reads it)
    w = make_window(qtbot, tmp_path, data_path("karate.mtx"))
    yield w
    close_window(w)
    registry._FAMILIES.pop("sleepy", None)
    sys.modules.pop(PLUGIN, None)


def _start_sweep(run, seconds: float):
    run.choose("sleepy", "cpu-serial", {"seconds": str(seconds)}, target="cpu", repeat=1)
    run.sweep_panel.choose("cell", CELLS)
    task = run.sweep()
    assert task is not None
    return task


def _cell_lines(path) -> int:
    try:
        with open(path, encoding="utf-8") as fh:
            return sum(1 for line in fh if line.strip() and json.loads(line).get("kind") == "cell")
    except (OSError, ValueError):
        return 0


def _statuses(results) -> list:
    return [list(row) for row in results.heatmap.table.status]


def _cancel_after_first_cell(qtbot, run, task) -> None:
    qtbot.waitUntil(lambda: _cell_lines(task.request.out) >= 1, timeout=JOB_TIMEOUT_MS)
    assert task.running              # the file grew while the sweep ran: the next cell takes seconds
    with qtbot.waitSignal(task.done, timeout=JOB_TIMEOUT_MS):
        run.cancel_button.click()
    assert task.state == "cancelled"


def test_a_cancelled_sweep_resumes_only_its_missing_cells_and_ends_as_a_straight_run(qtbot, sleepy_window, tmp_path):
    w = sleepy_window
    run, results = docks(w)
    assert not run.resume_button.isEnabled()
    task = _start_sweep(run, 0.5)
    path = task.request.out
    assert path.startswith(str(tmp_path / "sweeps")) and path.endswith(".json")     # the settings' data folder
    _cancel_after_first_cell(qtbot, run, task)
    assert any(path in m for m in w.log_dock.messages("info"))                      # the log says where
    partial = load_sweep(path)                       # a valid partial file, as the heatmap opens it
    kept = len(partial["cells"])
    assert partial["cancelled"] and 1 <= kept < len(CELLS)
    assert results.resumable_file() == path and run.resume_button.isEnabled()

    run.resume_button.click()
    resumed = run.task
    assert resumed is not task and resumed.request.resume
    assert len(results.sweeps) == 1                  # the same heatmap fills in
    run_and_wait(qtbot, resumed)
    assert resumed.state == "finished", resumed.error
    ran = {c["params"]["cell"] for c in resumed.cells}
    assert ran == set(CELLS) - {c["params"]["cell"] for c in partial["cells"]}      # only the missing ones
    done = load_sweep(path)
    assert not done["cancelled"] and len(done["cells"]) == len(CELLS) and len(done["resumed"]) == 1
    assert not run.resume_button.isEnabled()         # complete: nothing left to resume
    after_resume = _statuses(results)

    straight = run_and_wait(qtbot, _start_sweep(run, 0.5))
    assert straight.state == "finished" and straight.request.out != path
    assert _statuses(results) == after_resume == [["ok"]] * len(CELLS)


def test_resuming_on_an_edited_graph_is_refused_in_words_and_keeps_the_sweep(qtbot, sleepy_window):
    w = sleepy_window
    run, results = docks(w)
    task = _start_sweep(run, 0.5)
    path = task.request.out
    _cancel_after_first_cell(qtbot, run, task)
    before = Path(path).read_text(encoding="utf-8")
    shown = results.current_sweep()
    d = w.current_document()
    w.push_command(commands.add_edge(d, 0, 9))       # another graph: another fingerprint

    resumed = run.resume_sweep()
    assert resumed is not None
    run_and_wait(qtbot, resumed)
    assert resumed.state == "failed"
    assert "cannot resume" in resumed.error and "input fingerprint" in resumed.error
    assert "file is unchanged" in run.error_label.text()
    assert any("cannot resume" in m for m in w.log_dock.messages("error"))
    assert Path(path).read_text(encoding="utf-8") == before                 # nothing lost
    assert results.current_sweep() is shown and run.resume_button.isEnabled()

    d.undo_stack.undo()                              # the sweep's graph again: now it resumes
    resumed = run_and_wait(qtbot, run.resume_sweep())
    assert resumed.state == "finished", resumed.error
    assert len(load_sweep(path)["cells"]) == len(CELLS)


def test_a_killed_sweep_file_from_disk_resumes_with_resume_sweep_from_file(qtbot, sleepy_window, tmp_path):
    w = sleepy_window
    run, results = docks(w)
    full = run_and_wait(qtbot, _start_sweep(run, 0.0))
    assert full.state == "finished"
    straight = _statuses(results)
    # what a kill leaves: the header, two cells, and a third cut short while it was written
    lines = Path(full.request.out).read_text(encoding="utf-8").splitlines(keepends=True)
    killed = tmp_path / "killed.json"
    killed.write_text("".join(lines[:3]) + lines[3][: len(lines[3]) // 2], encoding="utf-8")
    assert len(load_sweep(killed)["cells"]) == 2

    task = run.resume_sweep(str(killed))
    assert task is not None
    assert len(results.sweeps) == 2 and len(results.current_sweep()["cells"]) == 2   # the file's cells at once
    run_and_wait(qtbot, task)
    assert task.state == "finished", task.error
    assert len(task.cells) == len(CELLS) - 2
    assert _statuses(results) == straight
    assert results.current_sweep_file() == str(killed)


def test_a_file_that_cannot_be_continued_is_refused_before_anything_runs(qtbot, sleepy_window, tmp_path):
    w = sleepy_window
    run, _results = docks(w)
    full = run_and_wait(qtbot, _start_sweep(run, 0.0))
    refusals = []
    run.refused.connect(refusals.append)
    assert run.resume_sweep(full.request.out) is None                     # complete
    assert run.resume_sweep(str(tmp_path / "nowhere.json")) is None       # missing
    exported = tmp_path / "export.json"
    exported.write_text(json.dumps({"not": "a sweep"}), encoding="utf-8")
    assert run.resume_sweep(str(exported)) is None                        # not a sweep file
    assert "nothing to resume" in refusals[0] and "no such file" in refusals[1]
    assert "not a sweep file that cells can be added to" in refusals[2]
    assert not run.client.busy
