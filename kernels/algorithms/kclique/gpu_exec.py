"""Execution of the GPU k-clique variants: checks, scratch sizing, upload, timed launches."""

from __future__ import annotations

import numpy as np
from numba import cuda

from kernels.algorithms.execution import Execution
from kernels.algorithms.kclique import gpu_bitmap, gpu_list
from kernels.errors import InputRequirementError, ResourceLimitError
from kernels.measure.targets import Target

# Global scratch refused beyond this (a GPU has tens of GiB; a wrong max_blocks should not take it all)
SCRATCH_LIMIT_BYTES = 8 << 30
KINDS = {"vertex": "gpu-vertex", "edge": "gpu-edge", "list": "gpu-list"}


class GpuCliqueExecution(Execution):
    # zeroing kernels and one counting kernel on self.stream, nothing read back: capturable
    capturable = True

    def __init__(self, problem, params: dict, target: str, kind: str, sample_step: int = 1):
        """``sample_step`` > 1: a sampled trial (:mod:`.trial`), which searches only every
        ``sample_step``-th work item (vertex, or oriented edge), from the middle of the first
        stratum: ids follow the orientation's rank, so the sample spans every degree. 1: all."""
        self.kind = kind
        self.target = target
        self.oriented = dag = problem.data["oriented"]
        self.k = params["k"]
        self.per_vertex = params["per_vertex"]
        self.block_size = params["block_size"]
        self.group_size = params["group_size"]
        self.max_deg = dag.max_out_degree
        if kind != "list" and self.max_deg > gpu_bitmap.MAX_OUT_DEGREE:
            raise InputRequirementError(
                f"{KINDS[kind]}: the largest out-degree after the {dag.orientation} orientation is "
                f"{self.max_deg}, above the {gpu_bitmap.MAX_OUT_DEGREE} that one block's bitmaps can hold; "
                f"use gpu-list or cpu-parallel"
                + (", or orientation=degeneracy" if dag.orientation == "degree" else ""))
        total = dag.num_edges if kind == "edge" else dag.n
        self.root_step = max(1, int(sample_step))
        self.root0 = (self.root_step - 1) // 2
        items = max(0, (total - self.root0 + self.root_step - 1) // self.root_step)
        self.grid = max(1, min(params["max_blocks"], items))
        self.items = items
        if kind == "list":
            per_block = gpu_list.scratch_ints(self.k, self.block_size, self.group_size, self.max_deg)
            self.scratch_dtype = np.int32
        else:
            per_block = gpu_bitmap.scratch_words(kind, self.k, self.block_size, self.group_size, self.max_deg)
            self.scratch_dtype = np.uint32
        self.scratch_len = max(per_block * self.grid, 1)
        scratch_bytes = self.scratch_len * 4
        # refused as the full search would be (a sample's grid may be smaller): a trial's candidate
        # that passes here runs whole too
        full_grid = max(1, min(params["max_blocks"], total))
        full_bytes = max(per_block * full_grid, 1) * 4
        if full_bytes > SCRATCH_LIMIT_BYTES:
            raise ResourceLimitError(
                f"{KINDS[kind]} would need {full_bytes / 2**30:.1f} GiB of scratch ({full_grid} blocks x "
                f"{per_block * 4 / 2**20:.1f} MiB for out-degree {self.max_deg}, k={self.k}); the limit is "
                f"{SCRATCH_LIMIT_BYTES / 2**30:.0f} GiB: lower max_blocks or block_size/group_size")
        self.stride = max((self.max_deg + 31) // 32, 1)
        n_pv = dag.n if self.per_vertex else 1
        self.device_bytes = int(dag.indptr.nbytes + dag.indices.nbytes + scratch_bytes + 8 * n_pv
                                + (4 * dag.num_edges if kind == "edge" else 0))

    def _kernel(self):
        args = (self.k, self.block_size, self.group_size, self.per_vertex)
        if self.kind == "vertex":
            return gpu_bitmap.vertex_kernel(*args)
        if self.kind == "edge":
            return gpu_bitmap.edge_kernel(*args)
        return gpu_list.list_kernel(*args)

    def _launch_on(self, indptr, indices, sources, items, scratch, counter, pv, grid):
        kernel = self.kernel[grid, self.block_size, self.stream]
        roots = (items, self.root0, self.root_step)
        if self.kind == "vertex":
            kernel(indptr, indices, *roots, self.max_deg, self.stride, scratch, counter, pv)
        elif self.kind == "edge":
            kernel(indptr, indices, sources, *roots, self.max_deg, self.stride, scratch, counter, pv)
        else:
            kernel(indptr, indices, *roots, self.max_deg, scratch, counter, pv)

    def compile(self) -> None:
        self.kernel = self._kernel()
        # numba compiles on the first call: make it on empty work with the real argument types
        empty_ptr = cuda.to_device(np.zeros(2, dtype=np.int64))
        empty_idx = cuda.to_device(np.zeros(1, dtype=np.int32))
        scratch = cuda.to_device(np.zeros(1, dtype=self.scratch_dtype))
        counter = cuda.to_device(np.zeros(1, dtype=np.int64))
        self._launch_on(empty_ptr, empty_idx, empty_idx, 0, scratch, counter, counter, 1)
        self._zero(counter)
        cuda.synchronize()

    def upload(self) -> None:
        dag = self.oriented
        self.d_indptr = cuda.to_device(dag.indptr)
        self.d_indices = cuda.to_device(dag.indices if dag.num_edges else np.zeros(1, dtype=np.int32))
        self.d_sources = (cuda.to_device(dag.sources() if dag.num_edges else np.zeros(1, dtype=np.int32))
                          if self.kind == "edge" else self.d_indices)
        self.d_scratch = cuda.device_array(self.scratch_len, dtype=self.scratch_dtype)
        self.d_counter = cuda.device_array(1, dtype=np.int64)
        self.d_pv = cuda.device_array(dag.n if self.per_vertex else 1, dtype=np.int64)

    def _zero(self, arr) -> None:
        if Target.parse(self.target).simulated:
            gpu_bitmap.fill_zero[1, 32, self.stream](arr)  # every simulated thread costs a Python thread
        else:
            gpu_bitmap.fill_zero[min(max((arr.size + 255) // 256, 1), 1024), 256, self.stream](arr)

    def launch(self) -> None:
        self._zero(self.d_counter)
        if self.per_vertex:
            self._zero(self.d_pv)
        if self.items:
            self._launch_on(self.d_indptr, self.d_indices, self.d_sources, self.items, self.d_scratch,
                            self.d_counter, self.d_pv, self.grid)

    def synchronize(self) -> None:
        cuda.synchronize()

    def download(self):
        total = int(self.d_counter.copy_to_host()[0])
        if self.per_vertex:
            return {"cliques": total, "per_vertex": self.oriented.to_original(self.d_pv.copy_to_host())}
        return total

    def release(self) -> None:
        self.d_scratch = self.d_pv = self.d_indptr = self.d_indices = self.d_sources = None


def ptx_kernels(variant):
    """The PTX check's kernels (:mod:`kernels.run.ptx_check`): ``variant``'s search kernels (all
    three for ``gpu``) at a few k, group sizes and per-vertex counting, and the zeroing kernel, for
    the argument types ``_launch_on`` passes."""
    from numba import types

    from kernels.cuda.jit import array_type

    i64, i32, n = array_type(np.int64), array_type(np.int32), types.int64
    kinds = [k for k, name in KINDS.items() if variant.name in ("gpu", name)]
    out = [("kclique fill zero", gpu_bitmap.fill_zero, (i64,))]
    for kind in kinds:
        for k, block, group, per_vertex in ((4, 128, 8, False), (3, 64, 4, True), (6, 256, 32, False)):
            tag = f"k={k} block={block} group={group}{' per vertex' if per_vertex else ''}"
            roots = (n, n, n)             # items, first item, step
            if kind == "vertex":
                kernel = gpu_bitmap.vertex_kernel(k, block, group, per_vertex)
                args = (i64, i32, *roots, n, n, array_type(np.uint32), i64, i64)
            elif kind == "edge":
                kernel = gpu_bitmap.edge_kernel(k, block, group, per_vertex)
                args = (i64, i32, i32, *roots, n, n, array_type(np.uint32), i64, i64)
            else:
                kernel = gpu_list.list_kernel(k, block, group, per_vertex)
                args = (i64, i32, *roots, n, i32, i64, i64)
            out.append((f"kclique {KINDS[kind]}[{tag}]", kernel, args))
    return out
