"""The project's own binary format: the CSR arrays in a NumPy ``.npz`` archive (fast, exact).

Members: ``format`` (``"gge-csr-1"``), ``indptr`` (int64), ``indices`` (int32), ``weights``
(optional, float32/float64), ``shape`` (rows, cols), ``directed`` (bool), ``name`` (str).
Loading never unpickles, and nothing but this module touches the archive: every member is read
through the expansion budget (a zip member's declared size can lie), its ``.npy`` header parsed
and checked (numeric dtypes only, 0-D or 1-D, the byte count matching the shape) and every
array validated (``indptr`` non-decreasing from 0 to ``nnz``, every index in range, lengths
consistent) before NumPy or SciPy computes anything with it: SciPy's ``sort_indices`` on an
inconsistent ``indptr`` corrupts the heap. SciPy's ``scipy.sparse.save_npz`` CSR files are read
too (as directed matrices with their values as weights: such a file says nothing about
symmetry). The archive is written uncompressed: loading is then a copy, not a decompression;
name the file ``.npz.gz`` to trade speed for size.
"""

from __future__ import annotations

import io
import lzma
import zipfile
import zlib

import numpy as np

from kernels.errors import GraphFormatError, GraphKernelsError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import weights as finite
from kernels.graph.io.assemble import MAX_INDEX, check_dimensions
from kernels.graph.io.budget import ExpansionBudget
from kernels.graph.io.compression import MEASURE_UP_TO, RAW_BUFFER_BYTES, GraphSource
from kernels.graph.io.context import FileTooLargeError, LoadContext
from kernels.graph.io.registry import FormatSpec, Head
from kernels.graph.io.text import show

FORMAT_TAG = "gge-csr-1"
ZIP_MAGIC = b"PK\x03\x04"
OUR_MEMBERS = {"indptr", "indices", "shape"}
SCIPY_MEMBERS = {"indptr", "indices", "data", "shape", "format"}
# np.savez writes a handful of members; an archive of thousands is not a graph
MAX_MEMBERS = 64
MAX_STRING_BYTES = 4096
NPY_HEADER_LIMIT = 10_000  # NumPy's own default for untrusted headers
NUMERIC = "biuf"  # bool, signed, unsigned, float: never object, void, complex or datetime
ARCHIVE_EXPECTED = "a zip archive of .npy arrays (np.savez or scipy.sparse.save_npz)"


def _sniff(head: Head) -> bool:
    return head.data.startswith(ZIP_MAGIC)


