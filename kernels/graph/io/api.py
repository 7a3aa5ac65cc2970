"""``read_graph`` and ``write_graph``: the two calls everything else uses."""

from __future__ import annotations

import bz2
import gzip
import logging
import lzma
import os
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from kernels.errors import GraphKernelsError, ParameterError, UnsupportedFormatError
from kernels.graph.csr import CSRGraph
from kernels.graph.io.budget import budget_for, size_unknown_before_reading
from kernels.graph.io.compression import COMPRESSION_SUFFIXES, GraphSource, format_suffix, graph_name
from kernels.graph.io.context import FileTooLargeError, LoadContext
from kernels.graph.io.registry import format_for_extension, formats, get_format, sniff
from kernels.memory import available_memory

logger = logging.getLogger(__name__)


def read_graph(path, *, format: str | None = None, name: str | None = None,
               progress: Callable[[float], object] | None = None, cancel: Callable[[], bool] | None = None,
               directed: bool | None = None, base: int | None = None, relabel: bool | None = None
               ) -> CSRGraph:
    """Read a graph file of any supported format, plain or gzip/bz2/xz-compressed.

    The format is recognised from the content (``format=`` forces one, by name or extension).
    ``progress(fraction)`` is called with increasing values up to 1.0; ``cancel()`` returning
    True stops the load with :class:`LoadCancelled`. ``directed``, ``base`` (0 or 1) and
    ``relabel`` apply to formats that do not say these things themselves (edge lists, CSV);
    giving one to a format that does is a :class:`ParameterError`. Every problem with the file
    is a :class:`GraphFormatError` naming the file and, where it has one, the line.
    """
    source = GraphSource(path)
    spec = get_format(format) if format else sniff(source)
    if not spec.readable:
        raise UnsupportedFormatError(f"format '{spec.name}' can be written but not read", str(path))
    options = {k: v for k, v in {"directed": directed, "base": base, "relabel": relabel}.items()
               if v is not None}
    for option, value in options.items():
        if option not in spec.options:
            takers = sorted(s.name for s in formats().values() if option in s.options)
            raise ParameterError(option, value, f"only with the formats {', '.join(takers)}",
                                 detail=f"{Path(path).name} is read as '{spec.name}', which declares it itself")
    available = available_memory() if size_unknown_before_reading(source, spec) else None
    source.limit_expansion(budget_for(source, spec, available))
    ctx = LoadContext(str(path), progress, cancel, name=name or graph_name(path))
    ctx.report(0.0)
    ctx.check_cancel()
    try:
        graph = spec.read(source, ctx, **options)
    except MemoryError:
        raise FileTooLargeError("not enough memory to load this file", str(path)) from None
    for notice in graph.notices:
        logger.info("%s: %s", path, notice)
    return graph


# each opener returns the stream that ``write_graph`` closes with ``with``
def _open_for_writing(path: Path, compression: str | None):
    """A binary stream that compresses as asked (the caller closes it)."""
    if compression == "gzip":
        return gzip.open(path, "wb", compresslevel=6)  # noqa: SIM115
    if compression == "bz2":
        return bz2.open(path, "wb")  # noqa: SIM115
    if compression == "xz":
        return lzma.open(path, "wb")  # noqa: SIM115
    return open(path, "wb")  # noqa: SIM115


def output_format(path, format: str | None = None):
    """The format a file will be written in: ``format=`` or the extension (``.gz`` etc. skipped)."""
    if format:
        spec = get_format(format)
    else:
        suffix = format_suffix(path)
        spec = format_for_extension(suffix, writable=True)
        if spec is None:
            allowed = sorted({e for s in formats().values() if s.writable for e in s.extensions})
            raise ParameterError("output extension", suffix or Path(path).name,
                                 f"{', '.join(allowed)} (optionally + .gz/.bz2/.xz), or format=")
    if not spec.writable:
        writable = sorted(s.name for s in formats().values() if s.writable)
        raise ParameterError("format", spec.name, f"a writable format: {', '.join(writable)}")
    return spec


def write_graph(graph: CSRGraph, path, *, format: str | None = None) -> None:
    """Write ``graph`` to ``path``; format from the extension or ``format=``; ``.gz`` compresses.

    The file is written to a temporary name and renamed at the end, so a failure never leaves
    a half-written file behind under the real name."""
    path = Path(path)
    spec = output_format(path, format)
    if graph.weights is not None and not np.isfinite(graph.weights).all():
        # every reader refuses such a weight (docs/formats.md, "Weights"): the file could not be read back
        k = int(np.argmax(~np.isfinite(graph.weights)))
        raise GraphKernelsError(f"{path}: cannot write weight {float(graph.weights[k])!r} (entry {k}): a graph file "
                                "holds finite weights only")
    lower = path.name.lower()
    compression = next((c for s, c in COMPRESSION_SUFFIXES.items() if lower.endswith(s)), None)
    # a plain open (not mkstemp) so that the file gets the user's usual permissions
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        with _open_for_writing(tmp, compression) as stream:
            spec.write(graph, stream)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise GraphKernelsError(f"{path}: cannot write the file: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
