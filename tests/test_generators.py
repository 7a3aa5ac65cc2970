"""The seeded graph and matrix generators, their registry and ``graph-kernels generate``."""

from __future__ import annotations

import inspect
import itertools
import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from kernels.cli import main as cli_main
from kernels.errors import GraphKernelsError, ParameterError
from kernels.graph.csr import CSRGraph
from kernels.graph.generators import (
    GENERATORS,
    chung_lu,
    complete,
    delaunay,
    generate,
    geometric,
    gnm,
    gnp,
    grid2d,
    grid3d,
    powerlaw_matrix,
    rmat,
    stencil,
)
from kernels.graph.generators._build import csr_from_pairs
from kernels.graph.generators._sorting import sort_columns
from kernels.graph.generators.geometric import (
    grid_shape,
    jittered_grid_edges,
    jittered_grid_points,
    uniform_points,
)
from kernels.graph.generators.powerlaw import _sample_sorted_columns

# Small instances of every generator: quick enough for every test below.
SMALL = {
    "gnp": {"n": 200, "p": 0.05},
    "gnm": {"n": 200, "m": 700},
    "rmat": {"scale": 9},
    "chung_lu": {"n": 500, "avg_degree": 8.0, "exponent": 2.3},
    "powerlaw_matrix": {"n_rows": 300, "n_cols": 200, "avg_nnz_per_row": 6.0, "exponent": 2.2},
    "delaunay": {"n": 300},
    "geometric": {"n": 300, "radius": 0.1},
    "grid2d": {"nx": 7, "ny": 5},
    "grid3d": {"nx": 4, "ny": 3, "nz": 5},
    "stencil": {"kind": "27pt", "nx": 5},
    "complete": {"n": 12},
}
RANDOM_KINDS = [k for k in SMALL if k not in ("grid2d", "grid3d", "stencil", "complete")]
GRAPH_KINDS = [k for k, spec in GENERATORS.items() if spec.produces == "graph"]


def edge_set(g: CSRGraph) -> set[tuple[int, int]]:
    rows = g.row_of_entry()
    return set(zip(rows.tolist(), g.indices.tolist(), strict=True))


def assert_simple_undirected(g: CSRGraph) -> None:
    assert not g.directed
    assert g.num_self_loops == 0
    a = g.to_scipy()
    assert (a != a.T).nnz == 0, "not symmetric"
    rows = g.row_of_entry()
    same_row = rows[1:] == rows[:-1]
    assert np.all(np.diff(g.indices.astype(np.int64))[same_row] > 0), "columns unsorted or repeated"


# ---- registry ---------------------------------------------------------------------------
def test_every_generator_is_registered_with_a_small_example():
    assert set(GENERATORS) == set(SMALL)


@pytest.mark.parametrize("kind", sorted(SMALL))
def test_registered_options_are_parameters_of_the_function(kind):
    spec = GENERATORS[kind]
    parameters = inspect.signature(spec.function).parameters
    for option in spec.options:
        assert option.name in parameters
        if not option.required:
            assert parameters[option.name].default == option.default or option.default is None
    if spec.produces == "graph":
        assert {"seed", "weights", "weight_range"} <= set(parameters)


@pytest.mark.parametrize("kind", sorted(SMALL))
def test_same_seed_same_graph_and_a_descriptive_source(kind):
    first = generate(kind, **SMALL[kind], **({"seed": 7} if GENERATORS[kind].seeded else {}))
    again = generate(kind, **SMALL[kind], **({"seed": 7} if GENERATORS[kind].seeded else {}))
    assert first.equals(again) and first.fingerprint == again.fingerprint
    assert first.source.startswith(f"generated: {kind} ")
    if GENERATORS[kind].seeded:
        assert first.source.endswith("seed=7")
    assert first.name != "graph"


@pytest.mark.parametrize("kind", RANDOM_KINDS)
def test_another_seed_gives_another_graph(kind):
    assert not generate(kind, **SMALL[kind], seed=1).equals(generate(kind, **SMALL[kind], seed=2))


