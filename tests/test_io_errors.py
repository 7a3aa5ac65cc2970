"""Bad files give one clear error naming the file, the line and what was expected; sniffing by content."""

from __future__ import annotations

import bz2
import gzip

import networkx as nx
import pytest

from kernels.errors import GraphFormatError, ParameterError, ResourceLimitError, UnsupportedFormatError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import FileTooLargeError, check_fits_memory, detect_format, read_graph, write_graph

MTX = "%%MatrixMarket matrix coordinate real general\n% a comment\n3 3 3\n"

BAD_FILES = [
    # (file name, content, the message must match this, after "NAME, line N: ")
    ("banner.mtx", "%%MatrixMarket matrix coordinate\n1 1 0\n", 1, "the banner has 3 words"),
    ("size.mtx", "%%MatrixMarket matrix coordinate real general\n3 x 1\n1 1 1\n", 2, "bad size line"),
    ("token.mtx", MTX + "1 1 1\n2 two 1\n3 3 1\n", 5, "value 2 is 'two', not an integer"),
    ("short_line.mtx", MTX + "1 1 1\n2 2\n3 3 1\n", 5, "found 2 values.*expected 3 values per line"),
    ("range.mtx", MTX + "1 1 1\n2 4 1\n3 3 1\n", 5, r"column index 4 out of range.*1 <= column <= 3"),
    ("zero.mtx", MTX + "0 1 1\n2 2 1\n3 3 1\n", 4, "row index 0 out of range"),
    ("truncated.mtx", MTX + "1 1 1\n", 5, "ends after 1 of the 3 entries"),
    ("long.mtx", MTX + "1 1 1\n2 2 2\n3 3 3\n1 2 3\n", 7, "more entries than the 3"),
    ("pattern_with_values.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2 7\n", 3,
     "found 3 values"),
    ("integer.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 7.5\n", 3,
     "value 3 is '7.5', not an integer"),
    ("skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 7\n", 3,
     "diagonal entry"),
    ("rect_sym.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", 2, "must be square"),
    ("edges.txt", "# comment\n0 1\n1 2\n2 x\n", 4, "value 2 is 'x', not an integer"),
    ("columns.txt", "0 1\n1 2 3\n", 2, "found 3 values"),
    ("negative.txt", "0 1\n-1 2\n", 2, "negative vertex id -1"),
    ("weights.wel", "0 1 0.5\n1 2 heavy\n", 2, "value 3 is 'heavy', not a number"),
    ("tag.gr", "p sp 2 2\na 1 2 1\nb 2 1 1\n", 3, "line starts with 'b'"),
    ("vertex.gr", "c x\np sp 2 1\na 1 3 1\n", 3, r"vertex 3 out of range.*1 <= vertex <= 2"),
    ("noproblem.gr", "c only comments\nc here\n", 3, "ends before the problem line"),
    ("header.graph", "% c\n3 2 7\n", 2, "fmt '7' is not up to three binary digits"),
    ("neighbour.graph", "2 1\n3\n1\n", 2, "vertex 1 lists neighbour 3"),
    ("token.graph", "2 1\n2\n1x\n", 3, "'1x' is not an integer"),
    ("extra.graph", "2 1\n2\n1\n1\n", 4, "more than the 2 vertex lines"),
    ("fields.csv", "source,target,weight\na,b,1\nb,c\n", 3, "found 2 fields"),
    ("weight.csv", "source,target,weight\na,b,1\nb,c,lots\n", 3, "weight 'lots' is not a number"),
]


