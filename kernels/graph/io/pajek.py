"""Pajek ``.net`` files, read line by line in linear time, every problem named by its line.

They used to go through NetworkX, whose reader splits every line with ``shlex.split``. shlex grows
a token one character at a time (``self.token += c`` on an attribute, which CPython cannot extend
in place), so splitting is quadratic in the length of a token: a 1-2 MB file with one line of
10^6-2·10^6 characters took 15-60 s (issue 30). Here a line is split at most three times
(``bytes.split(None, 3)``), labels and attributes are never tokenised (a CSR graph keeps neither),
and every number is checked by its length before it is converted. The long runs of ``u v`` or
``u v value`` lines that make up big files are parsed in bulk by NumPy (``np.loadtxt``); a run it
cannot take whole (attributes, quotes, a bad line) is read line by line, which names the line.

The format (Pajek's manual, section "Networks"):

* ``%`` lines are comments; blank lines are skipped; ``*Network NAME`` is ignored.
* ``*Vertices N [N1]``: the vertices are 1..N. The lines after it, up to the next ``*`` line,
  are ``k ["label"] [x y z] [attributes]``; only ``k`` is read (it must lie in 1..N), and a
  vertex without a line has no label, which is allowed.
* ``*Arcs`` and ``*Edges``: lines ``u v [value] [attributes]``; ``u`` and ``v`` in 1..N; the
  value is the weight (a line without one gets weight 1 when others have one, with a notice).
* ``*Arcslist`` and ``*Edgeslist``: lines ``u v1 v2 ...`` (unweighted).
* ``*Matrix``: N rows of N values; a non-zero value is an arc with that weight.
* Any arc section makes the graph directed; ``*Edges`` lines then become two arcs (a notice says
  so). A file of edges only is undirected. Without ``*Vertices``, N is the largest vertex number.
* Other sections (``*Partition``, ``*Vector`` of a ``.paj`` project) end the network: the rest
  is skipped with a notice.

Files NetworkX writes read as NetworkX read them (vertex k is row k-1); unlike NetworkX, two
vertices with the same label stay two vertices, and an edge must name vertices by number.
"""

from __future__ import annotations

import io
import warnings
from array import array

import numpy as np

from kernels.graph.csr import CSRGraph
from kernels.graph.io import weights as finite
from kernels.graph.io.assemble import MAX_INDEX, build_csr, mirror_all
from kernels.graph.io.compression import GraphSource
from kernels.graph.io.context import LoadContext
from kernels.graph.io.registry import FormatSpec, Head
from kernels.graph.io.text import Block, TextReader, show

SECTIONS = ("*network", "*vertices", "*arcslist", "*edgeslist", "*arcs", "*edges", "*matrix")
VERTEX_DIGITS = len(str(MAX_INDEX + 1))
CHECK_EVERY = 1 << 16  # lines between two looks at cancel()
PAIR_SECTIONS = ("*arcs", "*edges")
PAIR_DTYPES = {2: np.dtype([("u", np.int64), ("v", np.int64)]),
               3: np.dtype([("u", np.int64), ("v", np.int64), ("w", np.float64)])}
LINE_FORMS = {"*arcs": "u v [value]", "*edges": "u v [value]", "*arcslist": "u v1 v2 ...",
              "*edgeslist": "u v1 v2 ...", "*matrix": "N values per row", "*vertices": 'k ["label"] ...'}


def _sniff(head: Head) -> bool:
    for raw in head.lines:
        text = raw.strip().lstrip(b"\xef\xbb\xbf")
        if text and not text.startswith(b"%"):
            return text.lower().startswith((b"*vertices", b"*network", b"*arcs", b"*edges"))
    return False


