"""Build the one-folder application with PyInstaller: ``dist/gpu-graph-explorer/``.

    .venv/bin/python packaging/build.py [--smoke-test]

Runs PyInstaller on ``packaging/gpu-graph-explorer.spec`` (work files in
``build/pyinstaller``), puts ``install-desktop.sh`` beside the program, then reports how long
it took and how big the folder is.
With ``--smoke-test`` it then runs ``packaging/smoke_test.py`` on the result (what
``make package`` does). Exit status: PyInstaller's, else the smoke test's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "packaging" / "gpu-graph-explorer.spec"
DIST = ROOT / "dist"
WORK = ROOT / "build" / "pyinstaller"
NAME = "gpu-graph-explorer"


def folder_size(path: Path) -> tuple[int, int]:
    """Bytes and number of files under ``path`` (links not followed)."""
    total = files = 0
    for root, _dirs, names in os.walk(path):
        for name in names:
            p = os.path.join(root, name)
            if not os.path.islink(p):
                total += os.path.getsize(p)
                files += 1
    return total, files


def largest_parts(bundle: Path, count: int = 8) -> list[tuple[int, str]]:
    """The biggest top-level entries of the bundle's ``_internal`` folder (where the size goes)."""
    internal = bundle / "_internal"
    parts = []
    for entry in internal.iterdir() if internal.is_dir() else []:
        if entry.is_symlink():          # PyInstaller links libraries to where they live: count them once
            continue
        size = folder_size(entry)[0] if entry.is_dir() else entry.stat().st_size
        parts.append((size, entry.name))
    return sorted(parts, reverse=True)[:count]


def build() -> int:
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        print("build: PyInstaller is not installed: .venv/bin/pip install -e '.[gui,package]'", file=sys.stderr)
        return 2
    try:        # the bundle is the desktop application: the GUI packages are an extra
        import pyqtgraph  # noqa: F401
        import PySide6  # noqa: F401
    except ImportError as exc:
        print(f"build: the GUI packages are not installed ({exc.name}): .venv/bin/pip install -e '.[gui,package]'",
              file=sys.stderr)
        return 2
    target = DIST / NAME
    if target.exists():
        shutil.rmtree(target)
    started = time.monotonic()
    cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
           "--distpath", str(DIST), "--workpath", str(WORK), str(SPEC)]
    print("build:", " ".join(cmd), flush=True)
    code = subprocess.call(cmd, cwd=ROOT)
    took = time.monotonic() - started
    if code != 0:
        print(f"build: PyInstaller failed (exit status {code}) after {took:.0f} s", file=sys.stderr)
        return code
    # the desktop integration script sits beside the program (it finds the bundle from there)
    shutil.copy2(ROOT / "packaging" / "install-desktop.sh", target / "install-desktop.sh")
    size, files = folder_size(target)
    print(f"build: {target.relative_to(ROOT)}/ in {took:.0f} s: {size / 2**20:.0f} MiB in {files} files")
    for part_size, part in largest_parts(target):
        print(f"  {part_size / 2**20:7.1f} MiB  _internal/{part}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--smoke-test", action="store_true", help="run packaging/smoke_test.py on the result")
    args = p.parse_args(argv)
    code = build()
    if code != 0 or not args.smoke_test:
        return code
    return subprocess.call([sys.executable, str(ROOT / "packaging" / "smoke_test.py"), str(DIST / NAME / NAME)])


if __name__ == "__main__":
    raise SystemExit(main())