def test_names_follow_the_parameters():
    assert rmat(8, 4).name == "rmat_s8_ef4"
    assert stencil("27pt", 3).name == "stencil27_3x3x3"
    assert gnp(10, 0.5).name == "gnp_n10_p0.5"
    assert grid2d(3, 4).name == "grid2d_3x4"


def test_unknown_generator_and_unknown_option_are_parameter_errors():
    with pytest.raises(ParameterError, match="generator"):
        generate("nope", n=3)
    with pytest.raises(ParameterError, match="radius"):
        generate("gnp", n=10, p=0.1, radius=3)


@pytest.mark.parametrize("call, option", [
    (lambda: gnp(10, 1.5), "p"),
    (lambda: gnp(0, 0.5), "n"),
    (lambda: gnm(10, 46), "m"),
    (lambda: rmat(0), "scale"),
    (lambda: rmat(5, a=0.5), "a, b, c, d"),
    (lambda: stencil("3pt", 4), "kind"),
    (lambda: stencil("5pt", 4, 4, 2), "nz"),
    (lambda: geometric(10, 0.0), "radius"),
    (lambda: powerlaw_matrix(10, 10, 20.0), "avg_nnz_per_row"),
    (lambda: powerlaw_matrix(10, 10, 2.0, max_row=11), "max_row"),
    (lambda: chung_lu(10, 20.0), "avg_degree"),
    (lambda: delaunay(100, points="hexagonal"), "points"),
    (lambda: gnp(10, 0.5, seed=-1), "seed"),
    (lambda: gnp(10, 0.5, weights="gaussian"), "weights"),
    (lambda: gnp(10, 0.5, weights="uniform", weight_range=(2, 1)), "weight_range"),
    (lambda: gnp(10, 0.5, weights="integer", weight_range=(0.5, 3)), "weight_range"),
])
def test_bad_values_name_the_option_and_what_is_allowed(call, option):
    with pytest.raises(ParameterError) as info:
        call()
    assert info.value.parameter == option
    assert info.value.allowed


def test_options_parse_from_text():
    spec = GENERATORS["rmat"]
    assert spec.parse({"scale": "2**4", "edge_factor": "8", "a": "0.6", "directed": "yes"}) == {
        "scale": 16, "edge_factor": 8, "a": 0.6, "directed": True}
    assert GENERATORS["stencil"].parse({"nz": "none"}) == {"nz": None}
    assert GENERATORS["gnm"].parse({"m": "1e3"}) == {"m": 1000}
    with pytest.raises(ParameterError, match="an integer in \\[1, 31\\]"):
        spec.parse({"scale": "4.5"})
    with pytest.raises(ParameterError, match="true or false"):
        spec.parse({"directed": "maybe"})


# ---- Erdős–Rényi and complete graphs ----------------------------------------------------
def test_gnm_has_exactly_m_edges_undirected_and_directed():
    g = gnm(300, 1234, seed=3)
    assert g.num_edges == 1234 and g.n_rows == 300
    assert_simple_undirected(g)
    d = gnm(50, 2000, directed=True, seed=3)  # denser than half: drawn through the complement
    assert d.directed and d.nnz == 2000 and d.num_self_loops == 0
    assert len(edge_set(d)) == 2000
    assert gnm(20, 190).equals(complete(20))


def test_gnp_edge_count_is_binomial_dense_and_sparse():
    for n, p in ((600, 0.5), (3000, 0.01)):
        g = gnp(n, p, seed=11)
        assert_simple_undirected(g)
        pairs = n * (n - 1) / 2
        assert abs(g.num_edges - pairs * p) < 5 * math.sqrt(pairs * p * (1 - p))
    d = gnp(400, 0.1, directed=True, seed=1)
    assert d.directed and d.num_self_loops == 0 and len(edge_set(d)) == d.nnz
    pairs = 400 * 399
    assert abs(d.nnz - pairs * 0.1) < 5 * math.sqrt(pairs * 0.1 * 0.9)


def test_gnp_extremes():
    assert gnp(30, 0.0).num_edges == 0
    assert gnp(30, 1.0).equals(complete(30))
    assert gnp(30, 1.0, directed=True).equals(complete(30, directed=True))
    assert gnp(1, 0.5).num_edges == 0


