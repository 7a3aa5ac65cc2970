"""The format registry: each format is a (sniff, priority, reader, writer) record, as in glue.

Formats are recognised from the file's *content*: every sniffer looks at the first 64 KiB
(decompressed) and says whether it could be its format. Among those that accept, the highest
priority wins; a matching extension adds a small bonus, which only decides between formats
whose content looks alike (a METIS file whose lines all have two numbers is also a valid
edge list). Strong signatures (a Matrix Market banner, a zip header, ``<graphml``) have
priorities far above the bonus, so a misleading extension cannot override them. The three
formats without a signature (edge list, CSV, METIS) are different: when the extension names
one of them and no signature format claims the file, that format is tried even if its sniffer
hesitates, so that a broken file gets that format's precise error message.

A new format is one module with a ``SPEC`` (or several in ``SPECS``) and one line in :data:`BUILTIN_MODULES`, or a call
to :func:`register_format`. Installed packages add formats through the entry-point group
``gpu_graph_explorer.formats`` (:mod:`kernels.plugins`): each entry point names a
:class:`FormatSpec` or a module with ``SPEC``/``SPECS``; one that cannot be loaded, or whose
name is a built-in format's, is one logged warning line (:func:`format_problems`) and the
other formats load.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from kernels.errors import GraphFormatError, ParameterError, UnsupportedFormatError
from kernels.graph.io.compression import HEAD_BYTES, GraphSource

BUILTIN_MODULES = (
    "kernels.graph.io.mtx",
    "kernels.graph.io.npz",
    "kernels.graph.io.networkx_formats",
    "kernels.graph.io.pajek",
    "kernels.graph.io.dimacs",
    "kernels.graph.io.csv_edges",
    "kernels.graph.io.metis",
    "kernels.graph.io.edgelist",
)
EXTENSION_BONUS = 15
# formats at or above this priority have a signature whose absence is conclusive
SIGNATURE_PRIORITY = 50


@dataclass(frozen=True)
class Head:
    """What sniffers look at: the first bytes (decompressed), split into lines, and the extension."""

    data: bytes
    suffix: str
    complete: bool  # the whole file is in ``data``

    @cached_property
    def lines(self) -> list[bytes]:
        lines = self.data.split(b"\n")
        if not self.complete and len(lines) > 1:
            lines.pop()  # probably cut in the middle
        return [ln.rstrip(b"\r") for ln in lines]

    @cached_property
    def is_binary(self) -> bool:
        return b"\x00" in self.data[:4096]


@dataclass(frozen=True)
class FormatSpec:
    """One file format: how to recognise, read and write it."""

    name: str
    description: str
    extensions: tuple[str, ...]
    priority: int
    sniff: Callable[[Head], bool]
    read: Callable | None = None          # read(source, ctx, **options) -> CSRGraph
    write: Callable | None = None         # write(graph, binary_stream) -> None
    estimate: Callable | None = None      # estimate(source) -> dict | None (from the header)
    options: frozenset[str] = field(default_factory=frozenset)  # reader keyword options
    # peak memory of a read per decompressed byte, on the format's densest valid content (minimal
    # lines); it turns memory limits into byte limits (see kernels.graph.io.budget)
    memory_per_byte: float = 96.0
    # the reader refuses more entries than the header declares, so the pre-check's estimate
    # from the header bounds its memory, compressed or not
    bounded_by_header: bool = False
    # the format compresses its own content (zip members), so even a plain file can expand
    expands: bool = False

    @property
    def readable(self) -> bool:
        return self.read is not None

    @property
    def writable(self) -> bool:
        return self.write is not None


_REGISTRY: dict[str, FormatSpec] = {}
_loaded = False
_format_problems: list[str] = []
logger = logging.getLogger(__name__)


def register_format(spec: FormatSpec) -> None:
    _REGISTRY[spec.name] = spec


_load_lock = threading.RLock()


def _ensure_loaded() -> None:
    """Import the built-in readers once; threads loading files at the same time wait for it
    (the flag is set only when the registry is full)."""
    global _loaded
    if _loaded:
        return
    with _load_lock:
        if _loaded:
            return
        for name in BUILTIN_MODULES:
            module = importlib.import_module(name)
            for spec in getattr(module, "SPECS", None) or (module.SPEC,):
                if spec.name not in _REGISTRY:
                    register_format(spec)
        from kernels.plugins import FORMATS_GROUP, load_group

        builtin = set(_REGISTRY)
        for _ in load_group(FORMATS_GROUP, lambda loaded: _register_plugin_specs(loaded, builtin),
                            _format_problems.append):
            pass
        _loaded = True


def _register_plugin_specs(loaded, builtin: set[str]) -> None:
    specs = (loaded,) if isinstance(loaded, FormatSpec) else (getattr(loaded, "SPECS", None)
                                                              or (getattr(loaded, "SPEC", None),))
    for spec in specs:
        if not isinstance(spec, FormatSpec):
            raise TypeError(f"expected a FormatSpec (or a module with SPEC or SPECS), got {type(spec).__name__}")
        if spec.name in builtin:
            raise ValueError(f"format {spec.name!r} is built in")
    for spec in specs:
        register_format(spec)


def format_problems() -> list[str]:
    """One line per format plug-in that could not be loaded (empty until the registry loads)."""
    return list(_format_problems)


def formats() -> dict[str, FormatSpec]:
    """All registered formats by name."""
    _ensure_loaded()
    return dict(_REGISTRY)


def get_format(name: str) -> FormatSpec:
    known = formats()
    key = name.lower().lstrip(".")
    if key in known:
        return known[key]
    for spec in known.values():  # an extension works as a name too: "mtx", "gr", "txt"
        if "." + key in spec.extensions:
            return spec
    raise ParameterError("format", name, ", ".join(sorted(known)))


def format_for_extension(suffix: str, *, writable: bool = False) -> FormatSpec | None:
    for spec in formats().values():
        if suffix in spec.extensions and (spec.writable or not writable):
            return spec
    return None


def sniff(source: GraphSource) -> FormatSpec:
    """The format of a file, from its content (and its extension as a tie-breaker)."""
    probe = source.head(HEAD_BYTES + 1)
    data = probe[:HEAD_BYTES]
    head = Head(data, source.suffix, complete=len(probe) <= HEAD_BYTES)
    candidates = []
    for spec in formats().values():
        if spec.read is None:
            continue
        try:
            accepted = spec.sniff(head)
        except Exception:  # a sniffer that trips over odd bytes simply does not claim the file
            accepted = False
        if accepted:
            bonus = EXTENSION_BONUS if source.suffix in spec.extensions else 0
            candidates.append((spec.priority + bonus, spec.name, spec))
    by_extension = format_for_extension(source.suffix)
    if (by_extension is not None and by_extension.readable and by_extension.priority < SIGNATURE_PRIORITY
            and all(spec.priority < SIGNATURE_PRIORITY for _, _, spec in candidates)
            and by_extension.name not in {name for _, name, _ in candidates}):
        # a format without a signature is trusted by its extension: a .graph file whose header
        # is broken should get a METIS error, not be read as an edge list that happens to parse
        candidates.append((by_extension.priority + EXTENSION_BONUS, by_extension.name, by_extension))
    if candidates:
        return max(candidates, key=lambda c: c[0])[2]
    if not data:
        raise GraphFormatError("the file is empty", source.display, expected="a graph file")
    if by_extension is not None and by_extension.readable:
        # let the reader say precisely what is wrong where the extension tells what was meant
        return by_extension
    kind = "binary data" if head.is_binary else "text"
    names = ", ".join(sorted(s.name for s in formats().values() if s.readable))
    raise UnsupportedFormatError(f"could not recognise the format of this {kind}", source.display,
                                 expected=f"one of: {names}")


def detect_format(path) -> str:
    """The name of a file's format, recognised from its content."""
    return sniff(GraphSource(path)).name
