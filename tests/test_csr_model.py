"""The CSR graph type and the reported clean-up steps."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from kernels.errors import InputRequirementError
from kernels.graph.cleanup import (
    clean,
    drop_duplicates,
    drop_isolated,
    drop_self_loops,
    keep_largest_component,
    symmetrize,
)
from kernels.graph.csr import CSRGraph


def small_directed():
    # 0->1, 1->2, 2->2 (loop), 0->1 again (duplicate), 3 isolated
    return CSRGraph.from_edges(4, [0, 1, 2, 0], [1, 2, 2, 1], directed=True, name="t")


def test_from_edges_sorts_columns_and_keeps_duplicates():
    g = CSRGraph.from_edges(3, [0, 0, 0, 1], [2, 1, 2, 0], directed=True)
    assert g.indices.tolist() == [1, 2, 2, 0]
    assert g.indptr.tolist() == [0, 3, 4, 4]
    assert g.nnz == 4


def test_undirected_counts_each_edge_once_and_loops_once():
    g = CSRGraph.from_edges(3, [0, 1, 2], [1, 2, 2], directed=False, both_directions=True)
    assert g.nnz == 5  # 0-1 twice, 1-2 twice, loop once
    assert g.num_self_loops == 1
    assert g.num_edges == 3


def test_arrays_are_read_only_and_fingerprint_tracks_content():
    g = small_directed()
    with pytest.raises(ValueError):
        g.indices[0] = 3
    h = CSRGraph.from_edges(4, [0, 1, 2, 0], [1, 2, 2, 1], directed=True, name="other name")
    assert g.fingerprint == h.fingerprint
    k = CSRGraph.from_edges(4, [0, 1, 2, 0], [1, 2, 3, 1], directed=True)
    assert k.fingerprint != g.fingerprint


def test_invalid_arrays_are_rejected():
    with pytest.raises(ValueError):
        CSRGraph(np.array([0, 2]), np.array([0, 5]), n_cols=3, directed=True)
    with pytest.raises(ValueError):
        CSRGraph(np.array([0, 1]), np.array([0]), n_cols=2, directed=False)  # undirected must be square


def test_scipy_round_trip_and_symmetry_inference():
    m = sp.random(30, 30, density=0.1, random_state=1, format="csr")
    g = CSRGraph.from_scipy(m)
    assert g.directed
    assert (g.to_scipy() != m).nnz == 0
    s = CSRGraph.from_scipy(m + m.T)
    assert not s.directed


def test_networkx_round_trip_preserves_weights():
    G = nx.gnm_random_graph(20, 40, seed=3)
    for u, v in G.edges:
        G[u][v]["weight"] = float(u + v)
    g = CSRGraph.from_networkx(G)
    assert g.num_edges == 40 and not g.directed
    H = g.to_networkx()
    assert nx.utils.edges_equal(G.edges, H.edges)
    assert all(H[u][v]["weight"] == float(u + v) for u, v in H.edges)


def test_require_refuses_with_reason():
    rect = CSRGraph(np.array([0, 1, 2]), np.array([0, 2]), n_cols=3, directed=True, name="rect")
    with pytest.raises(InputRequirementError, match="square"):
        rect.require(square=True, what="triangle counting")
    with pytest.raises(InputRequirementError, match="undirected"):
        small_directed().require(undirected=True)
    with pytest.raises(InputRequirementError, match="weights"):
        small_directed().require(weighted=True)


def test_cleanup_steps_report_what_changed():
    g = small_directed()
    s = symmetrize(g)
    assert not s.directed
    assert s.notices[-1] == "symmetrized: added 2 reverse entries"
    assert drop_self_loops(g).notices[-1] == "removed 1 self-loop"
    d = drop_duplicates(g)
    assert d.notices[-1] == "removed 1 duplicate entry" and d.nnz == 3
    i = drop_isolated(g)
    assert i.n_rows == 3 and i.notices[-1] == "removed 1 isolated vertex"


def test_largest_component_is_kept_and_renumbered():
    g = CSRGraph.from_edges(6, [0, 1, 3], [1, 2, 4], directed=False, both_directions=True)
    k = keep_largest_component(g)
    assert k.n_rows == 3 and k.num_edges == 2
    assert "3 of 6 vertices" in k.notices[-1]


def test_clean_applies_steps_in_order():
    g = clean(small_directed(), symmetrize_=True, self_loops=True, duplicates=True, isolated=True)
    assert not g.directed and g.num_self_loops == 0
    assert g.num_edges == 2 and g.n_rows == 3
    assert len(g.notices) == 4


def test_weights_survive_cleanup():
    g = CSRGraph.from_edges(3, [0, 0, 1], [1, 1, 2], weights=[1.5, 9.0, 2.5], directed=True)
    d = drop_duplicates(g)
    assert d.weights.tolist() == [1.5, 2.5]
