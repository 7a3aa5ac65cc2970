"""Geometric graphs: Delaunay triangulations and random geometric graphs.

Vertices are numbered along a Z-order (Morton) curve of their points, so that neighbours
in space have nearby ids - as in meshes from real applications, and good for locality.

``delaunay(n)`` triangulates ``n`` uniform random points with Qhull (as the DIMACS10
``delaunay_n*`` graphs were made). Qhull needs about 8 s and 0.8 GB for 2^20 points here
and grows linearly, so ``points="jittered-grid"`` offers an exact O(n) alternative: grid
points each moved by up to 0.2 of the spacing (boundary points only along the boundary),
every cell split by the diagonal that passes the in-circle test. With that jitter every
grid edge sees opposite angles summing to at most ~162 degrees (< 180, checked
numerically over the worst placements), so every edge is locally Delaunay and, by
Lawson's theorem, the mesh *is* the Delaunay triangulation of its points - just of
differently distributed points (inner degrees 4 to 8, mean 6, no long tail).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import Delaunay, cKDTree

from kernels.errors import GraphKernelsError
from kernels.graph.csr import INDEX_DTYPE, INDPTR_DTYPE, CSRGraph
from kernels.graph.generators._build import csr_from_pairs, sort_rows_in_place
from kernels.graph.generators._common import finish_graph, structure_rng
from kernels.graph.generators._weights import DEFAULT_WEIGHT_RANGE
from kernels.graph.generators.registry import OptionSpec, register_generator

MAX_VERTICES = 2**31 - 1
POINT_SETS = ("uniform", "jittered-grid")
GRID_JITTER = 0.2  # of the grid spacing; 0.25 allows degenerate (cocircular) edges
MAX_GRID_ASPECT = 4  # jittered-grid: nx * ny = n exactly if a factor pair this close exists


# ---- point ordering ---------------------------------------------------------------------
def _spread_bits_2d(v: np.ndarray) -> np.ndarray:
    """Insert a zero bit after each of the low 16 bits (Morton interleaving)."""
    v = v.astype(np.uint64)
    for shift, mask in ((16, 0x0000FFFF0000FFFF), (8, 0x00FF00FF00FF00FF), (4, 0x0F0F0F0F0F0F0F0F),
                        (2, 0x3333333333333333), (1, 0x5555555555555555)):
        v = (v | (v << np.uint64(shift))) & np.uint64(mask)
    return v


def _spread_bits_3d(v: np.ndarray) -> np.ndarray:
    """Insert two zero bits after each of the low 21 bits."""
    v = v.astype(np.uint64) & np.uint64(0x1FFFFF)
    for shift, mask in ((32, 0x1F00000000FFFF), (16, 0x1F0000FF0000FF), (8, 0x100F00F00F00F00F),
                        (4, 0x10C30C30C30C30C3), (2, 0x1249249249249249)):
        v = (v | (v << np.uint64(shift))) & np.uint64(mask)
    return v


def morton_order(points: np.ndarray) -> np.ndarray:
    """The permutation that sorts points (in the unit square/cube) along a Z-order curve."""
    dim = points.shape[1]
    bits = 16 if dim == 2 else 21
    cells = np.clip((points * (1 << bits)).astype(np.int64), 0, (1 << bits) - 1)
    spread = _spread_bits_2d if dim == 2 else _spread_bits_3d
    key = np.zeros(len(points), dtype=np.uint64)
    for axis in range(dim):
        key |= spread(cells[:, axis]) << np.uint64(axis)
    return np.argsort(key, kind="stable")


def uniform_points(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """``n`` uniform random points in the unit square/cube, in Z-order."""
    points = rng.random((n, dim))
    return points[morton_order(points)]


# ---- Delaunay ---------------------------------------------------------------------------
def _delaunay_uniform(n: int, rng: np.random.Generator):
    tri = Delaunay(uniform_points(rng, n, 2))
    if len(tri.coplanar):
        # Qhull leaves out points it considers coincident; with random floats this does
        # not happen, but a graph silently missing edges must not pass unnoticed.
        raise GraphKernelsError(f"Qhull left {len(tri.coplanar)} of {n} points out of the triangulation")
    pointer, neighbours = tri.vertex_neighbor_vertices
    indptr = pointer.astype(INDPTR_DTYPE)
    indices = neighbours.astype(INDEX_DTYPE)
    del tri
    sort_rows_in_place(indptr, indices)
    return indptr, indices


def grid_shape(n: int) -> tuple[int, int]:
    """``(nx, ny)`` with ``nx * ny == n`` and ``nx <= ny <= 4 nx`` if such a pair exists,
    otherwise the nearest square grid."""
    nx = math.isqrt(n)
    while nx >= 2 and n % nx:
        nx -= 1
    if nx >= 2 and n // nx <= MAX_GRID_ASPECT * nx:
        return nx, n // nx
    side = max(2, round(math.sqrt(n)))
    return side, side


def _incircle(a, b, c, d) -> np.ndarray:
    """> 0 where ``d`` lies inside the circle through the counter-clockwise ``a, b, c``."""
    ax, ay = a[:, 0] - d[:, 0], a[:, 1] - d[:, 1]
    bx, by = b[:, 0] - d[:, 0], b[:, 1] - d[:, 1]
    cx, cy = c[:, 0] - d[:, 0], c[:, 1] - d[:, 1]
    return ((ax * ax + ay * ay) * (bx * cy - cx * by) - (bx * bx + by * by) * (ax * cy - cx * ay)
            + (cx * cx + cy * cy) * (ax * by - bx * ay))


def jittered_grid_points(rng: np.random.Generator, nx: int, ny: int) -> np.ndarray:
    """Grid points with unit-square cells of side ``1 / (max(nx, ny) - 1)``, jittered."""
    spacing = 1.0 / (max(nx, ny) - 1)
    iy, ix = np.divmod(np.arange(nx * ny, dtype=np.int64), nx)
    jitter = rng.uniform(-GRID_JITTER, GRID_JITTER, size=(nx * ny, 2))
    jitter[(ix == 0) | (ix == nx - 1), 0] = 0.0  # boundary points stay on the boundary
    jitter[(iy == 0) | (iy == ny - 1), 1] = 0.0
    points = np.empty((nx * ny, 2))
    points[:, 0] = (ix + jitter[:, 0]) * spacing
    points[:, 1] = (iy + jitter[:, 1]) * spacing
    return points


def jittered_grid_edges(points: np.ndarray, nx: int, ny: int) -> tuple[np.ndarray, np.ndarray]:
    """Edges of the Delaunay triangulation of :func:`jittered_grid_points` (each once)."""
    ids = np.arange(nx * ny, dtype=np.int64).reshape(ny, nx)
    v00, v10, v01, v11 = (ids[:-1, :-1].ravel(), ids[:-1, 1:].ravel(), ids[1:, :-1].ravel(),
                          ids[1:, 1:].ravel())
    # Diagonal v00-v11 unless v01 lies inside the circle through v00, v10, v11.
    main_diagonal = _incircle(points[v00], points[v10], points[v11], points[v01]) <= 0
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel(), np.where(main_diagonal, v00, v10)])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel(), np.where(main_diagonal, v11, v01)])
    return src, dst


@register_generator(
    "delaunay", summary="Delaunay triangulation of random points in the unit square (≈ 3n edges)",
    options=(OptionSpec("n", int, help="number of points (vertices)", minimum=4, maximum=MAX_VERTICES),
             OptionSpec("points", str, "uniform",
                        "uniform (Qhull, like DIMACS10 delaunay_n*) or jittered-grid (exact, O(n), fast)",
                        choices=POINT_SETS)))
def delaunay(n: int, *, points: str = "uniform", seed: int = 0, weights=None,
             weight_range=DEFAULT_WEIGHT_RANGE) -> CSRGraph:
    """The planar Delaunay graph of ``n`` random points: about ``3n`` edges, ``2n`` triangles."""
    rng = structure_rng(seed)
    notices = ()
    if points == "uniform":
        indptr, indices = _delaunay_uniform(n, rng)
        name = f"delaunay_n{n}"
    else:
        nx, ny = grid_shape(n)
        if nx * ny != n:
            notices = (f"jittered-grid: n = {n:,} has no grid shape; using a {nx} x {ny} grid "
                       f"({nx * ny:,} points)",)
        src, dst = jittered_grid_edges(jittered_grid_points(rng, nx, ny), nx, ny)
        indptr, indices = csr_from_pairs(nx * ny, src, dst, symmetrize=True, drop_loops=False, dedupe=False)
        name = f"delaunay_jgrid_n{nx * ny}"
    return finish_graph(indptr, indices, kind="delaunay", name=name, params={"n": n, "points": points},
                        seed=seed, directed=False, weights=weights, weight_range=weight_range,
                        notices=notices)


# ---- random geometric graphs ------------------------------------------------------------
@register_generator(
    "geometric", summary="random geometric graph: points within distance radius are linked",
    options=(OptionSpec("n", int, help="number of points (vertices)", minimum=1, maximum=MAX_VERTICES),
             OptionSpec("radius", float, help="connection distance (expected degree ≈ n π r² in 2-D)",
                        minimum=0.0, exclusive_minimum=True),
             OptionSpec("dim", int, 2, "dimension of the unit cube the points fill", choices=(2, 3))))
def geometric(n: int, radius: float, *, dim: int = 2, seed: int = 0, weights=None,
              weight_range=DEFAULT_WEIGHT_RANGE) -> CSRGraph:
    """Random geometric graph: ``n`` uniform points, an edge between points closer than ``radius``.

    Pairs are found with a k-d tree (``cKDTree.query_pairs``), not by comparing all pairs."""
    pts = uniform_points(structure_rng(seed), n, dim)
    pairs = cKDTree(pts, balanced_tree=False, compact_nodes=False).query_pairs(radius, output_type="ndarray")
    indptr, indices = csr_from_pairs(n, pairs[:, 0], pairs[:, 1], symmetrize=True, drop_loops=True,
                                     dedupe=False)
    name = f"geometric{'3d' if dim == 3 else ''}_n{n}_r{radius:g}"
    return finish_graph(indptr, indices, kind="geometric", name=name,
                        params={"n": n, "radius": radius, "dim": dim}, seed=seed, directed=False,
                        weights=weights, weight_range=weight_range)