def test_complete_graph_has_all_pairs():
    g = complete(9)
    assert g.num_edges == 9 * 8 // 2
    assert_simple_undirected(g)
    assert nx.is_isomorphic(g.to_networkx(), nx.complete_graph(9))
    assert complete(9, directed=True).nnz == 72
    assert complete(1).num_edges == 0


# ---- R-MAT and Chung–Lu -----------------------------------------------------------------
def test_rmat_is_simple_undirected_and_skewed():
    g = rmat(12, seed=5)
    assert g.n_rows == 4096
    assert_simple_undirected(g)
    degrees = g.degrees()
    assert degrees.max() > 20 * degrees.mean()
    assert g.num_edges < 16 * 4096  # repeats and loops were dropped


def test_rmat_raw_directed_keeps_every_drawn_edge():
    raw = rmat(10, 8, directed=True, simple=False, seed=1)
    assert raw.directed and raw.nnz == 8 * 1024
    assert raw.num_self_loops > 0  # the model draws some; simple=False keeps them
    simple = rmat(10, 8, directed=True, seed=1)
    assert simple.nnz < raw.nnz and simple.num_self_loops == 0
    a = simple.to_scipy()
    assert (a != a.T).nnz > 0


def test_rmat_quadrant_frequencies_follow_a_b_c_d():
    # Unpermuted, the first level decides the top bit of source and target.
    g = rmat(12, 16, a=0.6, b=0.2, c=0.15, d=0.05, directed=True, simple=False, permute=False, seed=2)
    half = 2048
    rows = g.row_of_entry()
    top, left = rows < half, g.indices < half
    m = g.nnz
    for observed, expected in (((top & left).sum(), 0.6), ((top & ~left).sum(), 0.2),
                               ((~top & left).sum(), 0.15), ((~top & ~left).sum(), 0.05)):
        assert abs(observed / m - expected) < 0.01


def test_rmat_permutation_relabels_the_same_graph_and_moves_the_hubs():
    plain = rmat(12, permute=False, seed=4)
    assert int(np.argmax(plain.degrees())) == 0  # quadrant a, a, a, ... is vertex 0
    permuted = rmat(12, seed=4)
    assert np.array_equal(np.sort(plain.degrees()), np.sort(permuted.degrees()))
    assert not plain.same_structure(permuted)
    low_ids = slice(0, 64)
    assert permuted.degrees()[low_ids].sum() < plain.degrees()[low_ids].sum() / 4


def test_chung_lu_is_simple_with_power_law_degrees():
    g = chung_lu(20000, avg_degree=10.0, exponent=2.2, seed=3)
    assert_simple_undirected(g)
    degrees = g.degrees()
    assert 8.0 < degrees.mean() < 10.5  # dropped repeats make it a little less than asked
    assert degrees.max() > 30 * degrees.mean()
    capped = chung_lu(20000, avg_degree=10.0, exponent=2.2, max_degree=50, seed=3)
    assert capped.degrees().max() < 100


# ---- power-law matrices -----------------------------------------------------------------
def test_powerlaw_matrix_rows_are_skewed_distinct_and_sorted():
    m = powerlaw_matrix(5000, 3000, 12.0, 2.1, seed=8)
    assert m.directed and m.n_rows == 5000 and m.n_cols == 3000
    assert m.nnz == 60000
    lengths = m.degrees()
    assert lengths.max() > 20 * lengths.mean()
    rows = m.row_of_entry()
    same_row = rows[1:] == rows[:-1]
    assert np.all(np.diff(m.indices.astype(np.int64))[same_row] > 0)
    assert m.weights.dtype == np.float64 and m.weights.min() >= 0.0 and m.weights.max() < 1.0


def test_powerlaw_matrix_respects_max_row_and_full_rows():
    m = powerlaw_matrix(2000, 500, 20.0, 1.8, max_row=100, seed=1)
    assert m.degrees().max() == 100 and m.nnz == 40000
    full = powerlaw_matrix(10, 7, 7.0, 2.0, seed=1)
    assert np.array_equal(full.to_scipy().toarray() > 0, np.ones((10, 7), dtype=bool))


