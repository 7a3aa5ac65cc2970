"""GPU Dijkstra, one thread per source (the report's section 5.1).

Each thread runs a whole single-source Dijkstra with its own priority queue in global
scratch: O(n) words per thread, n² in all (checked against free device memory first).
Scratch is *interleaved*: element v of thread s lives at ``[v, s]``, so when the threads of a
warp touch "their" element v, the accesses are neighbouring words. The distances are
therefore computed transposed and a tiled transpose kernel writes the row-major output
(it is part of the timed kernel work).

Two queues (parameter ``queue``):

* ``heap``: an indexed binary heap with decrease-key (keys, vertices and each vertex's heap
  position), O((n + m) log n) per source, but every thread follows its own path through it;
* ``array``: the distance array itself with a "settled" flag, scanned for the minimum,
  O(n² + m) per source; all threads scan the same v at the same time, fully coalesced.
"""

from __future__ import annotations

import math
from functools import cache

import numba
import numpy as np
from numba import cuda, int32  # module level: the CUDA simulator swaps this module's ``cuda``
from numba.core import config

from kernels.algorithms.apsp.memory import check_device
from kernels.algorithms.apsp.problem import PRED_BYTES, PRED_DTYPE
from kernels.algorithms.execution import Execution
from kernels.cuda.jit import jit as kernel_jit

INF = math.inf
SETTLED = -2
OUTSIDE = -1
TRANSPOSE_TILE = 32
TRANSPOSE_ROWS = 8


@cache
def dijkstra_kernel(queue: str, with_pred: bool):
    WITH_PRED = with_pred

    @kernel_jit
    def heap_dijkstra(indptr, indices, weights, n, dist_t, key, vert, pos, pred_t):
        s = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if s >= n:
            return
        for v in range(n):
            dist_t[v, s] = INF
            pos[v, s] = OUTSIDE
            if WITH_PRED:
                pred_t[v, s] = -1
        dist_t[s, s] = 0
        key[0, s] = 0
        vert[0, s] = s
        pos[s, s] = 0
        size = 1
        while size > 0:
            u = vert[0, s]
            du = key[0, s]
            pos[u, s] = SETTLED
            size -= 1
            if size > 0:  # move the last entry to the root and sift it down
                lk = key[size, s]
                lv = vert[size, s]
                x = 0
                while True:
                    c = 2 * x + 1
                    if c >= size:
                        break
                    if c + 1 < size and key[c + 1, s] < key[c, s]:
                        c += 1
                    if key[c, s] >= lk:
                        break
                    key[x, s] = key[c, s]
                    cv = vert[c, s]
                    vert[x, s] = cv
                    pos[cv, s] = x
                    x = c
                key[x, s] = lk
                vert[x, s] = lv
                pos[lv, s] = x
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                x = pos[v, s]
                if x == SETTLED:
                    continue
                nd = du + weights[e]
                if nd < dist_t[v, s]:
                    dist_t[v, s] = nd
                    if WITH_PRED:
                        pred_t[v, s] = u
                    if x == OUTSIDE:  # insert at the end, then sift up (decrease-key otherwise)
                        x = size
                        size += 1
                    while x > 0:
                        parent = (x - 1) // 2
                        pk = key[parent, s]
                        if pk <= nd:
                            break
                        key[x, s] = pk
                        pv = vert[parent, s]
                        vert[x, s] = pv
                        pos[pv, s] = x
                        x = parent
                    key[x, s] = nd
                    vert[x, s] = v
                    pos[v, s] = x

    @kernel_jit
    def array_dijkstra(indptr, indices, weights, n, dist_t, settled, pred_t):
        s = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if s >= n:
            return
        for v in range(n):
            dist_t[v, s] = INF
            settled[v, s] = 0
            if WITH_PRED:
                pred_t[v, s] = -1
        dist_t[s, s] = 0
        for _ in range(n):
            u = -1
            best = INF
            for v in range(n):  # every thread scans the same v: coalesced
                if settled[v, s] == 0:
                    dv = dist_t[v, s]
                    if dv < best:
                        best = dv
                        u = v
            if u < 0:
                break
            settled[u, s] = 1
            du = dist_t[u, s]
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                nd = du + weights[e]
                if nd < dist_t[v, s]:
                    dist_t[v, s] = nd
                    if WITH_PRED:
                        pred_t[v, s] = u

    return heap_dijkstra if queue == "heap" else array_dijkstra


@cache
def transpose_kernel(type_name: str):
    ELEMENT = {"fp64": numba.float64, "fp32": numba.float32, "int32": int32}[type_name]
    TILE = TRANSPOSE_TILE
    PADDED = TRANSPOSE_TILE + 1  # one spare column: the column reads hit 32 different banks
    ROWS = TRANSPOSE_ROWS

    @kernel_jit
    def transpose(src, dst):
        """dst[j, i] = src[i, j] through a padded shared tile (both sides coalesced)."""
        tile = cuda.shared.array((TILE, PADDED), ELEMENT)
        bx = cuda.blockIdx.x * TILE
        by = cuda.blockIdx.y * TILE
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        rows = src.shape[0]
        cols = src.shape[1]
        for r in range(ty, TILE, ROWS):
            i = by + r
            j = bx + tx
            if i < rows and j < cols:
                tile[r, tx] = src[i, j]
        cuda.syncthreads()
        for r in range(ty, TILE, ROWS):
            i = bx + r
            j = by + tx
            if i < cols and j < rows:
                dst[i, j] = tile[tx, r]

    return transpose


