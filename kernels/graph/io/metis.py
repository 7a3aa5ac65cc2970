"""METIS / DIMACS10 ``.graph`` files: a header, then one adjacency line per vertex.

Header ``n m [fmt [ncon]]`` (``%`` lines are comments). ``fmt`` is up to three binary digits,
read right-aligned: ``1`` edge weights, ``10`` vertex weights (``ncon`` of them, default 1),
``100`` vertex sizes. Line ``i`` (1-based, blank for an isolated vertex) holds
``[size] [w1 .. wncon] v1 [e1] v2 [e2] ...``. The graph is undirected and every edge is listed
by both endpoints; the reader checks that the lists are symmetric and that they hold exactly
``m`` edges. Vertex sizes and weights are validated and then dropped (``CSRGraph`` has no place
for them; a notice says so); edge weights become the graph's weights.

Adjacency lines are ragged, so ``np.loadtxt`` cannot parse them; each block is tokenised with
NumPy byte operations instead (token starts, line of each token) and converted in one
``np.fromstring`` call, falling back to a line-by-line pass only to name a bad line.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from kernels.graph.csr import CSRGraph
from kernels.graph.io.assemble import build_csr, check_dimensions
from kernels.graph.io.compression import GraphSource
from kernels.graph.io.context import LoadContext
from kernels.graph.io.registry import FormatSpec, Head
from kernels.graph.io.text import TextReader, header_text, is_integer, show

HEADER_FORM = "n m [fmt [ncon]]"
# every METIS value is an integer below 10**18 (so below 2**63); a longer token is refused by its
# length, before any conversion (np.fromstring would clamp it, int() refuses 4,300 digits)
MAX_DIGITS = 18
TOO_LARGE = 10**MAX_DIGITS
# a block of 2-byte tokens ("1 2 1 ...") costs about 15 times its size while it is tokenised
BLOCK_BYTES = 4 << 20
SNIFF_LINES = 200
_SPACE_BYTES = np.array([32, 9, 13, 11, 12], dtype=np.uint8)


@dataclass(frozen=True)
class MetisHeader:
    n: int
    m: int
    sizes: bool
    vertex_weights: int  # ncon, 0 when there are none
    edge_weights: bool
    line: int

    @property
    def prefix(self) -> int:
        """Values before the neighbour list on each line."""
        return int(self.sizes) + self.vertex_weights

    @property
    def stride(self) -> int:
        return 2 if self.edge_weights else 1

    @property
    def line_form(self) -> str:
        parts = (["size"] if self.sizes else []) + [f"w{k + 1}" for k in range(self.vertex_weights)]
        parts += ["v1 e1 v2 e2 ..."] if self.edge_weights else ["v1 v2 ..."]
        return " ".join(parts)


def parse_header(tokens: list[bytes], fail) -> MetisHeader | None:
    """The header from its tokens; ``fail(reason)`` builds the error (sniffing passes a dummy)."""
    if not 2 <= len(tokens) <= 4 or not all(is_integer(t) and not t.startswith(b"-") for t in tokens):
        return fail(f"bad header {show(b' '.join(tokens))}")
    for t in tokens:
        if len(t.lstrip(b"+").lstrip(b"0")) > MAX_DIGITS:
            return fail(f"a header number {_too_long(t)}")
    fmt = tokens[2].decode().lstrip("+") if len(tokens) >= 3 else "0"
    if len(fmt) > 3 or set(fmt) - {"0", "1"}:
        return fail(f"fmt {show(tokens[2])} is not up to three binary digits")
    fmt = fmt.zfill(3)
    n, m = int(tokens[0]), int(tokens[1])
    has_vertex_weights = fmt[1] == "1"
    ncon = int(tokens[3]) if len(tokens) == 4 else (1 if has_vertex_weights else 0)
    if len(tokens) == 4 and not has_vertex_weights and ncon:
        return fail(f"ncon = {ncon} without the vertex-weight digit in fmt")
    if ncon > 1000:
        return fail(f"ncon = {ncon} is implausible")
    return MetisHeader(n, m, fmt[0] == "1", ncon if has_vertex_weights else 0, fmt[2] == "1", 0)


def _sniff(head: Head) -> bool:
    lines = [ln for ln in head.lines if not ln.lstrip().startswith(b"%")]
    if not lines:
        return False
    header = parse_header(lines[0].split(), lambda reason: None)
    if header is None:
        return False
    body = lines[1:]
    if head.complete:
        while body and not body[-1].strip():
            body.pop()
        if len(body) > header.n:
            return False
    for line in body[:SNIFF_LINES]:
        tokens = line.split()
        if not all(is_integer(t) and not t.startswith(b"-") for t in tokens):
            return False
        neighbours = tokens[header.prefix::header.stride]
        if any(int(t) < 1 or int(t) > header.n for t in neighbours if len(t) < 19):
            return False
    return True


def _read_header(reader: TextReader, ctx: LoadContext) -> MetisHeader:
    while True:
        line = reader.readline()
        if line is None:
            raise ctx.error("the file ends before the header", reader.line_no + 1, HEADER_FORM)
        text = header_text(line, ctx, reader.line_no)
        if text.strip() and not text.lstrip().startswith("%"):
            break
    line_no = reader.line_no

    def fail(reason):
        raise ctx.error(reason, line_no, HEADER_FORM)

    header = parse_header(line.split(), fail)
    return MetisHeader(header.n, header.m, header.sizes, header.vertex_weights, header.edge_weights, line_no)


def _tokenise(data: bytes) -> tuple[np.ndarray, np.ndarray] | None:
    """(integer values, line index of each value) of a block, or None if a token is not an integer
    of at most MAX_DIGITS digits. About 30 bytes of temporaries per token (a block of 2-byte tokens
    costs 15 times its size), which is why METIS blocks are small (BLOCK_BYTES)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    if len(buf) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    newline = buf == 10
    starts = ~(newline | np.isin(buf, _SPACE_BYTES))   # bytes of tokens, then the first byte of each
    starts[1:] &= ~starts[:-1].copy()
    # a token's line is the number of newlines before it (searching, not a cumsum per byte)
    token_lines = np.flatnonzero(starts)
    del starts
    token_lines = np.searchsorted(np.flatnonzero(newline), token_lines)
    del newline
    if len(token_lines) == 0:      # blank lines only (isolated vertices): fromstring would return [0]
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            values = np.fromstring(data, dtype=np.int64, sep=" ")
        except ValueError:
            return None
    # np.fromstring clamps a longer number to +-(2**63 - 1) without a word: every value of more than
    # MAX_DIGITS digits is refused, by the line-by-line search for the culprit
    if len(values) != len(token_lines) or values.max() >= TOO_LARGE or values.min() <= -TOO_LARGE:
        return None
    return values, token_lines.astype(np.int64, copy=False)


