"""Weights are finite: a NaN or infinite weight is refused where it is read, naming its line.

The decision, format by format and algorithm by algorithm, is in docs/formats.md ("Weights"). In
short: no file may give an edge a NaN, ``inf`` or ``-inf`` weight, nor a number too large for a
float64 (``1e400``, which would become ``inf``). NaN means nothing in any family; an infinite SSSP
or APSP weight would mean "no edge", which a file says by leaving the edge out; SpMV would turn
``inf * 0`` into NaN; and the live structure (``SlottedGraph``) holds finite weights only, so a
graph read with one would fail later, far from its cause. Integer weights (Matrix Market
``integer``, METIS) are finite by construction and are not checked here.
"""

from __future__ import annotations

import math

import numpy as np

from kernels.errors import GraphFormatError
from kernels.graph.io.context import LoadContext
from kernels.graph.io.text import Block, data_lines, show

EXPECTED = "a finite weight"


def non_finite_reason(token: bytes, value: float) -> str:
    """Why ``value``, read from ``token``, is refused: 'weight 'nan' is not a number' and the like."""
    if math.isnan(value):
        return f"weight {show(token)} is not a number"
    if token.strip().lstrip(b"+-")[:3].lower() == b"inf":
        return f"weight {show(token)} is infinite"
    return f"weight {show(token)} overflows a 64-bit float (it would be infinite)"


def check_block(ctx: LoadContext, weights: np.ndarray, block: Block, column: int, *,
                comments: tuple[bytes, ...], delimiter: bytes | None = None) -> None:
    """Refuse the first non-finite weight of a parsed block; ``column`` is the weight's position
    among the tokens of a data line (so that the message quotes it as the file wrote it)."""
    bad = ~np.isfinite(weights)
    if not bad.any():
        return
    row = int(np.argmax(bad))
    for k, (line_no, tokens) in enumerate(data_lines(block, comments, delimiter)):
        if k == row:
            raise ctx.error(non_finite_reason(tokens[column], float(weights[row])), line_no, EXPECTED)
    raise ctx.error(non_finite_reason(b"", float(weights[row])), block.first_line, EXPECTED)


def check_value(ctx: LoadContext, value: float, token: bytes, line: int | None) -> None:
    """Refuse one weight read on its own (CSV, Pajek)."""
    if not math.isfinite(value):
        raise ctx.error(non_finite_reason(token, value), line, EXPECTED)


def first_non_finite(weights: np.ndarray) -> int | None:
    """Index of the first NaN or infinite weight, or None (readers without lines name the entry)."""
    bad = ~np.isfinite(weights)
    return int(np.argmax(bad)) if bad.any() else None


def refusal(ctx: LoadContext, where: str, value: float, token: bytes | None = None) -> GraphFormatError:
    """A refusal naming an entry rather than a line (``.npz`` arrays, NetworkX's parsed edges);
    ``token`` is the value as the file gave it, when there is one."""
    value = float(value)
    return ctx.error(f"{where}: {non_finite_reason(token or repr(value).encode(), value)}", expected=EXPECTED)
