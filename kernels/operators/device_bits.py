"""``float_bits(x)``: a float64's IEEE bit pattern as an int64, inside a kernel; ``bits_float(b)``
the way back (to read a distance through an atomic on its int64 view, which L1 cannot serve stale).

For non-negative doubles (and +inf) the order of the bit patterns, read as signed int64, is the
order of the values, so an ``atomicMin`` on the int64 view of a distance array is a float64
atomic min in one native instruction -- numba's float64 ``atomic.min`` is a compare-and-swap
loop (a load, then at least one CAS: two or more dependent memory round trips, more under
contention). Only for values >= +0.0: -0.0 and negatives would order wrongly.

numba's ``intrinsic`` has no CUDA-simulator form; there the same name is NumPy's view.
"""

from __future__ import annotations

import numpy as np

from kernels.measure.targets import simulator_enabled

if simulator_enabled():
    def float_bits(x):
        return np.float64(x).view(np.int64)

    def bits_float(b):
        return np.int64(b).view(np.float64)
else:
    from llvmlite import ir
    from numba.cuda import types
    from numba.cuda.extending import intrinsic

    def _bitcast(source, result, llvm_result):
        """An intrinsic reinterpreting a ``source`` value's 64 bits as ``result`` (no conversion)."""

        def typer(typingctx, x):
            if x != source:
                return None

            def codegen(context, builder, sig, args):
                return builder.bitcast(args[0], llvm_result)

            return result(source), codegen

        typer.__name__ = f"bitcast_{source}_to_{result}"
        return intrinsic(typer)

    float_bits = _bitcast(types.float64, types.int64, ir.IntType(64))
    bits_float = _bitcast(types.int64, types.float64, ir.DoubleType())
