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

A target is a :class:`Target`, the one place that knows how target text is spelt: the three
devices above, each also through a connected Dask cluster (``cluster:cuda``, ``cluster:sim``,
``cluster:cpu``; the GUI's Run dock offers those). Files, records, jobs and the worker's wire
carry the canonical text, ``str(target)``; code that decides anything about a target parses it
here (:meth:`Target.parse`, or :meth:`Target.of` for a value that may be one already) and asks
its properties (``device``, ``on_cluster``, ``is_gpu``, ``real_gpu``, ``simulated``,
``local()``) instead of comparing strings.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import ClassVar, overload

from kernels.errors import ParameterError, TargetUnavailableError

TARGETS = ("cuda", "sim", "cpu")        # the devices, as this machine's targets are spelt
CLUSTER_PREFIX = "cluster:"
ALLOWED = (*TARGETS, *(CLUSTER_PREFIX + d for d in TARGETS))   # every target's text
ENV_VAR = "GRAPH_KERNELS_TARGET"
SIM_ENV = "NUMBA_ENABLE_CUDASIM"


@dataclass(frozen=True)
class Target:
    """Where a run happens: a device (``cuda``: a real GPU, ``sim``: numba's CUDA simulator,
    ``cpu``: numba ``njit``) on this machine or, ``on_cluster``, on a connected Dask cluster's
    workers. ``str(target)`` is its canonical text (``cuda``, ``cluster:sim``...), the one that
    files, records and the wire carry; :meth:`parse` reads it back."""

    device: str
    on_cluster: bool = False

    CUDA: ClassVar[Target]
    SIM: ClassVar[Target]
    CPU: ClassVar[Target]

    def __post_init__(self):
        if self.device not in TARGETS:
            raise ParameterError("target", self.device, ", ".join(ALLOWED),
                                 "a device is one of " + ", ".join(TARGETS))

    @classmethod
    def parse(cls, text: str) -> Target:
        """``"cuda"`` → ``Target("cuda")``, ``"cluster:sim"`` → ``Target("sim", on_cluster=True)``;
        anything else is a :class:`ParameterError` naming ``target`` and every allowed value."""
        found = _PARSED.get(text) if isinstance(text, str) else None
        if found is not None:
            return found
        raise ParameterError("target", text, ", ".join(ALLOWED))

    @overload
    @classmethod
    def of(cls, value: None) -> None: ...

    @overload
    @classmethod
    def of(cls, value: Target | str) -> Target: ...

    @classmethod
    def of(cls, value: Target | str | None) -> Target | None:
        """A value that may be a target already, its text, or ``None`` (no target chosen: stays ``None``)."""
        if value is None or isinstance(value, Target):
            return value
        return cls.parse(value)

    @classmethod
    def read(cls, value: object) -> Target | None:
        """The target a record or sweep file names, or ``None`` when it names none this code
        knows (a record of another tool, an old file): for reading files, never raises."""
        if isinstance(value, Target):
            return value
        return _PARSED.get(value) if isinstance(value, str) else None

    @classmethod
    def devices(cls) -> tuple[Target, ...]:
        """This machine's targets, best first: ``cuda``, ``sim``, ``cpu``."""
        return tuple(_LOCAL.values())

    def __str__(self) -> str:
        return CLUSTER_PREFIX + self.device if self.on_cluster else self.device

    @property
    def is_gpu(self) -> bool:
        """Runs GPU kernels: on a real GPU or in the simulator."""
        return self.device != "cpu"

    @property
    def real_gpu(self) -> bool:
        """Runs on a real CUDA device (``cuda``): CUDA events, a GPU resource, compiled kernels."""
        return self.device == "cuda"

    @property
    def simulated(self) -> bool:
        """Runs in numba's CUDA simulator (``sim``)."""
        return self.device == "sim"

    def local(self) -> Target:
        """The same device on this machine (a cluster target without the cluster)."""
        return _LOCAL[self.device]

    def on_the_cluster(self) -> Target:
        """The same device through the connected cluster."""
        return _CLUSTER[self.device]


def needs_gpu(target: Target | str | None) -> bool:
    """Whether ``target`` (a :class:`Target`, its text, or ``None``: none chosen) runs on a real
    GPU: a GPU resource to claim, CUDA events, the kernel cache's counters."""
    target = Target.of(target)
    return target is not None and target.real_gpu


_LOCAL = {d: Target(d) for d in TARGETS}
_CLUSTER = {d: Target(d, on_cluster=True) for d in TARGETS}
_PARSED = {str(t): t for t in (*_LOCAL.values(), *_CLUSTER.values())}
GPU_TARGETS = tuple(d for d in TARGETS if _LOCAL[d].is_gpu)      # cuda, sim: where GPU kernels run
Target.CUDA, Target.SIM, Target.CPU = _LOCAL["cuda"], _LOCAL["sim"], _LOCAL["cpu"]


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


def forced_target() -> Target | None:
    """The target ``GRAPH_KERNELS_TARGET`` forces (one of this machine's), or ``None``."""
    value = os.environ.get(ENV_VAR, "").strip().lower()
    if not value:
        return None
    forced = Target.read(value)
    if forced is None or forced.on_cluster:
        raise TargetUnavailableError(
            f"{ENV_VAR}={value!r} is not a target: use one of {', '.join(TARGETS)}")
    return forced


def simulator_enabled() -> bool:
    return os.environ.get(SIM_ENV, "0") not in ("", "0")


def default_gpu_target() -> str:
    """Where a GPU variant runs when the user did not say: forced, else cuda, else sim."""
    forced = forced_target()
    if forced is not None and forced.is_gpu:
        return str(forced)
    if simulator_enabled():
        return str(Target.SIM)
    return str(Target.CUDA if probe_gpu() is not None else Target.SIM)


def default_target() -> str:
    """The machine's best target: forced, else cuda with a GPU, else sim if on, else cpu."""
    forced = forced_target()
    if forced is not None:
        return str(forced)
    if simulator_enabled():
        return str(Target.SIM)
    return str(Target.CUDA if probe_gpu() is not None else Target.CPU)


def activate(target: Target | str) -> None:
    """Prepare this process for ``target``; must happen before ``numba.cuda`` is imported.

    ``sim`` turns the simulator on; ``cuda`` needs a GPU and the simulator off."""
    target = Target.of(target)
    if target.on_cluster:
        raise TargetUnavailableError(f"{target} runs on the cluster's workers, not in this process")
    cuda_imported = "numba.cuda" in sys.modules
    if target.simulated:
        if cuda_imported and not simulator_enabled():
            raise TargetUnavailableError(
                "the CUDA simulator must be enabled before numba.cuda is imported; "
                "run this in a fresh process (the worker does) or set NUMBA_ENABLE_CUDASIM=1")
        os.environ[SIM_ENV] = "1"
        _reload_numba_config()
    elif target.real_gpu:
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


def target_label(target: Target | str) -> str:
    """Words for a status bar: the GPU's name, "CUDA simulator" or "CPU only"."""
    target = Target.of(target)
    if target.real_gpu:
        gpu = probe_gpu()
        return gpu.name if gpu else "CUDA (no device)"
    return "CUDA simulator" if target.simulated else "CPU only"


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
