"""Kernel launches without numba's per-launch argument marshalling.

A numba launch, ``kernel[grid, block](*args)``, costs the host 45-50 µs for ten arguments on an
H100 (``benchmarks/diag/launch_cost.py``; ``docs/benchmarks.md`` "Launches"): numba types every
argument to choose the overload, turns each device array into its seven-or-more kernel
parameters through a memory-view object, and hands the list to cuda.core, which marshals it
again. ``cuLaunchKernel`` itself takes 4.4 µs. Paths made of many short launches (a batch of
edge updates: 7 to 30 launches of 10-25 arguments, each kernel a few microseconds of GPU work)
spend their time there.

:func:`fast` wraps a kernel dispatcher in a :class:`FastKernel`, launched exactly as numba's
(``k[grid, block](*args)``, ``k[grid, block, stream, shmem](*args)``). Its first launch for a
given set of argument kinds (dtype, dimensions and contiguity of each array; the type of each
scalar) goes through numba, which compiles and launches; the overload numba chose is then
kept with a *plan*: where each argument's words go in a parameter buffer laid out as numba lays
it out (an array: meminfo, parent, size, itemsize, data pointer, shape, strides; a scalar: its
value in its own width; a tuple: its members in order). Later launches fill that buffer and
call ``cuLaunchKernel`` directly (``cuLaunchCooperativeKernel`` for a kernel with grid syncs, as
numba does: the caller keeps the grid within ``max_cooperative_grid_blocks``).

Anything the plan does not know goes through numba every time, unchanged: the CUDA simulator,
host (numpy) arguments (numba copies them to the device and back), records, kernels built in
debug mode, kernels whose code depends on the launch
configuration, extensions, and ``GRAPH_KERNELS_FAST_LAUNCH=0``. A plan belongs to the CUDA
context it was made in.

A :class:`Span` is part of a device array that costs nothing to make: numba's own slicing and
reshaping (``a[i:j].reshape(r, c)``) build two descriptor objects and a memory pointer, 20-90 µs
of host time each on an H100 host, and a path that cuts a dozen views from its buffers per call
spends more there than in its launches. A plan lays a span out from its base's pointer; the
numba path gets numba's view of it (:meth:`Span.view`), made once.
"""

from __future__ import annotations

import contextlib
import os
import struct
import threading

import numpy as np

FAST_LAUNCH_ENV = "GRAPH_KERNELS_FAST_LAUNCH"
_NUMBA = object()            # a plan's place for "numba launches these"


def enabled() -> bool:
    """Fast launches are on unless ``GRAPH_KERNELS_FAST_LAUNCH=0`` or under the simulator."""
    from kernels.measure.targets import simulator_enabled

    if simulator_enabled():
        return False
    return os.environ.get(FAST_LAUNCH_ENV, "1").strip().lower() not in ("0", "off", "no", "false")


def fast(dispatcher):
    """``dispatcher`` launched through plans (see the module); itself under the simulator."""
    if not enabled() or isinstance(dispatcher, FastKernel):
        return dispatcher
    return FastKernel(dispatcher)


_KIND = "_fast_launch_kind"          # a device array's kind and words, kept on the array itself:
_WORDS = "_fast_launch_words"        # its place, shape and strides never change after it is made
_SCALARS = (int, float, bool)


