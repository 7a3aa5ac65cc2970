"""The core and the command line work without the GUI packages (a GPU server installs
``gpu-graph-explorer[cuda]``, no Qt); the GUI entry point says how to add them.

A fresh virtual environment without PySide6 would take minutes to build; instead the
subprocesses here run with a ``sitecustomize`` that makes importing the GUI packages fail, in
that process and in any Python process it starts (they inherit ``PYTHONPATH``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kernels.results import save_sweep
from tests.test_heatmap import provenanced_sweep

ROOT = Path(__file__).resolve().parent.parent
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

BLOCKER = textwrap.dedent('''
    """Test helper: importing any package named in GGE_BLOCK_IMPORTS fails."""
    import os
    import sys

    _BLOCKED = set(os.environ.get("GGE_BLOCK_IMPORTS", "").split(","))


    class _NotInstalled:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in _BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
            return None


    sys.meta_path.insert(0, _NotInstalled())
''')


def without(packages: tuple[str, ...], tmp_path: Path, *args: str, timeout: int = 180):
    """Run ``python ARGS`` where importing ``packages`` fails."""
    site = tmp_path / "blocker"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(BLOCKER)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "DISPLAY", "WAYLAND_DISPLAY")}
    env.update(PYTHONPATH=os.pathsep.join([str(site), str(ROOT)]), GGE_BLOCK_IMPORTS=",".join(packages),
               QT_QPA_PLATFORM="offscreen", NUMBA_ENABLE_CUDASIM="1")
    return subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=timeout)


QT_AND_GUI = ("PySide6", "shiboken6", "pyqtgraph", "PyQt5", "PyQt6", "explorer")


def test_the_import_blocker_blocks(tmp_path):
    for name in ("PySide6", "pyqtgraph", "explorer"):
        result = without(QT_AND_GUI, tmp_path, "-c", f"import {name}")
        assert result.returncode == 1 and "blocked by the test" in result.stderr, (name, result.stderr)


def test_heatmap_pictures_from_the_command_line_need_no_gui_packages(tmp_path):
    sweep = tmp_path / "sweep.json"
    save_sweep(provenanced_sweep(), sweep)
    for out in ("h.png", "h.svg"):
        result = without(QT_AND_GUI, tmp_path, "-m", "kernels", "heatmap", str(sweep), "--out", out,
                         "--csv", "h.csv")
        assert result.returncode == 0, result.stderr
        assert "spmv/gpu-tunable" in result.stdout
    assert (tmp_path / "h.png").read_bytes()[:8] == PNG_MAGIC
    assert "</svg>" in (tmp_path / "h.svg").read_text()
    # and no module of the GUI toolkits was loaded on the way
    probe = ("import sys, runpy; sys.argv = ['graph-kernels', 'heatmap', 'sweep.json', '--out', 'p.png']\n"
             "try:\n    runpy.run_module('kernels', run_name='__main__')\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('PySide6', 'PyQt5', 'PyQt6', 'pyqtgraph', 'tkinter', 'gi', 'wx')))")
    result = without(QT_AND_GUI, tmp_path, "-c", probe)
    assert result.returncode == 0 and result.stdout.strip().splitlines()[-1] == "[]", result.stdout + result.stderr


@pytest.mark.parametrize("missing", ["PySide6", "pyqtgraph"])
def test_gui_entry_point_without_the_gui_packages_says_how_to_install_them(tmp_path, missing):
    result = without((missing,), tmp_path, "-m", "explorer", timeout=60)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert 'pip install "gpu-graph-explorer[gui]"' in lines[0] and missing in lines[0]
