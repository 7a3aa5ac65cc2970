"""Planned kernel launches (kernels/cuda/fast_launch.py): the parameter words laid out as numba
lays them out, what stays with numba, and the launch path with the driver call replaced (the
real launches are checked on a GPU by the device-update tests, which run through it)."""

from __future__ import annotations

import ctypes
import struct
from types import SimpleNamespace

import numpy as np
import pytest
from numba.core import types

from kernels.cuda import fast_launch


class FakeDeviceArray:
    """What the plan reads of a numba device array."""

    __cuda_ndarray__ = True

    def __init__(self, shape, dtype, pointer, strides=None, c=True, f=False):
        self.shape = tuple(shape)
        self.ndim = len(self.shape)
        self.dtype = np.dtype(dtype)
        self.size = int(np.prod(self.shape))
        self.strides = strides or tuple(int(s) for s in np.zeros(self.shape, dtype=self.dtype).strides)
        self.gpu_data = SimpleNamespace(device_pointer=pointer)
        self._dummy = SimpleNamespace(is_c_contig=c, is_f_contig=f)


def test_array_words_follow_numbas_layout():
    a = FakeDeviceArray((3, 5), np.int32, 0x7000_0000)
    words = fast_launch.parameter_words([types.Array(types.int32, 2, "C")], [a])
    # meminfo, parent, size, itemsize, data, shape..., strides...
    assert words == [0, 0, 15, 4, 0x7000_0000, 3, 5, 20, 4]


def test_empty_array_has_a_null_pointer():
    a = FakeDeviceArray((0,), np.int64, 0x1234, strides=(8,))
    assert fast_launch.parameter_words([types.Array(types.int64, 1, "C")], [a]) == [0, 0, 0, 8, 0, 0, 8]


def test_scalars_sit_in_the_low_bytes_of_their_word():
    words = fast_launch.parameter_words(
        [types.int64, types.int32, types.uint8, types.float64, types.float32, types.boolean],
        [-5, -7, 200, 1.5, 2.25, True])
    raw = np.array(words, dtype=np.int64).tobytes()
    assert struct.unpack_from("<q", raw, 0)[0] == -5
    assert struct.unpack_from("<i", raw, 8)[0] == -7
    assert struct.unpack_from("<B", raw, 16)[0] == 200
    assert struct.unpack_from("<d", raw, 24)[0] == 1.5
    assert struct.unpack_from("<f", raw, 32)[0] == 2.25
    assert struct.unpack_from("<B", raw, 40)[0] == 1


def test_tuples_are_flattened_in_order():
    a = FakeDeviceArray((4,), np.float64, 0x10)
    ty = types.Tuple((types.Array(types.float64, 1, "C"), types.int64))
    assert fast_launch.parameter_words([ty, types.int32], [(a, 9), 3]) == [0, 0, 4, 8, 0x10, 4, 8, 9, 3]


@pytest.mark.parametrize("ty", [types.complex128, types.Record.make_c_struct([("a", types.int32)]),
                                types.CPointer(types.int32)])
def test_types_the_plan_does_not_lay_out_are_left_to_numba(ty):
    assert fast_launch.writers([types.int64, ty]) is None


def test_argument_kinds_tell_arrays_apart_by_dtype_dims_and_layout():
    a = FakeDeviceArray((4,), np.int32, 1)
    b = FakeDeviceArray((8,), np.int32, 2)                     # same kind: another size and place
    c = FakeDeviceArray((4,), np.int64, 1)
    d = FakeDeviceArray((4,), np.int32, 1, strides=(8,), c=False)
    assert fast_launch.arg_kind(a) == fast_launch.arg_kind(b)
    assert len({fast_launch.arg_kind(x) for x in (a, c, d)}) == 3
    assert fast_launch.arg_kind((a, 3)) == (fast_launch.arg_kind(a), int)


