"""The project's own binary format: the CSR arrays in a NumPy ``.npz`` archive (fast, exact).

Members: ``format`` (``"gge-csr-1"``), ``indptr`` (int64), ``indices`` (int32), ``weights``
(optional, float32/float64), ``shape`` (rows, cols), ``directed`` (bool), ``name`` (str).
Loading never unpickles (``allow_pickle=False``). SciPy's ``scipy.sparse.save_npz`` files are
read too (as directed matrices with their values as weights: such a file says nothing about
symmetry). The archive is written uncompressed: loading is then a copy, not a decompression;
name the file ``.npz.gz`` to trade speed for size.
"""

from __future__ import annotations

import io
import zipfile

import numpy as np

from kernels.graph.csr import CSRGraph
from kernels.graph.io.assemble import check_dimensions
from kernels.graph.io.compression import GraphSource
from kernels.graph.io.context import LoadContext
from kernels.graph.io.registry import FormatSpec, Head

FORMAT_TAG = "gge-csr-1"
ZIP_MAGIC = b"PK\x03\x04"
OUR_MEMBERS = {"indptr.npy", "indices.npy", "shape.npy"}
SCIPY_MEMBERS = {"indptr.npy", "indices.npy", "data.npy", "shape.npy", "format.npy"}


def _sniff(head: Head) -> bool:
    return head.data.startswith(ZIP_MAGIC)


def _archive(source: GraphSource, ctx: LoadContext):
    """An open ``NpzFile`` (decompressing a .gz wrapper into memory first)."""
    target = io.BytesIO(source.read_all(ctx)) if source.compression else str(source.path)
    try:
        archive = np.load(target, allow_pickle=False)
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError, NotImplementedError) as exc:
        raise ctx.error(f"not a readable .npz archive ({exc})", expected="a zip archive of .npy arrays") \
            from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ctx.error("a single .npy array, not an .npz archive", expected="an .npz archive of CSR arrays")
    return archive


def _member(archive, name: str, ctx: LoadContext) -> np.ndarray:
    try:
        return archive[name]
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError, NotImplementedError,
            RuntimeError) as exc:
        raise ctx.error(f"member '{name}' is unreadable ({exc})", expected="numeric .npy arrays") from None


def _flag(arr: np.ndarray, ctx: LoadContext) -> bool:
    if arr.size != 1 or arr.dtype.kind not in "biu":
        raise ctx.error(f"'directed' is a {arr.dtype} array of shape {arr.shape}", expected="a single boolean")
    return bool(arr.item())


def _integer_vector(arr: np.ndarray, name: str, ctx: LoadContext) -> np.ndarray:
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
        raise ctx.error(f"'{name}' is a {arr.dtype} array of shape {arr.shape}", expected=f"a 1-D integer '{name}'")
    return arr


def read_npz(source: GraphSource, ctx: LoadContext) -> CSRGraph:
    with _archive(source, ctx) as archive:
        members = {f"{k}.npy" for k in archive.files}
        ctx.check_cancel()
        if members >= SCIPY_MEMBERS and "format.npy" in members:
            return _read_scipy(archive, ctx)
        if not members >= OUR_MEMBERS:
            raise ctx.error(f"the archive holds {sorted(archive.files)}",
                            expected="CSR arrays indptr, indices, shape (written by write_graph)")
        indptr = _integer_vector(_member(archive, "indptr", ctx), "indptr", ctx)
        indices = _integer_vector(_member(archive, "indices", ctx), "indices", ctx)
        shape = _integer_vector(_member(archive, "shape", ctx), "shape", ctx)
        weights = _member(archive, "weights", ctx) if "weights" in archive.files else None
        directed = _flag(_member(archive, "directed", ctx), ctx) if "directed" in archive.files else True
        ctx.report(0.8)
        if len(shape) != 2 or shape.min() < 0:
            raise ctx.error(f"shape {shape.tolist()}", expected="two non-negative sizes")
        n_rows, n_cols = int(shape[0]), int(shape[1])
        if len(indptr) != n_rows + 1:
            raise ctx.error(f"indptr has {len(indptr)} entries for {n_rows} rows", expected="rows + 1 entries")
        check_dimensions(ctx, n_rows, n_cols, len(indices))
        if weights is not None and (weights.ndim != 1 or not np.issubdtype(weights.dtype, np.number)
                                    or np.issubdtype(weights.dtype, np.complexfloating)):
            raise ctx.error(f"'weights' is a {weights.dtype} array of shape {weights.shape}",
                            expected="a 1-D real array")
        return _graph(ctx, indptr, indices, weights, n_cols, directed)


