"""The ``triangle-list`` format (``.tri``): a graph given as the triangles it is made of.

    # triangle-list
    0 1 2
    1 2 3

The first line is the signature; every other non-empty line lists three distinct vertex ids
(>= 0) of a triangle, whose three edges are in the graph (undirected; an edge shared by two
triangles appears once). A mistake is a ``GraphFormatError`` naming the file and the line.
"""

from __future__ import annotations

import numpy as np

from kernels.graph.csr import CSRGraph
from kernels.graph.io.registry import FormatSpec

SIGNATURE = b"# triangle-list"


def sniff(head) -> bool:
    return head.data.startswith(SIGNATURE)


def read_triangle_list(source, ctx) -> CSRGraph:
    with source.open() as stream:
        lines = stream.read().decode("utf-8", errors="replace").splitlines()
    corners = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split()
        if not fields:
            continue
        try:
            a, b, c = (int(f) for f in fields)
        except ValueError:
            raise ctx.error(f"{line.strip()!r} is not three integers", number, "three vertex ids: A B C") from None
        if min(a, b, c) < 0 or len({a, b, c}) < 3:
            raise ctx.error(f"{line.strip()!r} is not a triangle", number, "three distinct ids >= 0")
        corners.append((a, b, c))
        ctx.report(number / len(lines))
    tri = np.array(corners, dtype=np.int64).reshape(-1, 3)
    src = np.concatenate([tri[:, 0], tri[:, 1], tri[:, 2]])
    dst = np.concatenate([tri[:, 1], tri[:, 2], tri[:, 0]])
    pairs = np.unique(np.stack([np.minimum(src, dst), np.maximum(src, dst)], axis=1), axis=0)
    n = int(tri.max()) + 1 if len(tri) else 0
    return CSRGraph.from_edges(n, pairs[:, 0], pairs[:, 1], directed=False, both_directions=True,
                               name=ctx.name, source=ctx.path)


SPEC = FormatSpec(
    name="triangle-list",
    description="a graph as its triangles, one 'a b c' per line after a '# triangle-list' line (example plug-in)",
    extensions=(".tri",),
    priority=60,                     # a signature: above the formats without one
    sniff=sniff,
    read=read_triangle_list,
)
