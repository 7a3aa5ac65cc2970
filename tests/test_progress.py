"""Progress of long work on the command line (kernels/progress.py): plain throttled lines when
stderr is not a terminal, a tqdm bar with an estimate of the time left on a terminal (a real
pseudo-terminal here), nothing with -q; reading, running and sweeping report through it."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import select
import struct
import termios
import threading
import time

import pytest

import kernels.progress as progress_module
from kernels.cli import main as cli_main
from kernels.progress import Progress

KARATE = os.path.join(os.path.dirname(__file__), "..", "resources", "graphs", "karate.mtx")


def plain(**kw) -> tuple[Progress, io.StringIO]:
    stream = io.StringIO()
    return Progress(stream, tty=False, **{"every_s": 1000.0, "quiet_below_s": 0.0, "min_gap_s": 0.0, **kw}), stream


def test_off_a_terminal_a_task_writes_a_plain_line_every_tenth_and_one_at_the_end():
    progress, stream = plain()
    with progress.task("sweep x/y", total=20, unit="cells") as task:
        for i in range(20):
            task.advance(postfix=f"{i} failed")
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue() and "\x1b" not in stream.getvalue()
    assert len(lines) == 10, lines                    # 10 %, 20 %, ... 90 %, then the final line
    assert lines[0].startswith("sweep x/y: 10% (2/20), ") and "left" in lines[0] and lines[0].endswith("; 1 failed")
    assert lines[-1].startswith("sweep x/y: 100% (20/20), done in ") and lines[-1].endswith("; 19 failed")


def test_fast_steps_make_one_line_not_one_each():
    progress, stream = plain(min_gap_s=3600.0)
    with progress.task("run a/b", total=10) as task:
        for _ in range(10):
            task.advance()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("run a/b: 100% (10/10), done in "), lines


def test_a_plain_task_also_writes_when_its_interval_has_passed():
    progress, stream = plain(every_s=0.0, every_fraction=1.0)
    with progress.task("reading", total=1000, unit="B") as task:
        task.update(completed=1)
        task.update(completed=2)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and "(1 B of 1000 B)" in lines[0] and "done in" in lines[-1], lines


def test_short_work_shows_nothing():
    progress, stream = plain(quiet_below_s=3600.0)
    with progress.task("run", total=5) as task:
        for _ in range(5):
            task.advance()
    assert stream.getvalue() == ""


def test_a_task_that_raises_says_it_stopped():
    progress, stream = plain()
    with pytest.raises(RuntimeError), progress.task("run", total=4) as task:
        task.advance()
        raise RuntimeError("boom")
    assert "stopped in" in stream.getvalue().splitlines()[-1]


def test_a_ticking_task_without_a_total_shows_its_elapsed_time_while_the_work_blocks():
    progress, stream = plain(every_s=0.05)
    with progress.task("generating rmat", ticking=True):
        time.sleep(0.6)                                # reports nothing itself
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 2 and "elapsed" in lines[0] and "done in" in lines[-1], lines
    assert not [t for t in threading.enumerate() if t.name == "progress-ticker"]


def test_on_a_terminal_a_task_draws_a_bar_with_the_time_left():
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))   # a 120-column terminal
    stream = os.fdopen(terminal, "w")
    chunks = []
    try:
        progress = Progress(stream, quiet_below_s=0.0)
        assert progress.is_terminal
        with progress.task("sweep x/y", total=4, unit="cells") as task:
            for i in range(4):
                task.advance(postfix=f"best {i}")
        stream.flush()
        while True:                                    # everything written so far, without blocking
            if not select.select([controller], [], [], 0.2)[0]:
                break
            chunks.append(os.read(controller, 65536))
    finally:
        stream.close()
        os.close(controller)
    out = b"".join(chunks).decode(errors="replace")
    assert "\r" in out and "sweep x/y" in out and "4/4" in out and "|" in out
    assert "<" in out                                  # tqdm's [elapsed<remaining]
    assert "best 3" in out


def test_disabled_progress_writes_nothing():
    stream = io.StringIO()
    with Progress(stream, enabled=False, tty=False, quiet_below_s=0.0).task("x", total=2) as task:
        task.advance(2)
    assert stream.getvalue() == ""


# ---- the command line -----------------------------------------------------------------------

@pytest.fixture
def eager(monkeypatch):
    """Progress shown even for work this short."""
    import kernels.cli.common as common

    monkeypatch.setattr(progress_module, "QUIET_BELOW_S", 0.0)
    monkeypatch.setattr(common, "READ_PROGRESS_MIN_BYTES", 0)


def test_run_and_reading_report_progress_in_plain_lines_off_a_terminal(eager, capsys):
    assert cli_main(["run", "spmv", "cpu-serial", KARATE, "--repeat", "3", "--warmup", "1"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert any(line.startswith("reading karate.mtx: 100% (") and "done in" in line for line in err), err
    final = [line for line in err if line.startswith("spmv/cpu-serial: ")][-1]
    assert final.startswith("spmv/cpu-serial: 100% (8/8), done in ") and final.endswith("; done"), err


def test_minus_q_silences_progress_and_keeps_the_result(eager, capsys):
    assert cli_main(["-q", "run", "spmv", "cpu-serial", KARATE, "--repeat", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "verified  yes" in captured.out
    assert cli_main(["run", "spmv", "cpu-serial", KARATE, "--repeat", "1", "--quiet"]) == 0   # after the command too
    assert capsys.readouterr().err == ""


@pytest.mark.timeout(300)
def test_sweep_progress_counts_cells_failures_and_the_best_so_far(eager, capsys, tmp_path):
    out = tmp_path / "s.json"
    assert cli_main(["sweep", "spmv", "cpu-serial", KARATE, "--grid", "dtype=fp64,fp32", "--repeat", "1",
                     "--warmup", "0", "--out", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    lines = [line for line in err if line.startswith("sweep spmv/cpu-serial: ")]
    assert lines[-1].startswith("sweep spmv/cpu-serial: 100% (2/2), done in "), err
    assert "0 failed, best dtype=" in lines[-1] and " ms" in lines[-1]
    assert not any(line.startswith("graph-kernels: info: [") for line in err)   # per-cell lines need -v
