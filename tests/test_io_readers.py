"""Each reader on small hand-written files whose graph is known exactly (tests/data/io/)."""

from __future__ import annotations

import gzip

import networkx as nx
import numpy as np
import pytest

from kernels.errors import GraphFormatError, ParameterError, UnsupportedFormatError
from kernels.graph.io import detect_format, read_graph
from tests.conftest import DATA

IO = DATA / "io"


def entries(g):
    """The stored entries as a sorted list of (row, col[, weight])."""
    rows = g.row_of_entry().tolist()
    cols = g.indices.tolist()
    if g.weights is None:
        return sorted(zip(rows, cols, strict=True))
    return sorted(zip(rows, cols, g.weights.tolist(), strict=True))


def undirected(*edges):
    """Both directions of each (u, v[, w]); a self-loop once."""
    out = []
    for e in edges:
        out.append(e)
        if e[0] != e[1]:
            out.append((e[1], e[0], *e[2:]))
    return sorted(out)


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


# ---- DIMACS -------------------------------------------------------------------------------

def test_dimacs_gr_is_directed_weighted_and_one_based():
    g = read_graph(IO / "road.gr")
    assert g.directed and g.weighted and g.n_rows == 5
    assert entries(g) == sorted([(0, 1, 4.0), (0, 2, 1.0), (2, 1, 2.0), (1, 3, 5.0), (2, 3, 8.0),
                                 (3, 4, 3.0), (4, 0, 7.0)])


def test_dimacs_gr_arc_count_must_match_problem_line(tmp_path):
    p = write(tmp_path, "short.gr", "p sp 3 3\na 1 2 1\na 2 3 1\n")
    with pytest.raises(GraphFormatError, match=r"short\.gr, line 4: the problem line \(line 1\) announces 3 arcs"):
        read_graph(p)
    # more arcs than announced: refused at the first one past the count, as Matrix Market does
    p = write(tmp_path, "long.gr", "p sp 3 2\nc x\na 1 2 1\na 2 3 1\na 3 1 1\na 1 3 1\n")
    with pytest.raises(GraphFormatError, match=r"long\.gr, line 5: more arcs than the 2 announced by the problem "
                                               r"line \(line 1\) \(expected 2 'a' lines\)"):
        read_graph(p)


def test_dimacs_clique_file_is_undirected_and_keeps_isolated_vertices():
    g = read_graph(IO / "triangle_plus.clq")
    assert not g.directed and not g.weighted and g.n_rows == 5
    assert entries(g) == undirected((0, 1), (1, 2), (0, 2), (2, 3))
    assert g.degrees().tolist() == [2, 2, 3, 1, 0]


def test_dimacs_other_problem_kinds_are_refused_clearly(tmp_path):
    p = write(tmp_path, "flow.gr", "c max flow\np max 3 2\nn 1 s\na 1 2 5\n")
    with pytest.raises(UnsupportedFormatError, match=r"line 2: DIMACS problem 'max'"):
        read_graph(p, format="dimacs-gr")


# ---- METIS --------------------------------------------------------------------------------

def test_metis_plain_graph_with_isolated_last_vertex():
    g = read_graph(IO / "plain.graph")
    assert not g.directed and not g.weighted and g.n_rows == 5
    assert entries(g) == undirected((0, 1), (0, 2), (0, 3), (1, 2), (2, 3))
    assert g.num_edges == 5


def test_metis_edge_weights_flag():
    g = read_graph(IO / "edge_weights.graph")
    assert g.weighted
    assert entries(g) == undirected((0, 1, 2.0), (1, 2, 7.0))


def test_metis_vertex_weights_with_ncon_are_skipped_with_a_notice():
    g = read_graph(IO / "vertex_weights.graph")
    assert not g.weighted
    assert entries(g) == undirected((0, 1), (0, 2), (1, 2))
    assert any("vertex sizes/weights" in n for n in g.notices)


def test_metis_sizes_vertex_weights_and_edge_weights_together():
    g = read_graph(IO / "everything.graph")
    assert entries(g) == undirected((0, 1, 5.0), (0, 2, 6.0), (0, 3, 7.0))