@pytest.mark.parametrize("n_cols, size", [(5, 2), (20, 2)])  # dense path, then sparse path
def test_row_columns_are_uniform_over_all_subsets(n_cols, size):
    counts = {}
    row = np.empty(size, dtype=np.int32)
    draws = 30 * math.comb(n_cols, size)
    for trial in range(draws):
        _sample_sorted_columns(row, n_cols, np.uint64(12345), np.int64(trial) << 32)
        counts[tuple(row)] = counts.get(tuple(row), 0) + 1
    assert len(counts) == math.comb(n_cols, size)
    assert all(a < b for key in counts for a, b in itertools.pairwise(key))
    expected = draws / len(counts)
    assert max(counts.values()) < 2.0 * expected and min(counts.values()) > 0.3 * expected


# ---- geometric graphs -------------------------------------------------------------------
def test_delaunay_is_planar_with_about_3n_edges_and_2n_triangles():
    n = 3000
    g = delaunay(n, seed=2)
    assert_simple_undirected(g)
    assert 2.9 * n < g.num_edges <= 3 * n - 6
    a = g.to_scipy()
    triangles = (a @ a).multiply(a).sum() / 6
    faces = g.num_edges - n + 1  # Euler: V - E + F = 2, one face outside
    assert faces <= triangles < 2 * n + 0.02 * n
    assert 1.95 * n < faces < 2 * n
    assert sp.csgraph.connected_components(a, directed=False)[0] == 1


@pytest.mark.parametrize("seed", range(4))
def test_jittered_grid_mesh_is_exactly_the_delaunay_triangulation_of_its_points(seed):
    from scipy.spatial import Delaunay

    nx_, ny_ = 40, 25
    points = jittered_grid_points(np.random.default_rng(seed), nx_, ny_)
    src, dst = jittered_grid_edges(points, nx_, ny_)
    mine = set(zip(np.minimum(src, dst).tolist(), np.maximum(src, dst).tolist(), strict=True))
    t = Delaunay(points).simplices
    e = np.concatenate([t[:, [0, 1]], t[:, [1, 2]], t[:, [0, 2]]])
    assert mine == set(zip(e.min(axis=1).tolist(), e.max(axis=1).tolist(), strict=True))


def test_jittered_grid_delaunay_sizes_and_rounding():
    assert grid_shape(2**15) == (128, 256) and grid_shape(2**16) == (256, 256)
    g = delaunay(2**12, points="jittered-grid", seed=1)
    nx_, ny_ = 64, 64
    assert g.n_rows == 4096 and not g.notices
    assert g.num_edges == (nx_ - 1) * ny_ + nx_ * (ny_ - 1) + (nx_ - 1) * (ny_ - 1)
    assert_simple_undirected(g)
    odd = delaunay(101, points="jittered-grid", seed=1)  # a prime: no grid shape
    assert odd.n_rows == 100 and "10 x 10" in odd.notices[0]


def test_geometric_graph_links_exactly_the_close_pairs():
    n, radius = 400, 0.08
    g = geometric(n, radius, seed=6)
    assert_simple_undirected(g)
    points = uniform_points(np.random.default_rng(6), n, 2)
    distance = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=-1)
    expected = (distance <= radius) & ~np.eye(n, dtype=bool)
    assert np.array_equal(g.to_scipy().toarray() > 0, expected)
    assert geometric(300, 0.2, dim=3, seed=1).n_rows == 300


# ---- grids and stencils -----------------------------------------------------------------
def test_grid_graphs_have_the_lattice_edges():
    g = grid2d(7, 5)
    assert g.num_edges == 6 * 5 + 7 * 4
    assert_simple_undirected(g)
    ref = nx.convert_node_labels_to_integers(nx.grid_2d_graph(5, 7))  # rows of 7 = x fastest
    assert edge_set(g) == edge_set(CSRGraph.from_networkx(ref))
    g3 = grid3d(4, 3, 5)
    assert g3.num_edges == 3 * 3 * 5 + 4 * 2 * 5 + 4 * 3 * 4
    assert_simple_undirected(g3)
    assert grid2d(1, 1).num_edges == 0


