"""Entry point of the desktop application (``gpu-graph-explorer`` / ``python -m explorer``).

``gpu-graph-explorer [FILE ...]`` opens the files (graphs, a session, run records or sweeps),
or the bundled sample graph when none is given. ``--screenshot OUT.png`` renders the window
offscreen once everything has loaded, writes the PNG and exits (0 when the picture was
written and every file opened); ``--view`` arranges the window first to show the page map,
the page inspector, the timing chart or the sweep heatmap. ``--self-test`` checks the
installation offscreen (see :mod:`explorer.selftest`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile

from kernels import __version__

VIEWS = ("page-map", "inspector", "timing", "heatmap")


def _parse(argv):
    p = argparse.ArgumentParser(prog="gpu-graph-explorer",
                                description="Desktop workbench for GPU graph kernels.")
    p.add_argument("files", nargs="*", help="graph files to open, each in its own tab (or a session, "
                                            "run records .jsonl, sweeps .json)")
    p.add_argument("--sample", action="store_true", help="also open the bundled sample graph")
    p.add_argument("--page-size", type=int, metavar="WORDS",
                   help="page size of the slotted structure for the graphs opened (default: as last set, 1024)")
    p.add_argument("--screenshot", metavar="OUT.png",
                   help="render the main window offscreen to a PNG and exit")
    p.add_argument("--view", choices=VIEWS, help="with --screenshot: what the window shows")
    p.add_argument("--size", default="1600x1000", metavar="WxH",
                   help="with --screenshot: window size in pixels (default 1600x1000, the first start's size)")
    p.add_argument("--random-edits", type=int, default=0, metavar="N",
                   help="with --screenshot: apply a random batch of N edge edits to the current graph first "
                        "(shows the pages an edit writes)")
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
    if args.self_test and (args.files or args.screenshot):
        print("gpu-graph-explorer: --self-test takes no files and no --screenshot", file=sys.stderr)
        return 2
    if args.self_test:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"     # never a window on the user's screen
    if args.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if args.view and not args.screenshot:
        print("gpu-graph-explorer: --view only applies with --screenshot", file=sys.stderr)
        return 2
    problem = gui_unavailable()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    if not has_display():
        print("gpu-graph-explorer: no display found (DISPLAY/WAYLAND_DISPLAY unset); "
              "use the command line instead: graph-kernels --help", file=sys.stderr)
        return 2
    from explorer.platform_check import check_platform

    problem = check_platform()
    if problem:                  # Qt would abort the process inside QApplication: say why first
        print(problem, file=sys.stderr)
        return 2

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
    if args.self_test:
        from explorer.selftest import run_self_test

        with tempfile.TemporaryDirectory(prefix="gge-selftest-") as tmp:
            return run_self_test(app, tmp)
    if args.screenshot:
        with tempfile.TemporaryDirectory(prefix="gge-screenshot-") as tmp:
            return _screenshot(args, tmp)
    return _interactive(app, args)


def _make_window(args, settings=None, **kwargs):
    from explorer.main_window import MainWindow

    window = MainWindow(settings=settings, page_size=args.page_size, **kwargs)
    _report_unexpected_errors(window)
    window.add_compute_docks()
    return window


def _report_unexpected_errors(window) -> None:
    """An exception escaping a Qt callback is a bug; say so in the log panel (and on stderr)
    instead of letting it vanish, and keep the window - and the user's graphs - alive."""
    import traceback

    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        try:
            window.log("error", f"unexpected error (a bug; please report it): {kind.__name__}: {value}")
            window.log("debug", "".join(traceback.format_exception(kind, value, tb)))
        except RuntimeError:          # the window is already gone
            pass

    sys.excepthook = hook


def _open_initial(window, args) -> None:
    from kernels.samples import sample_path

    files = list(args.files)
    if args.sample or not files:
        files.insert(0, str(sample_path()))
    window.open_paths(files)


def _interactive(app, args) -> int:
    window = _make_window(args)
    window.show()
    _open_initial(window, args)
    if window.settings.autosave_path().exists():
        window.log("info", "unsaved edits from the last time were kept: File ▸ Recover Autosaved Session")
    return app.exec()


def _screenshot(args, tmp: str) -> int:
    from explorer.settings import AppSettings

    try:
        width, height = (int(x) for x in args.size.lower().split("x"))
    except ValueError:
        print(f"gpu-graph-explorer: --size {args.size!r}: expected WIDTHxHEIGHT, e.g. 1600x1000", file=sys.stderr)
        return 2
    window = _make_window(args, settings=AppSettings.ephemeral(tmp), restore_layout=False, dialogs=False)
    failures: list[str] = []
    window.loadFailed.connect(lambda what, message: failures.append(message))
    window.resize(width, height)
    window.show()
    _open_initial(window, args)
    idle = window.wait_idle(timeout_s=300)
    if args.random_edits and window.current_document() is not None and window.current_document().editable:
        from explorer import commands

        window.push_command(commands.random_batch(window.current_document(), args.random_edits, "mixed", seed=1))
        idle = window.wait_idle(timeout_s=60) and idle
    ok_view = True
    if args.view:
        ok_view = window.prepare_view(args.view)
        window.wait_idle(timeout_s=60)
    ok = window.grab().save(args.screenshot)
    errors = window.log_dock.messages("error")
    window.close()
    for message in failures or errors:
        print(f"gpu-graph-explorer: {message}", file=sys.stderr)
    if not ok:
        print(f"gpu-graph-explorer: could not write {args.screenshot}", file=sys.stderr)
        return 1
    if not idle:
        print("gpu-graph-explorer: loading did not finish in time; the picture shows it unfinished", file=sys.stderr)
        return 1
    if not ok_view:
        print(f"gpu-graph-explorer: --view {args.view} could not be shown (see above)", file=sys.stderr)
        return 1
    return 1 if failures else 0
