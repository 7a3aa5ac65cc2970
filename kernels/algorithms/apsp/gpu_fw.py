"""Executions of the GPU Floyd–Warshall variants: naive, blocked (3-phase tiles), staged.

The dense initial matrix is built on the host (numba, in parallel) and uploaded with a pristine
copy kept on the device: Floyd–Warshall works in place, so ``reset()`` restores the working
matrix by a device-to-device copy before each timed launch. Tiled variants pad the matrix to a
multiple of the tile with isolated vertices (``inf`` off the diagonal, 0 on it), which changes
no distance and lets every kernel run without bounds checks.

A launch is a fixed schedule of kernels (``n`` steps for the naive variant, three phases per tile
round for the tiled ones), all on ``self.stream``, with the reset's copies on the same stream:
``capturable``, and the schedule's hundreds of launches are where a CUDA graph saves the most.
"""

from __future__ import annotations

import numpy as np

from kernels.algorithms.apsp import cpu
from kernels.algorithms.apsp.gpu_fw_kernels import naive_kernel, tiled_kernels
from kernels.algorithms.apsp.memory import check_device, check_host
from kernels.algorithms.apsp.negative_cycle import raise_if_negative_diagonal
from kernels.algorithms.apsp.problem import PRED_BYTES, PRED_DTYPE
from kernels.algorithms.execution import Execution

MAX_GRID_Y = 65535


def make_gpu_fw(kind: str, problem, params) -> Execution:
    return GpuFloydWarshall(kind, problem, params)


class GpuFloydWarshall(Execution):
    needs_reset = True
    capturable = True

    def __init__(self, kind: str, problem, params):
        d = self.data = problem.data
        self.problem = problem
        self.kind = kind
        self.n = n = d["n"]
        self.with_pred = d["predecessors"]
        self.threads = 32 * params["warps_per_block"]
        self.tile = params.get("tile", 1)
        self.stage = params.get("stage", 0) if kind == "staged" else 0
        self.padded = -(-n // self.tile) * self.tile if kind != "naive" else n
        item = np.dtype(d["dtype"]).itemsize
        per_pair = item + (PRED_BYTES if self.with_pred else 0)
        name = f"gpu-fw-{kind}"
        what = "the working and the pristine distance matrix" + (" and predecessor matrix" if self.with_pred else "")
        if self.padded != n:
            what += f", padded to {self.padded:,} (a multiple of the tile)"
        scale = (self.padded / n) ** 2 if n else 1.0
        check_device(name, n, 2 * per_pair * scale, what, fixed=d["indptr"].nbytes)
        # host: the padded initial matrix and the downloaded result
        check_host(name, n, 2 * per_pair * scale, "the padded initial matrix and the downloaded result")
        self.device_bytes = int(2 * per_pair * self.padded ** 2)
        self.dist_dev = self.pristine = self.pred_dev = self.pred_pristine = None

    # ---- stages ---------------------------------------------------------------------------
    def _kernels(self):
        if self.kind == "naive":
            return naive_kernel(self.with_pred)
        return tiled_kernels(self.tile, self.threads, self.with_pred, self.data["dtype_name"], self.stage)

    def compile(self) -> None:
        from numba.core import config

        kernels = self._kernels()
        if config.ENABLE_CUDASIM:
            return  # nothing is compiled by the simulator
        # run the whole schedule once on a 2 x 2-tile matrix of the same types to JIT every kernel
        from numba import cuda

        size = 2 if self.kind == "naive" else 2 * self.tile
        dist = cuda.to_device(np.zeros((size, size), dtype=self.data["dtype"]))
        pred = cuda.to_device(np.zeros((size, size) if self.with_pred else (1, 1), dtype=PRED_DTYPE))
        self._schedule(kernels, dist, pred, size)
        cuda.synchronize()

    def upload(self) -> None:
        from numba import cuda

        d = self.data
        size = self.padded
        initial = np.empty((size, size), dtype=d["dtype"])
        initial_pred = np.empty((size, size) if self.with_pred else (1, 1), dtype=PRED_DTYPE)
        cpu.fill_initial(d["indptr"], d["indices"], d["weights"], initial, initial_pred, self.with_pred)
        self.pristine = cuda.to_device(initial)
        self.dist_dev = cuda.device_array_like(self.pristine)
        self.pred_pristine = cuda.to_device(initial_pred)
        self.pred_dev = cuda.device_array_like(self.pred_pristine)
        self.reset()

    def reset(self) -> None:
        self.dist_dev.copy_to_device(self.pristine, stream=self.stream)
        if self.with_pred:
            self.pred_dev.copy_to_device(self.pred_pristine, stream=self.stream)

    def launch(self) -> None:
        self._schedule(self._kernels(), self.dist_dev, self.pred_dev, self.padded)

    def _schedule(self, kernels, dist, pred, size: int) -> None:
        if self.kind == "naive":
            grid = (-(-size // self.threads), min(size, MAX_GRID_Y))
            step = kernels[grid, self.threads, self.stream]
            for k in range(size):
                step(dist, pred, size, k)
            return
        phase1, phase2, phase3 = kernels
        rounds = size // self.tile
        p1 = phase1[1, self.threads, self.stream]
        p2 = phase2[(rounds, 2), self.threads, self.stream]
        p3 = phase3[(rounds, rounds), self.threads, self.stream]
        for r in range(rounds):
            p1(dist, pred, r)
            if rounds > 1:
                p2(dist, pred, r)
                p3(dist, pred, r)

    def synchronize(self) -> None:
        from numba import cuda

        cuda.synchronize()

    def download(self):
        n = self.n
        dist = self.dist_dev.copy_to_host()
        pred = self.pred_dev.copy_to_host() if self.with_pred else None
        if self.padded != n:
            dist = np.ascontiguousarray(dist[:n, :n])
            pred = None if pred is None else np.ascontiguousarray(pred[:n, :n])
        raise_if_negative_diagonal(dist, self.problem)
        return dist if pred is None else {"dist": dist, "pred": pred}

    def release(self) -> None:
        self.dist_dev = self.pristine = self.pred_dev = self.pred_pristine = None
