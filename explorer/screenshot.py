"""Pictures of the window for the documentation: ``python -m explorer.screenshot OUT.png ...``.

Renders the main window offscreen once everything has loaded, writes the PNG and exits (0 when
the picture was written and every file opened). ``--view`` arranges the window first to show
the page map, the page inspector, the timing chart or the sweep heatmap; ``--random-edits N``
applies a seeded random batch so that the page map shows written pages. Used by
``make screenshots`` and the packaging smoke test (``PROGRAM -m explorer.screenshot``); kept
apart from ``gpu-graph-explorer`` so that its options stay off the user's ``--help``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

VIEWS = ("page-map", "inspector", "timing", "heatmap", "roofline")
PROG = "python -m explorer.screenshot"


def _parse(argv):
    p = argparse.ArgumentParser(prog=PROG, description="Render the GPU Graph Explorer window offscreen to a PNG.")
    p.add_argument("out", metavar="OUT.png", help="the picture to write")
    p.add_argument("files", nargs="*", help="files to open first (graphs, a session, run records, sweeps); "
                                            "none: the bundled sample graph")
    p.add_argument("--sample", action="store_true", help="also open the bundled sample graph")
    p.add_argument("--page-size", type=int, metavar="WORDS", help="page size of the slotted structure")
    p.add_argument("--view", choices=VIEWS, help="what the window shows")
    p.add_argument("--size", default="1600x1000", metavar="WxH",
                   help="window size in pixels (default 1600x1000, the first start's size)")
    p.add_argument("--random-edits", type=int, default=0, metavar="N",
                   help="apply a random batch of N edge edits to the current graph first (shows the pages an "
                        "edit writes)")
    return p.parse_intermixed_args(argv)      # files may follow the options, as in the Makefile


def prepare_view(window, view: str) -> bool:
    """Arrange the window to show one thing: page-map, inspector (the current graph's tab), or
    what a compute dock shows (timing, heatmap). False (and the log says why) when it cannot."""
    from PySide6.QtCore import Qt

    from explorer.tasks import describe_error

    tab = window.current_tab()
    if view in ("page-map", "inspector"):
        if tab is None or tab.document.slotted is None:
            window.log("warning", f"--view {view}: the current graph has no slotted pages")
            return False
        stats = tab.page_map.stats
        if stats is not None and len(stats["fill"]):
            # the fullest ordinary page shows the most records
            ordinary = [i for i in range(len(stats["fill"])) if not stats["large"][i]] or [0]
            best = max(ordinary, key=lambda i: (stats["vertices"][i], stats["fill"][i]))
            tab.select_page(int(best))
        bottom = [d for d in window.docks() if window.dockWidgetArea(d) == Qt.DockWidgetArea.BottomDockWidgetArea
                  and d.isVisible()]
        if bottom:
            window.resizeDocks(bottom, [120] * len(bottom), Qt.Orientation.Vertical)
        if view == "inspector":
            tab.splitter.setSizes([300, 900])
            tab.right_splitter.setSizes([250, 650])
        else:
            tab.splitter.setSizes([400, 800])
            tab.right_splitter.setSizes([650, 250])
        return True
    for dock in window.compute_docks:
        try:
            if dock.show_view(view):
                dock.show()
                dock.raise_()
                return True
        except Exception as exc:  # noqa: BLE001 - the picture is still written, the reason logged
            window.log("warning", f"--view {view}: {describe_error(exc)}")
            return False
    window.log("warning", f"--view {view}: no dock shows it in this installation")
    return False


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    try:
        width, height = (int(x) for x in args.size.lower().split("x"))
    except ValueError:
        print(f"{PROG}: --size {args.size!r}: expected WIDTHxHEIGHT, e.g. 1600x1000", file=sys.stderr)
        return 2
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from explorer.app import start_application

    if start_application() is None:
        return 2
    with tempfile.TemporaryDirectory(prefix="gge-screenshot-") as tmp:
        return _shoot(args, (width, height), tmp)


def _shoot(args, size: tuple[int, int], tmp: str) -> int:
    from explorer.app import make_window, open_initial
    from explorer.settings import AppSettings

    window = make_window(args.page_size, settings=AppSettings.ephemeral(tmp), restore_layout=False, dialogs=False)
    failures: list[str] = []
    window.loadFailed.connect(lambda what, message: failures.append(message))
    window.resize(*size)
    window.show()
    open_initial(window, args.files, args.sample)
    idle = window.wait_idle(timeout_s=300)
    document = window.current_document()
    if args.random_edits and document is not None and document.editable:
        from explorer.model import commands

        window.push_command(commands.random_batch(document, args.random_edits, "mixed", seed=1))
        idle = window.wait_idle(timeout_s=60) and idle
    ok_view = True
    if args.view:
        ok_view = prepare_view(window, args.view)
        window.wait_idle(timeout_s=60)
    ok = window.grab().save(args.out)
    errors = window.log_dock.messages("error")
    window.close()
    for message in failures or errors:
        print(f"{PROG}: {message}", file=sys.stderr)
    if not ok:
        print(f"{PROG}: could not write {args.out}", file=sys.stderr)
        return 1
    if not idle:
        print(f"{PROG}: loading did not finish in time; the picture shows it unfinished", file=sys.stderr)
        return 1
    if not ok_view:
        print(f"{PROG}: --view {args.view} could not be shown (see above)", file=sys.stderr)
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