def _laplacian_1d(n):
    return sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])


def test_5pt_and_7pt_stencils_equal_the_kronecker_laplacians():
    nx_, ny_, nz_ = 6, 4, 3
    five = stencil("5pt", nx_, ny_)
    expected = sp.kronsum(_laplacian_1d(nx_), _laplacian_1d(ny_)).tocsr()
    assert five.directed and (five.to_scipy() != expected).nnz == 0
    seven = stencil("7pt", nx_, ny_, nz_)
    expected3 = sp.kronsum(sp.kronsum(_laplacian_1d(nx_), _laplacian_1d(ny_)), _laplacian_1d(nz_)).tocsr()
    assert (seven.to_scipy() != expected3).nnz == 0


@pytest.mark.parametrize("kind, shape, nnz", [
    ("5pt", (6, 4), 5 * 24 - 2 * 6 - 2 * 4),
    ("9pt", (6, 4), (3 * 6 - 2) * (3 * 4 - 2)),
    ("7pt", (5, 4, 3), 7 * 60 - 2 * (20 + 12 + 15)),
    ("27pt", (5, 4, 3), (3 * 5 - 2) * (3 * 4 - 2) * (3 * 3 - 2)),
])
def test_stencil_nonzero_counts_and_values(kind, shape, nnz):
    m = stencil(kind, *shape)
    assert m.nnz == nnz
    a = m.to_scipy()
    points = int(kind[:-2])
    assert np.all(a.diagonal() == points - 1)
    assert np.all(a.data[a.data != points - 1] == -1.0)
    assert (a != a.T).nnz == 0
    inner = np.flatnonzero(m.degrees() == points)
    assert len(inner) and np.all(np.asarray(a.sum(axis=1)).ravel()[inner] == 0)


def test_stencil_cube_default():
    assert stencil("27pt", 4).n_rows == 64 and stencil("9pt", 4).n_rows == 16


# ---- weights ----------------------------------------------------------------------------
@pytest.mark.parametrize("kind", GRAPH_KINDS)
def test_uniform_weights_are_in_range_symmetric_and_leave_the_structure_alone(kind):
    plain = generate(kind, **SMALL[kind], seed=3)
    weighted = generate(kind, **SMALL[kind], seed=3, weights="uniform", weight_range=(2.0, 5.0))
    assert weighted.same_structure(plain)
    w = weighted.weights
    assert w.dtype == np.float64 and w.min() >= 2.0 and w.max() < 5.0
    a = weighted.to_scipy()
    assert (a != a.T).nnz == 0
    assert "weights=uniform[2,5]" in weighted.source


def test_integer_weights_cover_the_inclusive_range():
    g = gnm(300, 3000, seed=1, weights="integer", weight_range=(1, 4))
    assert set(np.unique(g.weights).tolist()) == {1.0, 2.0, 3.0, 4.0}
    d = complete(40, directed=True, seed=1, weights="integer", weight_range=(-3, 3))
    a = d.to_scipy().toarray()
    assert np.any(a != a.T)  # arcs of a directed graph draw their own weights
    assert d.weights.min() == -3 and d.weights.max() == 3


def test_registry_call_takes_weight_min_and_max():
    g = generate("grid2d", nx=4, ny=4, weights="uniform", weight_min=10, weight_max=11)
    assert g.weights.min() >= 10 and g.weights.max() < 11


# ---- building blocks --------------------------------------------------------------------
@pytest.mark.parametrize("n, m", [(1, 0), (1, 4), (9, 60), (500, 20000)])
@pytest.mark.parametrize("symmetrize, drop_loops, dedupe", list(itertools.product((False, True), repeat=3)))
def test_csr_from_pairs_matches_a_scipy_build(n, m, symmetrize, drop_loops, dedupe):
    rng = np.random.default_rng(n + m)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    indptr, indices = csr_from_pairs(n, src, dst, symmetrize=symmetrize, drop_loops=drop_loops,
                                     dedupe=dedupe)
    keep = src != dst if drop_loops else np.ones(m, dtype=bool)
    expected = CSRGraph.from_edges(n, src[keep], dst[keep], both_directions=symmetrize)
    if dedupe:
        a = expected.to_scipy().copy()
        a.sum_duplicates()
        expected = CSRGraph.from_scipy(a, directed=True)
    assert np.array_equal(indptr, expected.indptr) and np.array_equal(indices, expected.indices)