def _read_scipy(archive, ctx: LoadContext) -> CSRGraph:
    kind = _member(archive, "format", ctx)
    if kind.size != 1:
        kind = ""
    else:
        kind = kind.item().decode("latin-1") if kind.dtype.kind == "S" else str(kind.item())
    if kind != "csr":
        raise ctx.error(f"a SciPy '{kind}' matrix", expected="a SciPy CSR matrix (or our own CSR arrays)")
    indptr = _integer_vector(_member(archive, "indptr", ctx), "indptr", ctx)
    indices = _integer_vector(_member(archive, "indices", ctx), "indices", ctx)
    shape = _integer_vector(_member(archive, "shape", ctx), "shape", ctx)
    data = _member(archive, "data", ctx)
    if len(shape) != 2 or shape.min() < 0 or len(indptr) != shape[0] + 1 or data.ndim != 1 \
            or data.dtype.kind not in "biuf":
        raise ctx.error("inconsistent SciPy CSR arrays", expected="indptr of rows + 1 entries, real data")
    check_dimensions(ctx, int(shape[0]), int(shape[1]), len(indices))
    ctx.notice("a SciPy sparse matrix: read as a directed matrix with its values as weights")
    # SciPy does not promise sorted columns; sort within rows, keeping duplicates
    import scipy.sparse as sp

    try:
        m = sp.csr_matrix((data.astype(np.float64), indices, indptr), shape=tuple(int(s) for s in shape))
        m.sort_indices()
    except (ValueError, IndexError) as exc:
        raise ctx.error(f"inconsistent SciPy CSR arrays ({exc})") from None
    return _graph(ctx, m.indptr, m.indices, m.data, int(shape[1]), True)


def _graph(ctx, indptr, indices, weights, n_cols, directed) -> CSRGraph:
    # checked before the int32 cast of CSRGraph, which would wrap 2**32 + 1 to a valid 1
    if len(indices) and (int(indices.max()) >= 2**31 or int(indices.min()) < 0):
        raise ctx.error("column index out of range", expected=f"0 <= index < {n_cols}")
    try:
        graph = CSRGraph(indptr, indices, weights, n_cols=n_cols, directed=directed, name=ctx.name,
                         source=ctx.path, notices=tuple(ctx.notices))
    except (ValueError, TypeError, OverflowError) as exc:
        raise ctx.error(f"inconsistent CSR arrays: {exc}",
                        expected="indptr from 0 to len(indices), indices < cols, one weight per entry") from None
    step = np.diff(graph.indices)  # int32 suffices: indices lie in [0, 2**31)
    boundaries = graph.indptr[1:-1]
    step[boundaries[(boundaries > 0) & (boundaries < graph.nnz)] - 1] = 0  # a new row may go down
    if (step < 0).any():
        rows = graph.row_of_entry()
        # the project keeps columns sorted within rows; an unsorted file is repaired, not refused
        ctx.notice("column indices were not sorted within rows: sorted (duplicates kept)")
        order = np.lexsort((graph.indices, rows))
        w = None if graph.weights is None else graph.weights[order]
        graph = graph.with_(indices=graph.indices[order], weights=w, notices=tuple(ctx.notices))
    ctx.report(1.0)
    return graph


def write_npz(graph: CSRGraph, stream) -> None:
    arrays = {
        "format": np.array(FORMAT_TAG),
        "indptr": graph.indptr,
        "indices": graph.indices,
        "shape": np.array([graph.n_rows, graph.n_cols], dtype=np.int64),
        "directed": np.array(graph.directed),
        "name": np.array(graph.name),
    }
    if graph.weights is not None:
        arrays["weights"] = graph.weights
    # zip needs to seek back to patch headers; a gzip stream cannot, so build it in memory
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    stream.write(buffer.getbuffer())


def estimate_npz(source: GraphSource) -> dict | None:
    if source.compression:
        return None
    try:
        with zipfile.ZipFile(source.path) as zf:
            sizes = {info.filename: info.file_size for info in zf.infolist()}
    except (zipfile.BadZipFile, OSError):
        return None
    if "indices.npy" not in sizes or "indptr.npy" not in sizes:
        return None
    header = 128  # an .npy header is 64..128 bytes; negligible next to the data
    rows = max((sizes["indptr.npy"] - header) // 8 - 1, 0)
    entries = max((sizes["indices.npy"] - header) // 4, 0)
    return {"rows": rows, "cols": None, "entries": entries, "entries_exact": False,
            "weighted": "weights.npy" in sizes or "data.npy" in sizes, "directed": None}


SPEC = FormatSpec(
    name="npz",
    description="CSR arrays in a NumPy .npz archive (this project's fast binary format; SciPy save_npz too)",
    extensions=(".npz",),
    priority=100,
    memory_per_byte=6.0,
    expands=True,
    sniff=_sniff,
    read=read_npz,
    write=write_npz,
    estimate=estimate_npz,
)
