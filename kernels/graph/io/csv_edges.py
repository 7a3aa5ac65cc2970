"""CSV edge tables with a header row (``source,target,weight`` and the many ways to spell it).

Columns: the endpoint columns are found by name (``source``/``src``/``from``/``u``/... and
``target``/``dst``/``to``/``v``/...), else they are the first two; a weight is taken from a
column named ``weight``/``w``/``value``/``cost``/``length``/``distance`` if there is one.
Delimiter: comma, semicolon or tab, from the header row. Quoted fields work (Python's csv).

Vertex ids: if every endpoint is an integer the edge-list rules apply (0/1-based detection,
see :mod:`kernels.graph.io.vertex_ids`); otherwise the values are labels, numbered 0..n-1 in
order of first appearance. Directedness as for edge lists: undirected unless ``directed=True``.
"""

from __future__ import annotations

import csv
import io

import numpy as np

from kernels.graph.csr import CSRGraph
from kernels.graph.io import weights as finite
from kernels.graph.io.assemble import build_csr, check_dimensions, mirror_missing
from kernels.graph.io.compression import GraphSource
from kernels.graph.io.context import LoadContext
from kernels.graph.io.registry import FormatSpec, Head
from kernels.graph.io.text import PARSE_SHARE, is_integer, is_number, show
from kernels.graph.io.vertex_ids import LARGEST_ID, HeaderHints, check_base_option, number_vertices

SOURCE_NAMES = ("source", "src", "from", "u", "node1", "source_id", "sourceid", "from_id", "start", "tail")
TARGET_NAMES = ("target", "dst", "to", "v", "node2", "target_id", "targetid", "to_id", "end", "head")
WEIGHT_NAMES = ("weight", "w", "value", "cost", "length", "distance", "capacity")
DELIMITERS = (",", ";", "\t")
CHECK_EVERY = 100_000
ID_DIGITS = len(str(LARGEST_ID))


def _delimiter(header: str) -> str | None:
    counts = {d: header.count(d) for d in DELIMITERS}
    best = max(counts, key=counts.get)
    return best if counts[best] else None


def _sniff(head: Head) -> bool:
    lines = [ln for ln in head.lines if ln.strip()]
    if len(lines) < 1 or head.is_binary:
        return False
    header = lines[0].decode("utf-8", errors="replace").lstrip("\ufeff")
    delimiter = _delimiter(header)
    if delimiter is None:
        return False
    names = [n.strip().strip('"').strip("'") for n in header.split(delimiter)]
    if len(names) < 2 or all(is_number(n.encode()) for n in names):
        return False  # no header row: that is a plain edge list
    if not all(names) or header.lstrip().startswith(("#", "%", "<", "*")):
        return False
    if len(lines) > 1:
        second = lines[1].decode("utf-8", errors="replace")
        if len(next(csv.reader([second], delimiter=delimiter))) != len(names):
            return False
    return True


def _column(names: list[str], wanted: tuple[str, ...]) -> int | None:
    lowered = [n.strip().lower() for n in names]
    for w in wanted:
        if w in lowered:
            return lowered.index(w)
    return None