def test_metis_edge_count_must_match_header(tmp_path):
    # more entries than 2*m: refused at the line whose list passes the promise, before the rest is kept
    p = write(tmp_path, "bad_m.graph", "% comment\n3 2\n2 3\n1 3\n1 2\n")
    with pytest.raises(GraphFormatError, match=r"bad_m\.graph, line 5: the adjacency lists hold more than the 4 "
                                               r"entries \(2\*m\) that the header \(line 2\) allows: vertex 3's"):
        read_graph(p)
    # fewer: known at the end only
    p = write(tmp_path, "few.graph", "% comment\n3 4\n2 3\n1 3\n1 2\n")
    with pytest.raises(GraphFormatError, match=r"few\.graph, line 2: the header says m = 4 edges, but the adjacency "
                                               r"lists hold 6 entries"):
        read_graph(p)


def test_metis_asymmetric_lists_name_the_vertex_line(tmp_path):
    p = write(tmp_path, "asym.graph", "3 2\n2 3\n1\n2\n")
    with pytest.raises(GraphFormatError, match=r"asym\.graph, line \d: vertex \d lists \d, but vertex \d does not"):
        read_graph(p)


def test_metis_missing_vertex_lines_are_a_truncation(tmp_path):
    p = write(tmp_path, "trunc.graph", "4 1\n2\n1\n")
    with pytest.raises(GraphFormatError, match=r"trunc\.graph, line \d: the file ends after 2 of the 4 vertex lines"):
        read_graph(p)


def test_metis_weight_layout_mismatch_names_the_line(tmp_path):
    p = write(tmp_path, "odd.graph", "2 1 1\n2 5\n1\n")
    with pytest.raises(GraphFormatError, match=r"odd\.graph, line 3: vertex 2 has 1 values.*v1 e1 v2 e2"):
        read_graph(p)


def test_metis_comment_lines_inside_the_body_are_not_vertices(tmp_path):
    p = write(tmp_path, "c.graph", "3 2\n2\n% vertex 2 follows\n1 3\n2\n")
    g = read_graph(p)
    assert entries(g) == undirected((0, 1), (1, 2))


# ---- edge lists ---------------------------------------------------------------------------

def test_snap_directed_header_keeps_arcs():
    g = read_graph(IO / "snap_directed.txt")
    assert g.directed and g.n_rows == 4
    assert entries(g) == [(0, 1), (0, 2), (1, 2), (2, 3)]


def test_edge_list_default_is_undirected_with_a_notice(tmp_path):
    g = read_graph(write(tmp_path, "e.txt", "0 1\n1 2\n"))
    assert not g.directed
    assert entries(g) == undirected((0, 1), (1, 2))
    assert any("undirected" in n for n in g.notices)


def test_directed_option_overrides_the_default(tmp_path):
    g = read_graph(write(tmp_path, "e.txt", "0 1\n1 2\n"), directed=True)
    assert g.directed and entries(g) == [(0, 1), (1, 2)]


def test_edge_list_listing_both_directions_is_not_doubled(tmp_path):
    # SNAP's undirected files (ca-HepTh.txt) list every edge both ways
    g = read_graph(write(tmp_path, "both.txt", "# Undirected graph\n0 1\n1 0\n1 2\n2 1\n2 2\n"))
    assert entries(g) == undirected((0, 1), (1, 2), (2, 2))


def test_repeated_lines_stay_duplicates_in_both_directions():
    g = read_graph(IO / "one_based.wel")
    assert entries(g) == undirected((0, 1, 0.5), (1, 2, 1.5), (2, 0, 2.5), (0, 1, 0.5))


def test_one_based_detection_rule(tmp_path):
    one = read_graph(write(tmp_path, "a.el", "1 2\n2 3\n"))
    assert one.n_rows == 3 and entries(one) == undirected((0, 1), (1, 2))
    assert any("1-based" in n for n in one.notices)
    zero = read_graph(write(tmp_path, "b.el", "1 2\n0 3\n"))
    assert zero.n_rows == 4
    gap = read_graph(write(tmp_path, "c.el", "5 6\n"))
    assert gap.n_rows == 7 and any("smallest vertex id is 5" in n for n in gap.notices)
    forced = read_graph(write(tmp_path, "d.el", "1 2\n"), base=0)
    assert forced.n_rows == 3


