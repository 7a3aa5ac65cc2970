"""Random sequences of every edit on a SlottedGraph, checked against a dict-of-dicts model.

After every step the layout invariants hold and neighbours, degrees, weights and edges equal
the model's; refused operations raise ``GraphEditError`` and leave every word unchanged.
The run covers tiny page sizes (16, 32 words) so that splits and large lists happen on small
graphs, and it must reach every rule case of the layout (asserted at the end).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from kernels.errors import GraphEditError
from kernels.graph.csr import CSRGraph
from kernels.graph.slotted import CASE_NAMES, SlottedGraph


class ModelError(Exception):
    """The model refuses the operation (the structure must raise GraphEditError)."""


class GraphModel:
    def __init__(self, directed: bool, weighted: bool):
        self.directed = directed
        self.weighted = weighted
        self.adj: dict[int, dict[int, float]] = {}
        self.next_id = 0

    @classmethod
    def from_csr(cls, csr: CSRGraph) -> GraphModel:
        m = cls(csr.directed, csr.weighted)
        m.next_id = csr.n_rows
        for v in range(csr.n_rows):
            nb = csr.neighbors(v).tolist()
            ws = csr.weights[csr.indptr[v]:csr.indptr[v + 1]].tolist() if csr.weighted else [1.0] * len(nb)
            m.adj[v] = dict(zip(nb, ws, strict=True))
        return m

    # ---- checks shared by single and batch operations -----------------------------------
    def alive(self, v) -> bool:
        return v in self.adj

    def _need_alive(self, *vs):
        for v in vs:
            if v not in self.adj:
                raise ModelError(f"vertex {v} missing")

    def _present_either(self, u, v) -> bool:
        return v in self.adj[u] or (not self.directed and u in self.adj.get(v, {}))

    def _key(self, u, v):
        return (u, v) if self.directed else (min(u, v), max(u, v))

    # ---- edits --------------------------------------------------------------------------
    def add_vertex(self, vertex=None) -> int:
        if vertex is None:
            v = self.next_id
            self.next_id += 1
        else:
            if not (0 <= vertex < self.next_id) or vertex in self.adj:
                raise ModelError("cannot restore")
            v = vertex
        self.adj[v] = {}
        return v

    def remove_vertex(self, v, clean=True):
        self._need_alive(v)
        out = self.adj.pop(v)
        if clean:
            # a clean removal leaves no entry to v anywhere: also the one-sided entries an earlier
            # kept (clean=False) removal left behind, should v have been restored since
            del out
            for nb in self.adj.values():
                nb.pop(v, None)

    def _add(self, u, v, w):
        self.adj[u][v] = w
        if not self.directed:
            self.adj[v][u] = w

    def _remove(self, u, v) -> float:
        w = self.adj[u].pop(v)
        if not self.directed and u != v and v in self.adj and u in self.adj[v]:
            self.adj[v].pop(u)
        return w

    def add_edges(self, pairs, weights):
        self._need_alive(*[x for p in pairs for x in p])
        keys = [self._key(u, v) for u, v in pairs]
        if len(set(keys)) != len(keys):
            raise ModelError("duplicate in batch")
        if any(self._present_either(u, v) for u, v in pairs):
            raise ModelError("edge exists")
        for (u, v), w in zip(pairs, weights, strict=True):
            self._add(u, v, w)

    def remove_edges(self, pairs) -> list[float]:
        self._need_alive(*[u for u, _ in pairs])
        keys = [self._key(u, v) for u, v in pairs]
        if len(set(keys)) != len(keys):
            raise ModelError("duplicate in batch")
        if any(v not in self.adj[u] for u, v in pairs):
            raise ModelError("edge missing")
        return [self._remove(u, v) for u, v in pairs]

    def edit_edge(self, u, old, new, weight=None) -> float:
        self._need_alive(u)
        if old not in self.adj[u]:
            raise ModelError("edge missing")
        self._need_alive(new)
        if new != old and self._present_either(u, new):
            raise ModelError("edge exists")
        w_old = self._remove(u, old)
        self._add(u, new, w_old if weight is None else weight)
        return w_old

    # ---- views --------------------------------------------------------------------------
    def vertices(self) -> list[int]:
        return sorted(self.adj)

    def entries(self) -> int:
        return sum(len(nb) for nb in self.adj.values())

    def num_edges(self) -> int:
        n = self.entries()
        if self.directed:
            return n
        loops = sum(1 for v, nb in self.adj.items() if v in nb)
        return (n + loops) // 2

    def edges(self) -> list[tuple[int, int]]:
        return [(u, v) for u, nb in self.adj.items() for v in nb]

    def to_csr(self) -> CSRGraph:
        src, dst, w = [], [], []
        for u, nb in self.adj.items():
            for v, wt in nb.items():
                src.append(u)
                dst.append(v)
                w.append(wt)
        return CSRGraph.from_edges(self.next_id, np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
                                   np.array(w, dtype=np.float64) if self.weighted else None,
                                   directed=self.directed)


# ---- the machine ------------------------------------------------------------------------
REACHED: Counter = Counter()
WEIGHTS = st.integers(1, 9).map(float)


def _snapshot(g: SlottedGraph):
    return tuple(a.copy() for a in (g._pool, g._wpool, g._index, g._meta, g._free, g._counts, g._alive))


def _page_of(g: SlottedGraph, v: int) -> int:
    """Logical page holding v's slot (the first page of a large list)."""
    index = g.index
    i = int(np.searchsorted(index.first_vertex, v, side="right")) - 1
    return i - max(int(index.large_position[i]), 0)