class _Archive:
    """The zip archive with its ``.npy`` members by name; members are read only on request."""

    def __init__(self, source: GraphSource, ctx: LoadContext):
        self._ctx = ctx
        self._budget = source.budget
        target = io.BytesIO(source.read_all(ctx)) if source.compression else str(source.path)
        try:
            self._zip = zipfile.ZipFile(target)
            infos = self._zip.infolist()
        except (OSError, EOFError, zipfile.BadZipFile, ValueError, NotImplementedError, OverflowError,
                IndexError, KeyError, UnicodeError) as exc:
            # zipfile reports a crafted directory in many ways; each means "not a readable archive"
            raise ctx.error(f"not a readable .npz archive ({_one_line(exc)})", expected=ARCHIVE_EXPECTED) \
                from None
        try:
            self.members = self._index(infos)
        except BaseException:
            self._zip.close()
            raise

    def _index(self, infos) -> dict[str, zipfile.ZipInfo]:
        if len(infos) > MAX_MEMBERS:
            raise self._ctx.error(f"the archive holds {len(infos)} members", expected=f"at most {MAX_MEMBERS}")
        members = {}
        for info in infos:
            name = info.filename
            if not name.endswith(".npy") or info.is_dir():
                raise self._ctx.error(f"member {show(name.encode('utf-8', 'replace'))} is not a .npy array",
                                      expected=ARCHIVE_EXPECTED)
            key = name[: -len(".npy")]
            if key in members:
                raise self._ctx.error(f"member {show(name.encode('utf-8', 'replace'))} appears twice",
                                      expected=ARCHIVE_EXPECTED)
            members[key] = info
        return members

    def close(self) -> None:
        self._zip.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def size(self, name: str, *, measure: bool) -> int:
        """The member's decompressed size: counted by decompressing it if ``measure`` (charged to the
        budget), else as its directory entry declares it (which a crafted file can get wrong)."""
        info = self.members[name]
        if not measure or info.compress_type == zipfile.ZIP_STORED:
            return info.file_size
        return len(self._bytes(name))

    def _bytes(self, name: str) -> bytes:
        """The member's decompressed bytes, charged to the budget as they come."""
        info = self.members[name]
        budget: ExpansionBudget | None = self._budget
        if budget is not None and info.file_size > budget.limit - budget.used:
            budget.charge(info.file_size)  # refuses at once: the declared size alone is too much
        parts = []
        try:
            with self._zip.open(info) as member:
                while chunk := member.read(RAW_BUFFER_BYTES):
                    if budget is not None:
                        budget.charge(len(chunk))
                    parts.append(chunk)
        except GraphKernelsError:
            raise
        except (OSError, EOFError, zipfile.BadZipFile, ValueError, NotImplementedError, RuntimeError,
                OverflowError, IndexError, KeyError, UnicodeError, ImportError, zlib.error, lzma.LZMAError) as exc:
            # CRC mismatch, truncated or encrypted member, unknown compression, broken local header
            raise self._ctx.error(f"member '{name}' is unreadable ({_one_line(exc)})",
                                  expected=ARCHIVE_EXPECTED) from None
        return b"".join(parts)

    def array(self, name: str, kinds: str = NUMERIC) -> np.ndarray:
        """The member as a 0-D or 1-D array whose dtype kind is one of ``kinds``."""
        blob = self._bytes(name)
        stream = io.BytesIO(blob)
        try:
            version = np.lib.format.read_magic(stream)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream, NPY_HEADER_LIMIT)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream, NPY_HEADER_LIMIT)
            else:
                raise ValueError(f".npy version {version[0]}.{version[1]}")
        except MemoryError:
            raise
        except Exception as exc:  # noqa: BLE001 - NumPy's header parser raises many kinds (ValueError,
            # SyntaxError, tokenize.TokenError, ...) on crafted headers; each means a malformed member
            raise self._ctx.error(f"member '{name}' has a malformed .npy header ({_one_line(exc)})",
                                  expected="a .npy array as written by np.save") from None
        shown_shape = shape if len(shape) <= 4 else f"of {len(shape)} dimensions"
        what = f"member '{name}' is a {show(str(dtype).encode())} array of shape {shown_shape}"
        if (dtype.names is not None or dtype.subdtype is not None or dtype.hasobject or dtype.kind not in kinds
                or dtype.itemsize == 0):
            allowed = "numbers" if kinds == NUMERIC else "a string" if kinds == "SU" else f"kinds {kinds}"
            raise self._ctx.error(what, expected=allowed)
        if len(shape) > 1 or (dtype.kind in "SU" and (shape != () or dtype.itemsize > MAX_STRING_BYTES)):
            raise self._ctx.error(what, expected="a scalar or a 1-D array")
        count = int(np.prod(shape, dtype=object)) if shape else 1
        offset = stream.tell()
        if len(blob) - offset != count * dtype.itemsize:
            raise self._ctx.error(f"{what} but holds {len(blob) - offset} bytes of data",
                                  expected=f"{count * dtype.itemsize} bytes")
        return np.frombuffer(blob, dtype=dtype, count=count, offset=offset).reshape(shape).copy()