def _without_comments(data: bytes, first_line: int) -> tuple[bytes, np.ndarray]:
    """Drop ``%`` lines (rare inside a body); return the rest and each kept line's number."""
    pieces = data.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()
    kept = [(first_line + k, p) for k, p in enumerate(pieces) if not p.lstrip().startswith(b"%")]
    body = b"\n".join(p for _, p in kept) + (b"\n" if kept else b"")
    return body, np.array([k for k, _ in kept], dtype=np.int64)


def read_metis(source: GraphSource, ctx: LoadContext) -> CSRGraph:
    with source.open() as stream:
        reader = TextReader(stream, ctx, source.file_bytes, block_bytes=BLOCK_BYTES)
        header = _read_header(reader, ctx)
        check_dimensions(ctx, header.n, header.n, 2 * header.m, header.line)
        rows, cols, weights, vertex_lines, vertices_read = _read_body(reader, ctx, header)
    n, m = header.n, header.m
    if vertices_read < n:
        raise ctx.error(f"the file ends after {vertices_read} of the {n} vertex lines announced by the "
                        f"header (line {header.line})", reader.line_no + 1, "one line per vertex")
    loops = int(np.count_nonzero(rows == cols))
    off_diagonal = len(rows) - loops
    if off_diagonal % 2 or off_diagonal // 2 + loops != m:
        raise ctx.error(f"the header says m = {m} edges, but the adjacency lists hold {len(rows)} entries "
                        f"({off_diagonal / 2:g} edges plus {loops} self-loops)", header.line,
                        "every edge listed by both endpoints: 2*m entries")
    _check_symmetric(ctx, rows, cols, n, vertex_lines)
    if header.prefix:
        ctx.notice("vertex sizes/weights in the file were checked and dropped (a CSR graph has no "
                   "vertex attributes)")
    return build_csr(ctx, n, n, rows, cols, weights, directed=False)