class Span:
    """Items ``offset ... offset + prod(shape)`` of the 1-D, C-contiguous numba device array
    ``base``, seen C-contiguously with ``shape``: what ``base[offset:offset + size].reshape(shape)``
    would be, for launches through plans (see the module). Kernels not launched through a plan get
    :meth:`view`."""

    __slots__ = ("base", "offset", "shape", "size", "dtype", "ndim", "_view")

    def __init__(self, base, offset: int, shape):
        shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(x) for x in shape)
        size = 1
        for extent in shape:
            size *= extent
        offset = int(offset)
        if base.ndim != 1 or (base.size > 1 and base.strides[0] != base.dtype.itemsize):
            raise ValueError(f"a span needs a contiguous 1-D device array, not one of shape {base.shape} "
                             f"and strides {base.strides}")
        if offset < 0 or min(shape, default=0) < 0 or offset + size > base.size:
            raise ValueError(f"a span of {shape} at {offset} does not fit a device array of {base.shape}")
        self.base, self.offset, self.shape, self.size = base, offset, shape, size
        self.dtype, self.ndim = base.dtype, len(shape)
        self._view = None

    @property
    def strides(self) -> tuple[int, ...]:
        out, step = [], self.dtype.itemsize
        for extent in reversed(self.shape):
            out.append(step)
            step *= extent
        return tuple(reversed(out))

    @property
    def device_pointer(self) -> int:
        return int(self.base.gpu_data.device_pointer) + self.offset * self.dtype.itemsize if self.size else 0

    def words(self) -> list[int]:
        return [0, 0, self.size, self.dtype.itemsize, self.device_pointer, *self.shape, *self.strides]

    def kind(self):
        """The :func:`arg_kind` numba's view of this span has (its layout flags depend only on
        which extents are 0, 1 or more: computed once per such pattern, as numba computes them)."""
        pattern = (self.dtype, tuple(min(extent, 2) for extent in self.shape))
        kind = _SPAN_KINDS.get(pattern)
        if kind is None:
            dummyarray = numba_dummyarray()
            itemsize = self.dtype.itemsize
            model_shape = pattern[1]
            flat = dummyarray.Array.from_desc(0, (max(int(np.prod(model_shape)), 1),), (itemsize,), itemsize)
            flat = flat[:int(np.prod(model_shape))]
            model = flat if model_shape == flat.shape else flat.reshape(*model_shape)[0]
            kind = (self.dtype, len(model_shape), model.is_c_contig, model.is_f_contig, 0 in model.strides)
            _SPAN_KINDS[pattern] = kind
        return kind

    def view(self):
        """numba's device array for this span (made on first use, then kept)."""
        if self._view is None:
            flat = self.base[self.offset:self.offset + self.size]
            self._view = flat if self.shape == flat.shape else flat.reshape(*self.shape)
        return self._view

    def copy_to_host(self):
        return self.view().copy_to_host()


_SPAN_KINDS: dict = {}


def numba_dummyarray():
    """numba-cuda's ``dummyarray`` (the descriptor arithmetic behind its device arrays' views).
    Under the simulator ``numba.cuda.cudadrv`` is a stand-in without it: the file is loaded itself
    (plain Python), so that spans can be checked against numba's layout without a device."""
    from numba.cuda.cudadrv import dummyarray

    if getattr(dummyarray, "Array", None) is not None:
        return dummyarray
    import importlib.util
    import sys
    from pathlib import Path

    import numba_cuda

    name = "_graph_kernels_numba_dummyarray"
    module = sys.modules.get(name)
    if module is None:
        path = Path(numba_cuda.__file__).parent / "numba" / "cuda" / "cudadrv" / "dummyarray.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    return module


def materialized(args: tuple) -> tuple:
    """``args`` with each :class:`Span` (also inside tuples) replaced by numba's view of it."""
    if not any(type(a) is Span or type(a) is tuple for a in args):
        return args
    return tuple(a.view() if type(a) is Span else materialized(a) if type(a) is tuple else a for a in args)


def arg_kind(value):
    """What decides the overload and the parameter layout of one argument (cheap to compute)."""
    kind = type(value)
    if kind in _SCALARS:
        return kind
    if kind is Span:
        return value.kind()
    if kind is tuple:
        return tuple(arg_kind(v) for v in value)
    if getattr(value, "__cuda_ndarray__", False):
        cached = getattr(value, _KIND, None)
        if cached is None:
            dummy = value._dummy
            cached = (value.dtype, value.ndim, dummy.is_c_contig, dummy.is_f_contig, 0 in value.strides)
            _keep(value, _KIND, cached)
        return cached
    return kind


def _keep(value, name: str, data) -> None:
    with contextlib.suppress(AttributeError):      # an array type without a __dict__: computed each time
        setattr(value, name, data)


def _plannable(value) -> bool:
    """numba's device arrays, Python and NumPy scalars, and tuples of them (not host arrays, which
    numba copies both ways, nor other libraries' device arrays)."""
    if isinstance(value, tuple):
        return all(_plannable(v) for v in value)
    if getattr(value, "__cuda_ndarray__", False):
        return hasattr(value, "gpu_data") and hasattr(value, "_dummy")
    return isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating))


# ---- the parameter layout -----------------------------------------------------------------------

def _array_words(value) -> list[int]:
    """numba's parameters of a device array: meminfo, parent, size, itemsize, data, shape, strides."""
    if type(value) is Span:
        return value.words()
    words = getattr(value, _WORDS, None)
    if words is None:
        pointer = int(value.gpu_data.device_pointer) if value.size else 0
        words = [0, 0, value.size, value.dtype.itemsize, pointer, *value.shape, *value.strides]
        _keep(value, _WORDS, words)
    return words


