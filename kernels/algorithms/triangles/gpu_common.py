"""What the triangle family's numba.cuda variants share: the accumulator, its reset, the
execution skeleton. Imported only from ``Variant.make`` (it imports ``numba.cuda``).

Output layout on the device: one int64 array ``acc`` with the total in ``acc[0]`` and, for
per-vertex runs, the count of vertex ``v`` in ``acc[1 + v]``; a launch starts by zeroing it
(one small kernel), so every launch gives the same output. Both kernels go on
``self.stream`` and nothing is read back inside a launch: the executions are ``capturable``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import cuda, types

from kernels.algorithms.execution import Execution
from kernels.algorithms.registry import Problem
from kernels.cuda.device import facts as device_facts
from kernels.cuda.jit import jit as cached_jit
from kernels.cuda.occupancy import MAX_REGISTERS_PER_THREAD, register_cap

ARRAY_I64 = types.Array(types.int64, 1, "C")
ARRAY_I32 = types.Array(types.int32, 1, "C")
ZERO_BLOCK = 256


@cached_jit
def _zero(acc):
    i = cuda.grid(1)
    if i < acc.size:
        acc[i] = 0


def zero_kernel():
    """The accumulator's reset kernel (for the PTX check)."""
    return _zero


def simulated() -> bool:
    from kernels.measure.targets import simulator_enabled

    return simulator_enabled()


def precompile(kernel, *signature) -> int | None:
    """Compile ``kernel`` for ``signature`` now (numba would at the first launch), so the
    runner's compile stage holds the compilation. Returns the registers per thread of the
    compiled kernel (None on the simulator, which compiles nothing)."""
    if simulated():
        return None
    compiled = kernel.compile(tuple(signature))
    try:
        return int(compiled.regs_per_thread)
    except Exception:  # noqa: BLE001 - only an occupancy hint: the launch works without it
        return None




def kernel_jit(block_size: int, max_registers: int = 0):
    """``cuda.jit`` (with the disk cache) for a kernel launched with ``block_size`` threads: above 256 threads the
    registers per thread are capped so that one block always fits an SM (a launch would
    otherwise fail with "too many resources requested"); ``max_registers`` (0: none) caps them
    further, for occupancy. The simulator has no such option."""
    cap = register_cap(block_size)
    if max_registers:
        cap = min(cap, int(max_registers))
    if simulated() or cap >= MAX_REGISTERS_PER_THREAD:
        return cached_jit
    return cached_jit(max_registers=cap)


@lru_cache(maxsize=1)
def multiprocessors() -> int:
    if simulated():
        return 1
    return device_facts().multiprocessors


class CountingExecution(Execution):
    """Upload of a CSR (or oriented CSR) plus the accumulator; subclasses launch kernels
    (on ``self.stream``)."""

    capturable = True

    def __init__(self, problem: Problem, params: dict):
        self.problem = problem
        self.params = params
        self.per_vertex = bool(params["per_vertex"])
        self.n = problem.graph.n_rows
        self.stats = problem.data["stats"]
        self.d_acc = None

    def host_arrays(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def upload(self) -> None:
        # an empty array becomes one unused element: kernels never read past their counts
        arrays = {name: arr if arr.size else np.zeros(1, dtype=arr.dtype) for name, arr in self.host_arrays().items()}
        self.device = {name: cuda.to_device(arr) for name, arr in arrays.items()}
        self.d_acc = cuda.device_array(1 + (self.n if self.per_vertex else 0), dtype=np.int64)
        self.device_bytes = int(sum(a.nbytes for a in arrays.values()) + self.d_acc.nbytes)

    def compile_accumulator_reset(self) -> None:
        precompile(_zero, ARRAY_I64)

    def reset_accumulator(self) -> None:
        size = self.d_acc.size
        _zero[(size + ZERO_BLOCK - 1) // ZERO_BLOCK, ZERO_BLOCK, self.stream](self.d_acc)

    def synchronize(self) -> None:
        cuda.synchronize()

    def download(self):
        acc = self.d_acc.copy_to_host()
        if self.per_vertex:
            return acc[1:].copy()
        return np.int64(acc[0])

    def release(self) -> None:
        self.device = {}
        self.d_acc = None
