"""``gpu-merge``: merge-path SpMV (Merrill & Garland, SC'16), load-balanced for any row lengths.

SpMV on CSR is a merge of two lists: the row ends (``indptr[1:]``, ``n_rows`` items) and the
entries (``nnz`` items). Walking the merge path, an entry adds ``a_ij x_j`` to the running
sum and a row end writes the sum out. Cutting the path into equal pieces gives every block,
and every thread, the same amount of work whatever the row lengths: a row of a million
entries is shared by many threads, a run of empty rows costs one step each.

Two kernels per product:

1. ``partition``: one thread per tile boundary finds its path coordinates (a binary search
   over the row ends along the boundary's diagonal). A row cut by a tile boundary is zeroed
   here, because its pieces are added atomically by the tiles that hold them.
2. ``spmv_tiles``: a block of ``wg`` threads takes a tile of ``wg * ipt`` path items. It
   stages the tile's row ends and the products ``a_ij x_j`` in shared memory with coalesced
   loads, each thread finds its own ``ipt`` items by a binary search in shared memory and walks
   them, writing the rows it completes. Partial sums of rows split between threads are combined
   in shared memory (the thread that completes the row adds the tails of the threads before
   it); only rows split between *tiles* use an atomic add, at most two per tile.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import cuda

from kernels.algorithms.spmv.gpu_common import DeviceSpmvExecution, blocks_for, typed_zero
from kernels.cuda.jit import jit as kernel_jit
from kernels.cuda.simulator import MERGE_PARTITION_THREADS

PARTITION_THREADS = {"cuda": 256, "sim": MERGE_PARTITION_THREADS}
# the tile (wg * ipt items) is staged in shared memory: a value and a 4-byte row end per item
MAX_TILE = 2048


@functools.cache  # an lru_cache without bound: one compiled kernel per tuple
def merge_kernels(wg: int, ipt: int, value_type: str, index_type: str):
    """``(partition, spmv_tiles)`` specialised on the tile shape (compiled once per tuple)."""
    tile = wg * ipt
    if tile > MAX_TILE:
        raise ValueError(f"wg * ipt = {tile} exceeds the shared-memory tile of {MAX_TILE} items")
    zero = typed_zero(value_type)
    value_nb = getattr(numba, value_type)
    int32 = numba.int32

    def partition(indptr, n_rows, nnz, tile_row, tile_k, n_boundaries, y):
        total = n_rows + nnz
        for b in range(cuda.grid(1), n_boundaries, cuda.gridsize(1)):
            diag = min(b * tile, total)
            lo = max(diag - nnz, 0)
            hi = min(diag, n_rows)
            while lo < hi:  # the first row whose end lies beyond this diagonal
                pivot = (lo + hi) >> 1
                if indptr[pivot + 1] <= diag - pivot - 1:
                    lo = pivot + 1
                else:
                    hi = pivot
            tile_row[b] = lo
            tile_k[b] = diag - lo
            if lo < n_rows and indptr[lo] < diag - lo:
                y[lo] = zero  # row cut by this boundary: its tiles add their parts atomically

    def spmv_tiles(indptr, indices, values, x, y, tile_row, tile_k, n_rows, n_tiles):
        row_end = cuda.shared.array(tile, int32)      # tile-relative end of each row of the tile
        product = cuda.shared.array(tile, value_nb)   # a_ij * x_j of each entry of the tile
        tail_row = cuda.shared.array(wg, int32)       # the row each thread's last partial sum is for
        tail_sum = cuda.shared.array(wg, value_nb)
        t = cuda.threadIdx.x
        for tile_id in range(cuda.blockIdx.x, n_tiles, cuda.gridDim.x):
            r0 = tile_row[tile_id]
            r1 = tile_row[tile_id + 1]
            k0 = tile_k[tile_id]
            k1 = tile_k[tile_id + 1]
            n_ends = r1 - r0          # row ends on this tile's path
            n_entries = k1 - k0       # entries on this tile's path
            starts_inside_row = indptr[r0] < k0
            for u in range(ipt):      # coalesced staging: thread t takes items t, t + wg, ...
                i = t + u * wg
                if i < n_ends:
                    row_end[i] = indptr[r0 + 1 + i] - k0
                if i < n_entries:
                    k = k0 + i
                    product[i] = values[k] * x[indices[k]]
            cuda.syncthreads()

            items = n_ends + n_entries
            d0 = min(t * ipt, items)
            d1 = min(d0 + ipt, items)
            lo = max(d0 - n_entries, 0)
            hi = min(d0, n_ends)
            while lo < hi:
                pivot = (lo + hi) >> 1
                if row_end[pivot] <= d0 - pivot - 1:
                    lo = pivot + 1
                else:
                    hi = pivot
            i = lo
            j = d0 - lo
            # did the row this thread starts in begin before it (in an earlier thread or tile)?
            if i > 0:
                row_start = row_end[i - 1]
            elif starts_inside_row:
                row_start = -1
            else:
                row_start = 0
            shared_first_row = j > row_start
            acc = zero
            head = -1                 # the shared row this thread completes, if any
            head_sum = zero
            for _ in range(d1 - d0):
                if i < n_ends and j >= row_end[i]:   # next on the path: the end of row i
                    if shared_first_row:
                        head = i
                        head_sum = acc
                        shared_first_row = False
                    else:
                        y[r0 + i] = acc
                    acc = zero
                    i += 1
                else:                                # next on the path: entry j
                    acc += product[j]
                    j += 1
            tail_row[t] = i
            tail_sum[t] = acc
            cuda.syncthreads()

            if head >= 0:  # add the tails of the threads before this one that worked on the row
                total = head_sum
                u = t - 1
                while u >= 0 and tail_row[u] == head:
                    total += tail_sum[u]
                    u -= 1
                if head == 0 and starts_inside_row:
                    cuda.atomic.add(y, r0, total)   # the row began in an earlier tile
                else:
                    y[r0 + head] = total
            if t == wg - 1 and r1 < n_rows and indptr[r1] < k1:
                total = zero                         # the row goes on into the next tile
                u = t
                while u >= 0 and tail_row[u] == n_ends:
                    total += tail_sum[u]
                    u -= 1
                cuda.atomic.add(y, r1, total)
            cuda.syncthreads()                       # shared arrays are reused by the next tile

    v, ix = value_type, index_type
    partition_k = kernel_jit(f"void({ix}[::1], int64, int64, int64[::1], int64[::1], int64, {v}[::1])")(partition)
    tiles_k = kernel_jit(f"void({ix}[::1], int32[::1], {v}[::1], {v}[::1], {v}[::1], int64[::1], int64[::1], "
                       "int64, int64)")(spmv_tiles)
    return partition_k, tiles_k


class MergeExecution(DeviceSpmvExecution):
    def compile(self) -> None:
        p = self.params
        self.partition, self.spmv_tiles = merge_kernels(p["wg"], p["ipt"], self.value_type, self.index_type)

    def upload_extra(self) -> None:
        tile = self.params["wg"] * self.params["ipt"]
        self.n_tiles = -(-(self.n_rows + self.nnz) // tile)
        self.d_tile_row = cuda.device_array(self.n_tiles + 1, dtype=np.int64)
        self.d_tile_k = cuda.device_array(self.n_tiles + 1, dtype=np.int64)
        self.device_bytes += 16 * (self.n_tiles + 1)

    def launch(self) -> None:
        if self.n_rows == 0:
            return
        wg = self.params["wg"]
        pt = PARTITION_THREADS[self.target]
        n_boundaries = self.n_tiles + 1
        self.partition[blocks_for(-(-n_boundaries // pt), self.target, pt), pt, self.stream](
            self.d_indptr, self.n_rows, self.nnz, self.d_tile_row, self.d_tile_k, n_boundaries, self.d_y)
        self.spmv_tiles[blocks_for(self.n_tiles, self.target, wg), wg, self.stream](
            self.d_indptr, self.d_indices, self.d_values, self.d_x, self.d_y, self.d_tile_row, self.d_tile_k,
            self.n_rows, self.n_tiles)

    def release(self) -> None:
        super().release()
        self.d_tile_row = self.d_tile_k = None


def make(problem, params, target):
    return MergeExecution(problem, params, target)


def ptx_kernels(variant):
    """The PTX check's kernels (:mod:`kernels.run.ptx_check`): the partition and the tiles."""
    out = []
    for wg, ipt, v, i in ((128, 7, "float64", "int32"), (256, 5, "float32", "int64")):
        partition, tiles = merge_kernels(wg, ipt, v, i)
        out += [(f"spmv gpu-merge partition[{v} {i}]", partition, None),
                (f"spmv gpu-merge tiles[wg={wg} ipt={ipt} {v} {i}]", tiles, None)]
    return out
