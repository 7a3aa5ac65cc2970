"""Protection against a reference-counting bug of PySide6 6.12.0 on Python < 3.12.

Measured here (PySide6-Essentials 6.12.0, Python 3.11.7): every call of a Qt method that
returns nothing (``QLabel.setText``, ``QWidget.setVisible``, ``QGraphicsItem.setPos``...) takes
one reference from ``None`` without having given it one, and pyqtgraph's item callbacks do the
same to ``True``/``False``. Python 3.12 made these objects immortal, so there it is harmless; on
3.11 the count reaches zero after a few thousand calls and the interpreter aborts ("Fatal Python
error: none_dealloc") - in the middle of a session or when it exits. PySide6 6.11.3 does not
have the bug.

:func:`protect_singletons` (only for 6.12.0 installed despite the package's pin) detects the bug
by measuring it (a few hundred calls on a QObject)
and, only if it is present, gives ``None``, ``True`` and ``False`` a very large extra reference
count, which is what immortality amounts to. The real fix is a PySide6 without the bug (or
Python >= 3.12); this keeps users' sessions alive meanwhile.
"""

from __future__ import annotations

import ctypes
import sys

_BALLAST = 2**40           # references added; the leak takes one per call
_applied = False


def singleton_leak_per_call() -> float:
    """References of ``None`` lost per void Qt call (0.0 on a healthy binding)."""
    from PySide6.QtCore import QObject

    probe = QObject()
    calls = 256
    before = sys.getrefcount(None)
    for _ in range(calls):
        probe.setObjectName("probe")
    return (before - sys.getrefcount(None)) / calls


def _suspect_binding() -> bool:
    """Whether the installed PySide6 is 6.12.0 (read from package metadata: no Qt import)."""
    from importlib import metadata

    for dist in ("PySide6-Essentials", "PySide6"):
        try:
            return metadata.version(dist) == "6.12.0"
        except metadata.PackageNotFoundError:
            continue
    return True  # unknown installation (e.g. a frozen bundle): measure


def protect_singletons() -> bool:
    """Apply the protection if this interpreter needs it; returns whether it was applied."""
    global _applied
    if _applied:
        return True
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False
    if not _suspect_binding():  # the package pins PySide6 != 6.12.0: measure only a forced install
        return False
    try:
        leak = singleton_leak_per_call()
    except ImportError:
        return False
    if leak < 0.5:
        return False
    for obj in (None, True, False):
        ctypes.c_ssize_t.from_address(id(obj)).value += _BALLAST
    _applied = True
    return True
