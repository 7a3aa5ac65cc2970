"""The compressed-sparse-row graph (and matrix) type every part of the project shares.

Conventions, chosen once so that every algorithm can rely on them:

* ``indptr`` is int64 (``n_rows + 1`` entries), ``indices`` int32, ``weights`` float64 or
  float32 or ``None`` (unweighted). Column indices are sorted within each row; duplicate
  entries are *kept* (a file may contain them, ``info`` reports them, ``cleanup`` removes them).
* An undirected graph stores both directions of every edge; a self-loop is stored once.
* A rectangular or unsymmetric input is a *matrix* (``directed=True``); ``n_cols`` may differ
  from ``n_rows``. Graph algorithms state what they need (see :meth:`require`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from kernels.errors import InputRequirementError

INDEX_DTYPE = np.int32
INDPTR_DTYPE = np.int64


@dataclass(frozen=True, eq=False)
class CSRGraph:
    """A graph or sparse matrix in CSR form (immutable; edits produce new graphs)."""

    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray | None = None
    n_cols: int | None = None
    directed: bool = False
    name: str = "graph"
    source: str = ""
    notices: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        indptr = np.ascontiguousarray(self.indptr, dtype=INDPTR_DTYPE)
        indices = np.ascontiguousarray(self.indices, dtype=INDEX_DTYPE)
        object.__setattr__(self, "indptr", indptr)
        object.__setattr__(self, "indices", indices)
        if self.weights is not None:
            w = np.asarray(self.weights)
            if w.dtype not in (np.float32, np.float64):
                w = w.astype(np.float64)
            object.__setattr__(self, "weights", np.ascontiguousarray(w))
        if self.n_cols is None:
            object.__setattr__(self, "n_cols", len(indptr) - 1)
        self._validate()
        for arr in (self.indptr, self.indices, self.weights):
            if arr is not None:
                arr.setflags(write=False)

    def _validate(self) -> None:
        if self.indptr.ndim != 1 or len(self.indptr) < 1:
            raise ValueError("indptr must be a 1-D array with at least one entry")
        if self.indptr[0] != 0 or self.indptr[-1] != len(self.indices):
            raise ValueError("indptr must start at 0 and end at len(indices)")
        if len(self.indptr) > 1 and np.any(np.diff(self.indptr) < 0):
            raise ValueError("indptr must be non-decreasing")
        if len(self.indices) and (self.indices.min() < 0 or self.indices.max() >= self.n_cols):
            raise ValueError("column index out of range")
        if self.weights is not None and len(self.weights) != len(self.indices):
            raise ValueError("weights must have one entry per stored index")
        if not self.directed and self.n_rows != self.n_cols:
            raise ValueError("an undirected graph must be square")

    # ---- sizes -------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        return len(self.indptr) - 1

    @property
    def num_vertices(self) -> int:
        return self.n_rows

    @property
    def nnz(self) -> int:
        """Stored entries (an undirected edge counts twice, a self-loop once)."""
        return len(self.indices)

    @property
    def is_square(self) -> bool:
        return self.n_rows == self.n_cols

    @property
    def weighted(self) -> bool:
        return self.weights is not None

    @property
    def num_self_loops(self) -> int:
        if not self.is_square:
            return 0
        rows = self.row_of_entry()
        return int(np.count_nonzero(rows == self.indices))

    @property
    def num_edges(self) -> int:
        """Edges as a user counts them: undirected edges once, directed entries each."""
        if self.directed:
            return self.nnz
        loops = self.num_self_loops
        return (self.nnz - loops) // 2 + loops

    def degrees(self) -> np.ndarray:
        """Stored entries per row (out-degree; for undirected graphs, the degree)."""
        return np.diff(self.indptr)

    def row_of_entry(self) -> np.ndarray:
        """For each stored entry, its row (the COO row array)."""
        return np.repeat(np.arange(self.n_rows, dtype=INDEX_DTYPE), self.degrees())

    def neighbors(self, v: int) -> np.ndarray:
        return self.indices[self.indptr[v]:self.indptr[v + 1]]

    def memory_bytes(self) -> int:
        total = self.indptr.nbytes + self.indices.nbytes
        if self.weights is not None:
            total += self.weights.nbytes
        return int(total)

    # ---- identity ----------------------------------------------------------------------
    @property
    def fingerprint(self) -> str:
        """Content hash (structure, weights, shape, directedness): equal graphs, equal prints."""
        cached = self.__dict__.get("_fingerprint")
        if cached is None:
            h = hashlib.sha256()
            h.update(f"{self.n_rows}x{self.n_cols}:{int(self.directed)}".encode())
            h.update(self.indptr.tobytes())
            h.update(self.indices.tobytes())
            if self.weights is not None:
                h.update(self.weights.astype(np.float64).tobytes())
            cached = h.hexdigest()[:16]
            object.__setattr__(self, "_fingerprint", cached)
        return cached

    def same_structure(self, other: CSRGraph) -> bool:
        return (self.n_rows == other.n_rows and self.n_cols == other.n_cols
                and np.array_equal(self.indptr, other.indptr)
                and np.array_equal(self.indices, other.indices))

    def equals(self, other: CSRGraph, rtol: float = 0.0) -> bool:
        if not self.same_structure(other) or self.directed != other.directed:
            return False
        if (self.weights is None) != (other.weights is None):
            return False
        if self.weights is None:
            return True
        return bool(np.allclose(self.weights, other.weights, rtol=rtol, atol=0.0))

    def with_(self, **changes) -> CSRGraph:
        """A copy with some fields replaced (name, notices, ...)."""
        return replace(self, **changes)

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        w = ", weighted" if self.weighted else ""
        return (f"CSRGraph({self.name!r}, {self.n_rows}x{self.n_cols}, nnz={self.nnz}, "
                f"{kind}{w})")

    # ---- requirements ------------------------------------------------------------------
    def require(self, *, square: bool = False, undirected: bool = False,
                weighted: bool = False, what: str = "this algorithm") -> None:
        """Refuse an input an algorithm cannot work on, with a message saying why."""
        if (square or undirected) and not self.is_square:
            raise InputRequirementError(
                f"{what} needs a square adjacency matrix; '{self.name}' is "
                f"{self.n_rows} x {self.n_cols} (a rectangular matrix is an SpMV input)")
        if undirected and self.directed:
            raise InputRequirementError(
                f"{what} needs an undirected graph; '{self.name}' is directed "
                "(symmetrize it first: graph-kernels convert --symmetrize)")
        if weighted and not self.weighted:
            raise InputRequirementError(f"{what} needs edge weights; '{self.name}' has none")

    # ---- construction ------------------------------------------------------------------
    @classmethod
    def from_edges(cls, n_rows: int, src, dst, weights=None, *, n_cols: int | None = None,
                   directed: bool = True, both_directions: bool = False, name: str = "graph",
                   source: str = "", notices=()) -> CSRGraph:
        """Build from COO arrays. Duplicates are kept; columns are sorted within rows.

        ``both_directions=True`` adds the reverse of every non-loop entry (how an
        undirected edge list becomes a symmetric CSR)."""
        src = np.asarray(src, dtype=np.int64).ravel()
        dst = np.asarray(dst, dtype=np.int64).ravel()
        w = None if weights is None else np.asarray(weights).ravel()
        if both_directions:
            off = src != dst
            src, dst = np.concatenate([src, dst[off]]), np.concatenate([dst, src[off]])
            if w is not None:
                w = np.concatenate([w, w[off]])
        n_cols = n_rows if n_cols is None else n_cols
        if len(src) and (src.min() < 0 or src.max() >= n_rows or dst.min() < 0 or dst.max() >= n_cols):
            raise ValueError("edge endpoint out of range")
        order = np.lexsort((dst, src)) if len(src) else np.zeros(0, dtype=np.int64)
        src, dst = src[order], dst[order]
        if w is not None:
            w = w[order]
        counts = np.bincount(src, minlength=n_rows) if len(src) else np.zeros(n_rows, dtype=np.int64)
        indptr = np.zeros(n_rows + 1, dtype=INDPTR_DTYPE)
        np.cumsum(counts, out=indptr[1:])
        return cls(indptr, dst.astype(INDEX_DTYPE), w, n_cols=n_cols, directed=directed,
                   name=name, source=source, notices=tuple(notices))

    # ---- conversions -------------------------------------------------------------------
    def to_scipy(self, dtype=None) -> sp.csr_matrix:
        """A ``scipy.sparse.csr_matrix`` (unweighted entries become 1)."""
        data = self.weights if self.weights is not None else np.ones(self.nnz, dtype=dtype or np.float64)
        if dtype is not None:
            data = data.astype(dtype, copy=False)
        m = sp.csr_matrix((data, self.indices, self.indptr), shape=(self.n_rows, self.n_cols))
        m.has_sorted_indices = True
        return m

    @classmethod
    def from_scipy(cls, matrix, *, directed: bool | None = None, weighted: bool = True,
                   name: str = "matrix", source: str = "") -> CSRGraph:
        """From any ``scipy.sparse`` matrix. ``directed=None`` infers it from symmetry.

        Explicitly stored zeros are kept as entries (a file may list them)."""
        m = sp.csr_matrix(matrix)
        m.sort_indices()
        if directed is None:
            directed = not (m.shape[0] == m.shape[1] and _is_symmetric(m))
        w = m.data.astype(np.float64) if weighted else None
        return cls(m.indptr.astype(INDPTR_DTYPE), m.indices.astype(INDEX_DTYPE), w, n_cols=m.shape[1],
                   directed=directed, name=name, source=source)

    def to_networkx(self):
        import networkx as nx

        g = nx.DiGraph() if self.directed else nx.Graph()
        g.add_nodes_from(range(self.n_rows))
        rows = self.row_of_entry()
        if self.weights is None:
            g.add_edges_from(zip(rows.tolist(), self.indices.tolist(), strict=True))
        else:
            g.add_weighted_edges_from(zip(rows.tolist(), self.indices.tolist(), self.weights.tolist(),
                                          strict=True))
        return g

    @classmethod
    def from_networkx(cls, g, *, weight: str | None = "weight", name: str | None = None,
                      source: str = "") -> CSRGraph:
        """From a NetworkX graph; nodes are numbered in the graph's node order."""
        import networkx as nx

        nodes = list(g.nodes())
        index = {node: i for i, node in enumerate(nodes)}
        edges = list(g.edges(data=True))
        src = np.fromiter((index[u] for u, _, _ in edges), dtype=np.int64, count=len(edges))
        dst = np.fromiter((index[v] for _, v, _ in edges), dtype=np.int64, count=len(edges))
        w = None
        if weight is not None and edges and all(weight in d for _, _, d in edges):
            w = np.array([float(d[weight]) for _, _, d in edges])
        directed = g.is_directed()
        return cls.from_edges(len(nodes), src, dst, w, directed=directed, both_directions=not directed,
                              name=name or (g.name if isinstance(g, nx.Graph) and g.name else "graph"),
                              source=source)


def _is_symmetric(m: sp.csr_matrix) -> bool:
    if m.shape[0] != m.shape[1]:
        return False
    t = m.T.tocsr()
    t.sort_indices()
    return (np.array_equal(m.indptr, t.indptr) and np.array_equal(m.indices, t.indices)
            and np.allclose(m.data, t.data))


def is_canonical(indptr: np.ndarray, indices: np.ndarray) -> bool:
    """Columns strictly increasing within every row (sorted, no duplicates): what cuSPARSE and
    GraphBLAS import as CSR without a rebuild."""
    if len(indices) < 2:
        return True
    rising = np.diff(indices.astype(np.int64)) > 0
    row_starts = indptr[1:-1]
    row_starts = row_starts[(row_starts > 0) & (row_starts < len(indices))]
    rising[row_starts - 1] = True  # a new row may start at any column
    return bool(rising.all())
