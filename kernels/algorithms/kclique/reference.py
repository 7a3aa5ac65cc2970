"""The two CPU references of the k-clique family, written independently of the fast variants.

* :func:`count_networkx`: cliques of size k from ``networkx.enumerate_all_cliques`` (which
  lists every clique by increasing size; we stop after size k). Exact and obviously right,
  but it materialises every smaller clique, so it is kept to small graphs.
* :func:`count_kclist`: kClist (Danisch et al., WWW 2018) in plain Python. Its own
  degeneracy ordering (bucket peeling with Python sets), its own orientation, and the induced
  subgraph of each vertex's out-neighbourhood as Python integers used as bitsets: an
  intersection is ``&`` and a count is ``int.bit_count``. No numba, no shared code with the
  variants it checks.

Both return ``(total, per_vertex)`` where ``per_vertex`` is ``None`` unless asked for; a
clique counts once at each of its k vertices, so ``per_vertex.sum() == k * total``.
"""

from __future__ import annotations

import numpy as np

from kernels.graph.csr import CSRGraph


def _adjacency_sets(graph: CSRGraph) -> list[set]:
    indptr, indices = graph.indptr.tolist(), graph.indices.tolist()
    return [set(indices[indptr[v]:indptr[v + 1]]) - {v} for v in range(graph.n_rows)]


def degeneracy_order(adjacency: list[set]) -> list[int]:
    """Repeatedly remove a vertex of minimum remaining degree (Matula-Beck)."""
    n = len(adjacency)
    remaining = [len(a) for a in adjacency]
    buckets: dict[int, set] = {}
    for v, d in enumerate(remaining):
        buckets.setdefault(d, set()).add(v)
    removed = [False] * n
    order = []
    low = 0
    for _ in range(n):
        while not buckets.get(low):
            low += 1
        v = buckets[low].pop()
        removed[v] = True
        order.append(v)
        for u in adjacency[v]:
            if not removed[u]:
                d = remaining[u]
                buckets[d].discard(u)
                remaining[u] = d - 1
                buckets.setdefault(d - 1, set()).add(u)
        low = max(low - 1, 0)
    return order


def count_kclist(graph: CSRGraph, k: int, per_vertex: bool = False):
    """Exact number of k-cliques of a simple undirected graph (Python integers as bitsets)."""
    adjacency = _adjacency_sets(graph)
    order = degeneracy_order(adjacency)
    position = {v: i for i, v in enumerate(order)}
    later = [sorted((u for u in adjacency[v] if position[u] > position[v]), key=position.__getitem__)
             for v in range(len(adjacency))]
    counts = [0] * len(adjacency) if per_vertex else None
    total = 0
    for v in range(len(adjacency)):
        members = later[v]
        if len(members) < k - 1:
            continue
        index = {u: i for i, u in enumerate(members)}
        # rows[i]: bit j set when members[j] follows members[i] and is adjacent to it
        rows = [sum(1 << index[w] for w in later[u] if w in index) for u in members]
        everyone = (1 << len(members)) - 1
        if counts is None:
            total += _count(everyone, rows, k - 1)
        else:
            total += _count_per_vertex(everyone, rows, k - 1, members, [v], counts)
    return total, (np.array(counts, dtype=np.int64) if per_vertex else None)


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _count(candidates: int, rows: list[int], need: int) -> int:
    """Cliques of ``need`` vertices among ``candidates`` (each found from its first member)."""
    if need == 1:
        return candidates.bit_count()
    if need == 2:
        return sum((candidates & rows[j]).bit_count() for j in _bits(candidates))
    return sum(_count(candidates & rows[j], rows, need - 1) for j in _bits(candidates))


def _count_per_vertex(candidates: int, rows: list[int], need: int, members: list[int], path: list[int],
                      counts: list[int]) -> int:
    if need == 1:
        found = 0
        for j in _bits(candidates):
            counts[members[j]] += 1
            found += 1
        for p in path:
            counts[p] += found
        return found
    total = 0
    for j in _bits(candidates):
        path.append(members[j])
        total += _count_per_vertex(candidates & rows[j], rows, need - 1, members, path, counts)
        path.pop()
    return total


def count_networkx(graph: CSRGraph, k: int, per_vertex: bool = False):
    """Exact number of k-cliques by NetworkX's clique enumeration (small graphs only)."""
    import networkx as nx

    counts = np.zeros(graph.n_rows, dtype=np.int64) if per_vertex else None
    total = 0
    for clique in nx.enumerate_all_cliques(graph.to_networkx()):
        if len(clique) < k:
            continue
        if len(clique) > k:
            break
        total += 1
        if counts is not None:
            counts[clique] += 1
    return total, counts