def _integer_word(value) -> int:
    return int(value)


def _float64_word(value) -> int:
    return struct.unpack("<q", struct.pack("<d", float(value)))[0]


def _float32_word(value) -> int:
    return struct.unpack("<i", struct.pack("<f", float(value)))[0]


def _bool_word(value) -> int:
    return 1 if value else 0


def writers(argument_types) -> list | None:
    """One writer per argument (each returns the argument's words), or ``None`` when an argument
    type is one the plan does not lay out (numba launches those)."""
    from numba.core import types

    out = []
    for ty in argument_types:
        if isinstance(ty, types.Array):
            out.append((_array_words, 5 + 2 * ty.ndim))
        elif isinstance(ty, types.Boolean):
            out.append((lambda v: [_bool_word(v)], 1))
        elif isinstance(ty, types.Integer):
            out.append((lambda v: [_integer_word(v)], 1))
        elif ty == types.float64:
            out.append((lambda v: [_float64_word(v)], 1))
        elif ty == types.float32:
            out.append((lambda v: [_float32_word(v)], 1))
        elif isinstance(ty, types.BaseTuple):
            inner = writers(list(ty))
            if inner is None:
                return None
            out.append((_tuple_writer(inner), sum(n for _, n in inner)))
        else:
            return None
    return out


def _tuple_writer(inner):
    def write(value):
        words = []
        for (writer, _), member in zip(inner, value, strict=True):
            words.extend(writer(member))
        return words

    return write


def parameter_words(argument_types, args) -> list[int] | None:
    """The kernel's parameters for ``args`` as numba lays them out, one 8-byte word each (a
    narrower scalar in the word's low bytes, little-endian), or ``None`` (see :func:`writers`)."""
    plan_writers = writers(argument_types)
    return None if plan_writers is None else _fill(plan_writers, args)


def _fill(plan_writers, args) -> list[int]:
    """The words of ``args``, argument by argument, in order."""
    words = []
    for (writer, _), value in zip(plan_writers, args, strict=True):
        words.extend(writer(value))
    return words


# ---- the launch ---------------------------------------------------------------------------------

def packing(argument_types) -> tuple[str, str] | None:
    """A ``struct`` format for the parameter buffer and one code per argument (``a`` an array,
    whose words are given; otherwise a scalar, given as it is), so that a launch writes all its
    words with one ``struct.pack_into``; ``None`` for plans with tuples (those use
    :func:`_fill`). The layout is :func:`writers`' (a narrower scalar in its word's low bytes)."""
    got = argument_formats(argument_types)
    if got is None:
        return None
    formats, codes = got
    return "<" + "".join(formats), "".join(codes)


def argument_formats(argument_types) -> tuple[list[str], str] | None:
    """Each argument's ``struct`` format (without the byte order) and code, as :func:`packing`
    joins them; ``None`` for plans with tuples."""
    from numba.core import types

    fmt, codes = [], []
    for ty in argument_types:
        if isinstance(ty, types.Array):
            fmt.append("q" * (5 + 2 * ty.ndim))
            codes.append("a")
        elif isinstance(ty, types.Boolean):
            fmt.append("?7x")
            codes.append("s")
        elif isinstance(ty, types.Integer):
            fmt.append("Q" if ty.bitwidth == 64 and not ty.signed else "q")
            codes.append("s")
        elif ty == types.float64:
            fmt.append("d")
            codes.append("s")
        elif ty == types.float32:
            fmt.append("f4x")
            codes.append("s")
        else:
            return None
    return fmt, "".join(codes)


def _parts(formats: list[str]) -> list[tuple[struct.Struct, int]]:
    """Each argument's packer and its byte offset in the parameter buffer."""
    out, offset = [], 0
    for f in formats:
        packer = struct.Struct("<" + f)
        out.append((packer, offset))
        offset += packer.size
    return out


def _mark(value):
    """What tells that an argument's words are the ones last written: an array's kept words (the
    same list object for as long as the array lives, and a list this holds cannot be given to
    another array), a span's base words, offset and shape, a scalar's type and value."""
    kind = type(value)
    if kind is Span:
        return (_array_words(value.base), value.offset, value.shape)
    if kind is float:
        return (kind, struct.pack("<d", value))     # its bits: -0.0 == 0.0, and NaN != NaN
    if kind in _SCALARS:
        return (kind, value)
    if getattr(value, "__cuda_ndarray__", False):
        return _array_words(value)
    return None


