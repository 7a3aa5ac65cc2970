"""write_graph then read_graph gives the same graph, for every writable format and compression."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernels.errors import InputRequirementError, ParameterError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import FORMATS, read_graph, write_graph

WRITABLE = {
    "mtx": ".mtx",
    "edgelist": ".txt",
    "npz": ".npz",
}
COMPRESSIONS = ["", ".gz", ".bz2", ".xz"]


def entries(g):
    rows = g.row_of_entry().tolist()
    w = [None] * g.nnz if g.weights is None else g.weights.astype(np.float64).tolist()
    return sorted(zip(rows, g.indices.tolist(), w, strict=True), key=lambda e: (e[0], e[1], repr(e[2])))


def same_graph(a: CSRGraph, b: CSRGraph) -> bool:
    """Equal as graphs: shape, kind and the multiset of entries (duplicates may reorder)."""
    return ((a.n_rows, a.n_cols, a.directed, a.weighted) == (b.n_rows, b.n_cols, b.directed, b.weighted)
            and entries(a) == entries(b))


# every finite float64 (readers refuse NaN and infinities, and so does write_graph)
weights_strategy = st.floats(allow_nan=False, allow_infinity=False, width=64) | st.integers(-5, 5).map(float)


@st.composite
def graphs(draw, square: bool = True):
    n = draw(st.integers(0, 12))
    cols = n if square else draw(st.integers(1, 12))
    directed = draw(st.booleans()) if square else True
    weighted = draw(st.booleans())
    if n == 0 or cols == 0:
        m = 0
    else:
        m = draw(st.integers(0, 30))
    src = draw(st.lists(st.integers(0, max(n - 1, 0)), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, max(cols - 1, 0)), min_size=m, max_size=m))
    w = draw(st.lists(weights_strategy, min_size=m, max_size=m)) if weighted else None
    return CSRGraph.from_edges(n, src, dst, w, n_cols=cols, directed=directed,
                               both_directions=not directed, name="g")


@pytest.mark.parametrize("fmt", sorted(WRITABLE))
def test_a_graph_with_a_non_finite_weight_is_not_written(tmp_path, fmt):
    """Readers refuse NaN and infinite weights, so writing one would make a file that cannot be
    read back: refused, and nothing is left behind."""
    from kernels.errors import GraphKernelsError

    g = CSRGraph.from_edges(3, [0, 1], [1, 2], [1.0, float("inf")], directed=True, name="g")
    path = tmp_path / f"w{WRITABLE[fmt]}"
    with pytest.raises(GraphKernelsError, match=r"cannot write weight inf \(entry 1\): a graph file holds finite"):
        write_graph(g, path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("fmt", sorted(WRITABLE))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(g=graphs())
def test_round_trip_square_graphs(tmp_path, fmt, compression, g):
    path = tmp_path / f"rt{WRITABLE[fmt]}{compression}"
    write_graph(g, path)
    back = read_graph(path)
    assert same_graph(g, back), (g, back)
    assert back.name == "rt"


@pytest.mark.parametrize("fmt", ["mtx", "npz"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(g=graphs(square=False))
def test_round_trip_rectangular_matrices(tmp_path, fmt, g):
    path = tmp_path / f"m{WRITABLE[fmt]}.gz"
    write_graph(g, path)
    assert same_graph(g, read_graph(path))


def test_round_trip_without_duplicates_is_exact(tmp_path):
    rng = np.random.default_rng(7)
    n = 200
    src, dst = rng.integers(0, n, 2000), rng.integers(0, n, 2000)
    keep = np.unique(np.minimum(src, dst) * n + np.maximum(src, dst))
    g = CSRGraph.from_edges(n, keep // n, keep % n, rng.normal(size=len(keep)), directed=False,
                            both_directions=True)
    for suffix in (".mtx", ".txt", ".npz", ".mtx.gz"):
        back = read_graph(tmp_path / f"x{suffix}") if (write_graph(g, tmp_path / f"x{suffix}") or True) else None
        assert back.equals(g), suffix
        assert back.fingerprint == g.fingerprint


def test_undirected_matrix_market_is_written_as_lower_triangle(tmp_path):
    g = CSRGraph.from_edges(3, [0, 1], [1, 2], [2.5, 4.0], directed=False, both_directions=True)
    write_graph(g, tmp_path / "t.mtx")
    lines = (tmp_path / "t.mtx").read_text().splitlines()
    assert lines[0] == "%%MatrixMarket matrix coordinate real symmetric"
    assert lines[2:] == ["3 3 2", "2 1 2.5", "3 2 4.0"]


def test_float32_weights_survive_exactly(tmp_path):
    g = CSRGraph(np.array([0, 2, 2]), np.array([0, 1]), np.array([0.1, 1e-30], dtype=np.float32),
                 directed=True)
    for suffix in (".mtx", ".txt", ".npz"):
        write_graph(g, tmp_path / f"f{suffix}")
        back = read_graph(tmp_path / f"f{suffix}")
        assert back.weights.astype(np.float32).tolist() == g.weights.tolist()


def test_write_refuses_unknown_extension_and_rectangular_edge_list(tmp_path):
    g = CSRGraph.from_edges(2, [0], [1], n_cols=3, directed=True)
    with pytest.raises(ParameterError, match="output extension"):
        write_graph(g, tmp_path / "x.unknown")
    with pytest.raises(InputRequirementError):
        write_graph(g, tmp_path / "x.txt")
    assert not list(tmp_path.iterdir()), "a failed write must not leave files behind"


def test_explicit_output_format_overrides_the_extension(tmp_path):
    g = CSRGraph.from_edges(2, [0], [1], directed=True)
    write_graph(g, tmp_path / "x.dat", format="mtx")
    assert (tmp_path / "x.dat").read_text().startswith("%%MatrixMarket")
    assert same_graph(read_graph(tmp_path / "x.dat"), g)


def test_formats_table_lists_readable_and_writable_formats():
    assert {name for name, spec in FORMATS.items() if spec.writable} == set(WRITABLE)
    for name, spec in FORMATS.items():
        assert spec.readable and spec.extensions and spec.description, name
