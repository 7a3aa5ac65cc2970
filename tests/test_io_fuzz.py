"""Fuzzing every reader: whatever the bytes, the only errors are the GraphFormatError family.

Random bytes, truncations of valid files, corrupted headers and random text lines after a
valid header, each for every format (forced and sniffed), plain and compressed. A reader may
also succeed: the result must then be a consistent CSRGraph.
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
import zipfile

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from kernels.errors import GraphFormatError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import FORMATS, read_graph, write_graph

# a deeper search: GK_FUZZ_EXAMPLES=5000 pytest tests/test_io_fuzz.py
FUZZ = settings(max_examples=int(os.environ.get("GK_FUZZ_EXAMPLES", "150")), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
READABLE = sorted(name for name, spec in FORMATS.items() if spec.readable)
FORMAT_CHOICES = [None, *READABLE]


def _sample_graph() -> CSRGraph:
    return CSRGraph.from_edges(5, [0, 1, 2, 3, 3], [1, 2, 0, 4, 3], [1.5, 2.0, 0.25, 4.0, 1.0],
                               directed=False, both_directions=True, name="sample")


def _valid_files() -> dict[str, bytes]:
    """One small valid file per readable format."""
    g = _sample_graph()
    out = {}
    for suffix in (".mtx", ".txt", ".npz"):
        buf = io.BytesIO()
        FORMATS[{".mtx": "mtx", ".txt": "edgelist", ".npz": "npz"}[suffix]].write(g, buf)
        out[suffix] = buf.getvalue()
    nxg = g.to_networkx()
    for suffix, writer in ((".graphml", nx.write_graphml), (".net", nx.write_pajek)):
        buf = io.BytesIO()
        writer(nxg, buf)
        out[suffix] = buf.getvalue()
    out[".gml"] = "\n".join(nx.generate_gml(nxg)).encode()
    out[".gr"] = b"c road\np sp 3 3\na 1 2 4\na 2 3 1\na 3 1 2\n"
    out[".clq"] = b"c clique\np edge 3 3\ne 1 2\ne 2 3\ne 1 3\n"
    out[".graph"] = b"% metis fmt 11\n3 2 11\n1 2 5\n2 1 5 3 7\n3 2 7\n"
    out[".csv"] = b"source,target,weight\na,b,1\nb,c,2.5\n"
    return out


VALID = _valid_files()
SUFFIXES = sorted(VALID)

# words that make random text look almost like each format
VOCABULARY = [
    "0", "1", "2", "3", "7", "-1", "+4", "1.5", "-2e3", "nan", "inf", "x", "", " ", "\t", ",", ";",
    str(2**31 - 1), str(2**31), str(2**63), str(10**30), "%", "#", "c", "p", "a", "e", "sp", "edge",
    "%%MatrixMarket", "matrix", "coordinate", "pattern", "real", "integer", "general", "symmetric",
    "skew-symmetric", "array", "complex", "*Vertices", "*Arcs", "*Edges", "graph", "[", "]", "node",
    "id", "source", "target", "weight", "<graphml>", "<graph>", "<node", "<edge", "/>", '"', "\x00", "é",
    "7" * 5000,  # past Python's 4,300-digit limit for int()
]


def check_read(path, fmt):
    """Reading either works (giving a consistent graph) or raises a GraphFormatError."""
    try:
        g = read_graph(path, format=fmt)
    except GraphFormatError as exc:
        text = str(exc)
        assert str(path) in text and "\n" not in text.strip("\n"), text
        return None
    assert isinstance(g, CSRGraph)
    assert g.indptr[0] == 0 and g.indptr[-1] == g.nnz and np.all(np.diff(g.indptr) >= 0)
    if g.nnz:
        assert g.indices.min() >= 0 and g.indices.max() < g.n_cols
    # a NaN or infinite weight is refused at read time (the live structure could not hold it)
    assert g.weights is None or np.isfinite(g.weights).all(), g.weights
    return g


def compress(data: bytes, how: str) -> bytes:
    return {"": lambda d: d, ".gz": gzip.compress, ".bz2": bz2.compress}[how](data)


@FUZZ
@given(data=st.binary(max_size=600), fmt=st.sampled_from(FORMAT_CHOICES),
       suffix=st.sampled_from(SUFFIXES + [".bin"]))
def test_random_bytes(tmp_path, data, fmt, suffix):
    path = tmp_path / f"random{suffix}"
    path.write_bytes(data)
    check_read(path, fmt)


@FUZZ
@given(suffix=st.sampled_from(SUFFIXES), cut=st.floats(0, 1), how=st.sampled_from(["", ".gz", ".bz2"]),
       forced=st.booleans())
def test_truncated_valid_files(tmp_path, suffix, cut, how, forced):
    full = compress(VALID[suffix], how)
    path = tmp_path / f"cut{suffix}{how}"
    path.write_bytes(full[: int(len(full) * cut)])
    fmt = None
    if forced:
        fmt = read_graph_format_of(suffix)
    check_read(path, fmt)


def read_graph_format_of(suffix: str) -> str:
    for name, spec in FORMATS.items():
        if suffix in spec.extensions:
            return name
    raise KeyError(suffix)


@FUZZ
@given(suffix=st.sampled_from(SUFFIXES), position=st.integers(0, 200), byte=st.integers(0, 255),
       how=st.sampled_from(["", ".gz"]))
def test_corrupted_headers(tmp_path, suffix, position, byte, how):
    data = bytearray(VALID[suffix])
    assume(position < len(data))
    data[position] = byte
    path = tmp_path / f"corrupt{suffix}{how}"
    path.write_bytes(compress(bytes(data), how))
    check_read(path, None)
    check_read(path, read_graph_format_of(suffix))


def _header_of(suffix: str) -> bytes:
    """The first line(s) of a valid file: the part a reader trusts before the body."""
    data = VALID[suffix]
    keep = {".mtx": 3, ".gr": 2, ".clq": 2, ".graph": 2, ".csv": 1, ".txt": 3, ".net": 1}.get(suffix, 0)
    return b"".join(data.splitlines(keepends=True)[:keep])


random_lines = st.lists(st.lists(st.sampled_from(VOCABULARY), max_size=6).map(" ".join), max_size=12)


@FUZZ
@given(suffix=st.sampled_from(SUFFIXES), lines=random_lines, forced=st.booleans())
def test_random_text_lines_after_a_valid_header(tmp_path, suffix, lines, forced):
    path = tmp_path / f"text{suffix}"
    path.write_bytes(_header_of(suffix) + "\n".join(lines).encode("utf-8"))
    check_read(path, read_graph_format_of(suffix) if forced else None)


@FUZZ
@given(data=st.binary(max_size=300), magic=st.sampled_from([b"\x1f\x8b", b"\x1f\x8b\x08\x00", b"BZh9",
                                                            b"\xfd7zXZ\x00", b"PK\x03\x04"]),
       suffix=st.sampled_from([".mtx.gz", ".npz", ".txt.bz2", ".graphml.xz", ".bin"]))
def test_garbage_behind_compression_and_zip_magic(tmp_path, data, magic, suffix):
    path = tmp_path / f"magic{suffix}"
    path.write_bytes(magic + data)
    check_read(path, None)


@FUZZ
@given(members=st.dictionaries(st.sampled_from(["indptr", "indices", "weights", "shape", "directed",
                                                "format", "data", "name"]),
                               st.one_of(
                                   st.lists(st.integers(-3, 12), max_size=8).map(np.array),
                                   st.lists(st.floats(allow_nan=True), max_size=8).map(np.array),
                                   st.sampled_from([np.array("csr"), np.array(b"csc"), np.array(b"\xff"),
                                                    np.array(True), np.array([]), np.zeros((2, 2)),
                                                    np.array([2**40, 3])]),
                               ), max_size=8))
@example(members={"shape": np.array([0]), "indptr": np.array([0]), "directed": np.array([]),
                  "indices": np.array([0])})  # found by a deep run: an empty 'directed' member
def test_npz_with_random_members(tmp_path, members):
    path = tmp_path / "members.npz"
    np.savez(path, **members)
    check_read(path, None)


def test_npz_with_a_corrupt_member(tmp_path):
    g = _sample_graph()
    write_graph(g, tmp_path / "ok.npz")
    with zipfile.ZipFile(tmp_path / "ok.npz") as zf:
        contents = {n: zf.read(n) for n in zf.namelist()}
    contents["indices.npy"] = contents["indices.npy"][:40]
    with zipfile.ZipFile(tmp_path / "bad.npz", "w") as zf:
        for name, blob in contents.items():
            zf.writestr(name, blob)
    with pytest.raises(GraphFormatError, match=r"bad\.npz"):
        read_graph(tmp_path / "bad.npz")


def test_valid_samples_read(tmp_path):
    """The seeds of the fuzzing are themselves valid (otherwise the fuzzing proves little)."""
    for suffix, data in VALID.items():
        path = tmp_path / f"ok{suffix}"
        path.write_bytes(data)
        g = read_graph(path)
        assert g.n_rows in (3, 5), suffix
