"""DIMACS text formats: the 9th challenge's shortest-path ``.gr`` and the clique/colouring ``.clq``.

``.gr``: ``c`` comment lines, one problem line ``p sp N M``, then ``M`` arc lines ``a u v w``
(1-based, directed, weighted). The arc count must match ``M``.

``.clq`` / ``.col`` (2nd challenge, the usual k-clique benchmarks): ``p edge N M`` (or
``p col``), then edge lines ``e u v`` (1-based, undirected, unweighted). Several published
files get ``M`` wrong, so a mismatch is a notice, not an error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels.errors import UnsupportedFormatError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import weights as finite
from kernels.graph.io.assemble import build_csr, check_dimensions, mirror_missing
from kernels.graph.io.compression import GraphSource
from kernels.graph.io.context import LoadContext
from kernels.graph.io.registry import FormatSpec, Head
from kernels.graph.io.text import TextReader, check_line, header_text, line_of_row, parse_block, show

COMMENTS = (b"c",)


@dataclass(frozen=True)
class Problem:
    """One DIMACS problem kind: its data-line letter and what the graph is."""

    kinds: tuple[str, ...]  # words after 'p'
    letter: bytes
    directed: bool
    weighted: bool
    strict_count: bool


SHORTEST_PATH = Problem(("sp",), b"a", directed=True, weighted=True, strict_count=True)
CLIQUE = Problem(("edge", "col"), b"e", directed=False, weighted=False, strict_count=False)


def _problem_line(head: Head) -> list[bytes] | None:
    for raw in head.lines:
        text = raw.strip()
        if not text or text.startswith(b"c"):
            continue
        return text.split()
    return None


def _sniffer(problem: Problem):
    def sniff(head: Head) -> bool:
        tokens = _problem_line(head)
        return bool(tokens) and tokens[0] == b"p" and len(tokens) >= 2 \
            and tokens[1].decode("latin-1").lower() in problem.kinds
    return sniff


def _read_problem_line(reader: TextReader, ctx: LoadContext, problem: Problem) -> tuple[int, int, int]:
    form = f"p {problem.kinds[0]} VERTICES {'ARCS' if problem.directed else 'EDGES'}"
    while True:
        line = reader.readline()
        if line is None:
            raise ctx.error("the file ends before the problem line", reader.line_no + 1, form)
        text = header_text(line, ctx, reader.line_no).strip()
        if text and not text.startswith("c"):
            break
    tokens = line.split()
    if tokens[0] != b"p":
        raise ctx.error(f"found {show(tokens[0])} before the problem line", reader.line_no, form)
    if len(tokens) < 2 or tokens[1].decode("latin-1").lower() not in problem.kinds:
        kind = tokens[1].decode("latin-1") if len(tokens) > 1 else ""
        raise UnsupportedFormatError(f"DIMACS problem '{kind}' is not a graph format read here",
                                     ctx.path, reader.line_no, form)
    problem_with_sizes = check_line(tokens[2:], "ii") if len(tokens) == 4 else None
    if len(tokens) != 4 or problem_with_sizes is not None:
        detail = f": {problem_with_sizes[0]}" if problem_with_sizes else ""
        raise ctx.error(f"bad problem line{detail}", reader.line_no, form)
    n, m = int(tokens[2]), int(tokens[3])
    if n < 0 or m < 0:
        raise ctx.error("negative size on the problem line", reader.line_no, form)
    return n, m, reader.line_no


def _read(source: GraphSource, ctx: LoadContext, problem: Problem) -> CSRGraph:
    letter = problem.letter.decode()
    kinds = "iif" if problem.weighted else "ii"
    fields = [("tag", "S2"), ("u", np.int64), ("v", np.int64)]
    if problem.weighted:
        fields.append(("w", np.float64))
    form = f"{letter} U V{' WEIGHT' if problem.weighted else ''}"

    def validate(tokens):
        if not tokens or tokens[0] != problem.letter:
            found = show(tokens[0]) if tokens else "an empty line"
            return f"line starts with {found}", f"'{form}'"
        return check_line(tokens[1:], kinds)

    parts_u, parts_v, parts_w = [], [], []
    total = 0
    with source.open() as stream:
        reader = TextReader(stream, ctx, source.file_bytes)
        n, m, p_line = _read_problem_line(reader, ctx, problem)
        check_dimensions(ctx, n, n, m, p_line)
        for block in reader.blocks():
            arr = parse_block(block, ctx, np.dtype(fields), validate, comments=COMMENTS)
            if problem.strict_count and total + len(arr) > m:
                # refused at the first arc past the promise, before the rest of the file is kept
                raise ctx.error(f"more arcs than the {m} announced by the problem line (line {p_line})",
                                line_of_row(block, m - total, COMMENTS), f"{m} '{letter}' lines")
            total += len(arr)
            u, v = arr["u"], arr["v"]
            bad = (arr["tag"] != problem.letter) | (u < 1) | (u > n) | (v < 1) | (v > n)
            if bad.any():
                k = int(np.argmax(bad))
                line = line_of_row(block, k, COMMENTS)
                if arr["tag"][k] != problem.letter:
                    raise ctx.error(f"line starts with {show(arr['tag'][k])}", line, f"'{form}'")
                value = u[k] if not 1 <= u[k] <= n else v[k]
                raise ctx.error(f"vertex {value} out of range", line, f"1 <= vertex <= {n}")
            if problem.weighted:
                finite.check_block(ctx, arr["w"], block, 3, comments=COMMENTS)
            parts_u.append(u - 1)
            parts_v.append(v - 1)
            if problem.weighted:
                parts_w.append(arr["w"])
    u = np.concatenate(parts_u) if parts_u else np.zeros(0, np.int64)
    v = np.concatenate(parts_v) if parts_v else np.zeros(0, np.int64)
    w = (np.concatenate(parts_w) if parts_w else np.zeros(0)) if problem.weighted else None
    del parts_u, parts_v, parts_w  # the per-block pieces would otherwise live on through the CSR build
    if len(u) != m:
        what = "arcs" if problem.directed else "edges"
        message = f"the problem line (line {p_line}) announces {m} {what}; the file has {len(u)}"
        if problem.strict_count:
            raise ctx.error(message, p_line if len(u) > m else reader.line_no + 1, f"{m} '{letter}' lines")
        ctx.notice(message)
    if not problem.directed:
        u, v, w = mirror_missing(u, v, w, n)
    return build_csr(ctx, n, n, u, v, w, directed=problem.directed)


def read_gr(source: GraphSource, ctx: LoadContext) -> CSRGraph:
    return _read(source, ctx, SHORTEST_PATH)


def read_clq(source: GraphSource, ctx: LoadContext) -> CSRGraph:
    return _read(source, ctx, CLIQUE)


def _estimator(problem: Problem):
    def estimate(source: GraphSource) -> dict:
        ctx = LoadContext(source.display)
        with source.open() as stream:
            n, m, _ = _read_problem_line(TextReader(stream, ctx, source.file_bytes), ctx, problem)
        return {"rows": n, "cols": n, "entries": m if problem.directed else 2 * m,
                "entries_exact": problem.directed, "weighted": problem.weighted,
                "directed": problem.directed}
    return estimate


SPEC = FormatSpec(
    name="dimacs-gr",
    description="DIMACS shortest-path graph ('p sp N M', arcs 'a u v w'; directed, weighted)",
    extensions=(".gr",),
    priority=80,
    memory_per_byte=24.0,  # measured 16 on 'a u v w' lines
    sniff=_sniffer(SHORTEST_PATH),
    read=read_gr,
    estimate=_estimator(SHORTEST_PATH),
)

CLIQUE_SPEC = FormatSpec(
    name="dimacs-clq",
    description="DIMACS clique/colouring graph ('p edge N M', edges 'e u v'; undirected)",
    extensions=(".clq", ".col", ".dimacs"),
    priority=80,
    memory_per_byte=32.0,  # measured 18 on 'e u v' lines
    sniff=_sniffer(CLIQUE),
    read=read_clq,
    estimate=_estimator(CLIQUE),
)

SPECS = (SPEC, CLIQUE_SPEC)
