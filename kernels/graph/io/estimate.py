"""How big a graph file will be in memory, found *before* loading it.

Formats with a size header (Matrix Market, METIS, DIMACS, our .npz) give vertices and entries
exactly or as a tight bound; for the others the number of records is extrapolated from the
first 64 KiB (bytes per line, or per ``<edge`` / ``edge [`` record) and the uncompressed size
(counted by decompressing for compressed files up to 32 MiB, under the expansion budget;
guessed for larger ones: gzip's trailer is a hint only, since anyone can write it).

Two figures come out: ``csr_bytes``, what the loaded graph occupies, and ``peak_bytes``, what
loading needs at its worst moment (the coordinate lists, sort keys and the CSR arrays live at
the same time). The per-entry factors were measured with ``tracemalloc`` (see
docs/benchmarks.md, "Loading", where the benchmark checks them again).
"""

from __future__ import annotations

import re

from kernels.errors import ResourceLimitError
from kernels.graph.io.budget import DEFAULT_HEADROOM, budget_for, size_unknown_before_reading
from kernels.graph.io.compression import GraphSource
from kernels.graph.io.registry import get_format, sniff
from kernels.graph.io.text import INT64_DIGITS, strip_comment
from kernels.graph.io.vertex_ids import HeaderHints
from kernels.memory import available_memory  # noqa: F401  (re-exported; patched in tests)

# bytes needed at the peak of a load per stored entry, (unweighted, weighted), measured with
# tracemalloc on random graphs of 2-20 M entries; readers that add reverse entries keep the
# parsed lines, the mirrored copies and the sort keys alive together, hence the larger figures
PEAK_BYTES_PER_ENTRY = {
    "mtx": (50, 74),
    "mtx-symmetric": (30, 56),  # half the entries are mirrored copies made late
    "dimacs-gr": (70, 70),
    "metis": (76, 84),
    "edgelist": (80, 96),
    "dimacs-clq": (80, 96),
    "csv": (300, 320),  # Python strings per field while the csv module parses
    "pajek": (72, 80),  # measured 65 (arcs) and 48 (edges, mirrored) on 'u v' lines
}
DEFAULT_PEAK_BYTES_PER_ENTRY = (100, 112)
# NetworkX holds every node and edge as Python dicts while it parses
NETWORKX_BYTES_PER_EDGE = 700
NETWORKX_BYTES_PER_NODE = 400
# how a format's records show in its text, for extrapolating from the first bytes
RECORD_MARKERS = {"graphml": re.compile(rb"<edge\b"), "gml": re.compile(rb"\bedge\s*\[")}
UNDIRECTED_BY_DEFAULT = {"edgelist", "csv", "dimacs-clq", "metis"}
NETWORKX_FORMATS = {"graphml", "gml"}


def _from_sample(source: GraphSource, spec_name: str, uncompressed: int) -> dict:
    if spec_name == "npz":  # a compressed archive: its content is the CSR arrays themselves
        return {"rows": None, "cols": None, "entries": uncompressed // 12, "entries_exact": False,
                "weighted": None, "directed": None}
    head = source.head()
    marker = RECORD_MARKERS.get(spec_name)
    if marker is not None:
        records = len(marker.findall(head))
    else:
        records = sum(1 for line in head.split(b"\n")
                      if strip_comment(line, (b"#", b"%")).strip() and not line.startswith(b"*"))
        if spec_name == "csv":
            records = max(records - 1, 0)  # the header row
    largest_id = -1
    weighted = None
    hints = HeaderHints()
    if spec_name == "edgelist":
        for line in head.split(b"\n")[:-1]:
            if line.lstrip().startswith((b"#", b"%")):
                hints.read_comment(line)
            tokens = strip_comment(line, (b"#", b"%")).replace(b",", b" ").split()
            # a sample only: ids too long for int64 are left to the reader, which refuses them by line
            if len(tokens) >= 2 and all(t.isdigit() and len(t) <= INT64_DIGITS for t in tokens[:2]):
                largest_id = max(largest_id, int(tokens[0]), int(tokens[1]))
                weighted = len(tokens) >= 3 if weighted is None else weighted
    if records == 0 or not head:
        records_total = 0
    else:
        records_total = int(round(records * max(uncompressed, len(head)) / len(head)))
    undirected = spec_name in UNDIRECTED_BY_DEFAULT and not hints.directed
    if spec_name == "pajek":  # *Edges lines are stored both ways; only a file of arcs is not doubled
        lowered = head.lower()
        undirected = b"*edges" in lowered or b"*arcs" not in lowered
    factor = 2 if undirected else 1
    vertices = largest_id + 1 if largest_id >= 0 else None
    return {"rows": vertices, "cols": vertices, "entries": records_total * factor, "entries_exact": False,
            "weighted": weighted, "directed": hints.directed}


