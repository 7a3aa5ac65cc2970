"""``SlottedGraph.from_csr(g).to_csr()`` gives back ``g`` for every graph in tests/data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernels.graph.cleanup import drop_duplicates, duplicate_mask
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph
from kernels.graph.slotted import SlottedGraph, square_graph_form
from kernels.graph.stats import slotted_memory_estimate

DATA = Path(__file__).parent / "data"
FILES = sorted(p.name for p in DATA.iterdir() if p.name.endswith((".mtx", ".mtx.gz")))


def _graph_form(path: Path) -> CSRGraph:
    g = square_graph_form(read_graph(path))      # a rectangular matrix: directed over max(rows, cols)
    return drop_duplicates(g) if duplicate_mask(g).any() else g


@pytest.mark.parametrize("name", FILES)
def test_round_trip_through_slotted_pages_gives_back_the_graph(name):
    g = _graph_form(DATA / name)
    for page_size in (32, 1024):
        s = SlottedGraph.from_csr(g, page_size=page_size)
        assert s.to_csr().equals(g), f"{name} at page size {page_size}"
        assert s.num_entries == g.nnz and s.num_edges == g.num_edges and s.num_vertices == g.n_rows
        assert s.memory_bytes == slotted_memory_estimate(g, page_size)
        if s.num_pages < 3000:
            s.check_invariants()


def test_round_trip_keeps_weights_and_reads_a_rectangular_matrix_as_directed():
    g = _graph_form(DATA / "lp_afiro.mtx")
    assert g.directed and g.n_rows == g.n_cols == 51
    s = SlottedGraph.from_csr(g, page_size=16)
    out = s.to_csr()
    assert out.weighted and np.array_equal(out.weights, g.weights)


def test_float32_weights_halve_the_weight_pool():
    g = _graph_form(DATA / "USAir97.mtx")
    s64 = SlottedGraph.from_csr(g, page_size=256)
    s32 = SlottedGraph.from_csr(g, page_size=256, weight_dtype=np.float32)
    assert s32.memory_bytes < s64.memory_bytes
    assert np.allclose(s32.to_csr().weights, g.weights, rtol=1e-6)


def test_edits_then_rebuild_equal_the_same_edits_on_csr():
    g = _graph_form(DATA / "USAir97.mtx")
    assert g.weighted and not g.directed
    s = SlottedGraph.from_csr(g, page_size=32)
    absent = next(v for v in range(1, g.n_rows) if v not in set(g.neighbors(0).tolist()))
    present = int(g.neighbors(0)[0])
    s.add_edge(0, absent, weight=2.5)
    s.remove_edge(0, present)
    src, dst = g.row_of_entry(), g.indices
    keep = ~(((src == 0) & (dst == present)) | ((src == present) & (dst == 0)))
    src = np.concatenate([src[keep], [0, absent]])
    dst = np.concatenate([dst[keep], [absent, 0]])
    w = np.concatenate([g.weights[keep], [2.5, 2.5]])
    expected = CSRGraph.from_edges(g.n_rows, src, dst, w, directed=False)
    assert s.to_csr().equals(expected)
    s.check_invariants()
