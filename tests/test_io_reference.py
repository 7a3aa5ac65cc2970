"""The real graphs of tests/data read with the published sizes (tests/data/reference.csv)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph

from kernels.graph.io import detect_format, read_graph
from tests.conftest import data_path, reference_table

REFERENCE = reference_table()


def simple_undirected(g) -> sp.csr_matrix:
    """Pattern of A + Aᵀ without the diagonal: the simple graph the reference values describe."""
    a = g.to_scipy().copy()
    a.data[:] = 1
    s = ((a + a.T) > 0).astype(np.int8).tocsr()
    s.setdiag(0)
    s.eliminate_zeros()
    return s


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_reference_graph_sizes(name):
    ref = REFERENCE[name]
    path = data_path(name)
    g = read_graph(path)
    assert detect_format(path) == "mtx"
    assert g.name == name.split(".")[0]
    assert (g.n_rows, g.n_cols) == (int(ref["rows"]), int(ref["cols"]))
    symmetric = ref["symmetry"] == "symmetric"
    assert g.directed == (not symmetric)
    assert g.weighted == (ref["field"] != "pattern")
    stored_in_file = (g.nnz + g.num_self_loops) // 2 if symmetric else g.nnz
    assert stored_in_file == int(ref["stored"])
    if not ref["self_loops"]:
        return  # rectangular: no graph values
    assert g.num_self_loops == int(ref["self_loops"])
    s = simple_undirected(g)
    assert s.nnz // 2 == int(ref["undirected_edges"])
    assert int(np.diff(s.indptr).max()) == int(ref["max_degree"])
    n_components, _ = csgraph.connected_components(s, directed=False)
    assert n_components == int(ref["components"])


def test_reference_graphs_columns_are_sorted_within_rows():
    g = read_graph(data_path("bips98_606.mtx"))
    rows = g.row_of_entry()
    same_row = rows[1:] == rows[:-1]
    assert np.all(np.diff(g.indices.astype(np.int64))[same_row] >= 0)


def test_general_file_with_symmetric_entries_stays_directed(tmp_path):
    p = tmp_path / "sym_general.mtx"
    p.write_text("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n")
    g = read_graph(p)
    assert g.directed and g.nnz == 2


def test_duplicates_and_explicit_zeros_are_kept(tmp_path):
    p = tmp_path / "dup.mtx"
    p.write_text("%%MatrixMarket matrix coordinate real general\n2 2 3\n1 2 0\n1 2 5\n2 2 -1\n")
    g = read_graph(p)
    assert g.nnz == 3
    assert g.weights.tolist() == [0.0, 5.0, -1.0]


def test_skew_symmetric_mirrors_with_negated_values(tmp_path):
    p = tmp_path / "skew.mtx"
    p.write_text("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n3 1 -2\n")
    g = read_graph(p)
    assert g.directed
    dense = g.to_scipy().toarray()
    assert np.array_equal(dense, -dense.T) and dense[1, 0] == 1.5


def test_symmetric_self_loop_is_stored_once(tmp_path):
    p = tmp_path / "loop.mtx"
    p.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n")
    g = read_graph(p)
    assert g.nnz == 3 and g.num_self_loops == 1 and g.num_edges == 2