def test_nodes_count_in_header_keeps_trailing_isolated_vertices(tmp_path):
    g = read_graph(write(tmp_path, "n.txt", "# Nodes: 10 Edges: 1\n# 0-based\n1 2\n"))
    assert g.n_rows == 10 and entries(g) == undirected((1, 2))


def test_relabel_numbers_sparse_ids_densely(tmp_path):
    g = read_graph(write(tmp_path, "big_ids.txt", "4000000000 7\n7 12\n"), relabel=True)
    assert g.n_rows == 3 and entries(g) == undirected((2, 0), (0, 1))


def test_extra_columns_after_the_weight_are_ignored_with_a_notice(tmp_path):
    g = read_graph(write(tmp_path, "t.txt", "0 1 2.5 1999\n1 2 0.5 2001\n"), directed=True)
    assert entries(g) == [(0, 1, 2.5), (1, 2, 0.5)]
    assert any("4 columns" in n for n in g.notices)


def test_options_are_refused_for_formats_that_declare_them(tmp_path):
    with pytest.raises(ParameterError, match="directed"):
        read_graph(IO / "road.gr", directed=False)


# ---- CSV ----------------------------------------------------------------------------------

def test_csv_with_labels_numbers_vertices_in_order_of_appearance():
    g = read_graph(IO / "labels.csv")
    # alice 0, bob 1, carol 2, dave 3; weights from the 'Weight' column, quoted field kept whole
    assert entries(g) == undirected((0, 1, 1.5), (1, 2, 2.0), (2, 0, 3.0), (3, 0, 4.0))


def test_csv_with_numeric_ids_and_named_columns(tmp_path):
    p = write(tmp_path, "cols.csv", "weight,dst,src\n2.0,1,0\n3.0,2,1\n")
    g = read_graph(p, directed=True)
    assert entries(g) == [(0, 1, 2.0), (1, 2, 3.0)]
    assert entries(read_graph(IO / "numeric.csv")) == undirected((0, 1), (1, 2), (2, 0))


def test_csv_row_with_wrong_field_count_names_the_line(tmp_path):
    p = write(tmp_path, "bad.csv", "source,target\n0,1\n1,2,3\n")
    with pytest.raises(GraphFormatError, match=r"bad\.csv, line 3: found 3 fields"):
        read_graph(p)


# ---- NetworkX formats: NetworkX writes, we read, the edges must agree ----------------------

def _sample_graphs():
    g = nx.Graph(name="undirected")
    g.add_nodes_from(["z", "y", "x", "w", "lonely"])
    g.add_weighted_edges_from([("z", "y", 1.5), ("y", "x", 2.0), ("x", "z", 0.25), ("x", "w", 4.0)])
    d = nx.DiGraph(name="directed")
    d.add_edges_from([(3, 1), (1, 2), (2, 3), (3, 3), (2, 1)])
    return [g, d]


def _expected(nxg):
    index = {node: k for k, node in enumerate(nxg.nodes())}
    weighted = all("weight" in e for _, _, e in nxg.edges(data=True))
    out = []
    for u, v, data in nxg.edges(data=True):
        e = (index[u], index[v]) + ((float(data["weight"]),) if weighted else ())
        out.append(e)
        if not nxg.is_directed() and u != v:
            out.append((index[v], index[u], *e[2:]))
    return sorted(out)


@pytest.mark.parametrize("fmt, writer", [
    ("graphml", nx.write_graphml),
    ("gml", nx.write_gml),
    ("pajek", nx.write_pajek),
])
@pytest.mark.parametrize("which", [0, 1])
def test_networkx_formats_agree_with_networkx(tmp_path, fmt, writer, which):
    nxg = _sample_graphs()[which]
    path = tmp_path / f"sample.{ {'pajek': 'net'}.get(fmt, fmt) }"
    writer(nxg, path)
    g = read_graph(path)
    assert detect_format(path) == fmt
    assert g.directed == nxg.is_directed()
    assert g.n_rows == nxg.number_of_nodes()
    got = entries(g)
    want = _expected(nxg)
    if fmt == "pajek" and g.weighted and not all("weight" in e for *_, e in nxg.edges(data=True)):
        got = [e[:2] for e in got]  # NetworkX's Pajek writer adds weight 1.0 to unweighted edges
    assert got == want


