"""The GUI's document model (``explorer.model``) never imports Qt, pyqtgraph or the Qt side of
the GUI: importing every module of it in a fresh interpreter loads none of them (the
import-linter contract in pyproject.toml says the same of its import statements)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QT = ("PySide6", "shiboken6", "pyqtgraph", "PyQt5", "PyQt6", "qtpy")


def test_importing_the_document_model_loads_no_qt():
    code = (
        "import importlib, pkgutil, sys, explorer.model\n"
        "names = [m.name for m in pkgutil.walk_packages(explorer.model.__path__, 'explorer.model.')]\n"
        "for name in names: importlib.import_module(name)\n"
        "assert 'explorer.model.undo' in names and 'explorer.model.session' in names, names\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {QT!r}]\n"
        "gui = [m for m in sys.modules if m.startswith('explorer.') and not m.startswith('explorer.model')\n"
        "       and m != 'explorer.qt_compat']\n"
        "print(bad, gui); sys.exit(1 if bad or gui else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
