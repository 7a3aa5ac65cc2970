"""The document model of the GUI, without Qt (after napari's model / ``_qt`` split).

* :mod:`~explorer.model.document`: ``GraphDocument``, one open graph (content, name, revision,
  key, CSR snapshot, edit journal, busy reason, undo stack) and its ``events``;
* :mod:`~explorer.model.undo`: ``Command`` (``do`` / ``undo`` / ``redo``, after glue) and
  ``UndoStack`` (limit, clean state, macros, merging, observers);
* :mod:`~explorer.model.commands`: every edit of a graph as a command holding a page delta;
* :mod:`~explorer.model.session`, :mod:`~explorer.model.session_members`: the session file
  format, read as untrusted input;
* :mod:`~explorer.model.requests`: what the user asks the compute side to run (runs, sweeps);
* :mod:`~explorer.model.events`: ``Notifier``, the observers' callback lists.

Nothing here imports Qt (an import-linter contract in ``pyproject.toml`` and
``tests/test_model_without_qt.py`` hold it); the Qt side observes the model through
``explorer.model_signals`` and drives it from its docks and menus.
"""