def _read_body(reader: TextReader, ctx: LoadContext, header: MetisHeader):
    """(rows, cols, weights, line of each vertex, vertices read): rows and columns as int32 (a vertex
    count fits), the lists checked block by block against the header's n and 2*m."""
    n, prefix, stride = header.n, header.prefix, header.stride
    promised = 2 * header.m  # a self-loop is listed once, every other edge twice: at most 2*m entries
    parts_r, parts_c, parts_w, parts_lines = [], [], [], []  # no array of size n before the data
    vertex = 0  # vertices read so far
    entries = 0
    for block in reader.blocks():
        data = block.data
        if b"%" in data:
            data, line_numbers = _without_comments(data, block.first_line)
        else:
            count = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
            line_numbers = block.first_line + np.arange(count, dtype=np.int64)
        n_lines = len(line_numbers)
        parsed = _tokenise(data)
        if parsed is None:
            raise _locate_bad_token(ctx, data, line_numbers, header)
        values, token_line = parsed
        counts = np.bincount(token_line, minlength=n_lines)[:n_lines]
        # lines past the n-th vertex may only be blank
        extra = np.flatnonzero(counts[max(n - vertex, 0):])
        if len(extra):
            line = int(line_numbers[max(n - vertex, 0) + extra[0]])
            raise ctx.error(f"more than the {n} vertex lines announced by the header (line {header.line})",
                            line, "blank lines only after the last vertex")
        used = min(n_lines, n - vertex)   # the lines after it are blank: no token lies there
        counts = counts[:used]
        bad = (counts < prefix) | ((counts - prefix) % stride != 0)
        if bad.any():
            k = int(np.argmax(bad))
            raise ctx.error(f"vertex {vertex + k + 1} has {counts[k]} values", int(line_numbers[k]),
                            header.line_form)
        listed = (counts - prefix) // stride
        if entries + int(listed.sum()) > promised:
            # refused where the lists pass the header's promise, before they are kept (a file whose
            # header says m = 1 must not cost the memory of its gigabyte of lists to be refused)
            k = int(np.argmax(entries + np.cumsum(listed) > promised))
            raise ctx.error(f"the adjacency lists hold more than the {promised:,} entries (2*m) that the header "
                            f"(line {header.line}) allows: vertex {vertex + k + 1}'s list passes it",
                            int(line_numbers[k]), "every edge listed by both endpoints: 2*m entries")
        entries += int(listed.sum())
        nbr, owner, w = _lists(values, token_line, counts, header)
        del values
        if len(nbr) and (nbr.min() < 1 or nbr.max() > n):
            k = int(np.argmax((nbr < 1) | (nbr > n)))
            raise ctx.error(f"vertex {vertex + owner[k] + 1} lists neighbour {nbr[k]}",
                            int(line_numbers[owner[k]]), f"neighbours between 1 and {n}")
        rows = owner.astype(np.int32)
        rows += vertex
        cols = nbr.astype(np.int32)
        cols -= 1
        parts_r.append(rows)
        parts_c.append(cols)
        if header.edge_weights:
            parts_w.append(w)
        parts_lines.append(line_numbers[:used])
        vertex += used
    empty = np.zeros(0, np.int32)
    rows = np.concatenate(parts_r) if parts_r else empty
    del parts_r
    cols = np.concatenate(parts_c) if parts_c else empty
    del parts_c
    weights = (np.concatenate(parts_w) if parts_w else np.zeros(0)) if header.edge_weights else None
    vertex_lines = np.concatenate(parts_lines) if parts_lines else np.zeros(0, np.int64)
    return rows, cols, weights, vertex_lines, vertex


