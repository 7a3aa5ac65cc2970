"""Shared by the batch-update tests: small random graphs, an edge model, state comparisons."""

from __future__ import annotations

import numpy as np

from kernels.graph.csr import CSRGraph
from kernels.graph.slotted.layout import M_INDEX_DIRTY


def random_graph(n, m, seed, *, directed=False, weighted=False) -> CSRGraph:
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    if not directed:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    key = np.unique(src * n + dst)
    src, dst = key // n, key % n
    w = rng.integers(1, 50, len(src)).astype(float) if weighted else None
    return CSRGraph.from_edges(n, src, dst, w, directed=directed, both_directions=not directed)


def edge_dict(g) -> dict:
    """{(u, v): weight} of every stored entry (the edge-for-edge view of a structure)."""
    csr = g.to_csr()
    rows = np.repeat(np.arange(csr.n_rows), np.diff(csr.indptr))
    ws = csr.weights if csr.weights is not None else np.ones(len(rows))
    return {(int(u), int(v)): float(w) for u, v, w in zip(rows, csr.indices, ws, strict=True)}


def model_apply(model: dict, directed: bool, insert=None, delete=None, reweight=None) -> dict:
    """The batch on the edge dict, written independently of the pages."""
    out = dict(model)
    for u, v in zip(*(delete or ((), ())), strict=True):
        out.pop((int(u), int(v)))
        if not directed:
            out.pop((int(v), int(u)), None)
    if insert:
        ws = insert[2] if len(insert) == 3 else np.ones(len(insert[0]))
        for u, v, w in zip(insert[0], insert[1], ws, strict=True):
            out[(int(u), int(v))] = float(w)
            if not directed:
                out[(int(v), int(u))] = float(w)
    if reweight:
        for u, v, w in zip(*reweight, strict=True):
            out[(int(u), int(v))] = float(w)
            if not directed:
                out[(int(v), int(u))] = float(w)
    return out


def same_state(a, b) -> bool:
    """Word for word: pools, weights, index, counters, free stack (two SlottedGraphs)."""
    x, y = a.to_arrays(), b.to_arrays()
    skip = {"dirty", "counts", "meta"}     # sync flags differ; batch paths count no rule cases
    meta_x, meta_y = x["meta"].copy(), y["meta"].copy()
    meta_x[M_INDEX_DIRTY] = meta_y[M_INDEX_DIRTY] = 0
    return np.array_equal(meta_x, meta_y) and all(np.array_equal(x[k], y[k]) for k in x if k not in skip)


def directory_problems(mirror) -> list[str]:
    """What the mirror's vertex directory gets wrong, read back and checked against the host
    structure: every stored vertex's degree, and its neighbours read from the device pool
    through its handle as ``edge_at`` reads them (a large list's page by page through the
    index); every other id (0, 0)."""
    g = mirror.graph
    loc = mirror.directory[0].copy_to_host()
    degree = mirror.directory[1].copy_to_host()
    pool = mirror.pool.copy_to_host()
    index = mirror.index.copy_to_host()[:, :mirror.num_pages]
    P = g.page_size
    per_page = P - 6
    problems = []
    for v in range(len(loc)):
        if v < g.next_vertex_id and g.has_vertex(v):
            want = g.neighbors(v).tolist()
            d, h = int(degree[v]), int(loc[v])
            if h >= 0:
                got = pool[h:h + d].tolist()
            else:
                col = -h - 1
                got = [int(pool[int(index[3, col + j // per_page]) * P + 4 + j % per_page]) for j in range(d)]
            if d != len(want) or got != want:
                problems.append(f"vertex {v}: degree {d}, list {got[:6]} (host {len(want)}, {want[:6]})")
        elif degree[v] != 0:
            problems.append(f"id {v} (no vertex): degree {int(degree[v])}")
    return problems
