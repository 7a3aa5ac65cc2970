"""Views of a graph document: statistics, node-link drawing, page map, page inspector.

Views read a :class:`~explorer.model.document.GraphDocument` (Qt-free) and listen to its
``changed`` signal (``explorer.model_signals.signals(document)``); they never modify it (edits
are commands, see :mod:`explorer.model.commands`)."""
