"""Test environment: Qt offscreen, CUDA simulator unless a real GPU run is asked for.

``GRAPH_KERNELS_TARGET=cuda pytest -m gpu`` runs the real-GPU tests; everywhere else the
simulator is switched on *before* anything imports numba.cuda."""

from __future__ import annotations

import csv
import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if os.environ.get("GRAPH_KERNELS_TARGET", "").lower() != "cuda":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import pytest  # noqa: E402

DATA = Path(__file__).parent / "data"


def _real_gpu() -> bool:
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        return False
    from kernels.measure.targets import probe_gpu

    return probe_gpu() is not None


def pytest_collection_modifyitems(config, items):
    if _real_gpu():
        return
    skip = pytest.mark.skip(reason="needs a real CUDA GPU (run with GRAPH_KERNELS_TARGET=cuda)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def data_path(name: str) -> Path:
    """A file in tests/data (the big ones are stored gzip-compressed)."""
    p = DATA / name
    if p.exists():
        return p
    gz = DATA / (name + ".gz")
    if gz.exists():
        return gz
    raise FileNotFoundError(name)


def reference_table() -> dict[str, dict]:
    """The reference values of ../shared/graphs/README.md, copied to tests/data/reference.csv."""
    with open(DATA / "reference.csv") as fh:
        return {row["file"]: row for row in csv.DictReader(fh)}


@pytest.fixture
def data():
    return data_path
