"""NVTX ranges around the runner's stages, so that a profile taken with Nsight Systems
(``nsys profile graph-kernels run ...``) shows ``spmv/gpu-tunable compile``, ``... upload``,
``... kernel`` and ``... download`` by name on the timeline.

The ``nvtx`` package is optional (the ``cuda`` extra brings it). Ranges are pushed when it can
be imported and the run targets a real GPU; on the simulator and the CPU they would only cost
time, unless ``GRAPH_KERNELS_NVTX=1`` asks for them anyway (a CPU variant profiled with Nsight
Systems, or a test with a stand-in ``nvtx`` module); ``GRAPH_KERNELS_NVTX=0`` switches them off.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Callable, Iterator

from kernels.measure.targets import needs_gpu

NVTX_ENV = "GRAPH_KERNELS_NVTX"
DOMAIN = "gpu-graph-explorer"
COLOURS = {"compile": "yellow", "upload": "blue", "preprocess": "orange", "kernel": "green", "download": "purple"}


def _nvtx_module():
    try:
        return importlib.import_module("nvtx")
    except Exception:             # not installed, or its C library cannot be loaded
        return None


def stage_ranges(label: str, target: str) -> Callable[[str], contextlib.AbstractContextManager]:
    """``ranges = stage_ranges("spmv/gpu-tunable", target)``, then ``with ranges("compile"): ...``;
    a no-op where ranges are not wanted or ``nvtx`` is missing."""
    wanted = os.environ.get(NVTX_ENV, "").strip()
    nvtx = None if wanted == "0" or (not needs_gpu(target) and wanted != "1") else _nvtx_module()
    if nvtx is None:
        return lambda stage: contextlib.nullcontext()

    @contextlib.contextmanager
    def stage_range(stage: str) -> Iterator[None]:
        nvtx.push_range(message=f"{label} {stage}", color=COLOURS.get(stage, "grey"), domain=DOMAIN)
        try:
            yield
        finally:
            nvtx.pop_range(domain=DOMAIN)

    return stage_range