def _one_line(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return show(text.encode("utf-8", "replace"), 160)[1:-1]


def read_npz(source: GraphSource, ctx: LoadContext) -> CSRGraph:
    with _Archive(source, ctx) as archive:
        present = set(archive.members)
        ctx.check_cancel()
        if present >= SCIPY_MEMBERS:
            return _read_scipy(archive, ctx)
        if not present >= OUR_MEMBERS:
            shown = ", ".join(show(k.encode("utf-8", "replace")) for k in sorted(present)[:10])
            raise ctx.error(f"the archive holds [{shown}]",
                            expected="CSR arrays indptr, indices, shape (written by write_graph)")
        shape = _shape(archive.array("shape"), ctx)
        indptr = archive.array("indptr")
        indices = archive.array("indices")
        weights = archive.array("weights") if "weights" in present else None
        directed = _flag(archive.array("directed"), ctx) if "directed" in present else True
    ctx.report(0.8)
    return _graph(ctx, *_checked_csr(ctx, shape, indptr, indices, weights, "weights"), shape[1], directed)


def _read_scipy(archive: _Archive, ctx: LoadContext) -> CSRGraph:
    kind_array = archive.array("format", "SU")
    raw = kind_array.item()
    kind = raw.decode("latin-1") if isinstance(raw, bytes) else str(raw)
    if kind != "csr":
        raise ctx.error(f"a SciPy {show(kind.encode('utf-8', 'replace'))} matrix",
                        expected="a SciPy CSR matrix (or our own CSR arrays)")
    shape = _shape(archive.array("shape"), ctx)
    indptr = archive.array("indptr")
    indices = archive.array("indices")
    data = archive.array("data")
    ctx.notice("a SciPy sparse matrix: read as a directed matrix with its values as weights")
    return _graph(ctx, *_checked_csr(ctx, shape, indptr, indices, data, "data"), shape[1], True)


def _shape(arr: np.ndarray, ctx: LoadContext) -> tuple[int, int]:
    if arr.ndim != 1 or len(arr) != 2 or arr.dtype.kind not in "iu" or arr.min() < 0 or arr.max() > MAX_INDEX + 1:
        shown = arr.tolist() if arr.size <= 4 else f"{arr.dtype} of shape {arr.shape}"
        raise ctx.error(f"shape {shown}", expected=f"two sizes between 0 and {MAX_INDEX + 1}")
    return int(arr[0]), int(arr[1])


def _flag(arr: np.ndarray, ctx: LoadContext) -> bool:
    if arr.size != 1 or arr.dtype.kind not in "biu":
        raise ctx.error(f"'directed' is a {arr.dtype} array of shape {arr.shape}", expected="a single boolean")
    return bool(arr.item())


def _index_vector(arr: np.ndarray, name: str, upper: int, ctx: LoadContext) -> np.ndarray:
    """A 1-D integer array with every value in [0, upper), as int64."""
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise ctx.error(f"'{name}' is a {arr.dtype} array of shape {arr.shape}", expected=f"a 1-D integer '{name}'")
    if len(arr) and (arr.min() < 0 or arr.max() >= upper):
        bad = int(np.argmax((arr < 0) | (arr >= upper)))
        raise ctx.error(f"'{name}'[{bad}] = {arr[bad]} is out of range", expected=f"0 <= {name} < {upper}")
    return arr.astype(np.int64, copy=False)


def _checked_csr(ctx: LoadContext, shape: tuple[int, int], indptr: np.ndarray, indices: np.ndarray,
                 weights: np.ndarray | None, weights_name: str):
    """The CSR arrays, each checked against the others before anything computes with them."""
    n_rows, n_cols = shape
    nnz = len(indices) if indices.ndim == 1 else -1
    check_dimensions(ctx, n_rows, n_cols, max(nnz, 0))
    if indptr.ndim != 1 or len(indptr) != n_rows + 1:
        raise ctx.error(f"'indptr' has shape {indptr.shape} for {n_rows} rows", expected="rows + 1 entries")
    indices = _index_vector(indices, "indices", n_cols, ctx)
    indptr = _index_vector(indptr, "indptr", nnz + 1, ctx)
    if indptr[0] != 0 or indptr[-1] != nnz:
        raise ctx.error(f"'indptr' runs from {indptr[0]} to {indptr[-1]}", expected=f"from 0 to {nnz} (the entries)")
    falls = np.flatnonzero(np.diff(indptr) < 0)
    if len(falls):
        raise ctx.error(f"'indptr' decreases after row {falls[0]}", expected="non-decreasing row pointers")
    if weights is not None:
        if weights.ndim != 1 or len(weights) != nnz or weights.dtype.kind not in NUMERIC:
            raise ctx.error(f"'{weights_name}' is a {weights.dtype} array of shape {weights.shape} for {nnz} "
                            "entries", expected="one real number per entry")
        weights = weights.astype(np.float64, copy=False)
        bad = finite.first_non_finite(weights)
        if bad is not None:
            raise finite.refusal(ctx, f"'{weights_name}'[{bad}]", float(weights[bad]))
    return indptr, indices.astype(np.int32), weights


def _graph(ctx, indptr, indices, weights, n_cols, directed) -> CSRGraph:
    """The graph of checked CSR arrays, columns sorted within rows."""
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
    """Sizes from the members' sizes; deflated members of a file small enough are decompressed
    and counted (through the budget, which refuses a bomb) rather than believed."""
    if source.compression:
        return None
    try:
        with _Archive(source, LoadContext(source.display)) as archive:
            measure = source.file_bytes <= MEASURE_UP_TO
            sizes = {name: archive.size(name, measure=measure) for name in ("indices", "indptr")
                     if name in archive.members}
            weighted = "weights" in archive.members or "data" in archive.members
    except FileTooLargeError:
        raise
    except GraphFormatError:
        return None  # the reader will say precisely what is wrong
    if len(sizes) < 2:
        return None
    header = 128  # an .npy header is 64..128 bytes; negligible next to the data
    rows = max((sizes["indptr"] - header) // 8 - 1, 0)
    entries = max((sizes["indices"] - header) // 4, 0)
    return {"rows": rows, "cols": None, "entries": entries, "entries_exact": False,
            "weighted": weighted, "directed": None}


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
