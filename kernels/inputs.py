"""Resolve the INPUT argument of ``run``/``sweep``: a graph file, or a generated graph
written as ``gen:KIND:opt=value,opt=value`` (so that GPU servers need no large files)."""

from __future__ import annotations

from kernels.errors import GraphKernelsError


def load_input(spec: str, *, format: str | None = None, progress=None):
    """The graph ``spec`` names; ``progress(fraction)`` follows a file's read."""
    if spec.startswith("gen:"):
        return _generate(spec)
    from kernels.graph.io import check_fits_memory, read_graph

    check_fits_memory(spec, format=format)  # the GUI's check: refuses before any allocation
    return read_graph(spec, format=format, progress=progress)


def _generate(spec: str):
    try:
        from kernels.graph.generators import generator_spec
    except ImportError as exc:  # pragma: no cover - generators ship with the package
        raise GraphKernelsError(f"generators unavailable: {exc}") from None
    _, _, rest = spec.partition(":")
    kind, _, opts = rest.partition(":")
    options = {}
    for item in filter(None, (o.strip() for o in opts.split(","))):
        if "=" not in item:
            raise GraphKernelsError(f"generated input {spec!r}: expected opt=value, got {item!r}")
        k, v = item.split("=", 1)
        options[k.strip()] = v.strip()
    spec = generator_spec(kind)
    return spec(**spec.parse(options))