class _Network:
    """What has been read so far: the section, the vertex count, the arcs and the edges."""

    def __init__(self, ctx: LoadContext):
        self.ctx = ctx
        self.section: str | None = None
        self.n: int | None = None
        self.vertices_line = 0
        self.largest = 0
        self.matrix_row = 0
        # arcs (directed) and edges (undirected) apart: a file may mix them
        self.arcs = (array("q"), array("q"), array("d"))
        self.edges = (array("q"), array("q"), array("d"))
        self.valued = 0    # entries given a weight by the file
        self.unvalued = 0  # entries that were not (list lines, *Arcs/*Edges lines without a value)
        self.skipped: str | None = None

    # ---- one line ----------------------------------------------------------------------------
    def take(self, line_no: int, line: bytes) -> None:
        parts = line.split(None, 3)
        if not parts or parts[0].startswith(b"%"):
            return
        if parts[0].startswith(b"*"):
            self._start_section(line_no, parts)
        elif self.skipped is not None:
            return
        elif self.section in ("*arcs", "*edges"):
            self._pair(line_no, parts)
        elif self.section == "*vertices":
            self._vertex(parts[0], line_no)
        elif self.section in ("*arcslist", "*edgeslist"):
            self._list(line_no, line)
        elif self.section == "*matrix":
            self._matrix_row(line_no, line)
        else:
            where = "after *Network" if self.section == "*network" else "before the first section"
            raise self.ctx.error(f"{show(parts[0])} {where}", line_no, "*Vertices N, then *Arcs or *Edges")

    def _start_section(self, line_no: int, parts: list[bytes]) -> None:
        if self.skipped is not None:
            return
        self._check_matrix_complete(line_no)
        word = parts[0].decode("latin-1").lower()
        section = next((s for s in SECTIONS if word.startswith(s)), None)
        if section is None:
            self.skipped = parts[0].decode("latin-1")[:40]
            self.ctx.notice(f"the file goes on with a {self.skipped} section (line {line_no}), which is "
                            "not part of a network: skipped")
            return
        if section == "*vertices":
            self._declare_vertices(line_no, parts)
        elif section == "*matrix":
            if self.n is None:
                raise self.ctx.error("*Matrix before *Vertices", line_no, "*Vertices N first: the matrix is N x N")
            self.matrix_row = 0
        self.section = section

    def _declare_vertices(self, line_no: int, parts: list[bytes]) -> None:
        if self.n is not None:
            raise self.ctx.error(f"a second *Vertices line (the first is line {self.vertices_line})", line_no,
                                 "one network per file")
        count = parts[1] if len(parts) > 1 else b""
        if not count.isdigit():
            raise self.ctx.error(f"*Vertices is followed by {show(count) if count else 'nothing'}", line_no,
                                 "*Vertices N, N the number of vertices")
        if len(count.lstrip(b"0")) > VERTEX_DIGITS or int(count) > MAX_INDEX + 1:
            raise self.ctx.too_large(f"*Vertices {show(count)}: more vertices than the 32-bit indices of a CSR "
                                     f"graph can address (at most {MAX_INDEX + 1:,})", line_no)
        self.n = int(count)
        self.vertices_line = line_no

    # ---- a run of 'u v [value]' lines at once ---------------------------------------------
    @property
    def in_pair_section(self) -> bool:
        return self.section in PAIR_SECTIONS and self.skipped is None

    def take_run(self, run: Block) -> bool:
        """Lines of an *Arcs/*Edges section, none starting with '*' or '%', parsed in bulk; False
        (nothing taken) where NumPy cannot take them all alike: the caller reads them one by one."""
        first = run.data.split(b"\n", 1)[0].split()
        dtype = PAIR_DTYPES.get(len(first))
        if dtype is None or b'"' in run.data:
            return False
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parsed = np.loadtxt(io.BytesIO(run.data), dtype=dtype, ndmin=1, comments=None, encoding="latin-1",
                                    quotechar=None)
        except (ValueError, OverflowError, TypeError, UnicodeError):
            return False
        u, v = parsed["u"], parsed["v"]
        top = self.n if self.n is not None else MAX_INDEX + 1
        if len(parsed) and (min(u.min(), v.min()) < 1 or max(u.max(), v.max()) > top):
            return False  # the line by line reading names the first vertex out of range
        if "w" in parsed.dtype.names:
            finite.check_block(self.ctx, parsed["w"], run, 2, comments=())
            self.valued += len(parsed)
        else:
            self.unvalued += len(parsed)
        rows, cols, weights = self.arcs if self.section == "*arcs" else self.edges
        rows.frombytes((u - 1).tobytes())
        cols.frombytes((v - 1).tobytes())
        w = parsed["w"] if "w" in parsed.dtype.names else np.ones(len(parsed))
        weights.frombytes(np.ascontiguousarray(w).tobytes())
        if len(parsed):
            self.largest = max(self.largest, int(u.max()), int(v.max()))
        return True

    # ---- numbers -----------------------------------------------------------------------------
    def _vertex(self, token: bytes, line_no: int) -> int:
        """A 0-based vertex from its 1-based number, checked against N (checked by length first)."""
        token = token[1:] if token.startswith(b"+") else token  # as the bulk path (NumPy) reads it
        if not token.isdigit():
            raise self.ctx.error(f"{show(token)} is not a vertex number", line_no,
                                 f"vertex numbers 1..{self.n if self.n is not None else 'N'}")
        top = self.n if self.n is not None else MAX_INDEX + 1
        if len(token.lstrip(b"0")) > VERTEX_DIGITS or not 1 <= int(token) <= top:
            digits = len(token.lstrip(b"0"))
            shown = f"{show(token)} ({digits:,} digits)" if digits > VERTEX_DIGITS else show(token)
            why = f"the *Vertices line (line {self.vertices_line}) declares {self.n}" if self.n is not None \
                else f"at most {MAX_INDEX + 1:,} vertices can be indexed"
            raise self.ctx.error(f"vertex {shown} is out of range: {why}", line_no, f"1 <= vertex <= {top}")
        k = int(token)
        if k > self.largest:
            self.largest = k
        return k - 1

    def _value(self, token: bytes, line_no: int) -> float | None:
        """The weight a token gives, or None if it is not a number (an attribute keyword then)."""
        if b"_" in token:  # float() takes '1_0'; no Pajek writer does
            return None
        try:
            value = float(token)
        except ValueError:
            return None
        finite.check_value(self.ctx, value, token, line_no)
        return value

    # ---- sections ----------------------------------------------------------------------------
    def _pair(self, line_no: int, parts: list[bytes]) -> None:
        if len(parts) < 2:
            raise self.ctx.error("found 1 value", line_no, f"'{LINE_FORMS[self.section]}' lines after "
                                 f"{self.section[1:].capitalize()}")
        u, v = self._vertex(parts[0], line_no), self._vertex(parts[1], line_no)
        value = self._value(parts[2], line_no) if len(parts) > 2 else None
        if value is None:
            self.unvalued += 1
            value = 1.0
        else:
            self.valued += 1
        rows, cols, weights = self.arcs if self.section == "*arcs" else self.edges
        rows.append(u)
        cols.append(v)
        weights.append(value)

    def _list(self, line_no: int, line: bytes) -> None:
        tokens = line.split()
        u = self._vertex(tokens[0], line_no)
        rows, cols, weights = self.arcs if self.section == "*arcslist" else self.edges
        self.unvalued += len(tokens) - 1
        for token in tokens[1:]:
            rows.append(u)
            cols.append(self._vertex(token, line_no))
            weights.append(1.0)

    def _matrix_row(self, line_no: int, line: bytes) -> None:
        n = self.n
        self.matrix_row += 1
        if self.matrix_row > n:
            raise self.ctx.error(f"more than the {n} rows of the matrix", line_no, f"{n} rows of {n} values")
        tokens = line.split()
        if len(tokens) != n:
            raise self.ctx.error(f"row {self.matrix_row} of the matrix has {len(tokens)} values", line_no,
                                 f"{n} values per row")
        rows, cols, weights = self.arcs
        for j, token in enumerate(tokens):
            value = self._value(token, line_no)
            if value is None:
                raise self.ctx.error(f"{show(token)} is not a number", line_no, f"{n} numbers per row")
            if value != 0:
                rows.append(self.matrix_row - 1)
                cols.append(j)
                weights.append(value)
                self.valued += 1
        self.largest = max(self.largest, n)

    def _check_matrix_complete(self, line_no: int | None) -> None:
        if self.section == "*matrix" and self.matrix_row < self.n:
            what = "the file ends" if line_no is None else "the next section starts"
            raise self.ctx.error(f"{what} after {self.matrix_row} of the {self.n} rows of the matrix", line_no,
                                 f"{self.n} rows of {self.n} values")

    # ---- the graph ---------------------------------------------------------------------------
    def graph(self) -> CSRGraph:
        ctx = self.ctx
        if self.skipped is None:
            self._check_matrix_complete(None)
        n = self.n if self.n is not None else self.largest
        arcs = [np.frombuffer(a, dtype=np.int64 if a.typecode == "q" else np.float64) for a in self.arcs]
        edges = [np.frombuffer(a, dtype=np.int64 if a.typecode == "q" else np.float64) for a in self.edges]
        directed = len(arcs[0]) > 0 or (len(edges[0]) == 0 and self.section in ("*arcs", "*arcslist", "*matrix"))
        rows, cols, weights = mirror_all(*edges)
        if directed and len(edges[0]):
            ctx.notice(f"{len(edges[0])} lines of *Edges in a network with arcs: each is stored as two arcs")
            rows, cols, weights = (np.concatenate([a, e]) for a, e in zip(arcs, (rows, cols, weights), strict=True))
        elif directed:
            rows, cols, weights = arcs
        if self.valued == 0:
            weights = None
        elif self.unvalued:
            ctx.notice(f"{self.unvalued} of {self.valued + self.unvalued} arcs/edges have no value: they get weight 1")
        return build_csr(ctx, n, n, rows, cols, weights, directed=directed)


