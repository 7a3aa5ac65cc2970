"""The GPU's global nanosecond timer, read inside a kernel (``%globaltimer``), for diagnostics.

Used by kernels built with tracing on (see :mod:`kernels.algorithms.traversal.device_loop`) to
stamp the phases of a persistent loop per block: a CUDA event brackets the whole launch, not
what one block spends between two grid syncs. The timer is shared by all SMs, so stamps of
different blocks compare. Under the CUDA simulator the same name returns the host's
``perf_counter_ns`` (numba's ``intrinsic`` has no simulator form).
"""

from __future__ import annotations

import time

from kernels.measure.targets import simulator_enabled

if simulator_enabled():
    def globaltimer():
        return time.perf_counter_ns()
else:
    from llvmlite import ir
    from numba.cuda import types
    from numba.cuda.extending import intrinsic

    @intrinsic
    def globaltimer(typingctx):
        sig = types.int64()

        def codegen(context, builder, sig, args):
            # side_effect: two reads must not be merged or moved across the code they bracket
            read = ir.InlineAsm(ir.FunctionType(ir.IntType(64), []), "mov.u64 $0, %globaltimer;", "=l",
                                side_effect=True)
            return builder.call(read, [])

        return sig, codegen