def test_under_the_simulator_fast_returns_numbas_dispatcher(monkeypatch):
    monkeypatch.setattr(fast_launch, "enabled", lambda: False)
    sentinel = object()
    assert fast_launch.fast(sentinel) is sentinel


def test_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv(fast_launch.FAST_LAUNCH_ENV, "0")
    assert fast_launch.enabled() is False


class FakeDispatcher:
    """Records numba-path launches; one overload of (int32[::1], int64)."""

    def __init__(self, argument_types):
        self.numba_launches = []
        self.specialized = False
        self.targetoptions = {}
        kernel = SimpleNamespace(argument_types=argument_types, debug=False, cooperative=False,
                                 _codelibrary=SimpleNamespace(get_cufunc=lambda: SimpleNamespace(handle="fn")))
        self.overloads = {tuple(argument_types): kernel}
        self.py_func = lambda *a: None

    def typeof_pyval(self, value):
        if getattr(value, "__cuda_ndarray__", False):
            return types.Array(types.int32, 1, "C")
        return types.int64

    def __getitem__(self, config):
        return lambda *args: self.numba_launches.append((config, args))


@pytest.fixture
def driver_calls(monkeypatch):
    """cuLaunchKernel replaced: each call's grid, block and the words its pointers point at."""
    from cuda.bindings import driver

    calls = []

    def launch(handle, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        pointers = (ctypes.c_uint64 * 7).from_address(params)
        words = [ctypes.c_int64.from_address(p).value for p in pointers]
        calls.append({"handle": handle, "grid": (gx, gy, gz), "block": (bx, by, bz), "stream": stream,
                      "words": words})
        return (driver.CUresult.CUDA_SUCCESS,)

    monkeypatch.setattr(driver, "cuLaunchKernel", launch)
    monkeypatch.setattr(fast_launch, "_current_context", lambda: 1)
    return calls


def array_and_scalar_kernel():
    """A planned kernel of (int32[::1], int64) over a fake dispatcher: (dispatcher, kernel)."""
    d = FakeDispatcher([types.Array(types.int32, 1, "C"), types.int64])
    return d, fast_launch.FastKernel(d)


def test_first_launch_goes_through_numba_then_the_plan(driver_calls):
    d, k = array_and_scalar_kernel()
    a = FakeDeviceArray((10,), np.int32, 0xABC0)
    stream = SimpleNamespace(handle=77)
    k[4, 128, stream, 0](a, 5)
    assert len(d.numba_launches) == 1 and not driver_calls
    b = FakeDeviceArray((20,), np.int32, 0xDEF0)
    k[(2, 3), 64, stream, 16](b, -1)
    assert len(d.numba_launches) == 1
    (call,) = driver_calls
    assert call["handle"] == "fn" and call["grid"] == (2, 3, 1) and call["block"] == (64, 1, 1)
    assert call["stream"] == 77
    assert call["words"] == [0, 0, 20, 4, 0xDEF0, 20, 4]
    (plan,) = k._plans.values()
    assert plan.words[7] == -1                     # the scalar after the array's seven words
    # an argument of another kind (a host array) is launched by numba, every time
    k[1, 32, stream, 0](np.zeros(3, dtype=np.int32), 1)
    k[1, 32, stream, 0](np.zeros(3, dtype=np.int32), 1)
    assert len(d.numba_launches) == 3 and len(driver_calls) == 1


def test_an_empty_grid_is_numbas_to_refuse(driver_calls):
    d = FakeDispatcher([types.int64])
    k = fast_launch.FastKernel(d)
    k[0, 32](1)
    k[0, 32](1)
    assert len(d.numba_launches) == 2 and not driver_calls


def test_a_failed_driver_launch_raises(monkeypatch, driver_calls):
    from cuda.bindings import driver

    _, k = array_and_scalar_kernel()
    a = FakeDeviceArray((10,), np.int32, 0xABC0)
    stream = SimpleNamespace(handle=1)
    k[1, 32, stream](a, 1)
    monkeypatch.setattr(driver, "cuLaunchKernel",
                        lambda *args: (driver.CUresult.CUDA_ERROR_INVALID_VALUE,))
    from numba.cuda.cudadrv.driver import CudaAPIError

    with pytest.raises(CudaAPIError, match="cuLaunchKernel"):
        k[1, 32, stream](a, 1)


def test_a_kernel_with_grid_syncs_is_launched_cooperatively(monkeypatch, driver_calls):
    from cuda.bindings import driver

    cooperative = []

    def launch(handle, gx, gy, gz, bx, by, bz, shmem, stream, params):
        pointers = (ctypes.c_uint64 * 7).from_address(params)
        cooperative.append({"grid": (gx, gy, gz), "block": (bx, by, bz),
                            "words": [ctypes.c_int64.from_address(p).value for p in pointers]})
        return (driver.CUresult.CUDA_SUCCESS,)

    monkeypatch.setattr(driver, "cuLaunchCooperativeKernel", launch)
    d, k = array_and_scalar_kernel()
    (kernel,) = d.overloads.values()
    kernel.cooperative = True                       # numba's flag for code with grid syncs
    a = FakeDeviceArray((10,), np.int32, 0xABC0)
    stream = SimpleNamespace(handle=5)
    k[4, 128, stream](a, 5)                         # numba's launch (cooperative), then the plan
    k[6, 64, stream](a, 9)
    assert len(d.numba_launches) == 1 and not driver_calls
    (call,) = cooperative
    assert call["grid"] == (6, 1, 1) and call["block"] == (64, 1, 1)
    assert call["words"] == [0, 0, 10, 4, 0xABC0, 10, 4]
    monkeypatch.setattr(driver, "cuLaunchCooperativeKernel",
                        lambda *args: (driver.CUresult.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,))
    from numba.cuda.cudadrv.driver import CudaAPIError

    with pytest.raises(CudaAPIError, match="cuLaunchCooperativeKernel"):
        k[10 ** 6, 64, stream](a, 1)


def test_the_dispatchers_attributes_show_through():
    d = FakeDispatcher([types.int64])
    k = fast_launch.FastKernel(d)
    assert k.py_func is d.py_func and k.overloads is d.overloads


# ---- spans: parts of a device array without numba's view machinery ------------------------------

class FakeBase(FakeDeviceArray):
    """A 1-D device array whose numba view (``a[i:j].reshape(...)``) is made by numba's own
    descriptor arithmetic (dummyarray), as DeviceNDArray makes it, without a device."""

    def __getitem__(self, item):
        dummyarray = fast_launch.numba_dummyarray()
        dummy = dummyarray.Array.from_desc(0, self.shape, self.strides, self.dtype.itemsize)[item]
        view = FakeDeviceArray(dummy.shape, self.dtype, self.gpu_data.device_pointer + dummy.extent.begin,
                               strides=dummy.strides, c=dummy.is_c_contig, f=dummy.is_f_contig)
        view.reshape = lambda *shape: _reshaped(view, dummy, shape)
        return view


def _reshaped(view, dummy, shape):
    new, _ = dummy.reshape(*shape)
    return FakeDeviceArray(new.shape, view.dtype, view.gpu_data.device_pointer, strides=new.strides,
                           c=new.is_c_contig, f=new.is_f_contig)


SPAN_SHAPES = [(20,), (0,), (1,), (4, 5), (4, 0), (0, 3), (4, 1), (1, 4), (1, 1), (2, 3, 2)]


@pytest.mark.parametrize("shape", SPAN_SHAPES)
def test_a_span_has_the_words_and_kind_of_numbas_view(shape):
    base = FakeBase((100,), np.int64, 0x1000)
    span = fast_launch.Span(base, 10, shape)
    view = span.view()
    assert view.shape == tuple(shape)
    assert fast_launch.arg_kind(span) == fast_launch.arg_kind(view)
    assert span.strides == tuple(view.strides)
    expected = [0, 0, view.size, 8, 0x1000 + 80 if view.size else 0, *view.shape, *view.strides]
    assert span.words() == expected == fast_launch._array_words(view)
    assert fast_launch.parameter_words([types.Array(types.int64, len(shape), "C")], [span]) == expected


def test_a_span_that_does_not_fit_is_refused():
    base = FakeBase((100,), np.int32, 0x1000)
    with pytest.raises(ValueError, match="does not fit"):
        fast_launch.Span(base, 90, (4, 3))
    with pytest.raises(ValueError, match="does not fit"):
        fast_launch.Span(base, -1, 4)
    with pytest.raises(ValueError, match="contiguous"):
        fast_launch.Span(FakeBase((10,), np.int32, 0x1000, strides=(8,)), 0, 2)


def test_spans_reach_numba_as_views_and_the_plan_as_words(driver_calls):
    d, k = array_and_scalar_kernel()
    base = FakeBase((64,), np.int32, 0x4000)
    stream = SimpleNamespace(handle=5)
    k[1, 32, stream](fast_launch.Span(base, 8, 16), 2)            # numba compiles: it gets a view
    ((_, (first, _)),) = d.numba_launches
    assert type(first) is FakeDeviceArray and first.shape == (16,) and first.gpu_data.device_pointer == 0x4000 + 32
    k[1, 32, stream](fast_launch.Span(base, 40, 3), 7)            # the plan: the span's own words
    (call,) = driver_calls
    assert call["words"] == [0, 0, 3, 4, 0x4000 + 160, 3, 4]
    (plan,) = k._plans.values()
    assert plan.words[7] == 7
    assert len(d.numba_launches) == 1
    # inside a tuple too
    assert fast_launch.materialized(((fast_launch.Span(base, 0, 2), 1),))[0][0].shape == (2,)


def test_a_workspace_gives_numbas_view_where_launches_are_not_planned(monkeypatch):
    from kernels.operators.launch import Workspace

    monkeypatch.setattr(fast_launch, "enabled", lambda: False)
    base = FakeBase((10,), np.int64, 0x100)
    view = Workspace().span(base, 2, (2, 3))
    assert type(view) is FakeDeviceArray and view.shape == (2, 3)
    monkeypatch.setattr(fast_launch, "enabled", lambda: True)
    assert type(Workspace().span(base, 2, (2, 3))) is fast_launch.Span


@pytest.mark.gpu
@pytest.mark.parametrize("shape", SPAN_SHAPES)
def test_on_a_gpu_a_span_is_numbas_view_and_a_planned_kernel_writes_through_it(shape):
    from numba import cuda

    from kernels.cuda.jit import jit as kernel_jit

    base = cuda.to_device(np.zeros(100, dtype=np.int64))
    span = fast_launch.Span(base, 10, shape)
    view = base[10:10 + span.size].reshape(*shape)
    assert fast_launch.arg_kind(span) == fast_launch.arg_kind(view)
    assert span.words() == fast_launch._array_words(view)

    def mark(a, value):
        for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
            a[i] = value + i

    if len(shape) > 1:                     # the kernel below writes 1-D spans
        return
    k = fast_launch.FastKernel(kernel_jit(mark))
    k[1, 32](fast_launch.Span(base, 0, 3), 100)       # numba's launch, then plans
    k[1, 32](span, 7)
    expected = np.zeros(100, dtype=np.int64)
    expected[:3] = [100, 101, 102]
    expected[10:10 + span.size] = 7 + np.arange(span.size)
    assert np.array_equal(base.copy_to_host(), expected)


@pytest.mark.gpu
def test_on_a_gpu_a_planned_cooperative_launch_syncs_its_grid():
    from numba import cuda

    from kernels.cuda.jit import jit as kernel_jit

    def two_phases(a, out):
        grid = cuda.cg.this_grid()
        for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
            a[i] = i
        grid.sync()                          # every block's writes before any block reads
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[a.size - 1 - i]

    k = fast_launch.FastKernel(kernel_jit(two_phases))
    a = cuda.device_array(1 << 16, dtype=np.int64)
    blocks = 8
    for _ in range(2):                       # numba's launch, then the plan
        out = cuda.to_device(np.full(blocks * 128, -1, dtype=np.int64))
        k[blocks, 128](a, out)
        assert np.array_equal(out.copy_to_host(), (1 << 16) - 1 - np.arange(blocks * 128))
    (plan,) = k._plans.values()
    assert plan.cooperative


@pytest.mark.gpu
def test_on_a_gpu_workspace_copies_round_trip_through_the_driver():
    from kernels.operators.launch import Workspace

    ws = Workspace()
    device = ws.upload("x", np.arange(5), np.arange(10, 13), dtype=np.int64)
    assert np.array_equal(device[:8].copy_to_host(), [0, 1, 2, 3, 4, 10, 11, 12])
    assert np.array_equal(ws.download("x", device, 8), [0, 1, 2, 3, 4, 10, 11, 12])
    assert np.array_equal(ws.download("y", fast_launch.Span(device, 5, 3), 3), [10, 11, 12])
    with pytest.raises(ValueError, match="asked of"):
        ws.download("y", fast_launch.Span(device, 5, 3), 4)


def test_a_packed_plan_writes_the_words_the_writers_give():
    argtypes = [types.Array(types.int32, 2, "C"), types.int64, types.int32, types.uint8, types.float64,
                types.float32, types.boolean, types.uint64, types.Array(types.float64, 1, "C")]
    base = FakeBase((64,), np.float64, 0x8000)
    args = [FakeDeviceArray((3, 5), np.int32, 0x7000), -5, -7, 200, 1.5, 2.25, True, (1 << 64) - 3,
            fast_launch.Span(base, 4, 6)]
    plan = fast_launch._Plan("fn", fast_launch.writers(argtypes), 1, fast_launch.packing(argtypes))
    import struct as struct_module

    struct_module.pack_into(plan.fmt, plan.words, 0, *plan.values(args))
    expected = fast_launch.parameter_words(argtypes, args)
    got = plan.words[:len(expected)].tolist()
    assert got[:9] == expected[:9] == [0, 0, 15, 4, 0x7000, 3, 5, 20, 4]     # the 2-D array's words
    raw = plan.words.tobytes()
    assert struct_module.unpack_from("<q", raw, 9 * 8)[0] == -5
    assert struct_module.unpack_from("<i", raw, 10 * 8)[0] == -7
    assert struct_module.unpack_from("<B", raw, 11 * 8)[0] == 200
    assert struct_module.unpack_from("<d", raw, 12 * 8)[0] == 1.5
    assert struct_module.unpack_from("<f", raw, 13 * 8)[0] == 2.25
    assert struct_module.unpack_from("<B", raw, 14 * 8)[0] == 1
    assert struct_module.unpack_from("<Q", raw, 15 * 8)[0] == (1 << 64) - 3
    assert got[16:] == [0, 0, 6, 8, 0x8000 + 32, 6, 8]
    assert fast_launch.packing([types.Tuple((types.int64, types.int64))]) is None


@pytest.mark.gpu
def test_on_a_gpu_queued_copies_are_ordered_with_the_kernels():
    from numba import cuda

    from kernels.cuda.jit import jit as kernel_jit
    from kernels.operators.launch import Workspace

    def double(a, n):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            a[i] *= 2

    k = fast_launch.FastKernel(kernel_jit(double))
    ws = Workspace()
    for round_ in range(3):
        values = np.arange(1000, dtype=np.int64) + round_
        device = ws.upload("v", values, asynchronous=True)
        k[4, 128](device, 1000)
        k[4, 128](device, 1000)
        host = ws.download("v", device, 1000, asynchronous=True)
        cuda.synchronize()
        assert np.array_equal(host, 4 * values)


def _packed(plan, args) -> np.ndarray:
    """The parameter buffer a full write of ``args`` gives."""
    import struct

    expected = np.zeros_like(plan.words)
    struct.pack_into(plan.fmt, expected, 0, *plan.values(args))
    return expected


def test_a_relaunch_rewrites_exactly_the_changed_arguments(driver_calls):
    """Launches of the same plan rewrite only the words that changed (arrays swapped, a span
    moved or reshaped within its kind, a scalar changed) and end with the buffer a full write
    would give; a changed kind goes back to the full path and its own plan."""
    ty = [types.Array(types.int32, 1, "C"), types.int64, types.Array(types.int64, 1, "C"), types.float64,
          types.Array(types.int64, 2, "C")]
    d = FakeDispatcher(ty)
    d.typeof_pyval = lambda v: (types.int64 if isinstance(v, int) else types.float64 if isinstance(v, float)
                                else types.Array(types.int64 if v.dtype == np.int64 else types.int32, v.ndim, "C"))
    k = fast_launch.FastKernel(d)
    base = FakeBase((64,), np.int64, 0x9000)
    stream = SimpleNamespace(handle=3)
    a1, a2 = FakeDeviceArray((10,), np.int32, 0x100), FakeDeviceArray((12,), np.int32, 0x200)
    b = FakeDeviceArray((5,), np.int64, 0x300)
    rng = np.random.default_rng(1)
    args = (a1, 5, b, 1.5, fast_launch.Span(base, 0, (2, 3)))
    k[1, 32, stream](*args)                                   # numba's launch: makes the plan
    k[1, 32, stream](*args)                                   # the full write
    (plan,) = k._plans.values()
    assert plan.marks is not None and np.array_equal(plan.words, _packed(plan, args))
    for _ in range(200):
        args = (a1 if rng.random() < 0.5 else a2, int(rng.integers(-5, 5)),
                b if rng.random() < 0.7 else FakeDeviceArray((int(rng.integers(1, 9)),), np.int64, 0x400),
                float(rng.integers(0, 3)),
                fast_launch.Span(base, int(rng.integers(0, 20)), (int(rng.integers(2, 4)), int(rng.integers(2, 5)))))
        calls = len(driver_calls)
        k[1, 32, stream](*args)
        assert len(driver_calls) == calls + 1
        assert np.array_equal(plan.words, _packed(plan, args))
    assert len(d.numba_launches) == 1 and len(k._plans) == 1
    # another kind (an int64 array where int32 was): numba's launch and a plan of its own
    other = (FakeDeviceArray((3,), np.int64, 0x500), 1, b, 0.0, fast_launch.Span(base, 0, (2, 3)))
    k[1, 32, stream](*other)
    assert len(d.numba_launches) == 2 and len(k._plans) == 2
    k[1, 32, stream](*args)                                   # back to the first plan
    assert np.array_equal(plan.words, _packed(plan, args))


def test_a_relaunch_tells_minus_zero_from_zero(monkeypatch):
    from cuda.bindings import driver

    monkeypatch.setattr(driver, "cuLaunchKernel", lambda *args: (driver.CUresult.CUDA_SUCCESS,))
    monkeypatch.setattr(fast_launch, "_current_context", lambda: 1)
    d = FakeDispatcher([types.float64])
    d.typeof_pyval = lambda v: types.float64
    k = fast_launch.FastKernel(d)
    stream = SimpleNamespace(handle=3)
    for value in (0.0, 0.0, -0.0, float("nan"), float("nan"), 0.0):
        k[1, 32, stream](value)
    (plan,) = k._plans.values()
    assert np.array_equal(plan.words, _packed(plan, (0.0,)))
    k[1, 32, stream](-0.0)
    assert np.array_equal(plan.words, _packed(plan, (-0.0,))) and plan.words[0] == -(1 << 63)


@pytest.fixture
def default_stream(monkeypatch, driver_calls):
    """The driver call replaced (driver_calls) and context 1's default stream taken as handle 3."""
    monkeypatch.setitem(fast_launch._DEFAULT_STREAMS, 1, 3)
    return driver_calls


def _known_kernel():
    """A planned kernel of (int32[::1], int64, int64[::1], int64[:, ::1]) with a typing of its own."""
    ty = [types.Array(types.int32, 1, "C"), types.int64, types.Array(types.int64, 1, "C"),
          types.Array(types.int64, 2, "C")]
    d = FakeDispatcher(ty)
    d.typeof_pyval = lambda v: (types.int64 if isinstance(v, int)
                                else types.Array(types.int64 if v.dtype == np.int64 else types.int32, v.ndim, "C"))
    return d, fast_launch.FastKernel(d)


def test_a_known_launch_rewrites_only_what_the_caller_names(default_stream):
    """launch_known: the caller that launched last names what changed; only those words are
    written, and the buffer ends as a full write of the arguments would leave it."""
    d, k = _known_kernel()
    me = fast_launch.LaunchOwner()
    base = FakeBase((64,), np.int64, 0x9000)
    a1, a2 = FakeDeviceArray((10,), np.int32, 0x100), FakeDeviceArray((12,), np.int32, 0x200)
    b = FakeDeviceArray((5,), np.int64, 0x300)
    args = [a1, 5, b, fast_launch.Span(base, 0, (2, 3))]
    k.launch(1, 32, 0, 0, tuple(args), owner=me)              # numba's launch: makes the plan
    k.launch_known(1, 32, tuple(args), [], me)                # not planned yet: the full write
    (plan,) = k._plans.values()
    assert plan.owner is me and np.array_equal(plan.words, _packed(plan, tuple(args)))
    rng = np.random.default_rng(3)
    for _ in range(100):
        new = [a1 if rng.random() < 0.5 else a2, int(rng.integers(-9, 9)),
               b if rng.random() < 0.7 else FakeDeviceArray((3,), np.int64, int(rng.integers(1, 99)) * 8),
               args[3] if rng.random() < 0.5 else fast_launch.Span(base, int(rng.integers(0, 20)), (2, 3))]
        changed = [i for i in range(4) if new[i] is not args[i]]
        calls = len(default_stream)
        k.launch_known(2, 64, tuple(new), changed, me)
        assert len(default_stream) == calls + 1 and default_stream[-1]["grid"] == (2, 1, 1)
        assert np.array_equal(plan.words, _packed(plan, tuple(new)))
        args = new
    assert len(d.numba_launches) == 1


def test_a_known_launch_after_another_callers_launch_writes_everything(default_stream):
    """Words another caller wrote since are never taken for the caller's own: its launch_known
    then compares and rewrites like any launch."""
    d, k = _known_kernel()
    me, other = fast_launch.LaunchOwner(), fast_launch.LaunchOwner()
    a1, a2 = FakeDeviceArray((10,), np.int32, 0x100), FakeDeviceArray((12,), np.int32, 0x200)
    b1, b2 = FakeDeviceArray((5,), np.int64, 0x300), FakeDeviceArray((5,), np.int64, 0x400)
    base = FakeBase((64,), np.int64, 0x9000)
    mine = (a1, 7, b1, fast_launch.Span(base, 0, (2, 3)))
    theirs = (a2, 9, b2, fast_launch.Span(base, 8, (2, 3)))
    k.launch(1, 32, 0, 0, mine, owner=me)
    k.launch(1, 32, 0, 0, mine, owner=me)
    (plan,) = k._plans.values()
    k.launch(1, 32, 0, 0, theirs, owner=other)                # another updater's launch
    assert plan.owner is other
    k.launch_known(1, 32, mine, [], me)                       # "nothing changed" since my launch
    assert np.array_equal(plan.words, _packed(plan, mine)) and plan.owner is me
    k.launch(1, 32, 0, 0, theirs)                             # a launch that names no caller
    assert plan.owner is None
    k.launch_known(1, 32, mine, [], me)
    assert np.array_equal(plan.words, _packed(plan, mine))


def test_a_known_launch_of_another_kind_goes_to_its_own_plan(default_stream):
    d, k = _known_kernel()
    me = fast_launch.LaunchOwner()
    b = FakeDeviceArray((5,), np.int64, 0x300)
    base = FakeBase((64,), np.int64, 0x9000)
    args = (FakeDeviceArray((10,), np.int32, 0x100), 1, b, fast_launch.Span(base, 0, (2, 3)))
    k.launch(1, 32, 0, 0, args, owner=me)
    k.launch(1, 32, 0, 0, args, owner=me)
    (plan,) = k._plans.values()
    other = (FakeDeviceArray((10,), np.int64, 0x500),) + args[1:]     # int64 where int32 was
    k.launch_known(1, 32, other, [0], me)
    assert len(k._plans) == 2 and len(d.numba_launches) == 2         # numba's launch, a new plan
    assert np.array_equal(plan.words, _packed(plan, args))           # the first plan untouched
    # the next launch names only what changed since numba's launch: the first plan must not take
    # it for its own words (its third argument is another object now)
    b2 = FakeDeviceArray((5,), np.int64, 0x700)
    again = (args[0], 1, b2, args[3])
    calls = len(default_stream)
    k.launch_known(1, 32, again, [0, 2], me)
    assert len(default_stream) == calls + 1
    assert np.array_equal(plan.words, _packed(plan, again)) and plan.owner is me


def test_a_known_launch_is_not_fooled_by_another_threads_late_bookkeeping(default_stream):
    """A review's race: thread B's launch of plan X stores the kernel's "last plan" late, after
    updater A moved to another kind through numba; A's next known launch must not repack X as if
    X held A's last arguments."""
    d, k = _known_kernel()
    a_tok, b_tok = fast_launch.LaunchOwner(), fast_launch.LaunchOwner()
    base1, base2 = FakeBase((64,), np.int64, 0x9000), FakeBase((64,), np.int64, 0xA000)
    idx1, idx2 = FakeDeviceArray((10,), np.int32, 0x100), FakeDeviceArray((12,), np.int32, 0x200)
    b = FakeDeviceArray((5,), np.int64, 0x300)
    args1 = (idx1, 1, b, fast_launch.Span(base1, 0, (4, 1)))          # a (4, 1) buffer while t == 1
    k.launch(1, 32, 0, 0, args1, owner=a_tok)
    k.launch(1, 32, 0, 0, args1, owner=a_tok)                           # plan X
    k.launch(1, 32, 0, 0, (idx2, 7, b, fast_launch.Span(base1, 0, (4, 1))), owner=b_tok)   # thread B
    stale = k._recent                                                   # B not yet past its store
    k.launch_known(1, 32, args1, [0, 1], a_tok)                         # thread A: X holds args1
    args2 = (idx2, 1, b, fast_launch.Span(base2, 0, (4, 8)))            # grown: another kind
    k.launch_known(1, 32, args2, [0, 3], a_tok)                         # numba's launch
    k._recent = stale                                                   # B's store lands now
    args3 = (idx1, 1, b, args2[3])
    calls = len(default_stream)
    k.launch_known(1, 32, args3, [0], a_tok)
    used = a_tok.plans[k]                                               # the plan this launch went through
    assert len(default_stream) == calls + 1 and used is not None and used is not stale[1]
    assert np.array_equal(used.words, _packed(used, args3))
    assert default_stream[-1]["words"] == _packed(used, args3)[:7].tolist()   # the words launched
