"""Helpers shared by the command modules."""

from __future__ import annotations

import argparse
import json
import math
import sys


def print_json(data) -> None:
    """Standard JSON (a number that is not finite is null, as in result files)."""
    from kernels.results import plain

    json.dump(plain(data), sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")


def add_cleanup_flags(parser) -> None:
    """The explicit clean-up options (each one reported when applied)."""
    parser.add_argument("--symmetrize", action="store_true", help="add missing reverse edges (undirected)")
    parser.add_argument("--drop-self-loops", action="store_true", help="remove self-loops")
    parser.add_argument("--drop-duplicates", action="store_true", help="remove repeated entries")
    parser.add_argument("--drop-isolated", action="store_true", help="remove vertices without edges")
    parser.add_argument("--largest-component", action="store_true",
                        help="keep only the largest (weakly) connected component")


def apply_cleanup(graph, args):
    from kernels.graph.cleanup import clean

    return clean(graph, symmetrize_=args.symmetrize, self_loops=args.drop_self_loops,
                 duplicates=args.drop_duplicates, isolated=args.drop_isolated,
                 largest_component=args.largest_component)


# ---- argument types: a bad value is refused by argparse in one line, saying what is allowed ----

def _refuse(raw: str, allowed: str):
    return argparse.ArgumentTypeError(f"invalid value {raw!r}: allowed {allowed}")


def _integer_at_least(minimum: int, what: str):
    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise _refuse(raw, what) from None
        if value < minimum:
            raise _refuse(raw, what)
        return value
    parse.__name__ = what
    return parse


repetitions = _integer_at_least(1, "an integer >= 1")
warmups = _integer_at_least(0, "an integer >= 0")
positive_int = _integer_at_least(1, "an integer >= 1")


def launch_mode(raw: str) -> str:
    """``--launch``: one of the runner's launch modes (kernels.measure.cuda_graphs.LAUNCH_MODES)."""
    from kernels.measure.cuda_graphs import LAUNCH_MODES

    if raw not in LAUNCH_MODES:
        raise _refuse(raw, f"one of {', '.join(LAUNCH_MODES)}")
    return raw


def positive_seconds(raw: str) -> float:
    """A time limit: a finite number of seconds > 0 (``nan`` would switch the limit off, ``inf`` too)."""
    try:
        value = float(raw)
    except ValueError:
        raise _refuse(raw, "a finite number of seconds > 0") from None
    if not math.isfinite(value) or value <= 0:
        raise _refuse(raw, "a finite number of seconds > 0")
    return value



# ---- progress of reading and generating inputs (the core reports; the command line draws) ----

# a smaller file reads in well under a second: no bar, no lines
READ_PROGRESS_MIN_BYTES = 32 << 20


def progress_of(args):
    """The command's :class:`~kernels.progress.Progress` (set by ``main``; silent otherwise)."""
    from kernels.progress import QUIET

    return getattr(args, "progress", None) or QUIET


def read_shown(args, path: str, read):
    """``read(progress)`` (a ``read_graph``-like call taking a ``progress(fraction)`` callback),
    shown as a task against the file's size when the file is large enough to take a while."""
    import os

    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0                      # the reader says what is wrong with the path
    if size < READ_PROGRESS_MIN_BYTES:
        return read(None)
    progress = progress_of(args)
    with progress.task(f"reading {os.path.basename(path)}", total=size, unit="B") as task:
        return read(progress.fraction_callback(task))


def load_input_shown(args, spec: str, *, format: str | None = None):
    """``load_input`` with progress: a large file's read, or a generator's elapsed time."""
    from kernels.inputs import load_input

    if spec.startswith("gen:"):
        with progress_of(args).task(f"generating {spec}", ticking=True):
            return load_input(spec, format=format)
    return read_shown(args, spec, lambda progress: load_input(spec, format=format, progress=progress))
