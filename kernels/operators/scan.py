"""Device exclusive scan: block scans, a scan of the block sums, and an add pass.

``exclusive_scan(load, args, n, out, total)`` writes ``out[i] = sum(load(k) for k < i)``
(int64) and ``total[0] = sum(load(k) for k < n)``, all in device memory. ``load(i, args)`` is a
device function, so an operator can compute the scanned values on the fly (the advance's
"locate the list, return its degree"; the filter's "evaluate the predicate, return 0/1")
instead of writing them out first.

How: a block of ``block`` threads scans a chunk of ``block * ipt`` items -- coalesced loads
into shared memory, each thread sums its ``ipt`` consecutive items, a Hillis–Steele scan of
the thread sums (``log2(block)`` steps with ``syncthreads``), then each thread writes its
running sums. The chunk totals are scanned the same way (one block covers 4096 chunk totals
on a GPU, so that level is a single launch up to 8 M items), and an add pass gives each
chunk its offset. One launch when ``n`` fits one chunk, three otherwise. Everything uses
shared memory and ``syncthreads`` only, so it runs under the CUDA simulator too.
"""

from __future__ import annotations

import functools

from numba import cuda, int64

from kernels.cuda.fast_launch import fast
from kernels.cuda.jit import jit as kernel_jit
from kernels.operators.launch import Workspace, for_target, grid_for, on_simulator

# (threads per block, items per thread) of the first level and of the block-sum levels
# (shared memory: block * ipt int64 items + block sums, under the 48 KB static limit)
FIRST_LEVEL = {"cuda": (256, 8), "sim": (16, 2)}
SUM_LEVEL = {"cuda": (1024, 4), "sim": (16, 2)}



@cuda.jit(device=True)
def load_array(i, args):
    """``load`` for scanning a plain array: ``args = (array,)``."""
    return int64(args[0][i])


@functools.cache
def scan_pass(load, block: int, ipt: int):
    """The block-scan kernel for ``load``: ``kernel(args, n, out, chunk_sums, total)``."""
    chunk = block * ipt

    def kernel(args, n, out, chunk_sums, total):
        items = cuda.shared.array(chunk, int64)
        sums = cuda.shared.array(block, int64)
        t = cuda.threadIdx.x
        n_chunks = (n + chunk - 1) // chunk
        for c in range(cuda.blockIdx.x, n_chunks, cuda.gridDim.x):
            start = c * chunk
            for u in range(ipt):               # coalesced: thread t loads t, t + block, ...
                k = u * block + t
                i = start + k
                items[k] = load(i, args) if i < n else int64(0)
            cuda.syncthreads()
            own = int64(0)
            for u in range(ipt):               # this thread's ipt consecutive items
                own += items[t * ipt + u]
            sums[t] = own
            cuda.syncthreads()
            step = 1
            while step < block:                # Hillis-Steele inclusive scan of the thread sums
                x = sums[t - step] if t >= step else int64(0)
                cuda.syncthreads()
                sums[t] += x
                cuda.syncthreads()
                step *= 2
            running = sums[t] - own
            for u in range(ipt):
                k = t * ipt + u
                v = items[k]
                items[k] = running
                running += v
            cuda.syncthreads()
            for u in range(ipt):
                k = u * block + t
                i = start + k
                if i < n:
                    out[i] = items[k]
            if t == block - 1:
                chunk_sums[c] = sums[t]
                if n_chunks == 1:
                    total[0] = sums[t]
            cuda.syncthreads()                 # shared arrays are reused by the next chunk

    return fast(kernel_jit(kernel))


@functools.cache
def add_pass(chunk: int):
    def kernel(out, n, chunk_offsets):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            out[i] += chunk_offsets[i // chunk]

    return fast(kernel_jit(kernel))


@functools.cache
def _zero_total():
    def kernel(total):
        if cuda.grid(1) == 0:
            total[0] = 0

    return fast(kernel_jit(kernel))


def exclusive_scan(load, args, n: int, out, total, workspace: Workspace, *, level: int = 0,
                   shape: tuple[int, int] | None = None) -> None:
    """Exclusive scan of ``load(i, args)`` for ``i < n`` into ``out`` (int64, device) and the
    sum into ``total[0]``. Queued on the default stream; nothing is read back."""
    n = int(n)
    if n <= 0:
        _zero_total()[1, 1](total)
        return
    block, ipt = shape or for_target(FIRST_LEVEL)
    chunk = block * ipt
    n_chunks = -(-n // chunk)
    sums = workspace.get(f"scan.sums.{level}", "int64", n_chunks)
    scan_pass(load, block, ipt)[grid_for(n_chunks * block, block), block](args, n, out, sums, total)
    if n_chunks > 1:
        offsets = workspace.get(f"scan.offsets.{level}", "int64", n_chunks)
        exclusive_scan(load_array, (sums,), n_chunks, offsets, total, workspace, level=level + 1,
                       shape=for_target(SUM_LEVEL))
        add_block = 256 if not on_simulator() else 16
        add_pass(chunk)[grid_for(n, add_block), add_block](out, n, offsets)


def scan_array(values, n: int, out, total, workspace: Workspace) -> None:
    """Exclusive scan of a device array (int32 or int64 values)."""
    exclusive_scan(load_array, (values,), n, out, total, workspace)