class LaunchOwner:
    """A caller of :meth:`FastKernel.launch_known`: the plan of each kernel that its last launch
    of that kernel went through (None: through numba), written by the caller's own launches only.
    With the plan's ``owner`` (who wrote its words last, set under the plan's lock) it proves the
    plan's words are the caller's last arguments; a kernel-wide "last plan" would not, where
    another thread's launch stores it late (a review found that race)."""

    __slots__ = ("plans",)

    def __init__(self):
        self.plans: dict = {}


class _Plan:
    """One overload's parameter buffer and the pointers to its words."""

    __slots__ = ("handle", "writers", "words", "pointers", "pointer_array", "context", "lock", "fmt", "codes",
                 "cooperative", "parts", "marks", "kinds", "owner")

    def __init__(self, handle, plan_writers, context: int, packed: tuple[str, str] | None = None,
                 cooperative: bool = False, formats: list[str] | None = None):
        self.handle = handle
        # a relaunch writes only the arguments whose words changed (``parts``: each argument's
        # packer and offset; ``marks``/``kinds``: what the buffer holds, per argument): a kernel of
        # 48 arguments, most of them the same buffers every call, cost 27 µs a launch here, 150 µs on
        # an H200 host, to rebuild and pack all of its words
        self.parts = _parts(formats) if formats is not None and packed is not None else None
        self.marks = None
        self.kinds = None
        # who wrote the words last (a caller's token, see FastKernel.launch_known; None: anyone),
        # set under the lock by every write, so a caller can tell its own words from another's
        self.owner = None
        self.cooperative = bool(cooperative)    # a kernel with grid syncs: cuLaunchCooperativeKernel
        self.writers = plan_writers
        n = sum(count for _, count in plan_writers)
        self.words = np.zeros(max(n, 1), dtype=np.int64)
        base = self.words.ctypes.data
        self.pointers = np.arange(base, base + 8 * max(n, 1), 8, dtype=np.uint64)
        self.pointer_array = self.pointers.ctypes.data
        self.context = context
        self.lock = threading.Lock()         # one buffer: one launch at a time fills it
        self.fmt, self.codes = packed if packed is not None else (None, None)

    def values(self, args) -> list:
        """The flat values :attr:`fmt` packs for ``args``."""
        out = []
        for code, value in zip(self.codes, args, strict=True):
            if code == "a":
                out.extend(value.words() if type(value) is Span else _array_words(value))
            else:
                out.append(value)
        return out

    def launch(self, griddim, blockdim, stream_handle, sharedmem, args, kinds=None, owner=None) -> None:
        with self.lock:                      # the driver copies the words before it returns
            if self.fmt is not None:
                struct.pack_into(self.fmt, self.words, 0, *self.values(args))
            else:
                words = _fill(self.writers, args)
                self.words[:len(words)] = words
            if self.parts is not None and kinds is not None:
                self.marks = [_mark(value) for value in args]
                self.kinds = list(kinds)
            self.owner = owner if self.marks is not None else None
            self._call(griddim, blockdim, stream_handle, sharedmem)

    def relaunch(self, griddim, blockdim, stream_handle, sharedmem, args, owner=None) -> bool:
        """Launch with only the changed arguments' words rewritten, if every argument has the kind
        it had at the last full write (so that this is still the right plan); else ``False``,
        nothing done."""
        if self.parts is None:
            return False
        with self.lock:
            marks, kinds = self.marks, self.kinds
            if marks is None or len(args) != len(marks):
                return False
            changed = []
            for i, value in enumerate(args):
                kind = type(value)
                mark = marks[i]
                if kind is Span:
                    if (type(mark) is tuple and mark[0] is _array_words(value.base) and mark[1] == value.offset
                            and mark[2] == value.shape):
                        continue
                    if value.kind() != kinds[i]:
                        return False
                elif kind in _SCALARS:
                    if (type(mark) is tuple and mark[0] is kind
                            and mark[1] == (struct.pack("<d", value) if kind is float else value)):
                        continue
                    if kind is not kinds[i]:
                        return False
                else:
                    words = getattr(value, _WORDS, None)
                    if words is not None and words is mark:
                        continue
                    cached = getattr(value, _KIND, None)
                    if (cached if cached is not None else arg_kind(value)) != kinds[i]:
                        return False
                changed.append(i)
            codes, parts = self.codes, self.parts
            for i in changed:
                value = args[i]
                packer, offset = parts[i]
                if codes[i] == "a":
                    packer.pack_into(self.words, offset, *_array_words(value))
                else:
                    packer.pack_into(self.words, offset, value)
                marks[i] = _mark(value)
            self.owner = owner
            self._call(griddim, blockdim, stream_handle, sharedmem)
        return True

    def repack(self, griddim, blockdim, stream_handle, sharedmem, args, changed, owner) -> bool:
        """Launch with only the arguments at ``changed`` rewritten, where ``owner`` wrote the
        words last and vouches that every other argument is the object it passed then; ``False``,
        nothing done, where another caller wrote since or a changed argument's kind differs."""
        if owner is None or self.parts is None:
            return False
        with self.lock:
            marks, kinds = self.marks, self.kinds
            if self.owner is not owner or marks is None or len(args) != len(marks):
                return False
            for i in changed:
                value = args[i]
                kind = type(value)
                if kind is Span:
                    kind = value.kind()
                elif kind not in _SCALARS:
                    cached = getattr(value, _KIND, None)
                    kind = cached if cached is not None else arg_kind(value)
                if kind != kinds[i]:
                    return False
            codes, parts = self.codes, self.parts
            for i in changed:
                value = args[i]
                packer, offset = parts[i]
                if codes[i] == "a":
                    packer.pack_into(self.words, offset, *(value.words() if type(value) is Span
                                                           else _array_words(value)))
                else:
                    packer.pack_into(self.words, offset, value)
                marks[i] = _mark(value)
            self._call(griddim, blockdim, stream_handle, sharedmem)
        return True

    def _call(self, griddim, blockdim, stream_handle, sharedmem) -> None:
        from cuda.bindings import driver

        if self.cooperative:
            err, = driver.cuLaunchCooperativeKernel(self.handle, *griddim, *blockdim, sharedmem, stream_handle,
                                                    self.pointer_array)
        else:
            err, = driver.cuLaunchKernel(self.handle, *griddim, *blockdim, sharedmem, stream_handle,
                                         self.pointer_array, 0)
        if err != driver.CUresult.CUDA_SUCCESS:
            from numba.cuda.cudadrv.driver import CudaAPIError

            call = "cuLaunchCooperativeKernel" if self.cooperative else "cuLaunchKernel"
            raise CudaAPIError(int(err), f"{call} failed: {err!r}")


