"""The one task object of long work (explorer.tasks.Task): outcomes on the GUI thread."""

import threading

import pytest

pytest.importorskip("pytestqt")

from explorer.compute.task import ComputeTask, JobFailed  # noqa: E402
from explorer.tasks import Task, TaskCancelled  # noqa: E402
from kernels.errors import GraphFormatError  # noqa: E402


def run(qtbot, task):
    with qtbot.waitSignal(task.done, timeout=10_000):
        task.start()
    return task


def test_a_result_and_the_last_progress_arrive_on_the_gui_thread(qtbot):
    seen = []

    def job(control):
        for i in range(1, 101):
            control.progress(i / 100, f"step {i}")
        return 42

    task = Task("count", job)
    task.progressed.connect(lambda f, t: seen.append((f, t, threading.current_thread())))
    run(qtbot, task)
    assert task.state == "finished" and task.result == 42
    assert seen[-1][:2] == (1.0, "step 100")
    assert all(thread is threading.main_thread() for *_, thread in seen)


def test_a_user_error_fails_in_words_and_a_bug_keeps_its_traceback(qtbot):
    user = run(qtbot, Task("read", lambda control: (_ for _ in ()).throw(GraphFormatError("x.mtx: line 3: bad"))))
    assert user.state == "failed" and user.error == "x.mtx: line 3: bad" and user.details.startswith("Traceback")
    bug = run(qtbot, Task("bug", lambda control: 1 / 0))
    assert bug.error == "ZeroDivisionError: division by zero" and "ZeroDivisionError" in bug.details


def test_a_cancelled_job_gives_what_finished(qtbot):
    started = threading.Event()

    def job(control):
        started.set()
        while not control.cancelled():
            control.progress(None)
        raise TaskCancelled(partial=["cell 1"])

    task = Task("sweep", job)
    with qtbot.waitSignal(task.cancelled, timeout=10_000) as blocker:
        task.start()
        assert started.wait(5)
        task.cancel()
    assert blocker.args == [["cell 1"]] and task.state == "cancelled"


def test_a_compute_task_batches_cells_and_says_its_own_failure_without_traceback(qtbot):
    class Request:
        title = "sweep spmv"

    def job(control):
        for i in range(5):
            control.cell({"i": i})
        raise JobFailed("the worker process died", worker_replaced=True)

    task = ComputeTask("sweep", Request(), job)
    run(qtbot, task)
    assert [c["i"] for c in task.cells] == [0, 1, 2, 3, 4]
    assert task.state == "failed" and task.error == "the worker process died" and task.details == ""
