"""Estimates before loading, the memory check, progress reports and cancellation."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from kernels.errors import GraphFormatError, ResourceLimitError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import (
    LoadCancelled,
    available_memory,
    check_fits_memory,
    estimate_load,
    read_graph,
    write_graph,
)
from tests.conftest import DATA, data_path

ESTIMATE_KEYS = {"path", "format", "compression", "file_bytes", "uncompressed_bytes", "uncompressed_exact",
                 "basis", "rows", "cols", "vertices", "entries", "entries_exact", "weighted", "directed",
                 "csr_bytes", "peak_bytes"}


@pytest.mark.parametrize("name", ["karate.mtx", "west0067.mtx", "lp_afiro.mtx", "delaunay_n15.mtx"])
def test_header_estimates_of_matrix_market_files(name):
    path = data_path(name)
    est = estimate_load(path)
    g = read_graph(path)
    assert set(est) == ESTIMATE_KEYS and est["basis"] == "header" and est["format"] == "mtx"
    assert (est["rows"], est["cols"]) == (g.n_rows, g.n_cols)
    if g.directed:
        assert est["entries"] == g.nnz and est["entries_exact"] and est["csr_bytes"] == g.memory_bytes()
    else:  # symmetric: twice the stored triangle, an upper bound (the diagonal is not doubled)
        assert g.nnz <= est["entries"] <= 2 * g.nnz and not est["entries_exact"]
    assert est["peak_bytes"] > est["csr_bytes"] >= g.memory_bytes()


def test_gzip_size_is_counted_by_decompressing():
    est = estimate_load(data_path("delaunay_n15.mtx"))
    assert est["compression"] == "gzip" and est["uncompressed_exact"]
    with gzip.open(data_path("delaunay_n15.mtx")) as fh:
        assert est["uncompressed_bytes"] == len(fh.read())


def test_a_forged_gzip_trailer_does_not_fool_the_estimate(tmp_path):
    content = b"0 1\n" * 200_000
    forged = gzip.compress(content)[:-4] + (100).to_bytes(4, "little")  # claims 100 bytes
    path = tmp_path / "forged.txt.gz"
    path.write_bytes(forged)
    # the estimate decompresses and counts, so it finds the trailer wrong instead of believing it
    with pytest.raises(GraphFormatError, match="Incorrect length"):
        estimate_load(path)


@pytest.mark.parametrize("name, entries, rows", [
    ("io/road.gr", 7, 5), ("io/plain.graph", 10, 5), ("io/triangle_plus.clq", 8, 5)])
def test_header_estimates_of_other_formats(name, entries, rows):
    est = estimate_load(DATA / name)
    assert est["basis"] == "header" and est["entries"] == entries and est["rows"] == rows


def test_edge_list_estimate_extrapolates_from_the_file_size(tmp_path):
    rng = np.random.default_rng(3)
    g = CSRGraph.from_edges(5000, rng.integers(0, 5000, 40000), rng.integers(0, 5000, 40000), directed=True)
    write_graph(g, tmp_path / "e.txt")
    est = estimate_load(tmp_path / "e.txt")
    assert est["basis"] == "file size" and est["directed"] is True and est["weighted"] is False
    assert 0.8 * g.nnz <= est["entries"] <= 1.2 * g.nnz
    assert est["vertices"] <= 5000


def test_check_fits_memory_refuses_before_loading(tmp_path):
    path = data_path("delaunay_n15.mtx")
    est = check_fits_memory(path, available=10**12)
    assert est["available_bytes"] == 10**12
    with pytest.raises(ResourceLimitError, match=r"loading needs about .* but only .* of memory is available"):
        check_fits_memory(path, available=est["peak_bytes"])


def test_available_memory_is_found_here():
    free = available_memory()
    assert free is None or free > 0


def test_progress_is_monotonic_and_ends_at_one(tmp_path, monkeypatch):
    import kernels.graph.io.compression as compression
    import kernels.graph.io.text as text

    monkeypatch.setattr(compression, "RAW_BUFFER_BYTES", 1024)
    monkeypatch.setattr(text, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(text, "READ_BYTES", 1024)
    for name in ("delaunay_n15.mtx", "as-caida20071105.mtx", "power.mtx"):
        seen = []
        read_graph(data_path(name), progress=seen.append)
        assert len(seen) > 10, name
        assert seen[0] == 0.0 and seen[-1] == 1.0
        assert all(b > a for a, b in zip(seen, seen[1:], strict=False))


@pytest.mark.parametrize("name", ["power.mtx", "io/plain.graph", "io/labels.csv", "io/snap_directed.txt"])
def test_cancel_stops_the_load(name):
    path = data_path(name) if "/" not in name else DATA / name
    with pytest.raises(LoadCancelled, match="cancelled"):
        read_graph(path, cancel=lambda: True)


def test_cancel_midway_through_a_big_file(tmp_path, monkeypatch):
    import kernels.graph.io.text as text

    monkeypatch.setattr(text, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(text, "READ_BYTES", 1024)
    calls = []

    def cancel_after_some_progress():
        calls.append(1)
        return len(calls) > 20

    with pytest.raises(LoadCancelled):
        read_graph(data_path("delaunay_n15.mtx"), cancel=cancel_after_some_progress)
    assert len(calls) == 21
