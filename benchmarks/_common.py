"""Helpers the benchmark scripts share: progress lines, file-name slugs, paths as shown, the
test-data loader and the claim verdict lines.

The scripts run as ``python3 benchmarks/<script>.py``, so this folder is on ``sys.path`` and
they import this module as ``_common`` (the ``diag/`` scripts add the folder themselves).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def say(text: str = "") -> None:
    """A progress line, flushed at once (the GPU machine's output is read as it comes)."""
    print(text, flush=True)


def slug(name) -> str:
    """A device or graph name as a file-name part: ``NVIDIA H200`` -> ``nvidia-h200``."""
    return re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-") or "gpu"


def shown_path(path: Path) -> str:
    """``path`` relative to the repository when it lies inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def load_real(name: str):
    """A graph of ``tests/data`` by file name (the ``.gz`` copy when only that exists)."""
    from kernels.graph.io import read_graph

    data = ROOT / "tests" / "data"
    path = data / name if (data / name).exists() else data / (name + ".gz")
    return read_graph(path)


def print_claims(checked: list[dict]) -> None:
    """One line per checked claim: the graph, the claim, MET / NOT MET / n/a and the ratio."""
    for c in checked:
        verdict = {True: "MET", False: "NOT MET", None: "n/a"}[c["met"]]
        ratio = f"{c['ratio']:.2f}" if c["ratio"] is not None and math.isfinite(c["ratio"]) else "-"
        print(f"claim on {c['graph']}: {c['claim']}: {verdict} (ratio {ratio}) {c['note']}")


def graphblas_unavailable() -> str | None:
    """Why the ``graphblas`` CPU baseline cannot run here (``None`` when it can): it is optional."""
    from kernels.algorithms.graphblas_support import unavailable

    return unavailable()
