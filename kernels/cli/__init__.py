"""The ``graph-kernels`` command line.

Each sub-command lives in its own module of this package and exposes
``register(subparsers)``; :data:`COMMAND_MODULES` lists them in the order ``--help`` shows.
Every command exits non-zero with a one-line message on bad input: errors derived from
:class:`kernels.errors.GraphKernelsError` (and argument errors) are printed, not raised.

``-v``/``-q`` (before the command or after it) choose how much of the core's logging is shown
(:mod:`kernels.log`) and ``-q`` also hides progress bars and lines (:mod:`kernels.progress`);
a command finds its :class:`~kernels.progress.Progress` in ``args.progress``.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from kernels.errors import GraphKernelsError
from kernels.log import configure_cli
from kernels.progress import Progress
from kernels.version import code_version

COMMAND_MODULES = (
    "kernels.cli.info",
    "kernels.cli.convert",
    "kernels.cli.pages",
    "kernels.cli.generate",
    "kernels.cli.targets",
    "kernels.cli.algorithms",
    "kernels.cli.run",
    "kernels.cli.sweep",
    "kernels.cli.heatmap",
    "kernels.cli.interchange",
    "kernels.cli.compare",
    "kernels.cli.dynamic",
    "kernels.cli.cluster",
    "kernels.cli.selftest",
    "kernels.cli.cache",
    "kernels.cli.device_peaks",
    "kernels.compute.local.worker",
)

PROG = "graph-kernels"


class _OneLineParser(argparse.ArgumentParser):
    """Argument errors in one line (argparse's default prints the whole usage first)."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message}\n")


def _add_verbosity(parser, default) -> None:
    parser.add_argument("-v", "--verbose", action="count", default=default,
                        help="say more: -v notices and steps (INFO), -vv debugging details")
    parser.add_argument("-q", "--quiet", action="count", default=default,
                        help="errors only: no warnings, no progress bars or lines")


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(prog=PROG, description="GPU graph kernels from the command line: "
                            "inspect, convert and generate graphs, run and sweep kernels.")
    parser.add_argument("--version", action="version", version=f"{PROG} {code_version()}")
    _add_verbosity(parser, 0)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_OneLineParser)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(sub)
    for command in sub.choices.values():
        # also after the command; SUPPRESS keeps a value given before it
        _add_verbosity(command, argparse.SUPPRESS)
    return parser


def verbosity(args) -> int:
    return -1 if args.quiet else args.verbose


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    configure_cli(verbosity(args), PROG)
    args.progress = Progress(enabled=not args.quiet)
    try:
        return int(args.func(args) or 0)
    except GraphKernelsError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"{PROG}: error: out of memory (the input is too large for this machine)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