def _same(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


class SlottedMachine(RuleBasedStateMachine):
    @initialize(page_size=st.sampled_from([16, 16, 16, 32, 64, 256]), directed=st.booleans(),
                weighted=st.booleans(), n0=st.integers(0, 40), density=st.floats(0.0, 0.5),
                fill=st.sampled_from([0.5, 0.9, 1.0]), bulk=st.booleans(), seed=st.integers(0, 2**16))
    def start(self, page_size, directed, weighted, n0, density, fill, bulk, seed):
        if bulk:
            rng = np.random.default_rng(seed)
            a = rng.random((n0, n0)) < density
            if not directed:
                a = np.triu(a)
                a = a | a.T
            src, dst = np.nonzero(a)
            w = rng.integers(1, 9, len(src)).astype(float) if weighted else None
            if w is not None and not directed:
                wm = np.zeros((n0, n0))
                wm[src, dst] = w
                wm = np.triu(wm) + np.triu(wm, 1).T
                w = wm[src, dst]
            csr = CSRGraph.from_edges(n0, src, dst, w, directed=directed)
            self.g = SlottedGraph.from_csr(csr, page_size=page_size, fill=fill)
            self.m = GraphModel.from_csr(csr)
        else:
            self.g = SlottedGraph(page_size, directed=directed, weighted=weighted)
            self.m = GraphModel(directed, weighted)
            for _ in range(n0):
                assert self.g.add_vertex() == self.m.add_vertex()

    def teardown(self):
        if hasattr(self, "g"):
            REACHED.update({k: v for k, v in self.g.case_counts.items() if v})

    # ---- helpers -------------------------------------------------------------------------
    def _vertex(self, data):
        """Any id, including removed ones, -1 and ids never assigned."""
        return data.draw(st.integers(-1, self.m.next_id + 1))

    def _expect(self, model_call, graph_call):
        """Run both; they must agree on refusing, and a refusal must change nothing."""
        try:
            expected = model_call()
        except ModelError:
            before = _snapshot(self.g)
            with pytest.raises(GraphEditError):
                graph_call()
            assert _same(before, _snapshot(self.g)), "a refused edit changed the structure"
            return None
        return expected, graph_call()

    def _weight(self, data):
        return data.draw(WEIGHTS) if self.m.weighted else None

    # ---- vertex rules --------------------------------------------------------------------
    @rule(k=st.integers(1, 12))
    def add_vertices(self, k):
        for _ in range(k):
            assert self.g.add_vertex() == self.m.add_vertex()

    @rule(data=st.data())
    def restore_vertex(self, data):
        removed = [v for v in range(self.m.next_id) if not self.m.alive(v)]
        v = data.draw(st.sampled_from(removed)) if removed and data.draw(st.booleans()) \
            else self._vertex(data)
        out = self._expect(lambda: self.m.add_vertex(v), lambda: self.g.add_vertex(vertex=v))
        if out:
            assert out[0] == out[1] == v

    @rule(data=st.data())
    def restore_every_removed_vertex(self, data):
        """Undo-like: removed ids come back, often into pages that edits have filled since."""
        removed = [v for v in range(self.m.next_id) if not self.m.alive(v)]
        for v in data.draw(st.permutations(removed)):
            assert self.g.add_vertex(vertex=v) == self.m.add_vertex(v)

    @rule(data=st.data())
    def remove_grow_restore(self, data):
        """Remove v, grow the list of the vertex before it until their page is full, undo the
        removal: the restored id must split the page it belongs to."""
        alive = self.m.vertices()
        if len(alive) < 3:
            return
        v = data.draw(st.sampled_from(alive[1:]))
        prev = max(x for x in alive if x < v)
        self.g.remove_vertex(v)
        self.m.remove_vertex(v)
        for target in self.m.vertices():
            stats, page = self.g.page_stats(), _page_of(self.g, prev)
            if stats["large"][page] or stats["free_words"][page] < 3:
                break
            if not self.m._present_either(prev, target):
                self.g.add_edge(prev, target, 2.0 if self.m.weighted else None)
                self.m.add_edges([(prev, target)], [2.0])
        assert self.g.add_vertex(vertex=v) == self.m.add_vertex(v)

    @rule(data=st.data(), clean=st.booleans())
    def remove_vertex(self, data, clean):
        alive = self.m.vertices()
        # the hubs often own large lists: removing one frees all its pages
        v = data.draw(st.sampled_from(alive[:3])) if alive and data.draw(st.booleans()) else self._vertex(data)
        self._expect(lambda: self.m.remove_vertex(v, clean), lambda: self.g.remove_vertex(v, clean=clean))

    # ---- edge rules ----------------------------------------------------------------------
    def _pair(self, data):
        """Mostly existing vertices, hubs favoured so that lists outgrow tiny pages."""
        alive = self.m.vertices()
        if alive and data.draw(st.integers(0, 9)) > 0:
            hubs = alive[:2]
            u = data.draw(st.sampled_from(hubs)) if data.draw(st.booleans()) else data.draw(st.sampled_from(alive))
            return u, data.draw(st.sampled_from(alive))
        return self._vertex(data), self._vertex(data)

    def _existing_edge(self, data):
        edges = self.m.edges()
        if edges and data.draw(st.integers(0, 5)) > 0:
            return data.draw(st.sampled_from(edges))
        return self._pair(data)

    @rule(data=st.data())
    def add_edge(self, data):
        u, v = self._pair(data)
        w = self._weight(data)
        self._expect(lambda: self.m.add_edges([(u, v)], [w or 1.0]), lambda: self.g.add_edge(u, v, w))

    @rule(data=st.data(), k=st.integers(0, 12))
    def add_edges(self, data, k):
        pairs = [self._pair(data) for _ in range(k)]
        if data.draw(st.integers(0, 3)) > 0:       # mostly valid batches: drop repeats and existing edges
            seen, valid = set(), []
            for u, v in pairs:
                key = self.m._key(u, v)
                if key not in seen and self.m.alive(u) and self.m.alive(v) and not self.m._present_either(u, v):
                    seen.add(key)
                    valid.append((u, v))
            pairs = valid
        ws = [self._weight(data) or 1.0 for _ in pairs]
        us = np.array([p[0] for p in pairs], dtype=np.int64)
        vs = np.array([p[1] for p in pairs], dtype=np.int64)
        self._expect(lambda: self.m.add_edges(pairs, ws),
                     lambda: self.g.add_edges(us, vs, ws if self.m.weighted else None))

    @rule(data=st.data())
    def hub_burst(self, data):
        """Many new edges from one vertex at once: pushes its list over page boundaries."""
        alive = self.m.vertices()
        if not alive:
            return
        u = data.draw(st.sampled_from(alive[:3]))
        free = [v for v in alive if not self.m._present_either(u, v)]
        targets = data.draw(st.lists(st.sampled_from(free), unique=True, max_size=30)) if free else []
        ws = [float(1 + t % 7) for t in targets]
        self.m.add_edges([(u, v) for v in targets], ws)
        self.g.add_edges(np.full(len(targets), u), np.array(targets, dtype=np.int64),
                         ws if self.m.weighted else None)

    @rule(extra=st.integers(1, 12))
    def hub_over_pages(self, extra):
        """On tiny pages, grow the first vertex's list past two pages (a large list that then
        gains pages), adding vertices as targets where needed."""
        per_page = self.g.page_size - 6
        alive = self.m.vertices()
        if self.g.page_size > 32 or not alive:
            return
        hub = alive[0]
        want = 2 * per_page + extra
        while len(self.m.vertices()) <= want:
            assert self.g.add_vertex() == self.m.add_vertex()
        free = [v for v in self.m.vertices() if not self.m._present_either(hub, v)]
        targets = free[:max(0, want - len(self.m.adj[hub]))]
        ws = [3.0] * len(targets)
        self.m.add_edges([(hub, v) for v in targets], ws)
        self.g.add_edges(np.full(len(targets), hub), np.array(targets, dtype=np.int64),
                         ws if self.m.weighted else None)

    @rule(data=st.data())
    def remove_edge(self, data):
        u, v = self._existing_edge(data)
        out = self._expect(lambda: self.m.remove_edges([(u, v)]), lambda: self.g.remove_edge(u, v))
        if out and self.m.weighted:
            assert out[0][0] == out[1]

    @rule(data=st.data(), k=st.integers(0, 30))
    def remove_edges(self, data, k):
        edges = self.m.edges()
        if edges and data.draw(st.integers(0, 3)) > 0:
            u = data.draw(st.sampled_from(edges))[0]
            own = [e for e in edges if e[0] == u]          # often one hub's list: frees its pages
            pool = own if data.draw(st.booleans()) else edges
            pairs = data.draw(st.lists(st.sampled_from(pool), unique=True, max_size=k))
            seen, pairs_ok = set(), []
            for u, v in pairs:
                if self.m._key(u, v) not in seen:
                    seen.add(self.m._key(u, v))
                    pairs_ok.append((u, v))
            pairs = pairs_ok
        else:
            pairs = [self._existing_edge(data) for _ in range(min(k, 3))]
        us = np.array([p[0] for p in pairs], dtype=np.int64)
        vs = np.array([p[1] for p in pairs], dtype=np.int64)
        out = self._expect(lambda: self.m.remove_edges(pairs), lambda: self.g.remove_edges(us, vs))
        if out and self.m.weighted:
            assert list(out[1]) == out[0]

    @rule(data=st.data())
    def edit_edge(self, data):
        u, old = self._existing_edge(data)
        new = self._vertex(data)
        w = self._weight(data) if data.draw(st.booleans()) else None
        out = self._expect(lambda: self.m.edit_edge(u, old, new, w), lambda: self.g.edit_edge(u, old, new, w))
        if out and self.m.weighted:
            assert out[0] == out[1]

    # ---- what must hold after every step -------------------------------------------------
    @invariant()
    def layout_and_content_match_the_model(self):
        if not hasattr(self, "g"):
            return
        g, m = self.g, self.m
        g.check_invariants()
        assert g.vertices().tolist() == m.vertices()
        assert g.num_vertices == len(m.adj)
        assert g.num_entries == m.entries()
        assert g.num_edges == m.num_edges()
        assert g.next_vertex_id == m.next_id
        for v in m.vertices():
            nb = g.neighbors(v)
            assert sorted(nb.tolist()) == sorted(m.adj[v]), f"neighbours of {v}"
            assert g.degree(v) == len(m.adj[v])
            if m.weighted:
                assert dict(zip(nb.tolist(), g.neighbor_weights(v).tolist(), strict=True)) == m.adj[v]
        assert g.to_csr().equals(m.to_csr())


def test_random_edit_sequences_match_the_model_and_reach_every_rule_case():
    REACHED.clear()
    run_state_machine_as_test(SlottedMachine, settings=settings(
        max_examples=150, stateful_step_count=50, deadline=None, derandomize=True, database=None,
        suppress_health_check=list(HealthCheck)))
    missing = [name for name in CASE_NAMES if REACHED[name] == 0]
    assert missing == [], f"rule cases never reached: {missing} (reached: {dict(REACHED)})"
