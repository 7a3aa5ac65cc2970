"""Batches of edge updates to apply: random ones that are valid by construction (for the
benchmark, the ``dynamic`` command and the GUI) and batches read from a text file.

A batch file has one update per line: ``+ u v [weight]`` inserts, ``- u v`` deletes,
``= u v weight`` changes a weight; blank lines and lines starting with ``#`` are skipped.
"""

from __future__ import annotations

import math
from array import array
from pathlib import Path

import numpy as np

from kernels.errors import GraphFormatError, ParameterError, ResourceLimitError
from kernels.memory import available_memory, format_bytes

#: memory a batch file may cost per byte on disk while read: the shortest line ("+ 1 2", 6 bytes)
#: becomes three 8-byte array items
MEMORY_PER_FILE_BYTE = 4
MEMORY_HEADROOM = 0.5       # of the memory available when the read starts
ID_LIMIT = 1 << 62          # vertex ids beyond this are no graph's (and would overflow int64 sums)


def edge_keys(csr) -> np.ndarray:
    """Sorted int64 keys ``u * n + v`` of a CSR's stored entries (both directions if undirected)."""
    n = max(csr.n_rows, csr.n_cols)
    rows = np.repeat(np.arange(csr.n_rows, dtype=np.int64), np.diff(csr.indptr))
    # already ascending when the columns are sorted within rows: a stable sort is then one pass
    return np.sort(rows * n + csr.indices.astype(np.int64), kind="stable")


def stored_edges(csr) -> tuple[np.ndarray, np.ndarray]:
    """Every stored edge once (an undirected edge as u <= v): what :func:`existing_edges` draws from."""
    rows = np.repeat(np.arange(csr.n_rows, dtype=np.int64), np.diff(csr.indptr))
    cols = csr.indices.astype(np.int64)
    if not csr.directed:
        keep = rows <= cols
        rows, cols = rows[keep], cols[keep]
    return rows, cols


def existing_edges(csr, count: int, rng, *, edges=None) -> tuple[np.ndarray, np.ndarray]:
    """``count`` distinct stored edges (an undirected edge once, as u <= v), drawn uniformly;
    ``edges`` (from :func:`stored_edges`) saves building the list again."""
    rows, cols = stored_edges(csr) if edges is None else edges
    if count > len(rows):
        raise ParameterError("deletions", count, f"at most the {len(rows)} edges stored")
    pick = rng.choice(len(rows), size=count, replace=False) if count else np.zeros(0, np.int64)
    return rows[pick], cols[pick]


