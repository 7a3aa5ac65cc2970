"""Progress of long work on the command line: a bar with an estimate of the time left on a
terminal, plain throttled lines elsewhere, nothing with ``-q``.

The core never draws anything: reading, generating, running and sweeping take callbacks
(``read_graph(progress=...)``, ``run_variant(progress=...)``, ``run_sweep(progress=...)``) and
the command line turns them into a :class:`Progress` task::

    with progress.task("reading g.mtx", total=size, unit="B") as task:
        task.update(completed=done, postfix="12 % of the file")
        task.advance()

On a terminal the task is a ``tqdm`` bar (rate, elapsed, estimate of the time left, postfix).
When the stream is not a terminal (a log file, a CI job, a pipe) a bar's carriage returns
would be garbage, so a task writes a plain line at most every :data:`PLAIN_EVERY_FRACTION` of
its total (but not twice within :data:`PLAIN_MIN_GAP_S`) or every :data:`PLAIN_EVERY_S`
seconds, and one when it ends; work that ends within
:data:`QUIET_BELOW_S` shows nothing at all. A task without a total (a
generator that gives no progress of its own) shows its elapsed time, refreshed by a ticker
thread while the work blocks. Why tqdm rather than rich: one pure-Python package without
dependencies, so a GPU server's install stays small (docs/architecture.md, Decisions).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator

PLAIN_EVERY_FRACTION = 0.10
PLAIN_EVERY_S = 5.0
# ... but never two lines within this (ten fast steps are one line, not ten)
PLAIN_MIN_GAP_S = 1.0
# work shorter than this shows nothing (a bar or a line for 50 ms of work is noise)
QUIET_BELOW_S = 1.0
TICK_S = 0.5


def _format_seconds(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _format_amount(value: float, unit: str) -> str:
    if unit == "B":
        from kernels.memory import format_bytes

        return format_bytes(value)
    return f"{int(value):,}" + (f" {unit}" if unit else "")


class Task:
    """One piece of work being reported: :meth:`advance` by steps, :meth:`update` to a value and
    a postfix (e.g. "2 failed, best 0.12 ms"). This base class reports nothing (``-q``)."""

    def __init__(self, description: str, total: float | None, unit: str = ""):
        self.description = description
        self.total = total
        self.unit = unit
        self.completed = 0
        self.postfix = ""
        self.started = time.monotonic()

    def advance(self, steps: float = 1, postfix: str | None = None) -> None:
        self.update(completed=self.completed + steps, postfix=postfix)

    def update(self, completed: float | None = None, postfix: str | None = None) -> None:
        if completed is not None:
            self.completed = completed
        if postfix is not None:
            self.postfix = postfix
        self._show()

    def remaining_s(self) -> float | None:
        """Linear estimate of the time left (None until something is done, or without a total)."""
        if not self.total or self.completed <= 0:
            return None
        elapsed = time.monotonic() - self.started
        return elapsed * (self.total - self.completed) / self.completed

    # hooks of the renderings
    def _show(self) -> None:
        pass

    def _tick(self) -> None:
        pass

    def _close(self, failed: bool) -> None:
        pass


class PlainTask(Task):
    """Lines like ``sweep spmv/gpu-tunable: 40% (4/10), 12.0 s elapsed, about 18.0 s left; best ...``."""

    def __init__(self, description, total, unit, stream, every_fraction, every_s, quiet_below_s, min_gap_s):
        super().__init__(description, total, unit)
        self.stream = stream
        self.every_fraction = every_fraction
        self.every_s = every_s
        self.min_gap_s = min_gap_s
        self.quiet_below_s = quiet_below_s
        self._written = False
        self._last_time = self.started
        self._last_fraction = 0.0
        self._lock = threading.Lock()

    def _line(self, final: bool = False, failed: bool = False) -> str:
        elapsed = time.monotonic() - self.started
        if self.total:
            fraction = min(1.0, self.completed / self.total)
            amount = (f"{_format_amount(self.completed, self.unit)} of {_format_amount(self.total, self.unit)}"
                      if self.unit == "B" else f"{int(self.completed)}/{int(self.total)}")
            text = f"{fraction:.0%} ({amount})"
        else:
            text = _format_amount(self.completed, self.unit) if self.completed else "working"
        if final:
            text += f", {'stopped' if failed else 'done'} in {_format_seconds(elapsed)}"
        else:
            text += f", {_format_seconds(elapsed)} elapsed"
            left = self.remaining_s()
            if left is not None:
                text += f", about {_format_seconds(left)} left"
        if self.postfix:
            text += f"; {self.postfix}"
        return f"{self.description}: {text}"

    def _write(self, line: str) -> None:
        self._written = True
        print(line, file=self.stream, flush=True)

    def _show(self) -> None:
        now = time.monotonic()
        fraction = self.completed / self.total if self.total else 0.0
        with self._lock:
            if (self.total and fraction >= 1.0) or now - self.started < self.quiet_below_s:
                return                          # the final line says it / too soon to say anything
            since = now - self._last_time
            due = since >= self.every_s or (since >= self.min_gap_s and self.total
                                            and fraction - self._last_fraction >= self.every_fraction - 1e-9)
            if not due:
                return
            self._last_time, self._last_fraction = now, fraction
        self._write(self._line())

    _tick = _show

    def _close(self, failed: bool) -> None:
        if self._written or time.monotonic() - self.started >= self.quiet_below_s:
            self._write(self._line(final=True, failed=failed))


class BarTask(Task):
    """A tqdm bar on a terminal."""

    def __init__(self, description, total, unit, stream, quiet_below_s):
        super().__init__(description, total, unit)
        from tqdm import tqdm

        self.bar = tqdm(total=total, desc=description, file=stream, unit=unit or "it",
                        unit_scale=unit == "B", unit_divisor=1024 if unit == "B" else 1000,
                        dynamic_ncols=True, leave=True, mininterval=0.2, delay=quiet_below_s)
        self._lock = threading.Lock()

    def _show(self) -> None:
        with self._lock:
            self.bar.n = self.completed
            if self.postfix:
                self.bar.set_postfix_str(self.postfix, refresh=False)
            self.bar.refresh()

    def _tick(self) -> None:
        with self._lock:
            self.bar.refresh()       # the elapsed time moves even when nothing is reported

    def _close(self, failed: bool) -> None:
        with self._lock:
            self.bar.n = self.completed
            self.bar.close()


class Progress:
    """Where tasks are shown: ``stream`` (stderr by default), as bars on a terminal
    (``tty=None`` asks the stream), as plain lines otherwise; ``enabled=False`` shows nothing."""

    def __init__(self, stream=None, *, enabled: bool = True, tty: bool | None = None,
                 every_fraction: float | None = None, every_s: float | None = None,
                 quiet_below_s: float | None = None, min_gap_s: float | None = None):
        self._stream = stream
        self.enabled = enabled
        self._tty = tty
        # the module's constants when not given, read now (so a test can change them)
        self.every_fraction = PLAIN_EVERY_FRACTION if every_fraction is None else every_fraction
        self.every_s = PLAIN_EVERY_S if every_s is None else every_s
        self.quiet_below_s = QUIET_BELOW_S if quiet_below_s is None else quiet_below_s
        self.min_gap_s = PLAIN_MIN_GAP_S if min_gap_s is None else min_gap_s

    @property
    def stream(self):
        return self._stream if self._stream is not None else sys.stderr   # at use: tests swap stderr

    @property
    def is_terminal(self) -> bool:
        if self._tty is not None:
            return self._tty
        isatty = getattr(self.stream, "isatty", None)
        try:
            return bool(isatty and isatty())
        except ValueError:            # a closed stream
            return False

    def _make(self, description: str, total: float | None, unit: str) -> Task:
        if not self.enabled:
            return Task(description, total, unit)
        if self.is_terminal:
            return BarTask(description, total, unit, self.stream, self.quiet_below_s)
        return PlainTask(description, total, unit, self.stream, self.every_fraction, self.every_s,
                         self.quiet_below_s, self.min_gap_s)

    @contextlib.contextmanager
    def task(self, description: str, total: float | None = None, unit: str = "", *,
             ticking: bool = False) -> Iterator[Task]:
        """A task shown while the block runs. ``ticking``: refresh it from a thread (for work that
        reports nothing while it runs, so that the elapsed time still moves)."""
        task = self._make(description, total, unit)
        stop = threading.Event()
        ticker = None
        if ticking and self.enabled:
            every = TICK_S if isinstance(task, BarTask) else self.every_s

            def tick() -> None:
                while not stop.wait(every):
                    task._tick()

            ticker = threading.Thread(target=tick, name="progress-ticker", daemon=True)
            ticker.start()
        failed = True
        try:
            yield task
            failed = False
        finally:
            stop.set()
            if ticker is not None:
                ticker.join()
            task._close(failed)

    def fraction_callback(self, task: Task) -> Callable[[float], None]:
        """A ``progress(fraction)`` callback (as ``read_graph`` takes) that moves ``task``."""
        total = task.total or 1.0
        return lambda fraction: task.update(completed=int(min(total, max(0.0, fraction) * total)))


QUIET = Progress(enabled=False)
