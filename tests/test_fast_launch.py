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


def test_first_launch_goes_through_numba_then_the_plan(driver_calls):
    argtypes = [types.Array(types.int32, 1, "C"), types.int64]
    d = FakeDispatcher(argtypes)
    k = fast_launch.FastKernel(d)
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

    d = FakeDispatcher([types.Array(types.int32, 1, "C"), types.int64])
    k = fast_launch.FastKernel(d)
    a = FakeDeviceArray((10,), np.int32, 0xABC0)
    stream = SimpleNamespace(handle=1)
    k[1, 32, stream](a, 1)
    monkeypatch.setattr(driver, "cuLaunchKernel",
                        lambda *args: (driver.CUresult.CUDA_ERROR_INVALID_VALUE,))
    from numba.cuda.cudadrv.driver import CudaAPIError

    with pytest.raises(CudaAPIError, match="cuLaunchKernel"):
        k[1, 32, stream](a, 1)


def test_the_dispatchers_attributes_show_through():
    d = FakeDispatcher([types.int64])
    k = fast_launch.FastKernel(d)
    assert k.py_func is d.py_func and k.overloads is d.overloads
