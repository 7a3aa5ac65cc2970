"""numba.cuda kernels of the GPU Floyd–Warshall variants, built by cached factories.

Each factory closes over its launch constants (tile side, threads per block, stage length,
whether predecessors are kept, the float type), so shared and local array sizes and the
per-thread loops are compile-time constants, the way the report's C code used macros.

Tile ownership. In the tiled kernels a block of ``TPB`` threads works on a T x T tile and
each thread owns ``E = T² / TPB`` elements: a micro-tile of RM x CM elements, rows
``ty + a·TY`` and columns ``tx + b·TX`` (strided, so that the 32 lanes of a warp read 32
consecutive columns of the row tile and one broadcast element of the column tile). For a
k-step a thread loads RM + CM values from shared memory and performs RM·CM relaxations.

Races. A k-step of Floyd–Warshall never changes row k or column k unless ``d[k][k] < 0``,
so threads may read them while their owners "update" them; with a negative cycle the values
read are still lengths of real walks, and the diagonal check afterwards still sees it.
"""

from __future__ import annotations

from functools import cache

# imported at module level on purpose: the CUDA simulator swaps the module-global ``cuda`` of a
# kernel for its fake one (this module itself is only imported once a target is chosen)
import numba
from numba import cuda, int32
from numba.core import config

from kernels.cuda.jit import jit as kernel_jit


def micro_tile(elements: int) -> tuple[int, int]:
    """RM x CM with RM·CM = elements (a power of two), as square as possible, RM >= CM."""
    rows = 1
    while rows * rows < elements:
        rows *= 2
    return rows, elements // rows


def device_function_options() -> dict:
    """Force NVVM to inline the per-thread helpers (their local arrays then stay in registers);
    the simulator's ``cuda.jit`` does not know the option."""
    return {} if config.ENABLE_CUDASIM else {"forceinline": True}


def _numba_float(dtype_name: str):
    return numba.float64 if dtype_name == "fp64" else numba.float32


@cache
def naive_kernel(with_pred: bool):
    """One k-step over all (i, j): thread x owns column j, rows are strided over grid y."""
    WITH_PRED = with_pred

    @kernel_jit
    def fw_step(d, p, n, k):
        j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if j >= n:
            return
        dkj = d[k, j]
        pkj = p[k, j] if WITH_PRED else 0
        i = cuda.blockIdx.y
        while i < n:
            c = d[i, k] + dkj
            if c < d[i, j]:
                d[i, j] = c
                if WITH_PRED:
                    p[i, j] = pkj
            i += cuda.gridDim.y

    return fw_step


