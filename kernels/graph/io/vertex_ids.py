"""From the vertex ids written in an edge list to 0-based CSR vertex numbers.

Edge lists do not say whether their ids start at 0 or 1, so the rule is (also in docs/formats.md):

1. an explicit choice wins: the ``base=`` option, else a header comment saying ``0-based`` or
   ``1-based`` (our writer puts one there);
2. otherwise, if any id is 0 the ids are 0-based;
3. otherwise, if the smallest id is 1 they are 1-based (shifted down by one);
4. otherwise (smallest id > 1) they are used as given (0-based) and the vertices below the
   smallest id are isolated.

The vertex count is ``max id + 1`` after the shift, or the ``Nodes: N`` of a SNAP header if
that is larger (trailing isolated vertices). ``relabel=True`` instead numbers the distinct ids
0..k-1 in increasing order, for files with huge, sparse ids.
"""

from __future__ import annotations

import re

import numpy as np

from kernels.errors import ParameterError
from kernels.graph.io.assemble import MAX_INDEX, check_dimensions
from kernels.graph.io.context import LoadContext

DIRECTED_WORD = re.compile(rb"\b(un)?directed\b", re.IGNORECASE)
NODES_COUNT = re.compile(rb"\bnodes\s*[:=]\s*(\d+)", re.IGNORECASE)
BASE_WORD = re.compile(rb"\b([01])-based\b", re.IGNORECASE)
WEIGHTED_WORD = re.compile(rb"\b(un)?weighted\b", re.IGNORECASE)
# ids above this cannot be numbered densely (int32 indices); relabel=True handles them
LARGEST_ID = MAX_INDEX + 1


class HeaderHints:
    """What the leading comment lines of an edge list say about the graph."""

    def __init__(self):
        self.directed: bool | None = None
        self.nodes: int | None = None
        self.base: int | None = None
        self.weighted: bool | None = None  # only matters for a file without edges

    def read_comment(self, line: bytes) -> None:
        if self.directed is None:
            m = DIRECTED_WORD.search(line)
            if m:
                self.directed = m.group(1) is None
        if self.nodes is None:
            m = NODES_COUNT.search(line)
            if m and len(m.group(1)) < 12:
                self.nodes = int(m.group(1))
        if self.base is None:
            m = BASE_WORD.search(line)
            if m:
                self.base = int(m.group(1))
        if self.weighted is None:
            m = WEIGHTED_WORD.search(line)
            if m:
                self.weighted = m.group(1) is None


def check_base_option(base) -> int | None:
    if base is not None and base not in (0, 1):
        raise ParameterError("base", base, "0, 1 or None (detect)")
    return base


def number_vertices(ctx: LoadContext, u: np.ndarray, v: np.ndarray, *, base: int | None,
                    hints: HeaderHints, relabel: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """0-based endpoints and the vertex count (ids already checked to be >= 0)."""
    if relabel:
        ids, inverse = np.unique(np.concatenate([u, v]), return_inverse=True)
        ctx.notice(f"relabelled {len(ids)} distinct vertex ids to 0..{len(ids) - 1} in increasing order")
        inverse = inverse.astype(np.int64)
        return inverse[: len(u)], inverse[len(u):], len(ids)
    chosen = base if base is not None else hints.base
    smallest = int(min(u.min(), v.min())) if len(u) else 0
    if chosen is None:
        if smallest == 1:
            chosen = 1
            ctx.notice("vertex ids are 1-based (there is no id 0): shifted down by one")
        else:
            chosen = 0
            if smallest > 1:
                ctx.notice(f"the smallest vertex id is {smallest}: ids are used as given (0-based), "
                           "so the vertices below it are isolated")
    if chosen == 1 and len(u):
        if smallest < 1:
            raise ctx.error("vertex id 0 in a file read as 1-based", expected="ids >= 1 (or base=0)")
        u, v = u - 1, v - 1
    largest = int(max(u.max(), v.max())) if len(u) else -1
    n = largest + 1
    if hints.nodes is not None and hints.nodes > n:
        n = hints.nodes
    if largest >= LARGEST_ID:
        raise ctx.too_large(f"vertex id {largest + chosen} is too large to number densely "
                            "(read with relabel=True)")
    check_dimensions(ctx, n, n, len(u))
    return u, v, n
