"""Reading and writing graph files (transitional: Matrix Market through SciPy only)."""

from __future__ import annotations

from pathlib import Path

import scipy.io

from kernels.graph.csr import CSRGraph


def read_graph(path, *, format=None, name=None) -> CSRGraph:
    path = Path(path)
    m = scipy.io.mmread(str(path))
    return CSRGraph.from_scipy(m, name=name or path.name.split(".")[0], source=str(path))


def write_graph(graph: CSRGraph, path, *, format=None) -> None:
    scipy.io.mmwrite(str(path), graph.to_scipy())
