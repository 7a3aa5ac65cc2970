"""The application icon, read from the package data (``gge_resources/icons``) through
``importlib.resources``, so a source checkout, an installed wheel and a frozen bundle all
find it. The pictures are drawn by ``packaging/make_icons.py``."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

ICON_NAME = "gpu-graph-explorer"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def icon_files() -> list[Path]:
    """The icon's PNG files that are installed, smallest first (none if the data is missing)."""
    root = resources.files("gge_resources") / "icons"
    found = []
    for size in ICON_SIZES:
        ref = root / f"{ICON_NAME}-{size}.png"
        if ref.is_file():
            found.append(Path(str(ref)))
    return found


def app_icon():
    """A QIcon with every size, for the window title bar, task bar and dialogs.

    A missing icon is not worth refusing to start over: the icon is then simply empty."""
    from PySide6.QtGui import QIcon

    icon = QIcon()
    for path in icon_files():
        icon.addFile(str(path))
    return icon