def _transpose(kernel, src, dst, stream=0) -> None:
    rows, cols = src.shape
    grid = (-(-cols // TRANSPOSE_TILE), -(-rows // TRANSPOSE_TILE))
    kernel[grid, (TRANSPOSE_TILE, TRANSPOSE_ROWS), stream](src, dst)


class GpuDijkstra(Execution):
    # one search kernel and one or two transposes, all on self.stream
    capturable = True

    def __init__(self, problem, params):
        d = self.data = problem.data
        self.problem = problem
        self.n = n = d["n"]
        self.queue = params["queue"]
        self.threads = 32 * params["warps_per_block"]
        self.with_pred = d["predecessors"]
        item = np.dtype(d["dtype"]).itemsize
        queue_bytes = item + 4 + 4 if self.queue == "heap" else 1  # keys, vertices, positions | flags
        per_pair = 2 * item + queue_bytes + (2 * PRED_BYTES if self.with_pred else 0)
        fixed = d["indptr"].nbytes + d["indices"].nbytes + d["weights"].nbytes
        check_device("gpu-dijkstra", n, per_pair,
                     f"transposed and final distances, the {self.queue} scratch of every thread"
                     + (", transposed and final predecessors" if self.with_pred else ""), fixed=fixed)
        self.device_bytes = int(per_pair * n * n + fixed)

    def compile(self) -> None:
        kernel = dijkstra_kernel(self.queue, self.with_pred)
        dtype_name = self.data["dtype_name"]
        transposes = (transpose_kernel(dtype_name), transpose_kernel("int32"))
        if config.ENABLE_CUDASIM:
            return
        d = self.data
        tiny = (np.array([0, 1, 1], dtype=np.int64), np.array([1], dtype=np.int32), np.ones(1, dtype=d["dtype"]))
        arrays = self._allocate(2, tiny)
        self._run(kernel, transposes, arrays, 2)
        cuda.synchronize()

    def _allocate(self, n: int, csr) -> dict:
        dtype = self.data["dtype"]
        a = {"indptr": cuda.to_device(csr[0]), "indices": cuda.to_device(csr[1]),
             "weights": cuda.to_device(csr[2]),
             "dist_t": cuda.device_array((n, n), dtype=dtype), "dist": cuda.device_array((n, n), dtype=dtype)}
        pred_shape = (n, n) if self.with_pred else (1, 1)
        a["pred_t"] = cuda.device_array(pred_shape, dtype=PRED_DTYPE)
        a["pred"] = cuda.device_array(pred_shape, dtype=PRED_DTYPE)
        if self.queue == "heap":
            a["key"] = cuda.device_array((n, n), dtype=dtype)
            a["vert"] = cuda.device_array((n, n), dtype=np.int32)
            a["pos"] = cuda.device_array((n, n), dtype=np.int32)
        else:
            a["settled"] = cuda.device_array((n, n), dtype=np.uint8)
        return a

    def _run(self, kernel, transposes, a: dict, n: int) -> None:
        grid = max(1, -(-n // self.threads))
        if self.queue == "heap":
            kernel[grid, self.threads, self.stream](a["indptr"], a["indices"], a["weights"], n, a["dist_t"],
                                                    a["key"], a["vert"], a["pos"], a["pred_t"])
        else:
            kernel[grid, self.threads, self.stream](a["indptr"], a["indices"], a["weights"], n, a["dist_t"],
                                                    a["settled"], a["pred_t"])
        _transpose(transposes[0], a["dist_t"], a["dist"], self.stream)
        if self.with_pred:
            _transpose(transposes[1], a["pred_t"], a["pred"], self.stream)

    def upload(self) -> None:
        d = self.data
        self.arrays = self._allocate(self.n, (d["indptr"], d["indices"], d["weights"]))

    def launch(self) -> None:
        transposes = (transpose_kernel(self.data["dtype_name"]), transpose_kernel("int32"))
        self._run(dijkstra_kernel(self.queue, self.with_pred), transposes, self.arrays, self.n)

    def synchronize(self) -> None:
        cuda.synchronize()

    def download(self):
        dist = self.arrays["dist"].copy_to_host()
        if not self.with_pred:
            return dist
        return {"dist": dist, "pred": self.arrays["pred"].copy_to_host()}

    def release(self) -> None:
        self.arrays = None


def ptx_kernels(variant):
    """The PTX check's kernels (:mod:`kernels.run.ptx_check`): both queues with and without
    predecessors, fp64 and fp32, and the transposes, for the argument types ``_run`` passes."""
    import numpy as np
    from numba import types

    from kernels.cuda.jit import array_type

    i64, i32, n = array_type(np.int64), array_type(np.int32), types.int64
    pred, u8 = array_type(PRED_DTYPE, 2), array_type(np.uint8, 2)
    out = []
    for dtype_name, dtype in (("fp64", np.float64), ("fp32", np.float32)):
        w, d = array_type(dtype), array_type(dtype, 2)
        for with_pred in (False, True):
            tag = f"{dtype_name}{' predecessors' if with_pred else ''}"
            out += [(f"apsp gpu-dijkstra heap[{tag}]", dijkstra_kernel("heap", with_pred),
                     (i64, i32, w, n, d, d, array_type(np.int32, 2), array_type(np.int32, 2), pred)),
                    (f"apsp gpu-dijkstra array[{tag}]", dijkstra_kernel("array", with_pred),
                     (i64, i32, w, n, d, u8, pred))]
        out.append((f"apsp transpose[{dtype_name}]", transpose_kernel(dtype_name), (d, d)))
    out.append(("apsp transpose[int32]", transpose_kernel("int32"), (pred, pred)))
    return out