def estimate_load(path, *, format: str | None = None, available: int | None = None) -> dict:
    """Sizes and memory of a graph file without loading it.

    Keys: path, format, compression, file_bytes, uncompressed_bytes, uncompressed_exact,
    basis ('header' or 'file size'), rows, cols, vertices, entries, entries_exact, weighted,
    directed, csr_bytes, peak_bytes. A compressed file (or deflated .npz members) up to 32 MiB
    on disk is decompressed and counted, under the same expansion budget as a read: a
    decompression bomb raises :class:`FileTooLargeError` here, before any allocation."""
    source = GraphSource(path)
    spec = get_format(format) if format else sniff(source)
    if available is None and size_unknown_before_reading(source, spec):
        available = available_memory()
    uncompressed, size_exact = source.uncompressed_size(budget_for(source, spec, available))
    source.limit_expansion(budget_for(source, spec, available))  # what spec.estimate reads
    header = spec.estimate(source) if spec.estimate is not None else None
    basis = "header" if header is not None else "file size"
    if header is None:
        header = _from_sample(source, spec.name, uncompressed)
    rows = header["rows"]
    entries = int(header["entries"])
    if rows is None:  # unknown vertex count: assume an average degree of 8 for the pointer array
        rows_for_bytes = entries // 8
    else:
        rows_for_bytes = int(rows)
    weighted = header["weighted"]
    weight_bytes = 0 if weighted is False else 8  # unknown: assume weights (the safe side)
    csr_bytes = (rows_for_bytes + 1) * 8 + entries * (4 + weight_bytes)
    if spec.name in NETWORKX_FORMATS:
        peak = uncompressed + entries * NETWORKX_BYTES_PER_EDGE + rows_for_bytes * NETWORKX_BYTES_PER_NODE \
            + 2 * csr_bytes
    elif spec.name == "npz":
        # np.load reads each member's bytes, then the array: about three times the CSR (measured 2.9)
        peak = 3 * csr_bytes + (uncompressed if source.compression else 0)
    else:
        kind = "mtx-symmetric" if spec.name == "mtx" and header["directed"] is False else spec.name
        per_entry = PEAK_BYTES_PER_ENTRY.get(kind, DEFAULT_PEAK_BYTES_PER_ENTRY)[1 if weight_bytes else 0]
        peak = entries * per_entry + (rows_for_bytes + 1) * 16
    cols = header["cols"]
    return {
        "path": str(path),
        "format": spec.name,
        "compression": source.compression,
        "file_bytes": source.file_bytes,
        "uncompressed_bytes": int(uncompressed),
        "uncompressed_exact": size_exact,
        "basis": basis,
        "rows": rows,
        "cols": cols,
        "vertices": rows if rows is not None and (cols is None or rows == cols) else None,
        "entries": entries,
        "entries_exact": bool(header["entries_exact"]) and basis == "header",
        "weighted": weighted,
        "directed": header["directed"],
        "csr_bytes": int(csr_bytes),
        "peak_bytes": int(peak),
    }




def _gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def check_fits_memory(path, *, format: str | None = None, available: int | None = None,
                      headroom: float = DEFAULT_HEADROOM) -> dict:
    """The estimate of :func:`estimate_load`, or :class:`ResourceLimitError` if loading would
    need more than ``headroom`` of the available memory. ``available`` overrides the probe."""
    free = available if available is not None else available_memory()
    estimate = estimate_load(path, format=format, available=free)
    estimate["available_bytes"] = free
    if free is not None and estimate["peak_bytes"] > headroom * free:
        how = "from its header" if estimate["basis"] == "header" else "extrapolated from its size"
        raise ResourceLimitError(
            f"{path}: loading needs about {_gib(estimate['peak_bytes'])} (the graph itself "
            f"{_gib(estimate['csr_bytes'])}; {estimate['entries']:,} entries {how}), but only "
            f"{_gib(free)} of memory is available")
    return estimate
