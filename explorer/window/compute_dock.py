"""The interface between the main window and the compute docks (Run, Results).

A compute dock is a ``QDockWidget`` that also derives from :class:`ComputeDock` and overrides
what it takes part in; the window calls these methods on every compute dock, and the defaults
say "nothing to do". (A mix-in rather than an ``abc.ABC``: Qt's wrapper classes have their own
metaclass, which does not combine with ``ABCMeta``.)
"""

from __future__ import annotations


class ComputeDock:
    """What the main window asks of a compute dock."""

    def session_state(self) -> dict | None:
        """A JSON-able dict saved in sessions under the dock's ``objectName``; ``None``: nothing to save."""
        return None

    def restore_session_state(self, state: dict) -> None:
        """Take back what :meth:`session_state` gave (from a session file: validate it)."""

    def open_result_file(self, path: str) -> bool:
        """Open a ``.json``/``.jsonl`` result file dropped or opened; False when this dock does not read it."""
        return False

    def show_view(self, name: str) -> bool:
        """Arrange the dock to show ``name`` (``python -m explorer.screenshot --view``); False when it cannot."""
        return False

    def shutdown(self) -> None:
        """The window closes: stop workers and threads."""
