"""GraphML and GML, read through NetworkX (Pajek has its own reader: :mod:`kernels.graph.io.pajek`).

These are attribute-rich exchange formats for small and medium graphs; NetworkX parses them
correctly and there is no speed to gain by hand (files are rarely above a few MB), so the
work here is the mapping to CSR: node labels become 0..n-1 in file order, edge weights come
from a numeric ``weight`` attribute, parallel edges of multigraphs are kept as duplicates,
and directedness is what the file declares. NetworkX reports no progress and cannot be
interrupted while it parses, so progress jumps from reading to done; cancellation is checked
before and after. Errors become :class:`GraphFormatError`, with the line number where the
parser gives one (XML errors do; NetworkX's GML parser often does not).
"""

from __future__ import annotations

import io
import math
import re
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable

import numpy as np

from kernels.graph.csr import CSRGraph
from kernels.graph.io import weights as finite
from kernels.graph.io.assemble import build_csr, check_dimensions
from kernels.graph.io.compression import GraphSource
from kernels.graph.io.context import LoadContext
from kernels.graph.io.registry import FormatSpec, Head
from kernels.graph.io.text import show

WEIGHT = "weight"
_LINE_IN_MESSAGE = re.compile(r"line (\d+)", re.IGNORECASE)


def _sniff_graphml(head: Head) -> bool:
    text = head.data[:8192].lstrip(b"\xef\xbb\xbf \t\r\n")
    return text.startswith(b"<") and b"<graphml" in text


def _sniff_gml(head: Head) -> bool:
    return re.search(rb"(?m)^\s*graph\s*\[", head.data[:8192]) is not None and not _sniff_graphml(head)


def _line_of(exc: BaseException) -> int | None:
    position = getattr(exc, "position", None)  # xml.etree ParseError: (line, column)
    if isinstance(position, tuple) and position:
        return int(position[0])
    lineno = getattr(exc, "lineno", None)
    if isinstance(lineno, int):
        return lineno
    m = _LINE_IN_MESSAGE.search(str(exc))
    return int(m.group(1)) if m else None


def _too_long_number(data: bytes) -> tuple[int, int] | None:
    """(line, digits) of the first run of digits longer than Python converts to an integer (the
    parsers then raise a ValueError that tells the user to raise the interpreter's limit; the
    project never does). Only run starts are tried (the look-behind), so the search is linear."""
    limit = sys.get_int_max_str_digits()
    found = re.search(rb"(?<![0-9])[0-9]{%d}" % (limit + 1), data) if limit else None
    if found is None:
        return None
    end = re.compile(rb"[0-9]*").match(data, found.end()).end()
    return data.count(b"\n", 0, found.start()) + 1, end - found.start()


def _parse(source: GraphSource, ctx: LoadContext, parse: Callable, what: str):
    data = source.read_all(ctx)
    ctx.check_cancel()
    try:
        graph = parse(io.BytesIO(data))
    except RecursionError:
        raise ctx.error("nesting too deep to parse", expected=what) from None
    except (ElementTree.ParseError, Exception) as exc:  # NetworkX raises many kinds; all mean a bad file
        long_number = _too_long_number(data) if isinstance(exc, ValueError) else None
        if long_number is not None:
            line, digits = long_number
            raise ctx.error(f"a number of {digits:,} digits (integers of more than {sys.get_int_max_str_digits():,} "
                            "digits are not read)", line, what) from None
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ctx.error(f"{type(exc).__name__}: {message[:200]}", _line_of(exc), what) from None
    ctx.check_cancel()
    ctx.report(0.8)
    return graph


def graph_from_networkx(g, ctx: LoadContext) -> CSRGraph:
    """CSR of a NetworkX graph: nodes numbered in insertion (file) order, weights if numeric."""
    nodes = list(g.nodes())
    index = {node: k for k, node in enumerate(nodes)}
    n = len(nodes)
    edges = list(g.edges(data=True))
    check_dimensions(ctx, n, n, len(edges))
    src = np.fromiter((index[u] for u, _, _ in edges), dtype=np.int64, count=len(edges))
    dst = np.fromiter((index[v] for _, v, _ in edges), dtype=np.int64, count=len(edges))
    weights = _weights(edges, ctx)
    directed = g.is_directed()
    if not directed:
        off = src != dst
        src, dst = np.concatenate([src, dst[off]]), np.concatenate([dst, src[off]])
        if weights is not None:
            weights = np.concatenate([weights, weights[off]])
    return build_csr(ctx, n, n, src, dst, weights, directed=directed)


def _weights(edges, ctx: LoadContext) -> np.ndarray | None:
    have = sum(1 for _, _, d in edges if WEIGHT in d)
    if not have:
        return None
    values = np.empty(len(edges), dtype=np.float64)
    for k, (u, v, d) in enumerate(edges):
        try:
            values[k] = float(d.get(WEIGHT, 1.0))
        except OverflowError:       # an integer past float64's range (GML reads '1' * 400 as an int)
            values[k] = math.inf
        except (TypeError, ValueError):
            ctx.notice("the 'weight' attribute is not numeric everywhere: the graph is read unweighted")
            return None
        if not math.isfinite(values[k]):  # the parsers keep no line numbers: the edge is named instead
            where = f"edge {k + 1} (from {show(str(u).encode())} to {show(str(v).encode())})"
            raise finite.refusal(ctx, where, values[k], str(d.get(WEIGHT)).encode())
    missing = len(edges) - have
    if missing:
        ctx.notice(f"{missing} of {len(edges)} edges have no 'weight' attribute: they get weight 1")
    return values


def _reader(parse: Callable, what: str):
    def read(source: GraphSource, ctx: LoadContext) -> CSRGraph:
        return graph_from_networkx(_parse(source, ctx, parse, what), ctx)
    return read


def _read_graphml(stream):
    import networkx as nx

    return nx.read_graphml(stream)


def _read_gml(stream):
    import networkx as nx

    return nx.read_gml(stream, label=None)  # ids as node keys: labels need not be unique


SPEC = FormatSpec(
    name="graphml",
    description="GraphML (XML; via NetworkX)",
    extensions=(".graphml",),
    priority=90,
    memory_per_byte=64.0,  # measured 38 on '<node id="n"/>' and '<edge .../>'
    sniff=_sniff_graphml,
    read=_reader(_read_graphml, "a GraphML document"),
)

GML_SPEC = FormatSpec(
    name="gml",
    description="GML, Graph Modelling Language (via NetworkX)",
    extensions=(".gml",),
    priority=80,
    memory_per_byte=64.0,  # measured 20 on 'node [ id n ]' and 'edge [ ... ]'
    sniff=_sniff_gml,
    read=_reader(_read_gml, "a GML 'graph [ ... ]' document"),
)

SPECS = (SPEC, GML_SPEC)
