"""The core's logging: the standard ``logging`` module, one logger per module under ``kernels``.

Every module that has something to say in passing (a notice, a plug-in that did not load, a
worker restarted) writes ``logger = logging.getLogger(__name__)``, so the loggers form one
tree per package (``kernels.graph.io...``, ``kernels.measure...``, ``kernels.compute...``) and
an application chooses what it sees by configuring ``kernels`` (or a branch of it). The core
never configures logging itself: a library that does would override its host's choices.

The command line does (:func:`configure_cli`): warnings and errors by default, ``-v`` adds
INFO, ``-vv`` DEBUG, ``-q`` leaves errors only. The GUI attaches its log panel as a handler
(``explorer/docks/log_dock.py``). What a command *prints as its result* is not logging.
"""

from __future__ import annotations

import logging
import sys

ROOT = "kernels"


def level_for(verbosity: int) -> int:
    """``-q`` → ERROR, nothing → WARNING, ``-v`` → INFO, ``-vv`` → DEBUG."""
    if verbosity < 0:
        return logging.ERROR
    return (logging.WARNING, logging.INFO)[verbosity] if verbosity < 2 else logging.DEBUG


class _CurrentStderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a record comes (tests and callers swap it)."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):  # StreamHandler.__init__ assigns it; the property always follows sys.stderr
        pass


class _CommandLineFormatter(logging.Formatter):
    """``graph-kernels: warning: message`` -- the same one-line shape as the command's errors;
    DEBUG lines also name the logger."""

    def __init__(self, prog: str):
        super().__init__()
        self.prog = prog

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info and record.levelno <= logging.DEBUG:
            message += "\n" + self.formatException(record.exc_info)
        where = f" [{record.name}]" if record.levelno <= logging.DEBUG else ""
        return f"{self.prog}: {record.levelname.lower()}{where}: {message}"


def configure_cli(verbosity: int, prog: str = "graph-kernels") -> logging.Logger:
    """Send the core's records at the level ``verbosity`` asks to stderr, one line each.

    Called once per command (again in the same process: the previous handler is replaced)."""
    logger = logging.getLogger(ROOT)
    for handler in list(logger.handlers):
        if getattr(handler, "_graph_kernels_cli", False):
            logger.removeHandler(handler)
    handler = _CurrentStderrHandler()
    handler._graph_kernels_cli = True
    handler.setFormatter(_CommandLineFormatter(prog))
    logger.addHandler(handler)
    logger.setLevel(level_for(verbosity))
    logger.propagate = False        # the command line's own lines only, never twice through a root handler
    return logger


DASK_LOGGING_ENV = "DASK_LOGGING__DISTRIBUTED"
_DASK_LEVELS = {logging.ERROR: "error", logging.WARNING: "warning", logging.INFO: "info", logging.DEBUG: "debug"}


def configure_dask_cli(verbosity: int, *, client: bool) -> None:
    """How much of Dask's own logging a command shows (``distributed`` logs on its own handler).

    A command serving a cluster (``cluster local``) shows Dask's warnings, and its steps with
    ``-v``; the environment variable carries the level to the worker processes it starts. A
    client (``--scheduler``) shows none of it without ``-vv``: what became of its jobs is said by
    the command in one sentence, not by ``distributed``'s tracebacks of a closed connection."""
    level = level_for(verbosity)
    if client and verbosity < 2:
        level = logging.CRITICAL
    import os

    os.environ.setdefault(DASK_LOGGING_ENV, _DASK_LEVELS.get(level, "critical"))
    try:
        import distributed  # noqa: F401  (its import configures its loggers: set the levels after it)
    except ImportError:
        return                          # the command says in one line that the cluster extra is missing
    # Dask's configuration sets levels on child loggers too (distributed.client, ...): set them all
    for name in [n for n in logging.root.manager.loggerDict if n.split(".")[0] in ("distributed", "tornado")]:
        logging.getLogger(name).setLevel(level)
    for name in ("distributed", "tornado"):
        logging.getLogger(name).setLevel(level)