def test_column_sort_handles_a_sorted_run_with_a_short_tail():
    rng = np.random.default_rng(0)
    for tail in (0, 3, 13, 5000):
        a = np.concatenate([np.sort(rng.integers(0, 2**31 - 1, 60000)), rng.integers(0, 2**31 - 1, tail)])
        a = a.astype(np.int32)
        b = a.copy()
        sort_columns(b)
        assert np.array_equal(b, np.sort(a))


# ---- command line -----------------------------------------------------------------------
def test_cli_generate_writes_a_readable_file(tmp_path, capsys):
    from kernels.graph.io import read_graph

    out = tmp_path / "r.mtx"
    assert cli_main(["generate", "rmat", "--scale", "8", "--edge-factor", "4", "--seed", "3",
                     "--weights", "uniform", "--weight-min", "1", "--weight-max", "2", "--out", str(out)]) == 0
    summary = capsys.readouterr().out.strip()
    assert summary.startswith("generated rmat_s8_ef4: 256 vertices") and len(summary.splitlines()) == 1
    back = read_graph(out)
    expected = rmat(8, 4, seed=3, weights="uniform", weight_range=(1, 2))
    assert back.same_structure(expected) and np.allclose(back.weights, expected.weights)


def test_cli_generate_matrix_and_boolean_flags(tmp_path, capsys):
    out = tmp_path / "s.mtx"
    assert cli_main(["generate", "stencil", "--kind", "7pt", "--nx", "3", "-o", str(out)]) == 0
    assert "27 x 27 matrix, 135 nonzeros" in capsys.readouterr().out
    out = tmp_path / "g.txt"
    assert cli_main(["generate", "gnp", "--n", "30", "--p", "0.2", "--directed", "--out", str(out)]) == 0
    assert "gnp_n30_p0.2_directed" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words", [
    (["generate", "rmat", "--scale", "40"], ["'scale'", "[1, 31]"]),
    (["generate", "rmat", "--scale", "4", "--radius", "2"], ["--radius", "--edge-factor"]),
    (["generate", "stencil", "--nx", "3", "--weights", "uniform"], ["--weights"]),
    (["generate", "gnp", "--n", "10", "--p", "often"], ["'p'", "[0, 1]"]),
    (["generate", "gnp", "--p", "0.5"], ["--n"]),
    (["generate", "gnp", "--n", "10", "--p", "0.5"], ["--out"]),
    (["generate", "nope"], ["gnp", "rmat"]),
])
def test_cli_bad_options_exit_1_with_one_line(tmp_path, capsys, argv, words):
    code = cli_main([*argv, *(["--out", str(tmp_path / "x.mtx")] if "--out" not in words else [])])
    err = capsys.readouterr().err.strip()
    assert code == 1
    assert len(err.splitlines()) == 1 and err.startswith("graph-kernels: error:")
    for word in words:
        assert word in err
    assert not (tmp_path / "x.mtx").exists()


def test_cli_list_shows_every_kind_and_its_options(capsys):
    assert cli_main(["generate", "--list"]) == 0
    text = capsys.readouterr().out
    for kind in GENERATORS:
        assert f"\n{kind}: " in "\n" + text
    assert "--edge-factor" in text and "one of 5pt, 9pt, 7pt, 27pt" in text
    assert cli_main(["generate", "--list", "--json"]) == 0
    import json

    listing = json.loads(capsys.readouterr().out)
    assert listing["rmat"]["options"][0]["name"] == "scale"


def test_generator_errors_derive_from_the_project_base():
    assert issubclass(ParameterError, GraphKernelsError)
