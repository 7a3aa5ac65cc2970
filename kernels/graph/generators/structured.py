"""Deterministic structures: 2-D/3-D grid graphs, stencil matrices and complete graphs.

Grids and stencils are written straight into CSR arrays: a first parallel pass counts each
row's in-range neighbours, a second writes them. Visiting the stencil offsets in
lexicographic ``(dz, dy, dx)`` order produces each row's columns already sorted, so there
is no COO list and no sort; a 27-point stencil on a 160^3 grid (1.1 x 10^8 nonzeros) needs
only its final arrays (int32 columns, float64 values: 12 bytes per nonzero).
"""

from __future__ import annotations

import itertools

import numpy as np
from numba import njit, prange

from kernels.errors import ParameterError
from kernels.graph.csr import INDEX_DTYPE, INDPTR_DTYPE, CSRGraph
from kernels.graph.generators._common import finish_graph, finish_matrix
from kernels.graph.generators._weights import DEFAULT_WEIGHT_RANGE
from kernels.graph.generators.registry import OptionSpec, register_generator

MAX_VERTICES = 2**31 - 1

# name -> (dimensions, neighbourhood: "faces" = along the axes only, "box" = the whole 3x3(x3) box)
STENCILS = {"5pt": (2, "faces"), "9pt": (2, "box"), "7pt": (3, "faces"), "27pt": (3, "box")}


def stencil_offsets(dims: int, shape: str, *, with_center: bool) -> np.ndarray:
    """The (dz, dy, dx) offsets of a stencil, in the lexicographic order that sorts columns."""
    offsets = []
    for dz, dy, dx in itertools.product((-1, 0, 1), repeat=3):
        if dims == 2 and dz != 0:
            continue
        distance = abs(dz) + abs(dy) + abs(dx)
        if distance == 0 and not with_center:
            continue
        if shape == "faces" and distance > 1:
            continue
        offsets.append((dz, dy, dx))
    return np.array(offsets, dtype=np.int64)


