"""What a record needs to be reproducible: device, driver and library versions."""

from __future__ import annotations

import os
import platform
import sys
from functools import lru_cache
from importlib import metadata

from kernels.measure.targets import Target, probe_gpu
from kernels.version import code_version

_LIBRARIES = ("numpy", "scipy", "numba", "numba-cuda", "llvmlite", "networkx", "cupy-cuda12x",
              "cupy-cuda13x", "cupy")


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


@lru_cache(maxsize=1)
def library_versions() -> dict:
    versions = {"python": platform.python_version(), "gpu-graph-explorer": code_version()}
    for lib in _LIBRARIES:
        v = _version(lib)
        if v:
            versions[lib] = v
    return versions


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def device_description(target: Target | str) -> dict:
    """The device a target runs on, for records and status bars."""
    return _device_description(Target.of(target).local())


@lru_cache(maxsize=4)
def _device_description(target: Target) -> dict:
    if target.real_gpu:
        gpu = probe_gpu()
        if gpu is not None:
            return {"target": str(target), "name": gpu.name, "memory_bytes": gpu.total_memory_bytes,
                    "compute_capability": f"{gpu.compute_capability[0]}.{gpu.compute_capability[1]}",
                    "driver": gpu.driver_version, "multiprocessors": gpu.multiprocessors,
                    "l2_cache_bytes": gpu.l2_cache_bytes, **({"uuid": gpu.uuid} if gpu.uuid else {})}
        return {"target": str(target), "name": "no CUDA device"}
    if target.simulated:
        return {"target": str(target), "name": "CUDA simulator", "host": cpu_name(), "cores": os.cpu_count()}
    return {"target": str(target), "name": cpu_name(), "cores": os.cpu_count()}


def environment(target: Target | str) -> dict:
    return {"device": device_description(target), "versions": library_versions(),
            "platform": f"{platform.system()} {platform.release()} ({platform.machine()})",
            "executable": sys.executable}