def read_csv_edges(source: GraphSource, ctx: LoadContext, *, directed: bool | None = None,
                   base: int | None = None, relabel: bool = False) -> CSRGraph:
    base = check_base_option(base)
    raw = source.read_all(ctx)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ctx.error("the file is not UTF-8 text", line, "a UTF-8 CSV file") from None
    del raw
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise ctx.error("binary data (NUL byte) in a CSV file", line, "text")
    total_lines = max(text.count("\n"), 1)
    first_line_end = text.find("\n")
    delimiter = _delimiter(text[: first_line_end if first_line_end >= 0 else len(text)]) or ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        names = next(reader, None)
        while names is not None and not any(n.strip() for n in names):
            names = next(reader, None)
        if names is None:
            raise ctx.error("the file is empty", 1, "a header row such as source,target,weight")
        src_col = _column(names, SOURCE_NAMES)
        dst_col = _column(names, TARGET_NAMES)
        if src_col is None or dst_col is None or src_col == dst_col:
            src_col, dst_col = 0, 1
        if len(names) < 2:
            raise ctx.error(f"the header row has {len(names)} column", reader.line_num,
                            "at least two columns: source,target[,weight]")
        weight_col = _column(names, WEIGHT_NAMES)
        header_line = reader.line_num
        sources: list[str] = []
        targets: list[str] = []
        weights: list[float] = []
        line_numbers: list[int] = []
        for row in reader:
            if not row or not any(f.strip() for f in row):
                continue
            if len(row) != len(names):
                raise ctx.error(f"found {len(row)} fields", reader.line_num,
                                f"{len(names)} fields like the header row (line {header_line})")
            sources.append(row[src_col].strip())
            targets.append(row[dst_col].strip())
            line_numbers.append(reader.line_num)
            if weight_col is not None:
                value = row[weight_col].strip()
                if not is_number(value.encode()):
                    raise ctx.error(f"weight {show(value.encode())} is not a number", reader.line_num,
                                    f"a number in column '{names[weight_col]}'")
                weights.append(float(value))
                finite.check_value(ctx, weights[-1], value.encode(), reader.line_num)
            if len(sources) % CHECK_EVERY == 0:
                ctx.check_cancel()
                ctx.report(0.5 + (PARSE_SHARE - 0.5) * reader.line_num / total_lines)
    except csv.Error as exc:
        raise ctx.error(f"malformed CSV: {exc}", reader.line_num) from None
    w = np.asarray(weights, dtype=np.float64) if weight_col is not None else None
    hints = HeaderHints()
    if all(is_integer(s.encode()) for s in sources) and all(is_integer(t.encode()) for t in targets):
        u = _integer_ids(sources, line_numbers, ctx)
        v = _integer_ids(targets, line_numbers, ctx)
        u, v, n = number_vertices(ctx, u, v, base=base, hints=hints, relabel=relabel)
    else:
        index: dict[str, int] = {}
        u = np.fromiter((index.setdefault(s, len(index)) for s in sources), np.int64, len(sources))
        v = np.fromiter((index.setdefault(t, len(index)) for t in targets), np.int64, len(targets))
        n = len(index)
        ctx.notice(f"vertex labels numbered 0..{n - 1} in order of first appearance")
        check_dimensions(ctx, n, n, len(u))
    if directed is None:
        directed = False
        ctx.notice("read as an undirected graph (ask for directed=True to keep each row as one arc)")
    if not directed:
        u, v, w = mirror_missing(u, v, w, n)
    return build_csr(ctx, n, n, u, v, w, directed=directed)


def _integer_ids(values: list[str], line_numbers: list[int], ctx: LoadContext) -> np.ndarray:
    """Integer vertex ids as int64, each checked to lie in 0..LARGEST_ID; a long one is refused by its
    length before int() sees it (Python refuses strings of more than 4,300 digits with a raw error)."""
    ids = np.empty(len(values), dtype=np.int64)
    for k, text in enumerate(values):
        significant = text.lstrip("+-").lstrip("0")
        value = int(text) if len(significant) <= ID_DIGITS else None
        if value is None or not 0 <= value <= LARGEST_ID:
            digits = f" ({len(significant):,} digits)" if value is None else ""
            raise ctx.error(f"vertex id {show(text.encode())}{digits} is out of range", line_numbers[k],
                            f"0 <= id <= {LARGEST_ID} (or non-numeric labels)")
        ids[k] = value
    return ids


SPEC = FormatSpec(
    name="csv",
    description="CSV edge table with a header row (source,target[,weight]; labels or integer ids)",
    extensions=(".csv",),
    priority=40,
    memory_per_byte=64.0,  # measured 41 on 'a,b' rows
    sniff=_sniff,
    read=read_csv_edges,
    options=frozenset({"directed", "base", "relabel"}),
)
