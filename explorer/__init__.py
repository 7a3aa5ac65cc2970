"""GPU Graph Explorer: the Qt desktop application on top of the headless ``kernels`` core."""

from explorer.qt_compat import protect_singletons
from kernels import __version__

protect_singletons()   # PySide6 6.12.0 on Python < 3.12 would otherwise crash the process (see qt_compat)

__all__ = ["__version__"]