def _lists(values: np.ndarray, token_line: np.ndarray, counts: np.ndarray, header: MetisHeader):
    """(neighbours, the line index of each, their edge weights or None) of a block's tokens."""
    prefix, stride = header.prefix, header.stride
    if prefix == 0 and stride == 1:  # plain lists, the usual case: every token is a neighbour
        return values, token_line, None
    line_start = np.cumsum(counts) - counts
    offset = np.arange(len(values))
    offset -= line_start[token_line]
    offset -= prefix  # position within the list; negative for sizes and vertex weights
    in_list = offset >= 0
    neighbour = in_list & (offset % stride == 0)
    weights = values[in_list & (offset % stride == 1)].astype(np.float64) if header.edge_weights else None
    return values[neighbour], token_line[neighbour], weights


def _too_long(token: bytes) -> str:
    digits = len(token.lstrip(b"+-").lstrip(b"0"))
    return f"({show(token)}, {digits:,} digits) is too large: values here have at most {MAX_DIGITS} digits"


def _locate_bad_token(ctx: LoadContext, data: bytes, line_numbers: np.ndarray, header: MetisHeader):
    pieces = data.split(b"\n")
    for k, piece in enumerate(pieces[: len(line_numbers)]):
        for token in piece.split():
            if not is_integer(token):
                return ctx.error(f"{show(token)} is not an integer", int(line_numbers[k]), header.line_form)
            if len(token.lstrip(b"+-").lstrip(b"0")) > MAX_DIGITS:
                return ctx.error(f"value {_too_long(token)}", int(line_numbers[k]), header.line_form)
    return ctx.error("unreadable adjacency data", int(line_numbers[0]) if len(line_numbers) else None,
                     header.line_form)


def _pair_key(a: np.ndarray, b: np.ndarray, width: int) -> np.ndarray:
    """``a * width + b`` in int64, whatever the inputs' type (int32 would overflow silently)."""
    key = a.astype(np.int64)
    key *= width
    key += b
    return key


def _check_symmetric(ctx: LoadContext, rows: np.ndarray, cols: np.ndarray, n: int,
                     vertex_lines: np.ndarray) -> None:
    width = max(n, 1)
    sorted_key = _pair_key(rows, cols, width)
    sorted_key.sort()  # in place: two keys per entry at the peak, not four
    sorted_reverse = _pair_key(cols, rows, width)
    sorted_reverse.sort()
    if np.array_equal(sorted_key, sorted_reverse):
        return
    del sorted_reverse
    key = _pair_key(rows, cols, width)
    reverse = _pair_key(cols, rows, width)
    missing = ~np.isin(reverse, key)
    if missing.any():
        k = int(np.argmax(missing))
    else:  # same pairs, different multiplicities: find an entry whose pair count differs
        counts = np.searchsorted(sorted_key, key, side="right") - np.searchsorted(sorted_key, key)
        reverse_counts = (np.searchsorted(sorted_key, reverse, side="right")
                          - np.searchsorted(sorted_key, reverse))
        k = int(np.argmax(counts != reverse_counts))
    u, v = int(rows[k]), int(cols[k])
    if missing.any():
        reason = f"vertex {u + 1} lists {v + 1}, but vertex {v + 1} does not list {u + 1}"
    else:
        reason = f"vertices {u + 1} and {v + 1} list each other a different number of times"
    raise ctx.error(reason, int(vertex_lines[u]), "symmetric adjacency lists (an undirected graph)")


def estimate_metis(source: GraphSource) -> dict:
    ctx = LoadContext(source.display)
    with source.open() as stream:
        header = _read_header(TextReader(stream, ctx, source.file_bytes), ctx)
    return {"rows": header.n, "cols": header.n, "entries": 2 * header.m, "entries_exact": True,
            "weighted": header.edge_weights, "directed": False}


SPEC = FormatSpec(
    name="metis",
    description="METIS / DIMACS10 graph ('n m [fmt [ncon]]' header, one adjacency line per vertex)",
    extensions=(".graph", ".metis", ".chaco"),
    priority=30,
    memory_per_byte=32.0,
    sniff=_sniff,
    read=read_metis,
    estimate=estimate_metis,
)
