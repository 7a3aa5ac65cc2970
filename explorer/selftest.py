"""``gpu-graph-explorer --self-test``: prove that an installation works, end to end.

It does what a user's first minutes do, offscreen: open the main window, open the bundled
sample graph, and run triangle counting from the Run dock twice - the CPU variant
(``cpu-serial``) and a GPU variant on numba's CUDA simulator (``gpu-row-block``,
``block_size=32``) - each through the worker process, exactly as the Run button does. On a
machine whose CUDA driver reports a GPU, the GPU variant runs there too. Every result must be
verified against the reference and, on the sample, equal the known count (45 triangles in
Zachary's karate club).

It prints one line per check and exits 0 when all passed, 1 (with the reason) otherwise. In a
frozen bundle this is the smoke test of ``make package``: it exercises the package data, Qt,
numba's cache directory and the bundle acting as its own worker process.
"""

from __future__ import annotations

import os
import sys
import time

from kernels import __version__
from kernels.selftest import CheckList, check_record, gpu_reason

RUN_TIMEOUT_S = 300.0        # a cold worker imports numba (seconds); the simulator is slow but the sample is tiny
LOAD_TIMEOUT_S = 120.0


class SelfTest:
    def __init__(self, app, workdir: str, sample: str = "karate.mtx", out=print):
        self.app = app
        self.workdir = workdir
        self.sample = sample
        self.out = out
        self.checks = CheckList(out)
        self.record = self.checks.record
        self.window = None

    def header(self) -> str:
        from PySide6 import __version__ as pyside_version
        from PySide6.QtCore import qVersion

        import kernels

        how = "frozen bundle" if getattr(sys, "frozen", False) else "Python package"
        return (f"gpu-graph-explorer {__version__} self-test ({how}, Python {sys.version.split()[0]}, "
                f"Qt {qVersion()}, PySide6 {pyside_version})\n"
                f"  kernels from {os.path.dirname(kernels.__file__)}\n"
                f"  numba cache {os.environ.get('NUMBA_CACHE_DIR') or 'numba default (next to the sources)'}")

    # ---- the checks --------------------------------------------------------------------------------
    def run(self) -> int:
        from PySide6.QtCore import qInstallMessageHandler

        self.out(self.header())
        previous = qInstallMessageHandler(_quiet_offscreen_messages)
        try:
            self.check_icon()
            if self.open_window() and self.open_sample():
                self.run_kernel("triangles", "cpu-serial", "cpu", {})
                self.run_kernel("triangles", "gpu-row-block", "sim", {"block_size": "32"})
                gpu = gpu_reason()
                if gpu is None:
                    self.run_kernel("triangles", "gpu-row-block", "cuda", {"block_size": "32"})
                else:
                    self.record("GPU", "skip", gpu)
        except Exception as exc:  # noqa: BLE001 - a self-test reports every failure in words
            self.record("unexpected error", "FAIL", f"{type(exc).__name__}: {exc}")
        finally:
            self.close_window()
            qInstallMessageHandler(previous)
        return self.checks.verdict()

    def check_icon(self) -> None:
        from explorer.icons import app_icon, icon_files

        files = icon_files()
        if not files or app_icon().isNull():
            self.record("icon", "FAIL", "the application icon is missing from the package data (gge_resources/icons)")
            return
        self.record("icon", "ok", f"{len(files)} sizes ({files[0].stem.rsplit('-', 1)[-1]}.."
                                  f"{files[-1].stem.rsplit('-', 1)[-1]} px)")

    def open_window(self) -> bool:
        from explorer.docks.log_dock import report_unexpected_errors
        from explorer.main_window import MainWindow
        from explorer.settings import AppSettings

        started = time.monotonic()
        self.window = MainWindow(settings=AppSettings.ephemeral(self.workdir), restore_layout=False, dialogs=False)
        report_unexpected_errors(self.window)
        self.window.add_compute_docks()
        self.window.resize(1200, 800)
        self.window.show()
        if self.run_dock() is None:
            self.record("main window", "FAIL", "the Run dock is missing: " + self.log_errors())
            return False
        self.record("main window", "ok", f"opened offscreen with the Run dock ({time.monotonic() - started:.1f} s)")
        return True

    def run_dock(self):
        from explorer.docks.run_dock import RunDock

        return next((d for d in self.window.compute_docks if isinstance(d, RunDock)), None)

    def open_sample(self) -> bool:
        from kernels.samples import sample_path

        started = time.monotonic()
        try:
            path = sample_path(self.sample)
        except FileNotFoundError as exc:
            self.record("sample graph", "FAIL", str(exc))
            return False
        failures: list[str] = []
        self.window.loadFailed.connect(lambda what, message: failures.append(message))
        self.window.open_paths([str(path)])
        idle = self.window.wait_idle(timeout_s=LOAD_TIMEOUT_S)
        document = self.window.current_document()
        if failures or document is None:
            reason = failures[0] if failures else (self.log_errors() or "no graph tab appeared")
            self.record("sample graph", "FAIL", f"{path.name} did not open: {reason}")
            return False
        if not idle:
            self.record("sample graph", "FAIL", f"{path.name} did not finish loading in {LOAD_TIMEOUT_S:g} s")
            return False
        g = document.csr()
        self.record("sample graph", "ok", f"{path.name}: {g.num_vertices} vertices, {g.num_edges} edges "
                                          f"({time.monotonic() - started:.1f} s)")
        return True

    def run_kernel(self, family: str, variant: str, target: str, params: dict) -> None:
        name = f"{family}/{variant} on {target}"
        if params:
            name += " (" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")"
        dock = self.run_dock()
        started = time.monotonic()
        try:
            dock.choose(family, variant, params=params, target=target, repeat=1)
        except Exception as exc:  # noqa: BLE001
            self.record(name, "FAIL", f"could not be chosen in the Run dock: {exc}")
            return
        task = dock.run()
        if task is None:
            self.record(name, "FAIL", f"refused: {dock.error_label.text() or self.log_errors()}")
            return
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while task.running and time.monotonic() < deadline:
            self.app.processEvents()
            time.sleep(0.02)
        if task.running:
            task.cancel()
            task.wait(30)
            self.record(name, "FAIL", f"no result within {RUN_TIMEOUT_S:g} s")
            return
        self.app.processEvents()
        if task.state != "finished":
            self.record(name, "FAIL", f"{task.state}: {task.error or self.log_errors()}")
            return
        took = f"worker pid {task.worker_pid}, {time.monotonic() - started:.1f} s"
        check_record(self.checks, name, task.result["record"], self.sample, target, took)

    # ---- helpers -------------------------------------------------------------------------------------
    def log_errors(self) -> str:
        if self.window is None:
            return ""
        return "; ".join(self.window.log_dock.messages("error"))

    def close_window(self) -> None:
        if self.window is None:
            return
        from explorer.compute.client import ComputeClient

        self.window.close()
        ComputeClient.for_window(self.window).shutdown()
        self.app.processEvents()


def _quiet_offscreen_messages(_mode, _context, message: str) -> None:
    """Qt's messages on stderr, less the offscreen platform's note that it cannot pass window
    size hints on (said for every dock; it means nothing here)."""
    if "propagateSizeHints" not in message:
        print(message, file=sys.stderr)


def run_self_test(app, workdir: str, out=print) -> int:
    """Run every check with ``app`` (a QApplication); settings and autosaves go to ``workdir``."""
    return SelfTest(app, workdir, out=out).run()