def test_networkx_formats_read_gzip_compressed(tmp_path):
    nxg = _sample_graphs()[0]
    plain = tmp_path / "s.graphml"
    nx.write_graphml(nxg, plain)
    packed = tmp_path / "s.graphml.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert entries(read_graph(packed)) == _expected(nxg)


def test_networkx_parse_error_names_file_and_line(tmp_path):
    p = write(tmp_path, "broken.graphml", '<?xml version="1.0"?>\n<graphml>\n<graph>\n<node id="a">\n</graphml>\n')
    with pytest.raises(GraphFormatError, match=r"broken\.graphml, line 5: ParseError"):
        read_graph(p)


# ---- Pajek (our own reader since issue 30: NetworkX's is quadratic in a line's length) ------

def test_pajek_vertices_without_labels_and_edges_by_number(tmp_path):
    p = write(tmp_path, "native.net", "% made by hand\n*Vertices 5\n*Edges\n1 2\n4 5 2.5\n\n3 3\n")
    g = read_graph(p)
    assert not g.directed and g.n_rows == 5 and g.weighted
    assert entries(g) == undirected((0, 1, 1.0), (3, 4, 2.5), (2, 2, 1.0))
    assert any("2 of 3 arcs/edges have no value: they get weight 1" in n for n in g.notices)


def test_pajek_duplicate_labels_stay_distinct_vertices(tmp_path):
    # NetworkX keyed vertices by label and merged these two
    p = write(tmp_path, "same.net", '*Vertices 3\n1 "a" 0.1 0.2 0.5\n2 "a"\n3 "b c"\n*Arcs\n1 2 1\n2 3 2 c Blue\n')
    g = read_graph(p)
    assert g.directed and g.n_rows == 3 and entries(g) == [(0, 1, 1.0), (1, 2, 2.0)]


def test_pajek_lists_matrix_and_mixed_sections(tmp_path):
    lists = read_graph(write(tmp_path, "l.net", "*Vertices 4\n*Arcslist\n1 2 3\n4 1\n"))
    assert lists.directed and not lists.weighted and entries(lists) == [(0, 1), (0, 2), (3, 0)]
    matrix = read_graph(write(tmp_path, "m.net", "*Vertices 3\n*Matrix\n0 2 0\n0 0 1.5\n1 0 0\n"))
    assert matrix.directed and entries(matrix) == [(0, 1, 2.0), (1, 2, 1.5), (2, 0, 1.0)]
    mixed = read_graph(write(tmp_path, "x.net", "*Vertices 3\n*Arcs\n1 2 1\n*Edges\n2 3 4\n"))
    assert mixed.directed and entries(mixed) == [(0, 1, 1.0), (1, 2, 4.0), (2, 1, 4.0)]
    assert any("stored as two arcs" in n for n in mixed.notices)
    project = read_graph(write(tmp_path, "p.net", "*Vertices 2\n*Edges\n1 2\n*Partition p\n*Vertices 2\n1\n2\n"))
    assert entries(project) == undirected((0, 1)) and any("*Partition" in n for n in project.notices)