def _current_context() -> int:
    from cuda.bindings import driver

    err, ctx = driver.cuCtxGetCurrent()
    return int(ctx) if err == driver.CUresult.CUDA_SUCCESS else 0


_DEFAULT_STREAMS: dict[int, int] = {}     # context -> its default stream's handle


def default_stream_handle() -> int:
    """The handle of numba's default stream in the current context (legacy or per-thread, as
    numba is configured), where planned launches go unless given a stream."""
    return _stream_handle(0, _current_context())


def _stream_handle(stream, context: int) -> int:
    if stream:
        return int(stream.handle)
    handle = _DEFAULT_STREAMS.get(context)
    if handle is None:                      # numba's default stream (legacy or per-thread, as configured)
        from numba import cuda

        handle = _DEFAULT_STREAMS[context] = int(cuda.default_stream().handle)
    return handle


def _dims(griddim, blockdim):
    """(grid, block) as 3-tuples, or ``None`` where numba should say what is wrong."""
    if type(griddim) is int and type(blockdim) is int:       # the common case, without numba's checks
        return ((griddim, 1, 1), (blockdim, 1, 1)) if griddim > 0 and blockdim > 0 else None
    from numba.cuda.errors import normalize_kernel_dimensions

    try:
        grid3, block3 = normalize_kernel_dimensions(griddim, blockdim)
    except (TypeError, ValueError):
        return None
    return None if 0 in grid3 or 0 in block3 else (grid3, block3)


