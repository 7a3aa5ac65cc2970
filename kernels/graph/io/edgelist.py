"""SNAP-style edge lists: one edge per line, ``u v`` or ``u v w``.

Separators: whitespace, or commas/semicolons (chosen from the first data line). Comments
start with ``#`` or ``%``. More than three columns: the third is the weight, the rest are
ignored (and a notice says so).

Directedness: an edge list does not say, so it is read *undirected* (each line ``u v`` is the
edge {u, v}; reverses are added where the file lacks them, see :func:`mirror_missing`) unless
``directed=True`` is asked for or a leading comment says "Directed" as SNAP files do
(``# Directed graph (each unordered pair of nodes is saved once)``). Vertex numbering: see
:mod:`kernels.graph.io.vertex_ids`.
"""

from __future__ import annotations

import numpy as np

from kernels.graph.csr import CSRGraph
from kernels.graph.io import weights as finite
from kernels.graph.io.assemble import build_csr, mirror_missing
from kernels.graph.io.compression import GraphSource
from kernels.graph.io.context import LoadContext
from kernels.graph.io.registry import FormatSpec, Head
from kernels.graph.io.text import (
    TextReader,
    check_line,
    header_text,
    is_integer,
    is_number,
    line_of_row,
    parse_block,
    show,
    split_tokens,
    strip_comment,
)
from kernels.graph.io.vertex_ids import LARGEST_ID, HeaderHints, check_base_option, number_vertices
from kernels.graph.io.writing import write_columns

COMMENTS = (b"#", b"%")
SNIFF_LINES = 50


def delimiter_of(line: bytes) -> bytes | None:
    for d in (b",", b";"):
        if d in line:
            return d
    return None


def _sniff(head: Head) -> bool:
    width = None
    seen = 0
    for raw in head.lines:
        text = strip_comment(raw, COMMENTS)
        if not text.strip():
            continue
        tokens = split_tokens(text, delimiter_of(text))
        if len(tokens) < 2 or (width is not None and len(tokens) != width):
            return False
        width = len(tokens)
        if not (is_integer(tokens[0]) and is_integer(tokens[1])):
            return False
        if width >= 3 and not is_number(tokens[2]):
            return False
        seen += 1
        if seen >= SNIFF_LINES:
            break
    return seen > 0


def read_leading_comments(reader: TextReader, ctx: LoadContext, hints: HeaderHints) -> bytes | None:
    """Skip comment and blank lines (noting what they say); return the first data line."""
    while True:
        line = reader.readline()
        if line is None:
            return None
        text = header_text(line, ctx, reader.line_no)
        stripped = text.lstrip()
        if not stripped:
            continue
        if stripped[0] in "#%":
            hints.read_comment(line)
            continue
        return line


def read_edgelist(source: GraphSource, ctx: LoadContext, *, directed: bool | None = None,
                  base: int | None = None, relabel: bool = False) -> CSRGraph:
    base = check_base_option(base)
    hints = HeaderHints()
    with source.open() as stream:
        reader = TextReader(stream, ctx, source.file_bytes)
        first = read_leading_comments(reader, ctx, hints)
        if first is None:
            u = v = np.zeros(0, np.int64)
            weights = np.zeros(0) if hints.weighted else None
        else:
            u, v, weights = _read_body(reader, ctx, first, relabel)
    if directed is None:
        directed = bool(hints.directed)
        if hints.directed is None:
            ctx.notice("read as an undirected graph (no 'Directed' header line; ask for "
                       "directed=True to keep each line as one arc)")
    u, v, n = number_vertices(ctx, u, v, base=base, hints=hints, relabel=relabel)
    if not directed:
        u, v, weights = mirror_missing(u, v, weights, n)
    return build_csr(ctx, n, n, u, v, weights, directed=directed)


