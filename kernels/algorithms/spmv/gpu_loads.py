"""Streaming loads for the matrix entries: how the matrix and the ``x`` gathers share the L2.

A CSR product reads every matrix entry once (a stream of ``12 nnz`` bytes in fp64) and gathers
``x[col]`` for each entry. On a matrix with random columns the gathers bound the product: on an
H200, every SpMV kernel we profiled (cuSPARSE's too) ran at 93-97 % of the L2's throughput
with an L2 hit rate of 45-53 % (Nsight Compute; ``benchmarks/diag/spmv_powerlaw_bins.py``),
although ``x`` (32 MB at 4M columns) would nearly fit in the 50 MB L2: the matrix lines, each
used once, push ``x``'s lines out, and every missed gather costs a DRAM access and more L2 work.

Loading the entries with ``ld.global.cs`` ("cache streaming, likely accessed once": the lines
are allocated evict-first in L1 and L2) keeps more of ``x`` cached. Measured on the H200 with
the 10^8-entry power-law matrix: L2 hit rate 44.8 % -> 51.7 %, ``gpu-adaptive`` (stream mode)
1.079 -> 0.949 ms. It is not free everywhere: where a thread group reads a row's entries over
several load instructions (``gpu-adaptive``'s group mode on rows longer than the group), the
lines are reused from L1 between instructions, and evict-first loses them: the 27-point
stencil went 0.399 -> 0.443 ms. Hence the kernels choose per code path (see ``gpu_adaptive``).

An L2 ``evict_last`` policy on the ``x`` gathers (``createpolicy`` + ``L2::cache_hint``) was
tried too and gained nothing over streaming loads alone (0.954 against 0.949 ms), so it is
not offered.

Under the CUDA simulator (no caches, no inline PTX) a streaming load is plain indexing.
"""

from __future__ import annotations

from numba import cuda


def make_entry_load(streaming: bool, hardware: bool):
    """A device function ``load(array, i)`` returning ``array[i]``: through ``ld.global.cs``
    when ``streaming`` on a real GPU, plain indexing otherwise."""
    if streaming and hardware:
        def streamed(array, i):
            return cuda.ldcs(array, i)

        return cuda.jit(device=True)(streamed)

    def plain(array, i):
        return array[i]

    return cuda.jit(device=True)(plain)
