"""The graph loading and generating jobs (run as :class:`explorer.tasks.Task`).

Loading refuses a file too large for this machine *before* reading it
(``check_fits_memory`` estimates from the file's header and size), reads it, computes its
statistics and builds the live slotted-page structure, all in the worker thread: the GUI only
receives a finished :class:`LoadedGraph`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from explorer.tasks import TaskControl
from kernels.errors import GraphKernelsError
from kernels.graph.csr import CSRGraph


# ---- what a loading job produces ---------------------------------------------------------
@dataclass
class LoadedGraph:
    """A graph ready to become a document: its CSR, statistics and (if it can have one) the
    live slotted structure; ``slotted_reason`` says in words why it has none."""

    csr: CSRGraph
    info: dict
    slotted: object | None
    page_size: int
    source: str = ""
    slotted_reason: str = ""
    notes: list[str] = field(default_factory=list)
    estimate: dict | None = None           # what check_fits_memory said before reading


def build_live_structure(csr: CSRGraph, page_size: int, control: TaskControl | None = None):
    """(SlottedGraph, "") or (None, reason): matrices and graphs with repeated entries stay
    read-only CSR, and the reason says how to make them editable."""
    from kernels.graph.slotted import SlottedGraph

    if not csr.is_square:
        return None, (f"a {csr.n_rows} x {csr.n_cols} matrix is not a graph: it can be run (SpMV) "
                      "but not edited on slotted pages")
    try:
        if control is not None:
            control.progress(None, "building slotted pages")
        return SlottedGraph.from_csr(csr, page_size=page_size), ""
    except GraphKernelsError as exc:
        return None, str(exc)


AUTO_PAGE_SIZE = 0     # "choose by graph size"


def auto_page_size(csr: CSRGraph) -> int:
    """The page size for a graph of this size: the core's one rule (``graph-kernels info`` uses it too)."""
    from kernels.graph.stats import page_size_for

    return page_size_for(csr)


def finish_loaded(csr: CSRGraph, page_size: int, control: TaskControl, source: str = "") -> LoadedGraph:
    from kernels.graph.stats import graph_info

    if not page_size:
        page_size = auto_page_size(csr)
    control.check()
    control.progress(None, "computing statistics")
    info = graph_info(csr, page_size=page_size)
    control.check()
    slotted, reason = build_live_structure(csr, page_size, control)
    control.check()
    return LoadedGraph(csr, info, slotted, page_size, source=source, slotted_reason=reason,
                       notes=list(csr.notices))


def prepare_imports() -> None:
    """Import what the jobs use, on the calling (GUI) thread, before any job starts.

    Several loads start at once when files are dropped together; importing modules, or
    filling the format registry on first use, from several threads at once can deadlock on
    import locks or see a half-filled registry ("expected one of: " with nothing listed)."""
    import kernels.graph.slotted  # noqa: F401
    import kernels.graph.stats  # noqa: F401
    from kernels.graph.io import formats

    formats()


def load_file_job(path: str | Path, page_size: int) -> Callable[[TaskControl], LoadedGraph]:
    """A job reading one graph file (any format and compression the core reads)."""
    path = str(path)
    prepare_imports()

    def job(control: TaskControl) -> LoadedGraph:
        from kernels.graph.io import check_fits_memory, read_graph

        control.progress(0.0, f"checking {Path(path).name}")
        estimate = check_fits_memory(path)   # ResourceLimitError, naming the estimate, before any allocation
        control.check()
        control.progress(0.0, f"reading {Path(path).name}")

        def progress(fraction, *_):
            control.progress(min(float(fraction), 0.99) * 0.8, f"reading {Path(path).name}")

        csr = read_graph(path, progress=progress, cancel=control.cancelled)
        loaded = finish_loaded(csr, page_size, control, source=path)
        loaded.estimate = estimate
        return loaded

    return job


def generate_job(kind: str, options: dict, page_size: int) -> Callable[[TaskControl], LoadedGraph]:
    """A job running one registered generator with validated options."""
    prepare_imports()
    import kernels.graph.generators  # noqa: F401

    def job(control: TaskControl) -> LoadedGraph:
        from kernels.graph.generators import generate

        control.progress(None, f"generating {kind}")
        csr = generate(kind, **options)
        return finish_loaded(csr, page_size, control, source=csr.source)

    return job
