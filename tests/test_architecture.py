"""The headless core must never import Qt, pyqtgraph or the GUI package."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ("PySide6", "PyQt5", "PyQt6", "pyqtgraph", "shiboken6", "qtpy", "explorer")


def _imported_names(path: Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def test_kernels_source_never_imports_qt_or_the_gui():
    offenders = []
    for path in sorted((ROOT / "kernels").rglob("*.py")):
        for name in _imported_names(path):
            if name.split(".")[0] in FORBIDDEN:
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def test_importing_every_kernels_module_loads_no_qt():
    code = (
        "import importlib, pkgutil, sys, kernels\n"
        "for m in pkgutil.walk_packages(kernels.__path__, 'kernels.'):\n"
        "    if m.name.endswith('__main__'): continue\n"
        "    importlib.import_module(m.name)\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}]\n"
        "print(bad); sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**__import__("os").environ, "NUMBA_ENABLE_CUDASIM": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_import_linter_contract_holds():
    lint = Path(sys.executable).parent / "lint-imports"
    if not lint.exists():
        pytest.skip("import-linter not installed")
    proc = subprocess.run([str(lint)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