@pytest.mark.parametrize("text, line, message", [
    ("*Vertices 3\n*Arcs\n1 4\n", 3, r"vertex '4' is out of range: the \*Vertices line \(line 1\) declares 3"),
    ("*Vertices 3\n1 a\n7 b\n", 3, r"vertex '7' is out of range"),
    ("*Vertices 3\n*Arcs\n1 x\n", 3, r"'x' is not a vertex number"),
    ("*Vertices 3\n*Edges\n1\n", 3, r"found 1 value \(expected 'u v \[value\]' lines after Edges\)"),
    ("*Vertices 3\n*Edges\n1 2\n*Vertices 3\n", 4, r"a second \*Vertices line \(the first is line 1\)"),
    ("*Vertices many\n", 1, r"\*Vertices is followed by 'many'"),
    ("*Vertices 3000000000\n", 1, r"more vertices than the 32-bit indices"),
    ("*Vertices 2\n*Matrix\n0 1\n1\n", 4, r"row 2 of the matrix has 1 values"),
    ("*Network n\nhello\n", 2, r"'hello' after \*Network"),
    ("*Vertices 2\n*Matrix\n0 1\n*Arcs\n1 2\n", 4, r"the next section starts after 1 of the 2 rows of the matrix"),
])
def test_pajek_errors_name_the_line(tmp_path, text, line, message):
    with pytest.raises(GraphFormatError, match=message) as info:
        read_graph(write(tmp_path, "bad.net", text))
    assert info.value.line == line


# ---- npz ----------------------------------------------------------------------------------

def test_scipy_save_npz_files_are_read_as_directed_matrices(tmp_path):
    import scipy.sparse as sp

    m = sp.csr_matrix(np.array([[0, 2.0, 0], [1.0, 0, 3.0]]))
    p = tmp_path / "m.npz"
    sp.save_npz(p, m, compressed=True)
    g = read_graph(p)
    assert g.directed and (g.n_rows, g.n_cols) == (2, 3)
    assert entries(g) == [(0, 1, 2.0), (1, 0, 1.0), (1, 2, 3.0)]


def test_matrix_market_array_and_complex_are_refused_clearly(tmp_path):
    arr = write(tmp_path, "dense.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n")
    with pytest.raises(UnsupportedFormatError, match=r"dense\.mtx, line 1: dense 'array'"):
        read_graph(arr)
    cpx = write(tmp_path, "c.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n")
    with pytest.raises(UnsupportedFormatError, match="complex"):
        read_graph(cpx)
    her = write(tmp_path, "h.mtx", "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n")
    with pytest.raises(UnsupportedFormatError, match="hermitian"):
        read_graph(her)


def test_utf8_byte_order_mark_is_ignored(tmp_path):
    bom = b"\xef\xbb\xbf"
    assert entries(read_graph(write(tmp_path, "b.txt", bom + b"0 1\n1 2\n"))) == undirected((0, 1), (1, 2))
    mtx = bom + b"%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n"
    assert entries(read_graph(write(tmp_path, "b.mtx", mtx))) == [(0, 1)]
    assert entries(read_graph(write(tmp_path, "b.graph", bom + b"2 1\n2\n1\n"))) == undirected((0, 1))


def test_windows_line_endings(tmp_path):
    assert entries(read_graph(write(tmp_path, "w.txt", b"0,1\r\n1,2\r\n"))) == undirected((0, 1), (1, 2))
    mtx = b"%%MatrixMarket matrix coordinate real general\r\n2 2 1\r\n1 2 0.5\r\n"
    assert entries(read_graph(write(tmp_path, "w.mtx", mtx))) == [(0, 1, 0.5)]
    assert entries(read_graph(write(tmp_path, "w.graph", b"2 1\r\n2\r\n1\r\n"))) == undirected((0, 1))


def test_npz_with_unsorted_columns_is_repaired_with_a_notice(tmp_path):
    p = tmp_path / "unsorted.npz"
    np.savez(p, indptr=np.array([0, 2, 3, 3]), indices=np.array([2, 0, 1]), weights=np.array([1.0, 2.0, 3.0]),
             shape=np.array([3, 3]), directed=np.array(True))
    g = read_graph(p)
    assert entries(g) == [(0, 0, 2.0), (0, 2, 1.0), (1, 1, 3.0)]
    assert g.indices.tolist() == [0, 2, 1]
    assert any("not sorted" in n for n in g.notices)
    sorted_file = tmp_path / "sorted.npz"  # a later row starting lower is not "unsorted"
    np.savez(sorted_file, indptr=np.array([0, 1, 2]), indices=np.array([1, 0]), shape=np.array([2, 2]))
    assert read_graph(sorted_file).notices == ()
