"""Change notifications of the model: plain lists of callbacks.

A :class:`Notifier` is what a Qt signal is to a ``QObject``, without Qt: observers
:meth:`~Notifier.connect` a callable and :meth:`~Notifier.emit` calls each one with the
notification's arguments, in the order they were connected. As with Qt's signals, an observer
that raises does not stop the others nor the change that is being announced (the model is
already in its new state when it says so): the exception goes to ``sys.excepthook``, which the
GUI routes to its log panel (``explorer.docks.log_dock.report_unexpected_errors``).

The Qt side does not connect widgets here directly: it connects one small ``QObject`` per
document (``explorer.model_signals``) that re-emits the notifications as Qt signals, so that
a widget's connection ends with the widget.
"""

from __future__ import annotations

import sys
from collections.abc import Callable


class Notifier:
    """Callbacks to call when something happened."""

    def __init__(self, name: str = ""):
        self.name = name
        self._callbacks: list[Callable] = []

    def connect(self, callback: Callable) -> Callable:
        """Call ``callback`` on every :meth:`emit` (once, however often it is connected)."""
        if callback not in self._callbacks:
            self._callbacks.append(callback)
        return callback

    def disconnect(self, callback: Callable) -> bool:
        """Stop calling ``callback``; False when it was not connected."""
        try:
            self._callbacks.remove(callback)
        except ValueError:
            return False
        return True

    def emit(self, *args) -> None:
        for callback in list(self._callbacks):
            try:
                callback(*args)
            except Exception:  # noqa: BLE001 - one observer's bug must not half-announce a change
                sys.excepthook(*sys.exc_info())

    def __len__(self) -> int:
        return len(self._callbacks)

    def __repr__(self) -> str:
        return f"Notifier({self.name!r}, {len(self)} observer(s))"
