"""Views of a graph document: statistics, node-link drawing, page map, page inspector.

Views read a :class:`~explorer.document.GraphDocument` and listen to its ``changed`` signal;
they never modify it (edits are commands, see :mod:`explorer.commands`)."""