def new_edges(csr, count: int, rng, *, keys: np.ndarray | None = None, exclude=None,
              vertices: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``count`` distinct edges absent from the CSR (and from ``exclude``, keys as
    :func:`edge_keys`), endpoints drawn uniformly from ``vertices`` (default all ids), no
    self-loops; an undirected edge as u < v."""
    n = max(csr.n_rows, csr.n_cols)
    keys = edge_keys(csr) if keys is None else keys
    pool = np.arange(n, dtype=np.int64) if vertices is None else np.asarray(vertices, dtype=np.int64)
    if len(pool) < 2:
        raise ParameterError("insertions", count, "a graph of at least two vertices")
    found = np.zeros(0, dtype=np.int64)
    for _ in range(64):
        if len(found) >= count:
            break
        want = int((count - len(found)) * 1.3) + 16
        u, v = rng.choice(pool, want), rng.choice(pool, want)
        keep = u != v
        u, v = u[keep], v[keep]
        if not csr.directed:
            u, v = np.minimum(u, v), np.maximum(u, v)
        cand = np.unique(u * n + v)
        cand = cand[~_member(cand, keys)]
        if not csr.directed:
            cand = cand[~_member((cand % n) * n + cand // n, keys)]
        if exclude is not None:
            cand = cand[~_member(cand, exclude)]
        found = np.union1d(found, cand)
    else:
        raise ParameterError("insertions", count, "fewer edges than the graph has room for")
    found = rng.permutation(found)[:count]
    return found // n, found % n


def _member(values: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    if len(sorted_keys) == 0:
        return np.zeros(len(values), dtype=bool)
    at = np.searchsorted(sorted_keys, values)
    at[at == len(sorted_keys)] = len(sorted_keys) - 1
    return sorted_keys[at] == values


def random_batch(g, insertions: int, deletions: int, rng, *, csr=None) -> dict:
    """A valid batch for ``g`` (a SlottedGraph): ``deletions`` stored edges and ``insertions``
    absent ones, weights 1..100 for a weighted graph. Returns ``apply_updates`` keywords."""
    csr = g.to_csr() if csr is None else csr
    du, dv = existing_edges(csr, deletions, rng)
    iu, iv = new_edges(csr, insertions, rng, vertices=g.vertices())
    out = {"delete": (du, dv)}
    if g.weighted:
        out["insert"] = (iu, iv, rng.integers(1, 101, len(iu)).astype(np.float64))
    else:
        out["insert"] = (iu, iv)
    return out


def read_batch_file(path) -> dict:
    """A batch from a text file (see the module). The file is untrusted: a malformed line, text
    that is not UTF-8, an id that fits no int64, a weight that is not finite raise
    ``GraphFormatError`` naming the line; a file larger than the memory it would need raises
    ``ResourceLimitError`` before it is read."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise GraphFormatError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    free = available_memory()
    if free is not None and size * MEMORY_PER_FILE_BYTE > MEMORY_HEADROOM * free:
        raise ResourceLimitError(f"{path}: a batch file of {format_bytes(size)} would need about "
                                 f"{format_bytes(size * MEMORY_PER_FILE_BYTE)} to read; "
                                 f"{format_bytes(free)} are available")
    parts = {op: (array("q"), array("q"), array("d")) for op in "+-="}
    weights_seen = False
    try:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                weights_seen |= _parse_batch_line(path, lineno, line, parts)
    except UnicodeDecodeError as exc:
        raise GraphFormatError(f"{path}: not a text batch file (byte {exc.start} is not UTF-8)") from None
    out = {}
    for op, name in (("-", "delete"), ("+", "insert"), ("=", "reweight")):
        us, vs, ws = parts[op]
        if not us:
            continue
        pair = (np.frombuffer(us, dtype=np.int64).copy(), np.frombuffer(vs, dtype=np.int64).copy())
        if op == "=" or (op == "+" and weights_seen):
            pair = pair + (np.frombuffer(ws, dtype=np.float64).copy(),)
        out[name] = pair
    return out


def _parse_batch_line(path, lineno: int, line: str, parts: dict) -> bool:
    """Append one line's update to ``parts``; True when it gave a weight."""
    words = line.split()
    if not words or words[0].startswith("#"):
        return False
    op = words[0]
    if op not in parts or len(words) not in (3, 4) or (op == "=" and len(words) != 4) \
            or (op == "-" and len(words) != 3):
        raise GraphFormatError(f"{path}: line {lineno}: expected '+ u v [weight]', '- u v' or "
                               f"'= u v weight', got {line.strip()[:80]!r}")
    try:
        u, v = int(words[1]), int(words[2])
        w = float(words[3]) if len(words) == 4 else None
    except ValueError:
        raise GraphFormatError(f"{path}: line {lineno}: vertex ids are integers and weights "
                               f"numbers, got {line.strip()[:80]!r}") from None
    if not (-ID_LIMIT < u < ID_LIMIT and -ID_LIMIT < v < ID_LIMIT):
        raise GraphFormatError(f"{path}: line {lineno}: vertex id out of range (|id| < 2**62)")
    if w is not None and not math.isfinite(w):
        raise GraphFormatError(f"{path}: line {lineno}: the weight must be a finite number, got {words[3]!r}")
    us, vs, ws = parts[op]
    us.append(u)
    vs.append(v)
    ws.append(1.0 if w is None else w)
    return w is not None


def batch_vertices(batch: dict, next_vertex_id: int) -> list[int]:
    """The vertices whose lists a batch (``apply_updates`` keywords) touches, ascending; ids that
    do not exist are left out (the batch's own check refuses them)."""
    ends = [np.asarray(part[i], dtype=np.int64) for part in batch.values() if part is not None for i in (0, 1)]
    vertices = np.unique(np.concatenate(ends)) if ends else np.zeros(0, np.int64)
    return vertices[(vertices >= 0) & (vertices < next_vertex_id)].tolist()