@njit(cache=True, nogil=True, parallel=True)
def _count_neighbours(nx, ny, nz, offsets, counts):
    for v in prange(nx * ny * nz):
        x = v % nx
        y = (v // nx) % ny
        z = v // (nx * ny)
        c = 0
        for o in range(offsets.shape[0]):
            zz = z + offsets[o, 0]
            yy = y + offsets[o, 1]
            xx = x + offsets[o, 2]
            if 0 <= zz < nz and 0 <= yy < ny and 0 <= xx < nx:
                c += 1
        counts[v + 1] = c


@njit(cache=True, nogil=True, parallel=True)
def _write_neighbours(nx, ny, nz, offsets, offset_values, indptr, indices, values, with_values):
    for v in prange(nx * ny * nz):
        x = v % nx
        y = (v // nx) % ny
        z = v // (nx * ny)
        k = indptr[v]
        for o in range(offsets.shape[0]):
            zz = z + offsets[o, 0]
            yy = y + offsets[o, 1]
            xx = x + offsets[o, 2]
            if 0 <= zz < nz and 0 <= yy < ny and 0 <= xx < nx:
                indices[k] = xx + nx * (yy + ny * zz)
                if with_values:
                    values[k] = offset_values[o]
                k += 1


def lattice_csr(nx: int, ny: int, nz: int, offsets: np.ndarray, offset_values: np.ndarray | None = None):
    """CSR of the lattice ``nx * ny * nz`` (vertex ``x + nx*(y + ny*z)``) linked by ``offsets``.

    With ``offset_values`` also the float64 value of each entry (per offset)."""
    n = nx * ny * nz
    if n > MAX_VERTICES:
        raise ParameterError("nx * ny * nz", n, f"at most {MAX_VERTICES:,} grid points")
    counts = np.zeros(n + 1, dtype=INDPTR_DTYPE)
    _count_neighbours(nx, ny, nz, offsets, counts)
    indptr = np.cumsum(counts, out=counts)
    indices = np.empty(int(indptr[-1]), dtype=INDEX_DTYPE)
    with_values = offset_values is not None
    values = np.empty(len(indices) if with_values else 0, dtype=np.float64)
    _write_neighbours(nx, ny, nz, offsets, offset_values if with_values else np.zeros(len(offsets)),
                      indptr, indices, values, with_values)
    return indptr, indices, (values if with_values else None)


def _size(name: str, help_text: str, *, optional: bool = False) -> OptionSpec:
    if optional:
        return OptionSpec(name, int, None, help_text, minimum=1, optional=True)
    return OptionSpec(name, int, help=help_text, minimum=1)


@register_generator("grid2d", summary="2-D grid graph (4 neighbours per inner vertex)",
                    options=(_size("nx", "vertices along x"), _size("ny", "vertices along y")))
def grid2d(nx: int, ny: int, *, seed: int = 0, weights=None,
           weight_range=DEFAULT_WEIGHT_RANGE) -> CSRGraph:
    """The ``nx x ny`` grid: ``(nx-1)*ny + nx*(ny-1)`` undirected edges."""
    indptr, indices, _ = lattice_csr(nx, ny, 1, stencil_offsets(2, "faces", with_center=False))
    return finish_graph(indptr, indices, kind="grid2d", name=f"grid2d_{nx}x{ny}",
                        params={"nx": nx, "ny": ny}, seed=seed, directed=False,
                        weights=weights, weight_range=weight_range)


@register_generator("grid3d", summary="3-D grid graph (6 neighbours per inner vertex)",
                    options=(_size("nx", "vertices along x"), _size("ny", "vertices along y"),
                             _size("nz", "vertices along z")))
def grid3d(nx: int, ny: int, nz: int, *, seed: int = 0, weights=None,
           weight_range=DEFAULT_WEIGHT_RANGE) -> CSRGraph:
    """The ``nx x ny x nz`` grid: ``(nx-1)ny nz + nx(ny-1)nz + nx ny(nz-1)`` undirected edges."""
    indptr, indices, _ = lattice_csr(nx, ny, nz, stencil_offsets(3, "faces", with_center=False))
    return finish_graph(indptr, indices, kind="grid3d", name=f"grid3d_{nx}x{ny}x{nz}",
                        params={"nx": nx, "ny": ny, "nz": nz}, seed=seed, directed=False,
                        weights=weights, weight_range=weight_range)


@register_generator(
    "stencil", produces="matrix", seeded=False,
    summary="finite-difference stencil matrix (SpMV input): Laplacian-like values, diagonal included",
    options=(OptionSpec("kind", str, help="stencil: 5pt, 9pt (2-D) or 7pt, 27pt (3-D)",
                        choices=tuple(STENCILS)),
             _size("nx", "grid points along x"),
             _size("ny", "grid points along y (default nx)", optional=True),
             _size("nz", "grid points along z (default nx in 3-D, 1 in 2-D)", optional=True)))
def stencil(kind: str, nx: int, ny: int | None = None, nz: int | None = None) -> CSRGraph:
    """The stencil matrix on an ``nx x ny x nz`` grid: ``k - 1`` on the diagonal (k points)
    and -1 for each in-range neighbour (a Dirichlet Laplacian), float64.

    nnz: 5pt ``5 nx ny - 2 nx - 2 ny``, 7pt ``7 n - 2(nx ny + ny nz + nx nz)``,
    9pt ``(3nx-2)(3ny-2)``, 27pt ``(3nx-2)(3ny-2)(3nz-2)``."""
    dims, shape = STENCILS[kind]
    ny = nx if ny is None else ny
    if dims == 2:
        if nz not in (None, 1):
            raise ParameterError("nz", nz, f"1 (or none) for the 2-D stencil {kind}")
        nz = 1
    else:
        nz = nx if nz is None else nz
    offsets = stencil_offsets(dims, shape, with_center=True)
    is_center = ~offsets.any(axis=1)
    offset_values = np.where(is_center, float(len(offsets) - 1), -1.0)
    indptr, indices, values = lattice_csr(nx, ny, nz, offsets, offset_values)
    size = f"{nx}x{ny}" if dims == 2 else f"{nx}x{ny}x{nz}"
    params = {"kind": kind, "nx": nx, "ny": ny} | ({"nz": nz} if dims == 3 else {})
    return finish_matrix(indptr, indices, values, n_cols=nx * ny * nz, kind="stencil",
                         name=f"stencil{kind[:-2]}_{size}", params=params, seed=None)


@register_generator("complete", summary="complete graph: every pair of vertices linked",
                    options=(OptionSpec("n", int, help="number of vertices", minimum=1,
                                        maximum=MAX_VERTICES),
                             OptionSpec("directed", bool, False,
                                        "directed (both arcs, weights drawn independently)")))
def complete(n: int, *, directed: bool = False, seed: int = 0, weights=None,
             weight_range=DEFAULT_WEIGHT_RANGE) -> CSRGraph:
    """K_n without self-loops: ``n (n-1) / 2`` undirected edges (``n (n-1)`` arcs if directed)."""
    indices = np.empty((n, n - 1), dtype=INDEX_DTYPE)
    indices[:] = np.arange(n - 1, dtype=INDEX_DTYPE)
    indices += indices >= np.arange(n, dtype=INDEX_DTYPE)[:, None]  # skip the diagonal
    indptr = np.arange(n + 1, dtype=INDPTR_DTYPE) * (n - 1)
    return finish_graph(indptr, indices.ravel(), kind="complete",
                        name=f"complete_n{n}" + ("_directed" if directed else ""),
                        params={"n": n, "directed": directed}, seed=seed, directed=directed,
                        weights=weights, weight_range=weight_range)
