"""Headless core of GPU Graph Explorer.

Graph model, readers and writers, generators, slotted pages, algorithm families,
execution targets, timing, sweeps and results. This package never imports Qt:
the contract lives in ``pyproject.toml`` ([tool.importlinter]) and in
``tests/test_architecture.py``.
"""

__version__ = "0.1.0"
