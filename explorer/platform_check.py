"""Before Qt starts: can its X11 platform plugin load here? (Qt-free: runs before PySide6.)

On a fresh Linux desktop Qt 6.5+ aborts the whole process inside ``QApplication`` when a
library of its ``xcb`` plugin is missing ("xcb-cursor0 or libxcb-cursor0 is needed to load
the Qt xcb platform plugin ... Aborted"), and a Python program cannot catch that. So the
plugin's libraries are looked for first, with ``ldd`` for its link-time dependencies and a
``dlopen`` for ``libxcb-cursor`` (which Qt opens at run time), and a missing one becomes one
line naming the packages to install with apt and dnf.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

# library file → (Debian/Ubuntu package, Fedora/RHEL package)
PACKAGES = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-xinerama.so.0": ("libxcb-xinerama0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
}
RUNTIME_LIBRARIES = ("libxcb-cursor.so.0",)     # opened by Qt with dlopen, invisible to ldd


def uses_xcb(environ=os.environ, platform: str = sys.platform) -> bool:
    """Whether Qt will pick its X11 plugin: Linux, no platform forced other than xcb, and no
    Wayland session (Qt 6 prefers Wayland when WAYLAND_DISPLAY is set)."""
    if not platform.startswith("linux"):
        return False
    forced = environ.get("QT_QPA_PLATFORM", "")
    if forced:
        return forced.split(":")[0].split(";")[0] == "xcb"
    return bool(environ.get("DISPLAY")) and not environ.get("WAYLAND_DISPLAY")


def xcb_plugin() -> Path | None:
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.origin:
        return None
    path = Path(spec.origin).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    return path if path.exists() else None


def unresolved_by_ldd(ldd_output: str) -> list[str]:
    """Library names that ``ldd`` printed as ``=> not found``, each once, in order."""
    missing: list[str] = []
    for line in ldd_output.splitlines():
        name, arrow, where = line.strip().partition("=>")
        if arrow and where.strip() == "not found" and name.strip() not in missing:
            missing.append(name.strip())
    return missing


def _loadable(library: str) -> bool:
    try:
        ctypes.CDLL(library)
    except OSError:
        return False
    return True


def missing_libraries(plugin: Path | None = None) -> list[str]:
    plugin = plugin or xcb_plugin()
    if plugin is None:
        return []
    missing: list[str] = []
    ldd = shutil.which("ldd")
    if ldd:
        try:
            out = subprocess.run([ldd, str(plugin)], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        missing += unresolved_by_ldd(out)
    missing += [lib for lib in RUNTIME_LIBRARIES if lib not in missing and not _loadable(lib)]
    return missing


def fix_message(missing: list[str]) -> str:
    """One line: what is missing and the commands that install it."""
    apt = sorted({PACKAGES.get(lib, (None, None))[0] or lib for lib in missing})
    dnf = sorted({PACKAGES.get(lib, (None, None))[1] or lib for lib in missing})
    return (f"gpu-graph-explorer: Qt's X11 platform plugin cannot load: {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} missing; install "
            f"with 'sudo apt install {' '.join(apt)}' (Debian, Ubuntu) or 'sudo dnf install {' '.join(dnf)}' "
            "(Fedora, RHEL), or run offscreen with QT_QPA_PLATFORM=offscreen")


def check_platform(environ=os.environ) -> str | None:
    """``None`` when Qt can start here, else the one-line fix to print."""
    if not uses_xcb(environ):
        return None
    missing = missing_libraries()
    return fix_message(missing) if missing else None