def _read_body(reader: TextReader, ctx: LoadContext, first: bytes, relabel: bool):
    delimiter = delimiter_of(strip_comment(first, COMMENTS))
    tokens = split_tokens(strip_comment(first, COMMENTS), delimiter)
    width = len(tokens)
    line_no = reader.line_no
    if width < 2:
        raise ctx.error(f"found {width} value on the first data line", line_no,
                        "two vertex ids per line, optionally a weight")
    if not (is_integer(tokens[0]) and is_integer(tokens[1])):
        raise ctx.error(f"the first data line starts with {show(tokens[0])} {show(tokens[1])}", line_no,
                        "integer vertex ids (a file with a header row is read with format='csv')")
    weighted = width >= 3
    if width > 3:
        ctx.notice(f"the file has {width} columns: the third is read as the weight, the rest are ignored")
    kinds = "iif" if weighted else "ii"
    fields = [("u", np.int64), ("v", np.int64)] + ([("w", np.float64)] if weighted else [])
    usecols = (0, 1, 2) if width > 3 else None
    validate = lambda toks: check_line(toks, kinds, at_least=width > 3)  # noqa: E731
    reader.unread(first)
    parts_u, parts_v, parts_w = [], [], []
    for block in reader.blocks():
        arr = parse_block(block, ctx, np.dtype(fields), validate, comments=COMMENTS,
                          delimiter=delimiter, usecols=usecols)
        a, b = arr["u"], arr["v"]
        top = np.inf if relabel else LARGEST_ID  # relabelling takes ids of any size
        if len(arr) and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) > top):
            bad = (a < 0) | (b < 0) | (a > top) | (b > top)
            k = int(np.argmax(bad))
            value = a[k] if not 0 <= a[k] <= top else b[k]
            line = line_of_row(block, k, COMMENTS, delimiter)
            if value < 0:
                raise ctx.error(f"negative vertex id {value}", line, "vertex ids >= 0")
            raise ctx.too_large(f"vertex id {value} is too large to number densely "
                                "(read with relabel=True)", line)
        if weighted:
            finite.check_block(ctx, arr["w"], block, 2, comments=COMMENTS, delimiter=delimiter)
        parts_u.append(a)
        parts_v.append(b)
        if weighted:
            parts_w.append(arr["w"])
    u = np.concatenate(parts_u) if parts_u else np.zeros(0, np.int64)
    v = np.concatenate(parts_v) if parts_v else np.zeros(0, np.int64)
    weights = (np.concatenate(parts_w) if parts_w else np.zeros(0)) if weighted else None
    return u, v, weights


def write_edgelist(graph: CSRGraph, stream) -> None:
    """SNAP-style: a header saying directedness, size and 0-based ids; each undirected edge once."""
    graph.require(square=True, what="an edge list")
    rows = graph.row_of_entry().astype(np.int64)
    cols = graph.indices.astype(np.int64)
    weights = graph.weights
    if not graph.directed:
        keep = rows <= cols
        rows, cols = rows[keep], cols[keep]
        weights = None if weights is None else weights[keep]
    kind = ("Directed" if graph.directed else "Undirected") + (" weighted" if graph.weighted else "")
    stream.write(f"# {kind} graph: {graph.name}\n"
                 f"# Nodes: {graph.n_rows} Edges: {len(rows)}\n"
                 f"# 0-based vertex ids; written by gpu-graph-explorer\n".encode())
    write_columns(stream, [rows, cols] + ([] if weights is None else [weights]), sep="\t")


SPEC = FormatSpec(
    name="edgelist",
    description="edge list, one 'u v [weight]' per line (SNAP style; '#'/'%' comments)",
    extensions=(".txt", ".tsv", ".edges", ".el", ".wel", ".edgelist", ".dat"),
    priority=20,
    memory_per_byte=32.0,  # measured 20 on 'u v' lines
    sniff=_sniff,
    read=read_edgelist,
    write=write_edgelist,
    options=frozenset({"directed", "base", "relabel"}),
)
