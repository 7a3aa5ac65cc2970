"""Entry point of the desktop application (``gpu-graph-explorer`` / ``python -m explorer``).

``gpu-graph-explorer [FILE ...]`` opens the files (graphs, a session, run records or sweeps),
or the bundled sample graph when none is given. ``--self-test`` checks the installation
offscreen (see :mod:`explorer.selftest`). Pictures of the window for the documentation are
made by a separate entry, ``python -m explorer.screenshot`` (:mod:`explorer.screenshot`), so
their options stay off the user's ``--help``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile

from kernels import __version__


def _parse(argv):
    p = argparse.ArgumentParser(prog="gpu-graph-explorer",
                                description="Desktop workbench for GPU graph kernels.")
    p.add_argument("files", nargs="*", help="graph files to open, each in its own tab (or a session, "
                                            "run records .jsonl, sweeps .json)")
    p.add_argument("--sample", action="store_true", help="also open the bundled sample graph")
    p.add_argument("--page-size", type=int, metavar="WORDS",
                   help="page size of the slotted structure for the graphs opened (default: as last set, 1024)")
    p.add_argument("--self-test", action="store_true",
                   help="check this installation offscreen: open the sample graph, run a CPU and a simulator "
                        "kernel through the worker and verify them; exit 0 when all passed")
    p.add_argument("--version", action="version", version=f"gpu-graph-explorer {__version__}")
    return p.parse_args(argv)


GUI_PACKAGES = ("PySide6", "shiboken6", "pyqtgraph")
INSTALL_GUI = 'pip install "gpu-graph-explorer[gui]"'


def gui_unavailable() -> str | None:
    """Why the GUI cannot start in this environment (one line), or None when it can.

    The GUI packages are an extra: a server installation (the core and ``graph-kernels``)
    lacks them on purpose, and then the user needs the command that adds them, not a traceback.
    """
    try:
        # PySide6 first: pyqtgraph's own error for a missing binding does not name the package
        importlib.import_module("PySide6.QtWidgets")
        importlib.import_module("pyqtgraph")
    except ImportError as exc:
        if (exc.name or "").split(".")[0] in GUI_PACKAGES:
            return (f"gpu-graph-explorer: the GUI is not installed here ({exc.name} is missing): "
                    f"{INSTALL_GUI}; the command line, graph-kernels, works without it")
        return f"gpu-graph-explorer: the GUI packages are installed but do not load: {exc}"
    return None


def has_display() -> bool:
    """Whether Qt can open a window here (a platform plugin that needs no screen counts)."""
    if os.environ.get("QT_QPA_PLATFORM", "") in ("offscreen", "minimal", "vnc"):
        return True
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def configure_look(app) -> None:
    """A readable default look: Fusion style everywhere, light plots, antialiased lines."""
    import pyqtgraph as pg

    app.setStyle("Fusion")
    pg.setConfigOptions(antialias=True, background="w", foreground="k")


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.self_test and args.files:
        print("gpu-graph-explorer: --self-test takes no files", file=sys.stderr)
        return 2
    if args.self_test:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"     # never a window on the user's screen
        if gui_unavailable() and "not installed" in gui_unavailable():
            return _self_test_without_gui()
    app = start_application()
    if app is None:
        return 2
    if args.self_test:
        from explorer.selftest import run_self_test

        with tempfile.TemporaryDirectory(prefix="gge-selftest-") as tmp:
            return run_self_test(app, tmp)
    return _interactive(app, args)


def _self_test_without_gui() -> int:
    """A server's install (no ``gui`` extra): the checks of ``graph-kernels self-test``, and the
    GUI reported as not installed rather than as a failure."""
    from kernels.selftest import run_core_self_test

    print(f"gpu-graph-explorer {__version__}: the GUI is not installed here ({INSTALL_GUI} adds it); "
          "checking the core and the command line")
    return run_core_self_test()


def start_application():
    """The QApplication, set up (name, icon, look); ``None`` after saying on stderr why the GUI
    cannot start here (packages missing, no display, a Qt platform plugin that would abort)."""
    problem = gui_unavailable()
    if problem:
        print(problem, file=sys.stderr)
        return None
    if not has_display():
        print("gpu-graph-explorer: no display found (DISPLAY/WAYLAND_DISPLAY unset); "
              "use the command line instead: graph-kernels --help", file=sys.stderr)
        return None
    from explorer.platform_check import check_platform

    problem = check_platform()
    if problem:                  # Qt would abort the process inside QApplication: say why first
        print(problem, file=sys.stderr)
        return None

    from PySide6.QtWidgets import QApplication

    from explorer.settings import APPLICATION, ORGANIZATION

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName(APPLICATION)
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("gpu-graph-explorer")       # ties windows to the .desktop entry (Wayland, task bars)
    from explorer.icons import app_icon

    app.setWindowIcon(app_icon())
    configure_look(app)
    return app


def make_window(page_size: int | None = None, settings=None, **kwargs):
    """The main window with the compute docks, unexpected errors reported in its log."""
    from explorer.docks.log_dock import report_unexpected_errors
    from explorer.main_window import MainWindow

    window = MainWindow(settings=settings, page_size=page_size, **kwargs)
    report_unexpected_errors(window)
    window.add_compute_docks()
    return window


def open_initial(window, files, sample: bool = False) -> None:
    """Open the files given, with the bundled sample graph first when asked or when none is."""
    from kernels.samples import sample_path

    files = list(files)
    if sample or not files:
        files.insert(0, str(sample_path()))
    window.open_paths(files)


def _interactive(app, args) -> int:
    window = make_window(args.page_size)
    window.show()
    open_initial(window, args.files, args.sample)
    if window.settings.autosave_path().exists():
        window.log("info", "unsaved edits from the last time were kept: File ▸ Recover Autosaved Session")
    return app.exec()