def read_pajek(source: GraphSource, ctx: LoadContext) -> CSRGraph:
    network = _Network(ctx)
    with source.open() as stream:
        reader = TextReader(stream, ctx, source.file_bytes)
        for block in reader.blocks():
            _read_block(network, block, ctx)
    return network.graph()


def _read_block(network: _Network, block: Block, ctx: LoadContext) -> None:
    data, pos, line_no = block.data, 0, block.first_line
    while pos < len(data):
        end = _run_end(data, pos) if network.in_pair_section else pos
        if end > pos:
            run = Block(data[pos:end], line_no)
            if not network.take_run(run):
                _take_lines(network, run, ctx)  # never retried in bulk: each try costs the whole run
            line_no += run.data.count(b"\n")
            pos = end
            continue
        cut = data.find(b"\n", pos)
        cut = len(data) if cut < 0 else cut
        network.take(line_no, data[pos:cut].rstrip(b"\r"))
        line_no += 1
        pos = cut + 1


def _run_end(data: bytes, pos: int) -> int:
    """End of the lines from ``pos`` on that start with neither '*' (a section) nor '%' (a comment)."""
    if data[pos:pos + 1] in (b"*", b"%"):
        return pos
    ends = [k for k in (data.find(b"\n*", pos), data.find(b"\n%", pos)) if k >= 0]
    return min(ends) + 1 if ends else len(data)


def _take_lines(network: _Network, run: Block, ctx: LoadContext) -> None:
    for count, (line_no, line) in enumerate(run.lines(), 1):
        network.take(line_no, line)
        if count % CHECK_EVERY == 0:
            ctx.check_cancel()


SPEC = FormatSpec(
    name="pajek",
    description="Pajek .net (*Vertices, *Arcs / *Edges, their lists, *Matrix)",
    extensions=(".net", ".pajek"),
    priority=80,
    memory_per_byte=96.0,  # measured 60 on 'u v' arcs through NetworkX; kept as the budget
    sniff=_sniff,
    read=read_pajek,
)
