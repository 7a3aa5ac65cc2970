"""GPU Graph Explorer: the Qt desktop application on top of the headless ``kernels`` core."""

from kernels import __version__

__all__ = ["__version__"]
