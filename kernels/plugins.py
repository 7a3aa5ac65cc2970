"""Plug-ins from other installed packages, found through entry points.

A package declares, in its ``pyproject.toml``::

    [project.entry-points."gpu_graph_explorer.families"]
    my-triangles = "my_package.family"          # importing it registers a family or variants

    [project.entry-points."gpu_graph_explorer.formats"]
    my-format = "my_package.fmt:SPEC"           # a FormatSpec (or a module with SPEC / SPECS)

and after ``pip install`` (``-e`` too) the command line, the GUI, sweeps and the worker
processes see it; no environment variable is needed (``GRAPH_KERNELS_PLUGINS`` stays, for a
module that is not a package). A plug-in that cannot be loaded (misspelt, broken, clashing
with a built-in name) is one warning line, logged, and kept for :func:`problems`; every other
plug-in and every built-in still loads.
"""

from __future__ import annotations

import importlib.metadata
import logging
from collections.abc import Callable, Iterator
from typing import Any

FAMILIES_GROUP = "gpu_graph_explorer.families"
FORMATS_GROUP = "gpu_graph_explorer.formats"

logger = logging.getLogger(__name__)


def one_line(exc: BaseException) -> str:
    """``Type: message`` on one line (a traceback or a multi-line message is not a warning line)."""
    return " ".join(f"{type(exc).__name__}: {exc}".split())


def _entry_points(group: str) -> list:
    try:
        found = importlib.metadata.entry_points(group=group)
    except Exception as exc:      # a broken distribution's metadata must not stop the program
        logger.warning("the installed packages' entry points of %s could not be read (%s)", group, one_line(exc))
        return []
    unique = {}
    for ep in found:              # the same distribution seen twice on the path (e.g. -e and a copy)
        unique.setdefault((ep.name, ep.value), ep)
    return sorted(unique.values(), key=lambda ep: ep.name)


def describe(ep) -> str:
    dist = getattr(getattr(ep, "dist", None), "name", None)
    return f"entry point '{ep.name} = {ep.value}'" + (f" of package {dist}" if dist else "")


def load_group(group: str, use: Callable[[Any], None], report: Callable[[str], None]) -> Iterator[str]:
    """Load every entry point of ``group`` and hand what it names to ``use``; a failure of either
    is reported in one line through ``report`` (and logged). Yields the names loaded."""
    for ep in _entry_points(group):
        try:
            use(ep.load())
        except Exception as exc:
            problem = f"plug-in {describe(ep)} ({group}) was not loaded ({one_line(exc)})"
            logger.warning(problem, extra={"plugin_problem": True})
            report(problem)
        else:
            logger.debug("loaded plug-in %s (%s)", describe(ep), group)
            yield ep.name