@pytest.mark.parametrize("name, content, line, message", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_error_names_file_line_and_expectation(tmp_path, name, content, line, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(GraphFormatError) as info:
        read_graph(path)
    text = str(info.value)
    assert text.startswith(f"{path}, line {line}: "), text
    assert info.value.line == line and info.value.path == str(path)
    import re

    assert re.search(message, text), text
    assert "\n" not in text


@pytest.mark.parametrize("name, content, line, message", BAD_FILES[:8], ids=[b[0] for b in BAD_FILES[:8]])
def test_error_line_numbers_survive_compression(tmp_path, name, content, line, message):
    path = tmp_path / (name + ".gz")
    path.write_bytes(gzip.compress(content.encode()))
    with pytest.raises(GraphFormatError) as info:
        read_graph(path)
    assert info.value.line == line


def test_bad_line_far_into_a_large_file_is_found_exactly(tmp_path, monkeypatch):
    # small blocks so that the error sits in a later block than the first
    import kernels.graph.io.text as text

    monkeypatch.setattr(text, "BLOCK_BYTES", 64)
    monkeypatch.setattr(text, "READ_BYTES", 32)
    lines = [f"{k % 50 + 1} {k % 49 + 1}" for k in range(500)]
    lines[377] = "3 4 5"
    path = tmp_path / "big.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n50 50 500\n" + "\n".join(lines) + "\n")
    with pytest.raises(GraphFormatError) as info:
        read_graph(path)
    assert info.value.line == 2 + 378


# ---- numbers of thousands of digits (issue 30) -------------------------------------------------
# Python refuses to convert strings of more than 4,300 digits (a raw ValueError); the readers refuse
# such a number themselves, by its length, naming the line and their own limit, and never raise
# Python's limit.
GIANT = "7" * 5000
GIANT_NUMBERS = [
    ("giant.mtx", MTX + f"1 1 1\n{GIANT} 2 1\n3 3 1\n", 5, r"value 1 \('7+\.\.\.', 5,000 digits\) is too large: "
     r"integers here lie below 2\*\*63"),
    ("giant_size.mtx", f"%%MatrixMarket matrix coordinate real general\n3 {GIANT} 1\n1 1 1\n", 2,
     r"bad size line: value 2 \('7+\.\.\.', 5,000 digits\) is too large.*below 2\*\*63"),
    ("giant_value.mtx", f"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 {GIANT}\n", 3,
     r"value 3 .*5,000 digits.*below 2\*\*63"),
    ("giant.gr", f"p sp 2 1\na 1 {GIANT} 1\n", 2, r"value 2 .*5,000 digits.*below 2\*\*63"),
    ("giant_problem.gr", f"c x\np sp {GIANT} 1\na 1 2 1\n", 2, r"bad problem line: value 1 .*5,000 digits"),
    ("giant.clq", f"p edge 2 1\ne {GIANT} 1\n", 2, r"value 1 .*5,000 digits.*below 2\*\*63"),
    ("giant.txt", f"# ids\n0 1\n1 {GIANT}\n", 3, r"value 2 .*5,000 digits.*below 2\*\*63"),
    ("giant_first.txt", f"{GIANT} 1\n", 1, r"value 1 .*5,000 digits.*below 2\*\*63"),
    ("giant.csv", f"source,target\n1,2\n1,{GIANT}\n", 3,
     r"vertex id '7+\.\.\.' \(5,000 digits\) is out of range.*0 <= id <= 2147483647"),
    ("giant.graph", f"2 1\n{GIANT}\n1\n", 2, r"value \('7+\.\.\.', 5,000 digits\) is too large.*at most 18 digits"),
    ("giant_header.graph", f"% c\n2 {GIANT}\n2\n1\n", 2, r"header number .*5,000 digits.*at most 18 digits"),
    ("giant.net", f"*Vertices 3\n*Arcs\n1 {GIANT}\n", 3, r"vertex '7+\.\.\.' \(5,000 digits\) is out of range"),
    ("giant_vertices.net", f"% c\n*Vertices {GIANT}\n", 2, r"\*Vertices '7+\.\.\.': more vertices than the 32-bit"),
    ("giant.gml", f"graph [\n node [ id 0 ]\n edge [ source 0 target 0 weight {GIANT} ]\n]\n", 3,
     r"a number of 5,000 digits \(integers of more than 4,300 digits are not read\)"),
    ("giant.graphml", '<graphml><key id="w" for="edge" attr.name="weight" attr.type="long"/>\n'
     '<graph edgedefault="directed"><node id="a"/>\n'
     f'<edge source="a" target="a"><data key="w">{GIANT}</data></edge></graph></graphml>\n', 3,
     r"a number of 5,000 digits"),
]


@pytest.mark.parametrize("name, content, line, message", GIANT_NUMBERS, ids=[b[0] for b in GIANT_NUMBERS])
def test_a_number_of_thousands_of_digits_is_refused_naming_the_line_and_the_limit(tmp_path, name, content, line,
                                                                                  message):
    import re
    import sys

    path = tmp_path / name
    path.write_text(content)
    limit = sys.get_int_max_str_digits()
    try:
        check_fits_memory(path)          # the pre-check reads headers and samples: it may pass, never crash
    except GraphFormatError as exc:
        assert exc.line == line and re.search(message, str(exc)), str(exc)
    for data in (content.encode(), gzip.compress(content.encode())):
        path.write_bytes(data)
        with pytest.raises(GraphFormatError) as info:
            read_graph(path)
        text = str(info.value)
        assert text.startswith(f"{path}, line {line}: ") and re.search(message, text), text
        assert "\n" not in text and "set_int_max_str_digits" not in text
    assert sys.get_int_max_str_digits() == limit


# ---- non-finite weights (issue 30): refused at read time, naming the line -----------------------
NON_FINITE = [
    ("nan.mtx", MTX + "1 1 1\n2 1 nan\n3 3 1\n", 5, r"weight 'nan' is not a number \(expected a finite weight\)"),
    ("overflow_sym.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 2.5\n3 1 1e400\n", 4,
     r"weight '1e400' overflows a 64-bit float"),
    ("minus_inf_skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n% c\n3 1 -Infinity\n", 4,
     r"weight '-Infinity' is infinite"),
    ("inf.gr", "c road\np sp 3 2\na 1 2 4\na 2 3 -inf\n", 4, r"weight '-inf' is infinite"),
    ("inf.txt", "# w\n0 1 1.5\n1 2 inf\n", 3, r"weight 'inf' is infinite"),
    ("nan_comma.wel", "0,1,0.5\n1,2,NaN\n", 2, r"weight 'NaN' is not a number"),
    ("nan_wide.txt", "0 1 1 x\n1 2 nan y\n", 2, r"weight 'nan' is not a number"),
    ("inf.csv", "source,target,weight\na,b,1\nb,c,\"inf\"\n", 3, r"weight 'inf' is infinite"),
    ("nan.net", '*Vertices 3\n1 "a"\n*Edges\n1 2 1.5\n2 3 nan\n', 5, r"weight 'nan' is not a number"),
    ("inf_attr.net", '*Vertices 3\n*Arcs\n1 2 +inf c Blue\n', 3, r"weight '\+inf' is infinite"),
    ("nan_late.csv", "from;to;cost\n" + "a;b;1\n" * 5 + "b;c;-nan\n", 7, r"weight '-nan' is not a number"),
]


@pytest.mark.parametrize("name, content, line, message", NON_FINITE, ids=[b[0] for b in NON_FINITE])
def test_a_nan_or_infinite_weight_is_refused_naming_its_line(tmp_path, name, content, line, message):
    import re

    for suffix, pack in (("", bytes), (".gz", gzip.compress), (".bz2", bz2.compress)):
        path = tmp_path / (name + suffix)
        path.write_bytes(pack(content.encode()))
        with pytest.raises(GraphFormatError) as info:
            read_graph(path)
        text = str(info.value)
        assert text.startswith(f"{path}, line {line}: ") and re.search(message, text), text
        assert "\n" not in text


def test_a_nan_or_infinite_weight_without_a_line_names_the_entry(tmp_path):
    """.npz arrays and the graphs NetworkX parses (GML, GraphML) have no lines: the entry is named."""
    import numpy as np

    npz = tmp_path / "w.npz"
    np.savez(npz, format=np.array("gge-csr-1"), indptr=np.array([0, 1, 2]), indices=np.array([1, 0], np.int32),
             weights=np.array([1.0, np.inf]), shape=np.array([2, 2]), directed=np.array(True), name=np.array("w"))
    gml = tmp_path / "w.gml"
    gml.write_text("graph [\n directed 1\n node [ id 0 ]\n node [ id 1 ]\n edge [ source 0 target 1 weight 2 ]\n"
                   "edge [ source 1 target 0 weight NAN ]\n]\n")
    graphml = tmp_path / "w.graphml"
    graphml.write_text('<graphml><key id="w" for="edge" attr.name="weight" attr.type="double"/>'
                       '<graph edgedefault="directed"><node id="a"/><node id="b"/>'
                       '<edge source="a" target="b"><data key="w">-inf</data></edge></graph></graphml>')
    huge = tmp_path / "huge.gml"
    huge.write_text("graph [ node [ id 0 ] edge [ source 0 target 0 weight " + "1" * 400 + " ] ]\n")
    for path, message in ((npz, r"'weights'\[1\]: weight 'inf' is infinite"),
                          (gml, r"edge 2 \(from '1' to '0'\): weight 'nan' is not a number"),
                          (graphml, r"edge 1 \(from 'a' to 'b'\): weight '-inf' is infinite"),
                          (huge, r"edge 1 \(from '0' to '0'\): weight '1111.*' overflows a 64-bit float")):
        with pytest.raises(GraphFormatError, match=message) as info:
            read_graph(path)
        assert str(info.value).startswith(f"{path}: ") and str(info.value).endswith("(expected a finite weight)")


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(GraphFormatError, match="no such file"):
        read_graph(tmp_path / "nope.mtx")
    with pytest.raises(GraphFormatError, match="is a directory"):
        read_graph(tmp_path)


def test_empty_file(tmp_path):
    (tmp_path / "empty").write_bytes(b"")
    with pytest.raises(GraphFormatError, match="empty"):
        read_graph(tmp_path / "empty")


def test_binary_garbage_with_a_graph_extension_is_a_format_error(tmp_path):
    path = tmp_path / "garbage.mtx"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(GraphFormatError, match=r"garbage\.mtx, line 1"):
        read_graph(path)


def test_unrecognised_text_lists_the_formats(tmp_path):
    path = tmp_path / "prose.dat2"
    path.write_text("Once upon a time\nthere was a graph.\n")
    with pytest.raises(UnsupportedFormatError, match="could not recognise.*expected one of: csv, dimacs"):
        read_graph(path)


def test_truncated_gzip_is_a_format_error_naming_gzip(tmp_path):
    data = gzip.compress(("%%MatrixMarket matrix coordinate pattern general\n9 9 40\n"
                          + "".join(f"{k % 9 + 1} {(k * 7) % 9 + 1}\n" for k in range(40))).encode())
    path = tmp_path / "cut.mtx.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(GraphFormatError, match=r"cut\.mtx\.gz.*gzip"):
        read_graph(path)


def test_unsupported_compression_is_named(tmp_path):
    path = tmp_path / "x.mtx.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 20)
    with pytest.raises(UnsupportedFormatError, match="zstd"):
        read_graph(path)


def test_huge_declared_size_is_refused_before_allocating(tmp_path):
    path = tmp_path / "huge.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n2000000000 2000000000 1\n1 1\n")
    with pytest.raises(FileTooLargeError, match=r"line 2: 2,000,000,000 rows for only 1 entries") as info:
        read_graph(path)
    assert isinstance(info.value, ResourceLimitError) and isinstance(info.value, GraphFormatError)


