"""Entry point of the desktop application (``gpu-graph-explorer`` / ``python -m explorer``)."""

from __future__ import annotations

import argparse
import os
import sys

from kernels import __version__


def _parse(argv):
    p = argparse.ArgumentParser(prog="gpu-graph-explorer",
                                description="Desktop workbench for GPU graph kernels.")
    p.add_argument("files", nargs="*", help="graph files to open, each in its own tab")
    p.add_argument("--sample", action="store_true", help="open the bundled sample graph")
    p.add_argument("--screenshot", metavar="OUT.png",
                   help="render the main window offscreen to a PNG and exit")
    p.add_argument("--version", action="version", version=f"gpu-graph-explorer {__version__}")
    return p.parse_args(argv)


def has_display() -> bool:
    """Whether Qt can open a window here (a platform plugin that needs no screen counts)."""
    if os.environ.get("QT_QPA_PLATFORM", "") in ("offscreen", "minimal", "vnc"):
        return True
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if not has_display():
        print("gpu-graph-explorer: no display found (DISPLAY/WAYLAND_DISPLAY unset); "
              "use the command line instead: graph-kernels --help", file=sys.stderr)
        return 2

    from PySide6.QtWidgets import QApplication

    from explorer.main_window import MainWindow
    from kernels.samples import sample_path

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("GPU Graph Explorer")
    app.setOrganizationName("gpu-graph-explorer")
    window = MainWindow()
    files = list(args.files) or ([str(sample_path())] if (args.sample or not args.files) else [])
    for path in files:
        window.open_path(path)
    if args.screenshot:
        window.resize(1400, 900)
        window.show()
        app.processEvents()
        ok = window.grab().save(args.screenshot)
        return 0 if ok else 1
    window.show()
    return app.exec()
