"""A slotted graph's complete state as named arrays, and back (validated).

:func:`to_arrays` gives the pools, index, counters and flags as plain arrays (what a session
file stores); :func:`from_arrays` rebuilds exactly that structure from arrays that may come
from a damaged or hostile file: every array's type and shape, the sizes that tie them together
and every counter are checked before the structure exists, then ``check_invariants`` verifies
every word. Anything wrong raises :class:`SnapshotError` in one line; the numba engine never
sees a structure that failed.
"""

from __future__ import annotations

import numpy as np

from kernels.errors import GraphFormatError
from kernels.graph.slotted.layout import (
    INDEX_ROWS,
    M_PAGE_SIZE,
    M_WEIGHTED,
    META_LEN,
    N_CASES,
    PAGE_SIZE_RULE,
    valid_page_size,
)

ARRAYS = ("pool", "wpool", "index", "meta", "free", "dirty", "counts", "alive")
SCALARS = ("page_size", "directed", "weighted", "next_id", "n_alive", "one_sided", "weight_itemsize")


class SnapshotError(GraphFormatError):
    """Arrays that do not form a valid slotted structure."""


def to_arrays(g) -> dict[str, np.ndarray]:
    """The complete state of ``g`` (views of its arrays: copy them to keep them)."""
    out = {name: getattr(g, f"_{name}") for name in ARRAYS}
    out["scalars"] = np.array([g.page_size, int(g.directed), int(g.weighted), g._next_id, g._n_alive,
                               int(g._one_sided_entries), np.dtype(g.weight_dtype).itemsize], dtype=np.int64)
    return out


def _need(ok: bool, message: str) -> None:
    if not ok:
        raise SnapshotError(message)


def from_arrays(a, graph_class, name: str = "slotted"):
    """The graph :func:`to_arrays` described, exactly, made as a ``graph_class`` (the caller's
    :class:`~kernels.graph.slotted.graph.SlottedGraph`: this module stands below it and never
    imports it); raises :class:`SnapshotError`."""
    from kernels.graph.slotted.inspect import LayoutInvariantError, check_invariants

    missing = [k for k in (*ARRAYS, "scalars") if k not in a]
    _need(not missing, f"arrays missing: {', '.join(missing)}")
    scalars = np.asarray(a["scalars"])
    _need(scalars.shape == (len(SCALARS),) and scalars.dtype.kind in "iu",
          f"'scalars' should be {len(SCALARS)} integers, not {scalars.dtype} {scalars.shape}")
    page_size, directed, weighted, next_id, n_alive, one_sided, witem = (int(x) for x in scalars)
    _need(valid_page_size(page_size), f"page size {page_size}: {PAGE_SIZE_RULE}")
    _need(directed in (0, 1) and weighted in (0, 1) and one_sided in (0, 1), "a flag is neither 0 nor 1")
    _need(witem in (4, 8), f"weight size {witem} bytes (4 or 8 allowed)")
    _need(0 <= n_alive <= next_id < 2**31 - 1, f"vertex counters {n_alive} live of {next_id} out of range")
    wdtype = np.dtype(np.float32 if witem == 4 else np.float64)
    expected = {"pool": (np.int32, 1), "wpool": (wdtype, 1), "index": (np.int32, 2), "meta": (np.int64, 1),
                "free": (np.int32, 1), "dirty": (np.uint8, 1), "counts": (np.int64, 1), "alive": (np.bool_, 1)}
    arrays = {}
    for key, (dtype, ndim) in expected.items():
        arr = a[key]
        _need(isinstance(arr, np.ndarray) and arr.dtype == dtype and arr.ndim == ndim,
              f"array '{key}' should be {np.dtype(dtype)} with {ndim} dimension(s), found "
              f"{getattr(arr, 'dtype', type(arr).__name__)} {getattr(arr, 'shape', '')}")
        arrays[key] = np.ascontiguousarray(arr).copy()
    pool = arrays["pool"]
    _need(len(pool) >= page_size and len(pool) % page_size == 0, f"pool of {len(pool)} words is not whole pages")
    cap = len(pool) // page_size
    _need(len(arrays["wpool"]) == (len(pool) if weighted else 0), "weight pool size differs from the pool's")
    _need(len(arrays["free"]) == cap and len(arrays["dirty"]) == cap, "free-slot or dirty arrays not one per page")
    _need(arrays["index"].shape[0] == INDEX_ROWS and arrays["index"].shape[1] >= 1, "index shape")
    _need(arrays["meta"].shape == (META_LEN,) and arrays["counts"].shape == (N_CASES,), "counter array lengths")
    _need(int(arrays["meta"][M_PAGE_SIZE]) == page_size and int(arrays["meta"][M_WEIGHTED]) == weighted,
          "counters disagree with the page size or the weighted flag")
    _need(len(arrays["alive"]) >= next_id, "fewer live-id flags than vertex ids")
    _need(int(np.count_nonzero(arrays["alive"][:next_id])) == n_alive, "live vertex count disagrees with the flags")
    g = graph_class(page_size, directed=bool(directed), weighted=bool(weighted), weight_dtype=wdtype, name=name)
    for key, arr in arrays.items():
        setattr(g, f"_{key}", arr)
    g._next_id = next_id
    g._n_alive = n_alive
    g._one_sided_entries = bool(one_sided)
    g._restate()
    try:
        check_invariants(g)
    except LayoutInvariantError as exc:
        raise SnapshotError(f"the pages break the layout: {exc}") from None
    return g