def test_unknown_format_name_is_a_parameter_error(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("0 1\n")
    with pytest.raises(ParameterError, match="format"):
        read_graph(path, format="excel")


# ---- sniffing: the content decides ---------------------------------------------------------

def test_misleading_extensions_are_overruled_by_content(tmp_path):
    g = CSRGraph.from_edges(4, [0, 1, 2], [1, 2, 3], [1.0, 2.0, 3.0], directed=True)
    cases = {}
    write_graph(g, tmp_path / "a.mtx")
    cases["mtx_named.txt"] = ((tmp_path / "a.mtx").read_bytes(), "mtx")
    write_graph(g, tmp_path / "a.txt")
    cases["edges_named.mtx"] = ((tmp_path / "a.txt").read_bytes(), "edgelist")
    write_graph(g, tmp_path / "a.npz")
    cases["npz_named.graph"] = ((tmp_path / "a.npz").read_bytes(), "npz")
    cases["gzip_named.mtx"] = (gzip.compress((tmp_path / "a.mtx").read_bytes()), "mtx")
    cases["bz2_named.txt.gz"] = (bz2.compress((tmp_path / "a.txt").read_bytes()), "edgelist")
    cases["plain_named.mtx.gz"] = ((tmp_path / "a.mtx").read_bytes(), "mtx")
    nx.write_graphml(g.to_networkx(), tmp_path / "a.graphml")
    cases["graphml_named.txt"] = ((tmp_path / "a.graphml").read_bytes(), "graphml")
    cases["gml_named.net"] = ("\n".join(nx.generate_gml(g.to_networkx())).encode(), "gml")
    cases["metis_named.bin"] = (b"3 2\n2 3\n1\n1\n", "metis")
    cases["gr_named.txt"] = (b"c x\np sp 2 1\na 1 2 3\n", "dimacs-gr")
    cases["csv_named.txt"] = (b"from,to\n0,1\n", "csv")
    for name, (content, expected) in cases.items():
        (tmp_path / name).write_bytes(content)
        assert detect_format(tmp_path / name) == expected, name
        read_graph(tmp_path / name)  # and it reads


def test_extension_breaks_ties_between_lookalike_contents(tmp_path):
    # every line has two numbers: a METIS file or an edge list; the extension decides
    content = b"4 4\n2 4\n1 3\n2 4\n1 3\n"
    for name, expected in (("ring.graph", "metis"), ("ring.txt", "edgelist"), ("ring.el", "edgelist")):
        (tmp_path / name).write_bytes(content)
        assert detect_format(tmp_path / name) == expected