@cache
def tiled_kernels(tile: int, threads: int, with_pred: bool, dtype_name: str, stage: int = 0):
    """(phase1, phase2, phase3) of the 3-phase tiled Floyd–Warshall on an N x N matrix with
    N a multiple of ``tile``. ``stage = 0``: phase 3 loads whole dependency tiles; ``stage = s``:
    it loads s columns / rows of them at a time (the staged variant)."""
    T = tile
    TPB = threads
    E = T * T // TPB
    RM, CM = micro_tile(E)
    TY = T // RM
    TX = T // CM
    assert TY * TX == TPB and RM * CM == E
    WITH_PRED = with_pred
    PT = T if with_pred else 1          # predecessor tiles shrink to 1 x 1 when unused
    PE = E if with_pred else 1
    S = stage
    PS = S if with_pred else 1
    # Shared tiles read down a column (d[i][k] for several i in one warp) get one spare column,
    # so that rows i and i+1 fall in different banks.
    TP = T + 1
    SP = S + 1
    FLOAT = _numba_float(dtype_name)
    INLINE = device_function_options()

    @kernel_jit
    def phase1(d, p, r):
        """The diagonal tile (r, r): depends only on itself."""
        sd = cuda.shared.array((T, TP), FLOAT)
        sp = cuda.shared.array((PT, PT), int32)
        tid = cuda.threadIdx.x
        base = r * T
        for idx in range(tid, T * T, TPB):
            a = idx // T
            b = idx - a * T
            sd[a, b] = d[base + a, base + b]
            if WITH_PRED:
                sp[a, b] = p[base + a, base + b]
        cuda.syncthreads()
        ty = tid // TX
        tx = tid - ty * TX
        for k in range(T):
            for a in range(RM):
                i = ty + a * TY
                dik = sd[i, k]
                for b in range(CM):
                    j = tx + b * TX
                    c = dik + sd[k, j]
                    if c < sd[i, j]:
                        sd[i, j] = c
                        if WITH_PRED:
                            sp[i, j] = sp[k, j]
            cuda.syncthreads()
        for idx in range(tid, T * T, TPB):
            a = idx // T
            b = idx - a * T
            d[base + a, base + b] = sd[a, b]
            if WITH_PRED:
                p[base + a, base + b] = sp[a, b]

    @kernel_jit
    def phase2(d, p, r):
        """The tiles of row r (blockIdx.y == 0) and column r (== 1): they depend on the diagonal."""
        other = cuda.blockIdx.x
        if other == r:
            return
        sdiag = cuda.shared.array((T, TP), FLOAT)
        sown = cuda.shared.array((T, TP), FLOAT)
        spdiag = cuda.shared.array((PT, PT), int32)
        spown = cuda.shared.array((PT, PT), int32)
        tid = cuda.threadIdx.x
        base = r * T
        row_tile = cuda.blockIdx.y == 0
        if row_tile:
            oi = base
            oj = other * T
        else:
            oi = other * T
            oj = base
        for idx in range(tid, T * T, TPB):
            a = idx // T
            b = idx - a * T
            sdiag[a, b] = d[base + a, base + b]
            sown[a, b] = d[oi + a, oj + b]
            if WITH_PRED:
                spdiag[a, b] = p[base + a, base + b]
                spown[a, b] = p[oi + a, oj + b]
        cuda.syncthreads()
        ty = tid // TX
        tx = tid - ty * TX
        if row_tile:  # d[i][j] via k: d[i][k] from the diagonal, d[k][j] from this tile
            for k in range(T):
                for a in range(RM):
                    i = ty + a * TY
                    dik = sdiag[i, k]
                    for b in range(CM):
                        j = tx + b * TX
                        c = dik + sown[k, j]
                        if c < sown[i, j]:
                            sown[i, j] = c
                            if WITH_PRED:
                                spown[i, j] = spown[k, j]
                cuda.syncthreads()
        else:  # d[i][k] from this tile, d[k][j] (and its predecessor) from the diagonal
            for k in range(T):
                for a in range(RM):
                    i = ty + a * TY
                    dik = sown[i, k]
                    for b in range(CM):
                        j = tx + b * TX
                        c = dik + sdiag[k, j]
                        if c < sown[i, j]:
                            sown[i, j] = c
                            if WITH_PRED:
                                spown[i, j] = spdiag[k, j]
                cuda.syncthreads()
        for idx in range(tid, T * T, TPB):
            a = idx // T
            b = idx - a * T
            d[oi + a, oj + b] = sown[a, b]
            if WITH_PRED:
                p[oi + a, oj + b] = spown[a, b]

    @cuda.jit(device=True, **INLINE)
    def relax_k(sa, ka, sb, kb, spb, ty, tx, own, ownp, bk):
        """One k-step of the register tile: d[i][j] = min(d[i][j], A[i][ka] + B[kb][j])."""
        for b in range(CM):
            bk[b] = sb[kb, tx + b * TX]
        for a in range(RM):
            aik = sa[ty + a * TY, ka]
            for b in range(CM):
                e = a * CM + b
                c = aik + bk[b]
                if WITH_PRED:
                    if c < own[e]:
                        own[e] = c
                        ownp[e] = spb[kb, tx + b * TX]
                else:
                    own[e] = min(own[e], c)

    @cuda.jit(device=True, **INLINE)
    def load_own(d, p, oi, oj, ty, tx, own, ownp):
        for a in range(RM):
            for b in range(CM):
                own[a * CM + b] = d[oi + ty + a * TY, oj + tx + b * TX]
                if WITH_PRED:
                    ownp[a * CM + b] = p[oi + ty + a * TY, oj + tx + b * TX]

    @cuda.jit(device=True, **INLINE)
    def store_own(d, p, oi, oj, ty, tx, own, ownp):
        for a in range(RM):
            for b in range(CM):
                d[oi + ty + a * TY, oj + tx + b * TX] = own[a * CM + b]
                if WITH_PRED:
                    p[oi + ty + a * TY, oj + tx + b * TX] = ownp[a * CM + b]

    @kernel_jit
    def phase3_tiles(d, p, r):
        """Every tile outside row and column r: A = tile (I, r) and B = tile (r, J) are final,
        so they are loaded whole into shared memory once; the own tile stays in registers."""
        bi = cuda.blockIdx.y
        bj = cuda.blockIdx.x
        if bi == r or bj == r:
            return
        sa = cuda.shared.array((T, TP), FLOAT)
        sb = cuda.shared.array((T, T), FLOAT)
        spb = cuda.shared.array((PT, PT), int32)
        own = cuda.local.array(E, FLOAT)
        ownp = cuda.local.array(PE, int32)
        bk = cuda.local.array(CM, FLOAT)
        tid = cuda.threadIdx.x
        base = r * T
        oi = bi * T
        oj = bj * T
        for idx in range(tid, T * T, TPB):
            a = idx // T
            b = idx - a * T
            sa[a, b] = d[oi + a, base + b]
            sb[a, b] = d[base + a, oj + b]
            if WITH_PRED:
                spb[a, b] = p[base + a, oj + b]
        ty = tid // TX
        tx = tid - ty * TX
        load_own(d, p, oi, oj, ty, tx, own, ownp)
        cuda.syncthreads()
        for k in range(T):
            relax_k(sa, k, sb, k, spb, ty, tx, own, ownp, bk)
        store_own(d, p, oi, oj, ty, tx, own, ownp)

    @kernel_jit
    def phase3_staged(d, p, r):
        """As phase3_tiles, but A's columns and B's rows come in stages of S k-values, so
        shared memory holds 2·T·S values instead of 2·T²."""
        bi = cuda.blockIdx.y
        bj = cuda.blockIdx.x
        if bi == r or bj == r:
            return
        sa = cuda.shared.array((T, SP), FLOAT)
        sb = cuda.shared.array((S, T), FLOAT)
        spb = cuda.shared.array((PS, PT), int32)
        own = cuda.local.array(E, FLOAT)
        ownp = cuda.local.array(PE, int32)
        bk = cuda.local.array(CM, FLOAT)
        tid = cuda.threadIdx.x
        base = r * T
        oi = bi * T
        oj = bj * T
        ty = tid // TX
        tx = tid - ty * TX
        load_own(d, p, oi, oj, ty, tx, own, ownp)
        for k0 in range(0, T, S):
            cuda.syncthreads()  # everyone is done with the previous stage
            for idx in range(tid, T * S, TPB):
                a = idx // S
                kk = idx - a * S
                sa[a, kk] = d[oi + a, base + k0 + kk]
                kr = idx // T
                b = idx - kr * T
                sb[kr, b] = d[base + k0 + kr, oj + b]
                if WITH_PRED:
                    spb[kr, b] = p[base + k0 + kr, oj + b]
            cuda.syncthreads()
            for kk in range(S):
                relax_k(sa, kk, sb, kk, spb, ty, tx, own, ownp, bk)
        store_own(d, p, oi, oj, ty, tx, own, ownp)

    return phase1, phase2, (phase3_staged if S else phase3_tiles)


