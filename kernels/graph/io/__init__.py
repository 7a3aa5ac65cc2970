"""Reading and writing graph files in every supported format (see docs/formats.md).

>>> from kernels.graph.io import read_graph, write_graph
>>> g = read_graph("karate.mtx.gz")          # format from the content, compression from magic bytes
>>> write_graph(g, "karate.txt")              # format from the extension

Formats are records in a registry (:mod:`kernels.graph.io.registry`), each in its own module.
"""

from __future__ import annotations

from kernels.graph.io.api import output_format, read_graph, write_graph
from kernels.graph.io.context import FileTooLargeError, LoadCancelled
from kernels.graph.io.estimate import available_memory, check_fits_memory, estimate_load
from kernels.graph.io.registry import FormatSpec, detect_format, formats, get_format, register_format


def __getattr__(name: str):
    # FORMATS is built on first use, so that importing the package stays cheap
    if name == "FORMATS":
        return formats()
    raise AttributeError(name)


__all__ = [
    "FORMATS",
    "FileTooLargeError",
    "FormatSpec",
    "LoadCancelled",
    "available_memory",
    "check_fits_memory",
    "detect_format",
    "estimate_load",
    "formats",
    "get_format",
    "output_format",
    "read_graph",
    "register_format",
    "write_graph",
]
