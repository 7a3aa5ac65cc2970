"""The job types of the compute seam, below everything that runs jobs: :class:`Job`, its
:class:`Outcome` and the failures that are not an error class (``CRASHED``, ``TIMED_OUT``,
``LOST``, ``CANCELLED``), :class:`WorkerInfo` and :func:`worker_info` (this process's own
description, the probe both backends' workers answer). :mod:`kernels.compute.backend` (the
seam), the live documents, the pool and both backends import them from here; the seam names
them too, as part of its interface."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

from kernels.errors import GraphKernelsError
from kernels.measure.targets import Target, needs_gpu

# Outcome.failure values besides an error class name ("ParameterError", "KernelFailure", ...)
CRASHED = "crashed"        # the kernels child process died (a kernel fault, an outside kill)
TIMED_OUT = "timed out"    # no answer within the time limit: the child was killed and restarted
LOST = "worker lost"       # infrastructure, not the kernel: a Dask worker died with the job on it more often
                           # than Dask retries, the scheduler or the connection to it was lost, the scheduler
                           # dropped the job; a sweep records such a cell as "lost" and --resume runs it again
CANCELLED = "cancelled"


@dataclass
class Job:
    """One timed, verified run of ``family/variant`` on the graph named ``graph_key``."""

    graph_key: str
    family: str
    variant: str
    params: dict = field(default_factory=dict)
    target: str | None = None
    repeat: int = 5
    warmup: int = 1
    seed: int = 0
    want_output: bool = False
    launch: str = "auto"       # launch mode of the timed launches: auto, graph, direct or queued
    energy: bool = False       # also NVML's energy per launch (kernels.measure.energy)
    time_limit: float | None = 300.0
    tag: Any = None            # the caller's name for the job (a sweep: the cell's grid position)

    @property
    def real_gpu(self) -> bool:
        """Whether the job runs on a real GPU (its target, the text a job carries, is ``cuda``)."""
        return needs_gpu(self.target)


@dataclass
class Outcome:
    """What became of a :class:`Job`: a record (and output), or a failure with its reason.

    ``worker`` and ``device`` say where it ran (``"local"`` and the device name locally; the
    Dask worker's address and its GPU on a cluster)."""

    job: Job
    record: dict | None = None
    output: Any = None
    failure: str | None = None
    message: str = ""
    worker: str = ""
    device: str = ""

    @property
    def ok(self) -> bool:
        return self.record is not None

    @property
    def lost(self) -> bool:
        """Whether the job was lost to the infrastructure (it may succeed when run again)."""
        return self.failure == LOST

    @property
    def reason(self) -> str:
        return f"{self.failure}: {self.message}" if self.failure else ""

    def raise_if_failed(self) -> None:
        if self.failure is not None:
            raise JobFailed(self)


class JobFailed(GraphKernelsError):
    """A single run (``graph-kernels run --scheduler``) did not produce a record."""

    def __init__(self, outcome: Outcome):
        self.outcome = outcome
        where = f" on {outcome.worker}" if outcome.worker else ""
        super().__init__(f"{outcome.job.family}/{outcome.job.variant}{where}: {outcome.reason}")


class BackendLost(GraphKernelsError):
    """The backend went away while jobs were out (a cluster's scheduler, or the connection to it):
    the jobs without an outcome are lost, not failed."""


@dataclass
class WorkerInfo:
    """One worker as :meth:`ComputeBackend.describe` reports it.

    ``gpu`` is ``None`` without a GPU, else ``{name, memory_bytes, compute_capability, driver,
    index, visible_devices}``; ``problems`` say why the worker cannot run GPU variants (empty
    when it can); ``notes`` are remarks that do not stop it."""

    address: str
    name: str = ""
    host: str = ""
    pid: int | None = None
    nthreads: int = 1
    resources: dict = field(default_factory=dict)
    gpu: dict | None = None
    cpu: str = ""
    versions: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def can_run_gpu(self) -> bool:
        return self.gpu is not None and not self.problems

    def device_kind(self, target: Target | str) -> str:
        """The device a job of ``target`` runs on here: the GPU's name, or the CPU's."""
        target = Target.of(target)
        if target.real_gpu:
            return self.gpu["name"] if self.gpu else "no GPU"
        return f"{self.cpu} (CUDA simulator)" if target.simulated else self.cpu

    def to_json(self) -> dict:
        return asdict(self)


def worker_info() -> dict:
    """This process's worker description: GPU (through the driver, no numba.cuda), CPU, versions."""
    import platform

    from kernels.measure.environment import cpu_name, library_versions
    from kernels.measure.targets import probe_gpu

    gpu = probe_gpu()
    gpu_json = None
    if gpu is not None:
        gpu_json = {"name": gpu.name, "memory_bytes": gpu.total_memory_bytes,
                    "compute_capability": f"{gpu.compute_capability[0]}.{gpu.compute_capability[1]}",
                    "driver": gpu.driver_version, "index": gpu.index,
                    "visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
    return {"address": "local", "name": platform.node(), "host": platform.node(), "pid": os.getpid(),
            "gpu": gpu_json, "cpu": cpu_name(), "versions": dict(library_versions())}