def ptx_kernels(variant):
    """The PTX check's kernels (:mod:`kernels.run.ptx_check`) of ``variant`` (gpu-fw-naive, -blocked
    or -staged), with and without predecessors, fp64 and fp32, for the argument types the
    schedule passes (the working matrices and the round or step)."""
    import numpy as np
    from numba import types

    from kernels.algorithms.apsp.problem import PRED_DTYPE
    from kernels.cuda.jit import array_type

    pred, n = array_type(PRED_DTYPE, 2), types.int64
    no_pred = array_type(PRED_DTYPE, 2)            # a (1, 1) matrix without predecessors: the same type
    out = []
    for dtype_name, dtype in (("fp64", np.float64), ("fp32", np.float32)):
        d = array_type(dtype, 2)
        for with_pred in (False, True):
            tag = f"{dtype_name}{' predecessors' if with_pred else ''}"
            p = pred if with_pred else no_pred
            if variant.name == "gpu-fw-naive":
                out.append((f"apsp gpu-fw-naive[{tag}]", naive_kernel(with_pred), (d, p, n, n)))
                continue
            stage = 8 if variant.name == "gpu-fw-staged" else 0
            for tile, threads in ((32, 256), (16, 64)):
                kernels = tiled_kernels(tile, threads, with_pred, dtype_name, stage)
                out += [(f"apsp {variant.name} phase {i + 1}[tile={tile} threads={threads} {tag}]", k, (d, p, n))
                        for i, k in enumerate(kernels)]
    return out
