"""What a reader needs besides the bytes: the file's name for messages, progress and cancellation.

A reader never talks to the caller's callbacks directly; it goes through :class:`LoadContext`
so that progress is monotonic and clipped to [0, 1], cancellation is checked in one way, and
every error names the file the user opened (not a temporary or decompressed stream).
"""

from __future__ import annotations

from collections.abc import Callable

from kernels.errors import GraphFormatError, GraphKernelsError, ResourceLimitError


class LoadCancelled(GraphKernelsError):
    """The caller's ``cancel()`` predicate asked to stop a load; nothing was returned."""


class FileTooLargeError(GraphFormatError, ResourceLimitError):
    """A file whose declared or implied size would not fit (or makes no sense) in memory.

    It is both a format error (the file is the cause; readers promise that only the
    ``GraphFormatError`` family escapes) and a resource-limit error (what the GUI refuses)."""


class LoadContext:
    """The file being read, plus the caller's optional ``progress`` and ``cancel`` callbacks."""

    def __init__(self, path: str, progress: Callable[[float], object] | None = None,
                 cancel: Callable[[], bool] | None = None, *, name: str = "graph"):
        self.path = str(path)
        self.name = name
        self._progress = progress
        self._cancel = cancel
        self._last = -1.0
        self.notices: list[str] = []

    def report(self, fraction: float) -> None:
        """Tell the caller how far the load is (never goes backwards)."""
        if self._progress is None:
            return
        fraction = min(max(float(fraction), 0.0), 1.0)
        if fraction > self._last:
            self._last = fraction
            self._progress(fraction)

    def check_cancel(self) -> None:
        if self._cancel is not None and self._cancel():
            raise LoadCancelled(f"loading {self.path} was cancelled")

    def notice(self, text: str) -> None:
        """A sentence for the user about how the file was interpreted (kept on the graph)."""
        self.notices.append(text)

    def error(self, reason: str, line: int | None = None, expected: str | None = None) -> GraphFormatError:
        """A format error about this file (returned, so that call sites read ``raise ctx.error(...)``)."""
        return GraphFormatError(reason, self.path, line, expected)

    def too_large(self, reason: str, line: int | None = None) -> FileTooLargeError:
        return FileTooLargeError(reason, self.path, line)
