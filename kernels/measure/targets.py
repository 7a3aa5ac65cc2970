"""Execution targets: where kernels run.

* ``cuda`` - numba.cuda on a real GPU,
* ``sim``  - numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``), for correctness anywhere,
* ``cpu``  - numba ``njit`` variants only.

The GPU is detected by asking the CUDA driver directly through ``ctypes`` (``cuInit``,
``cuDeviceGetCount``...), *not* by importing ``numba.cuda``: the simulator must be switched on
before ``numba.cuda`` is first imported, so detection must not import it. A missing driver
library, a driver that fails to initialise or a machine with no device all simply mean "no
GPU"; detection never raises.

The choice can be forced with the environment variable ``GRAPH_KERNELS_TARGET``
(``cuda``, ``sim`` or ``cpu``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from dataclasses import asdict, dataclass
from functools import lru_cache

from kernels.errors import TargetUnavailableError

TARGETS = ("cuda", "sim", "cpu")
ENV_VAR = "GRAPH_KERNELS_TARGET"
SIM_ENV = "NUMBA_ENABLE_CUDASIM"


@dataclass(frozen=True)
class GpuInfo:
    name: str
    compute_capability: tuple[int, int]
    total_memory_bytes: int
    driver_version: str
    multiprocessors: int
    l2_cache_bytes: int
    index: int = 0
    uuid: str | None = None     # "GPU-xxxxxxxx-...", as nvidia-smi and NVML write it


@lru_cache(maxsize=1)
def probe_gpu() -> GpuInfo | None:
    """The first CUDA device as the driver reports it, or ``None`` without one."""
    lib = _load_driver()
    if lib is None:
        return None
    try:
        if lib.cuInit(0) != 0:
            return None
        count = ctypes.c_int(0)
        if lib.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
            return None
        dev = ctypes.c_int(0)
        if lib.cuDeviceGet(ctypes.byref(dev), 0) != 0:
            return None
        name = ctypes.create_string_buffer(256)
        lib.cuDeviceGetName(name, 256, dev)
        mem = ctypes.c_size_t(0)
        lib.cuDeviceTotalMem_v2(ctypes.byref(mem), dev)

        def attr(code: int) -> int:
            v = ctypes.c_int(0)
            lib.cuDeviceGetAttribute(ctypes.byref(v), code, dev)
            return v.value

        drv = ctypes.c_int(0)
        lib.cuDriverGetVersion(ctypes.byref(drv))
        # CU_DEVICE_ATTRIBUTE_* codes: 75/76 compute capability, 16 SM count, 38 L2 size
        raw = ctypes.create_string_buffer(16)
        uuid = None
        if getattr(lib, "cuDeviceGetUuid", None) is not None and lib.cuDeviceGetUuid(raw, dev) == 0:
            h = raw.raw.hex()
            uuid = f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        return GpuInfo(
            uuid=uuid,
            name=name.value.decode(errors="replace"),
            compute_capability=(attr(75), attr(76)),
            total_memory_bytes=int(mem.value),
            driver_version=f"{drv.value // 1000}.{(drv.value % 1000) // 10}",
            multiprocessors=attr(16),
            l2_cache_bytes=attr(38),
        )
    except (OSError, AttributeError):
        return None


def _load_driver():
    if sys.platform.startswith("win"):
        candidates = ["nvcuda.dll"]
    else:
        candidates = ["libcuda.so.1", "libcuda.so", ctypes.util.find_library("cuda")]
    for cand in candidates:
        if not cand:
            continue
        try:
            return ctypes.CDLL(cand)
        except OSError:
            continue
    return None


def forced_target() -> str | None:
    value = os.environ.get(ENV_VAR, "").strip().lower()
    if not value:
        return None
    if value not in TARGETS:
        raise TargetUnavailableError(
            f"{ENV_VAR}={value!r} is not a target: use one of {', '.join(TARGETS)}")
    return value


def simulator_enabled() -> bool:
    return os.environ.get(SIM_ENV, "0") not in ("", "0")


def default_gpu_target() -> str:
    """Where a GPU variant runs when the user did not say: forced, else cuda, else sim."""
    forced = forced_target()
    if forced in ("cuda", "sim"):
        return forced
    if simulator_enabled():
        return "sim"
    return "cuda" if probe_gpu() is not None else "sim"


def default_target() -> str:
    """The machine's best target: forced, else cuda with a GPU, else sim if on, else cpu."""
    forced = forced_target()
    if forced:
        return forced
    if simulator_enabled():
        return "sim"
    return "cuda" if probe_gpu() is not None else "cpu"


def activate(target: str) -> None:
    """Prepare this process for ``target``; must happen before ``numba.cuda`` is imported.

    ``sim`` turns the simulator on; ``cuda`` needs a GPU and the simulator off."""
    if target not in TARGETS:
        raise TargetUnavailableError(f"unknown target {target!r}: use one of {', '.join(TARGETS)}")
    cuda_imported = "numba.cuda" in sys.modules
    if target == "sim":
        if cuda_imported and not simulator_enabled():
            raise TargetUnavailableError(
                "the CUDA simulator must be enabled before numba.cuda is imported; "
                "run this in a fresh process (the worker does) or set NUMBA_ENABLE_CUDASIM=1")
        os.environ[SIM_ENV] = "1"
        _reload_numba_config()
    elif target == "cuda":
        if simulator_enabled():
            raise TargetUnavailableError(
                "this process runs the CUDA simulator (NUMBA_ENABLE_CUDASIM=1); "
                "unset it to use the real GPU")
        if probe_gpu() is None:
            raise TargetUnavailableError(
                "no CUDA GPU found (no driver or no device): use --target sim or --target cpu")


def _reload_numba_config() -> None:
    """numba reads NUMBA_ENABLE_CUDASIM when numba itself is imported (CPU variants may have
    imported it already); make it read the variable again before numba.cuda is imported."""
    if "numba" in sys.modules:
        from numba.core import config

        config.reload_config()


def describe_targets() -> list[dict]:
    """One entry per target: whether it can be used here, and details."""
    gpu = probe_gpu()
    out = [
        {"target": "cuda", "available": gpu is not None,
         "detail": (f"{gpu.name}, compute capability {gpu.compute_capability[0]}."
                    f"{gpu.compute_capability[1]}, {gpu.total_memory_bytes / 2**30:.1f} GiB, "
                    f"driver {gpu.driver_version}") if gpu else "no CUDA driver or device found",
         "gpu": asdict(gpu) if gpu else None},
        {"target": "sim", "available": True,
         "detail": "numba CUDA simulator: correct but slow (one Python thread per CUDA thread)"},
        {"target": "cpu", "available": True, "detail": f"numba njit on {os.cpu_count()} cores"},
    ]
    default = default_target()
    for entry in out:
        entry["default"] = entry["target"] == default
    return out


def target_label(target: str) -> str:
    """Words for a status bar: the GPU's name, "CUDA simulator" or "CPU only"."""
    if target == "cuda":
        gpu = probe_gpu()
        return gpu.name if gpu else "CUDA (no device)"
    return {"sim": "CUDA simulator", "cpu": "CPU only"}[target]


def gpu_count() -> int:
    """How many CUDA devices this process can see (0 without a driver or device)."""
    lib = _load_driver()
    if lib is None:
        return 0
    try:
        if lib.cuInit(0) != 0:
            return 0
        count = ctypes.c_int(0)
        return count.value if lib.cuDeviceGetCount(ctypes.byref(count)) == 0 else 0
    except (OSError, AttributeError):
        return 0
