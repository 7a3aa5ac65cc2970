"""``kernels.cuda.jit``: ``numba.cuda.jit`` for the project's kernels, with the disk cache.

It takes what ``numba.cuda.jit`` takes (a function, a signature or a list of them, options such
as ``max_registers``) and returns numba's own dispatcher, with one difference on a real GPU:
the dispatcher's cache is :class:`~kernels.cuda.kernel_cache.KernelDiskCache`, so a kernel
compiled once by any process of the host (a compile-ahead process, an earlier sweep, the GUI's
worker) is loaded instead of compiled. Under the CUDA simulator, and for device functions
(compiled into the kernels that call them), it is ``numba.cuda.jit`` unchanged.

Every kernel dispatcher made here is remembered (weakly) so that a compile-ahead process can
compile, for the kernels a cell created, the signatures its variant launched them with
(:func:`dispatchers`, :mod:`kernels.compute.precompile`).
"""

from __future__ import annotations

import contextlib
import weakref

_DISPATCHERS: weakref.WeakSet = weakref.WeakSet()
#: inside :func:`signatures_deferred`: kernels given a signature are not compiled here
_DEFERRED = False


@contextlib.contextmanager
def signatures_deferred():
    """Kernels made with a signature inside this block are not compiled for the device: their
    dispatchers stay lazy and keep the argument types they declare in ``declared_signatures``.
    The PTX check (:mod:`kernels.run.ptx_check`) builds the variants' kernels so and compiles
    those signatures to PTX, without a device to compile for."""
    global _DEFERRED
    before, _DEFERRED = _DEFERRED, True
    try:
        yield
    finally:
        _DEFERRED = before


def array_type(dtype, ndim: int = 1):
    """numba's type of a C-contiguous ``ndim``-dimensional array of ``dtype`` (what a device
    array of that dtype passes to a kernel): argument types for the PTX check."""
    import numba
    import numpy as np

    return numba.typeof(np.zeros((2,) * ndim, dtype=dtype))


def dispatchers() -> list:
    """The kernel dispatchers this process made through :func:`jit` and still holds."""
    return list(_DISPATCHERS)


def _simulated() -> bool:
    from kernels.measure.targets import simulator_enabled

    return simulator_enabled()


def _is_signature(value) -> bool:
    from numba.core import sigutils

    return isinstance(value, list) or sigutils.is_signature(value)


def jit(func_or_sig=None, **options):
    """As ``numba.cuda.jit``; kernels get the disk cache (see the module)."""
    from numba import cuda

    if _simulated() or options.get("device") or options.get("cache"):
        return cuda.jit(func_or_sig, **options)
    if func_or_sig is None:
        return lambda func: jit(func, **options)
    if _is_signature(func_or_sig):
        signatures = func_or_sig if isinstance(func_or_sig, list) else [func_or_sig]
        return lambda func: _compiled(func, signatures, specialized=not isinstance(func_or_sig, list),
                                      options=options)
    return _lazy(func_or_sig, options)


def _lazy(func, options: dict):
    """numba's lazy dispatcher (it compiles a signature at its first launch), cache installed."""
    from numba import cuda

    from kernels.cuda import kernel_cache

    dispatcher = cuda.jit(func, **options)
    store = kernel_cache.default_store()
    if store is not None:
        # the attribute numba-cuda's dispatcher consults before compiling (what cache=True sets)
        dispatcher._cache = kernel_cache.KernelDiskCache(dispatcher, store)
    _DISPATCHERS.add(dispatcher)
    return dispatcher


def _compiled(func, signatures: list, *, specialized: bool, options: dict):
    """What ``numba.cuda.jit(signature)`` does, with the cache in place before compiling."""
    from numba.core import sigutils

    dispatcher = _lazy(func, options)
    if _DEFERRED:
        dispatcher.declared_signatures = [sigutils.normalize_signature(sig)[0] for sig in signatures]
        return dispatcher
    for sig in signatures:
        argtypes, _ = sigutils.normalize_signature(sig)
        dispatcher.compile(argtypes)
    # as numba.cuda.jit(signature): one overload, found without typing the launch's arguments
    dispatcher._specialized = specialized
    dispatcher.disable_compile()
    return dispatcher