class FastKernel:
    """A kernel dispatcher launched through plans; everything else is the dispatcher's."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self._plans: dict = {}
        self._recent = None

    def __getattr__(self, name):
        return getattr(self.dispatcher, name)

    def __getitem__(self, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            return self.dispatcher[config]          # numba's own error for a malformed configuration
        return _Configured(self, *config)

    def launch(self, griddim, blockdim, stream, sharedmem, args, owner=None) -> None:
        if owner is not None:
            owner.plans[self] = None             # until a plan holds this launch's words
        dims = _dims(griddim, blockdim)
        if dims is None:
            return self.dispatcher[griddim, blockdim, stream, sharedmem](*materialized(args))   # numba says
            # what is wrong
        context = _current_context()
        recent = self._recent                # the plan of the last planned launch: most launches repeat it
        if (recent is not None and recent[0] == context
                and recent[1].relaunch(dims[0], dims[1], _stream_handle(stream, context), sharedmem, args, owner)):
            if owner is not None:
                owner.plans[self] = recent[1]
            return
        kinds = []                           # arg_kind of each, inlined for the common cases (a
        for value in args:                   # launch's host cost is per argument)
            kind = type(value)
            if kind in _SCALARS:
                kinds.append(kind)
            elif kind is Span:
                kinds.append(value.kind())
            else:
                cached = getattr(value, _KIND, None)
                kinds.append(cached if cached is not None else arg_kind(value))
        key = (context, tuple(kinds))
        plan = self._plans.get(key)
        if plan is None:
            args = materialized(args)
            self.dispatcher[griddim, blockdim, stream, sharedmem](*args)          # compiles, launches
            self._plans[key] = self._plan_for(args, context)
            return
        if plan is _NUMBA:
            return self.dispatcher[griddim, blockdim, stream, sharedmem](*materialized(args))
        plan.launch(dims[0], dims[1], _stream_handle(stream, context), sharedmem, args, kinds, owner)
        self._recent = (context, plan)
        if owner is not None and plan.owner is owner:
            owner.plans[self] = plan

    def launch_known(self, griddim, blockdim, args, changed, owner: LaunchOwner) -> None:
        """Launch on the default stream, where the caller knows what changed: ``owner`` (the
        caller's :class:`LaunchOwner`, used by one caller, one launch at a time) made this
        kernel's last launch with ``owner`` given, and every argument not in ``changed``
        (indices) is the object it passed then. Only the changed arguments' words are rewritten,
        nothing else compared (a 48-argument kernel's comparison cost 60-85 µs of host time on an
        H200 host). Where that launch went through numba, another caller launched through the
        plan since, or a changed argument's kind differs, this is :meth:`launch`. The caller must
        hold its last arguments itself (an object's identity is only safe while it lives)."""
        dims = _dims(griddim, blockdim)
        plan = owner.plans.get(self)
        if dims is not None and plan is not None:
            context = _current_context()
            if plan.context == context and plan.repack(dims[0], dims[1], _stream_handle(0, context), 0, args,
                                                       changed, owner):
                self._recent = (context, plan)
                return
        self.launch(griddim, blockdim, 0, 0, args, owner=owner)

    def _plan_for(self, args, context: int):
        """The plan for launches like this one, or :data:`_NUMBA` where numba must launch them."""
        d = self.dispatcher
        if getattr(d, "_launch_config_sensitive", False) or d.targetoptions.get("extensions"):
            return _NUMBA
        if not all(_plannable(a) for a in args):
            return _NUMBA
        if getattr(d, "specialized", False):
            kernel = next(iter(d.overloads.values()))
        else:
            try:
                argtypes = tuple(d.typeof_pyval(a) for a in args)
            except Exception:  # noqa: BLE001 - an argument numba types its own way: leave it to numba
                return _NUMBA
            kernel = d.overloads.get(argtypes)
        if kernel is None or getattr(kernel, "debug", False):
            return _NUMBA
        plan_writers = writers(kernel.argument_types)
        if plan_writers is None:
            return _NUMBA
        formats = argument_formats(kernel.argument_types)
        return _Plan(kernel._codelibrary.get_cufunc().handle, plan_writers, context, packing(kernel.argument_types),
                     cooperative=getattr(kernel, "cooperative", False),
                     formats=formats[0] if formats is not None else None)


class _Configured:
    __slots__ = ("kernel", "griddim", "blockdim", "stream", "sharedmem")

    def __init__(self, kernel: FastKernel, griddim, blockdim, stream=0, sharedmem=0):
        self.kernel, self.griddim, self.blockdim = kernel, griddim, blockdim
        self.stream, self.sharedmem = stream, sharedmem

    def __call__(self, *args):
        self.kernel.launch(self.griddim, self.blockdim, self.stream, self.sharedmem, args)
