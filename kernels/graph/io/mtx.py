"""Matrix Market coordinate files (the SuiteSparse Matrix Collection's format).

Read: ``pattern`` / ``real`` / ``integer`` fields, ``general`` / ``symmetric`` /
``skew-symmetric`` storage. Symmetric files hold one triangle and are expanded to both
directions (an undirected graph); general square files stay *directed* even when their
entries happen to be symmetric (the file says "general", so that is what it is);
skew-symmetric files are expanded with negated mirror entries and are directed matrices (their
values are not symmetric). Complex and hermitian files and the dense ``array`` layout are
refused with :class:`UnsupportedFormatError`. Duplicates and explicit zeros are kept.

Write: ``pattern`` or ``real``; ``symmetric`` (lower triangle) for undirected graphs,
``general`` otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels.errors import UnsupportedFormatError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import weights as finite
from kernels.graph.io.assemble import build_csr, check_dimensions, mirror_all
from kernels.graph.io.compression import GraphSource
from kernels.graph.io.context import LoadContext
from kernels.graph.io.registry import FormatSpec, Head
from kernels.graph.io.text import TextReader, check_line, header_text, line_of_row, parse_block
from kernels.graph.io.writing import write_columns

BANNER = "%%matrixmarket"
BANNER_FORM = "%%MatrixMarket matrix coordinate FIELD SYMMETRY"
READ_FIELDS = ("pattern", "real", "integer", "double")
READ_SYMMETRIES = ("general", "symmetric", "skew-symmetric")
COMMENTS = (b"%",)


@dataclass(frozen=True)
class MtxHeader:
    field: str
    symmetry: str
    rows: int
    cols: int
    entries: int
    size_line: int


def _sniff(head: Head) -> bool:
    return head.data.lstrip(b"\xef\xbb\xbf \t\r\n")[: len(BANNER)].lower() == BANNER.encode()


def read_header(reader: TextReader, ctx: LoadContext) -> MtxHeader:
    first = reader.readline()
    if first is None:
        raise ctx.error("the file is empty", 1, BANNER_FORM)
    tokens = header_text(first, ctx, 1).lstrip("\ufeff\xef\xbb\xbf").lower().split()
    if not tokens or tokens[0] != BANNER:
        raise ctx.error("not a Matrix Market banner", 1, BANNER_FORM)
    if len(tokens) != 5:
        raise ctx.error(f"the banner has {len(tokens)} words", 1, BANNER_FORM)
    _, obj, layout, field, symmetry = tokens
    if obj != "matrix":
        raise UnsupportedFormatError(f"Matrix Market object '{obj}' is not a matrix", ctx.path, 1,
                                     "object 'matrix'")
    if layout == "array":
        raise UnsupportedFormatError("dense 'array' Matrix Market files are not graphs", ctx.path, 1,
                                     "the sparse 'coordinate' layout")
    if layout != "coordinate":
        raise ctx.error(f"unknown layout '{layout}'", 1, "'coordinate'")
    if field == "complex":
        raise UnsupportedFormatError("complex-valued matrices are not supported", ctx.path, 1,
                                     "field pattern, real or integer")
    if field not in READ_FIELDS:
        raise ctx.error(f"unknown field '{field}'", 1, "pattern, real or integer")
    if symmetry == "hermitian":
        raise UnsupportedFormatError("hermitian matrices are not supported", ctx.path, 1,
                                     "symmetry general, symmetric or skew-symmetric")
    if symmetry not in READ_SYMMETRIES:
        raise ctx.error(f"unknown symmetry '{symmetry}'", 1, "general, symmetric or skew-symmetric")
    while True:
        line = reader.readline()
        if line is None:
            raise ctx.error("the file ends before the size line", reader.line_no + 1, "ROWS COLS ENTRIES")
        text = header_text(line, ctx, reader.line_no)
        if text.strip() and not text.lstrip().startswith("%"):
            break
    size_line = reader.line_no
    problem = check_line(line.split(), "iii")
    if problem is not None:
        raise ctx.error(f"bad size line: {problem[0]}", size_line, "ROWS COLS ENTRIES")
    rows, cols, entries = (int(t) for t in line.split())
    if min(rows, cols, entries) < 0:
        raise ctx.error("negative size", size_line, "ROWS COLS ENTRIES >= 0")
    if symmetry != "general" and rows != cols:
        raise ctx.error(f"a {symmetry} matrix must be square, not {rows} x {cols}", size_line)
    field = "real" if field == "double" else field
    return MtxHeader(field, symmetry, rows, cols, entries, size_line)


def read_mtx(source: GraphSource, ctx: LoadContext) -> CSRGraph:
    with source.open() as stream:
        reader = TextReader(stream, ctx, source.file_bytes)
        header = read_header(reader, ctx)
        check_dimensions(ctx, header.rows, header.cols, header.entries, header.size_line)
        rows, cols, weights = _read_body(reader, ctx, header)
    if header.symmetry == "general":
        directed = True
    else:
        upper = int(np.count_nonzero(rows < cols))
        if upper:
            ctx.notice(f"{upper} entries above the diagonal in a {header.symmetry} file (the format "
                       "stores the lower triangle); mirrored like the others")
        negate = header.symmetry == "skew-symmetric"
        rows, cols, weights = mirror_all(rows, cols, weights, negate=negate)
        directed = negate
        if negate:
            ctx.notice("skew-symmetric: mirror entries carry the negated value; read as a directed matrix")
    return build_csr(ctx, header.rows, header.cols, rows, cols, weights, directed=directed)


def _read_body(reader: TextReader, ctx: LoadContext, header: MtxHeader):
    weighted = header.field != "pattern"
    kinds = "ii" + ("i" if header.field == "integer" else "f" if weighted else "")
    fields = [("i", np.int64), ("j", np.int64)]
    if weighted:
        fields.append(("w", np.int64 if header.field == "integer" else np.float64))
    dtype = np.dtype(fields)
    validate = lambda tokens: check_line(tokens, kinds)  # noqa: E731
    parts_i, parts_j, parts_w = [], [], []
    total = 0
    for block in reader.blocks():
        arr = parse_block(block, ctx, dtype, validate, comments=COMMENTS)
        if total + len(arr) > header.entries:
            line = line_of_row(block, header.entries - total, COMMENTS)
            raise ctx.error(f"more entries than the {header.entries} announced by the size line "
                            f"(line {header.size_line})", line, f"{header.entries} entry lines")
        i, j = arr["i"], arr["j"]
        if len(arr) and (i.min() < 1 or i.max() > header.rows or j.min() < 1 or j.max() > header.cols
                         or header.symmetry == "skew-symmetric" and bool((i == j).any())):
            # reductions first: the element-wise mask is only built to find the bad line
            bad = (i < 1) | (i > header.rows) | (j < 1) | (j > header.cols)
            if header.symmetry == "skew-symmetric":
                bad |= i == j
            k = int(np.argmax(bad))
            line = line_of_row(block, k, COMMENTS)
            if header.symmetry == "skew-symmetric" and i[k] == j[k] and 1 <= i[k] <= header.rows:
                raise ctx.error(f"diagonal entry ({i[k]}, {j[k]}) in a skew-symmetric file", line,
                                "no diagonal entries (they are zero)")
            which, value, bound = (("row", i[k], header.rows) if not 1 <= i[k] <= header.rows
                                   else ("column", j[k], header.cols))
            raise ctx.error(f"{which} index {value} out of range", line,
                            f"1 <= {which} <= {bound}")
        if header.field == "real":   # integer weights are finite by construction
            finite.check_block(ctx, arr["w"], block, 2, comments=COMMENTS)
        parts_i.append(i - 1)
        parts_j.append(j - 1)
        if weighted:  # a copy: a view would keep the whole parsed block (i, j and w) alive
            parts_w.append(arr["w"].astype(np.float64))
        total += len(arr)
    if total < header.entries:
        raise ctx.error(f"the file ends after {total} of the {header.entries} entries announced by "
                        f"the size line (line {header.size_line}); is it truncated?",
                        max(reader.line_no, header.size_line) + 1, f"{header.entries} entry lines")
    empty = np.zeros(0, np.int64)
    rows = np.concatenate(parts_i) if parts_i else empty
    cols = np.concatenate(parts_j) if parts_j else empty
    weights = (np.concatenate(parts_w) if parts_w else np.zeros(0)) if weighted else None
    return rows, cols, weights


def write_mtx(graph: CSRGraph, stream) -> None:
    rows = graph.row_of_entry().astype(np.int64)
    cols = graph.indices.astype(np.int64)
    weights = graph.weights
    symmetric = not graph.directed
    if symmetric:
        keep = rows >= cols
        rows, cols = rows[keep], cols[keep]
        weights = None if weights is None else weights[keep]
    field = "pattern" if weights is None else "real"
    symmetry = "symmetric" if symmetric else "general"
    kind = "undirected graph: lower triangle" if symmetric else "directed graph or matrix"
    stream.write(f"%%MatrixMarket matrix coordinate {field} {symmetry}\n"
                 f"% {graph.name} ({kind}), written by gpu-graph-explorer\n"
                 f"{graph.n_rows} {graph.n_cols} {len(rows)}\n".encode())
    columns = [rows + 1, cols + 1] + ([] if weights is None else [weights])
    write_columns(stream, columns)


def estimate_mtx(source: GraphSource) -> dict:
    ctx = LoadContext(source.display)
    with source.open() as stream:
        header = read_header(TextReader(stream, ctx, source.file_bytes), ctx)
    symmetric = header.symmetry != "general"
    return {
        "rows": header.rows,
        "cols": header.cols,
        "entries": header.entries * (2 if symmetric else 1),
        "entries_exact": not symmetric,  # the diagonal is not mirrored: an upper bound
        "weighted": header.field != "pattern",
        "directed": header.symmetry != "symmetric",
    }


SPEC = FormatSpec(
    name="mtx",
    description="Matrix Market coordinate (pattern/real/integer; general/symmetric/skew-symmetric)",
    extensions=(".mtx", ".mm"),
    priority=100,
    memory_per_byte=24.0,  # measured 14 on 'i j' lines
    bounded_by_header=True,
    sniff=_sniff,
    read=read_mtx,
    write=write_mtx,
    estimate=estimate_mtx,
)
