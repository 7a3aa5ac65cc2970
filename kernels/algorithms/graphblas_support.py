"""What the ``graphblas`` variants share: the lazy import, the CSR → GraphBLAS matrix, the notice.

The ``graphblas`` variants (SpMV, triangles, BFS, SSSP) run SuiteSparse:GraphBLAS through
python-graphblas, the honest CPU baseline a performance engineer would reach for (issue 18):
multi-threaded (OpenMP) sparse kernels with LAGraph's algorithms. python-graphblas is an
optional extra (``pip install 'gpu-graph-explorer[graphblas]'``): nothing imports it at module
load; :func:`unavailable` says why the variants cannot run without importing it, and
:func:`load` imports and initialises it when a run is made (in ``compile``).

Building the GraphBLAS matrix from the CSR is the ``upload`` stage (a copy into GraphBLAS's
own arrays); the timed launch is the GraphBLAS computation only.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from kernels.graph.csr import is_canonical

INSTALL_HINT = "pip install 'gpu-graph-explorer[graphblas]'"


def unavailable() -> str | None:
    """Why the graphblas variants cannot run here (``None`` when they can), without importing it."""
    try:
        found = importlib.util.find_spec("graphblas") is not None
    except (ImportError, ValueError):  # a blocked or half-installed package
        found = False
    if not found:
        return f"python-graphblas is not installed: {INSTALL_HINT}"
    return None


def load():
    """The ``graphblas`` module, initialised with the SuiteSparse backend (once per process)."""
    import graphblas as gb

    if gb.backend is None:  # gb.init may be called only once; importing a submodule initialises the default
        gb.init("suitesparse", blocking=True)
    return gb


def notice(gb) -> str:
    """The library, its version and the OpenMP threads it uses, for the run record."""
    try:
        threads = int(gb.ss.config["nthreads"])
        library = gb.ss.about["library_version"]
        version = ".".join(str(p) for p in library) if isinstance(library, (tuple, list)) else str(library)
    except Exception:  # an older python-graphblas without ss.config/about: say less
        return f"python-graphblas {gb.__version__} (SuiteSparse:GraphBLAS)"
    return (f"SuiteSparse:GraphBLAS {version} through python-graphblas {gb.__version__}, "
            f"{threads} OpenMP thread{'s' if threads != 1 else ''} (GxB_NTHREADS)")


def matrix_from_csr(gb, indptr, indices, values, n_rows: int, n_cols: int, *, dup: str = "plus"):
    """A GraphBLAS matrix of the CSR arrays (copied). ``values`` is an array, or a scalar for a
    pattern matrix (stored iso: one value for every entry). Rows with unsorted or repeated
    columns go through ``from_coo``, repeats combined by the binary operator ``dup``."""
    scalar = np.ndim(values) == 0
    if is_canonical(indptr, indices):
        vals = np.asarray([values] if scalar else values)
        return gb.Matrix.ss.import_csr(nrows=n_rows, ncols=n_cols, indptr=indptr.astype(np.uint64),
                                       col_indices=indices.astype(np.uint64), values=vals, is_iso=scalar,
                                       sorted_cols=True)
    rows = np.repeat(np.arange(n_rows, dtype=np.uint64), np.diff(indptr))
    vals = np.full(len(indices), values) if scalar else values
    return gb.Matrix.from_coo(rows, indices.astype(np.uint64), vals, nrows=n_rows, ncols=n_cols,
                              dup_op=getattr(gb.binary, dup))
