"""The disk cache of compiled kernels (kernels/cuda/kernel_cache.py), without a GPU: the key
follows everything that changes the machine code, a stale entry is never used, damaged entries
are removed and compiled again, processes writing one entry at once leave it whole, and the
size limit evicts the least recently used. numba's part (pickling a compiled kernel) is tested on
a GPU (tests/test_kernel_cache_gpu.py)."""

from __future__ import annotations

import importlib
import multiprocessing
import os
import pickle
import sys
import time

import pytest

from kernels.cuda import kernel_cache
from kernels.cuda.kernel_cache import (
    DeviceFacts,
    KernelDiskCache,
    Store,
    Uncacheable,
    kernel_key,
)

FACTS = DeviceFacts("9.0", "13.0", "0.68.0", "0.30.4")
SIG = ("array(float64, 1d, C)", "int64")


def factory(wg: int, rows: int, mode: str = "shuffle"):
    per_row = wg // rows

    def kernel(x, n):
        for i in range(per_row):
            x[i] = n + i

    return kernel


def key(func, sig=SIG, options=None, facts=FACTS) -> str:
    return kernel_key(func, sig, options or {}, facts)


def test_the_key_follows_compile_time_parameters_signature_options_and_device():
    base = key(factory(64, 4))
    assert key(factory(64, 4)) == base                        # the same specialisation: a hit
    assert key(factory(64, 8)) != base                        # another closure value
    assert key(factory(64, 4), sig=("array(float32, 1d, C)", "int64")) != base
    assert key(factory(64, 4), options={"max_registers": 32}) != base
    assert key(factory(64, 4), facts=DeviceFacts("8.0", "13.0", "0.68.0", "0.30.4")) != base
    assert key(factory(64, 4), facts=DeviceFacts("9.0", "13.0", "0.68.0", "0.30.5")) != base


SWITCH = 1


def reads_a_switch(x):
    x[0] = SWITCH


def test_a_global_switch_a_script_sets_changes_the_key(monkeypatch):
    before = key(reads_a_switch)
    monkeypatch.setattr(sys.modules[__name__], "SWITCH", 2)
    assert key(reads_a_switch) != before


def test_a_device_function_in_the_closure_counts_by_its_own_code():
    def make(helper):
        def kernel(x):
            x[0] = helper(x[1])
        return kernel

    def double(v):
        return 2 * v

    def triple(v):
        return 3 * v

    class Dispatcher:                 # numba's dispatchers expose the Python function as py_func
        def __init__(self, f):
            self.py_func = f

    assert key(make(Dispatcher(double))) == key(make(Dispatcher(double)))
    assert key(make(Dispatcher(double))) != key(make(Dispatcher(triple)))


def test_an_unknown_object_in_the_closure_is_not_cached():
    class Opaque:
        pass

    thing = Opaque()

    def kernel(x):
        x[0] = thing is None

    with pytest.raises(Uncacheable):
        key(kernel)


def test_editing_a_kernels_source_or_a_module_it_imports_changes_the_key(tmp_path, monkeypatch):
    """A stale entry is never used: the key covers the kernel's file and the kernels modules it
    imports, transitively (a device function in another module)."""
    files = {"kernels.probe_kernel": tmp_path / "probe_kernel.py", "kernels.probe_helper": tmp_path / "probe_helper.py"}
    monkeypatch.setattr(kernel_cache, "_module_file", lambda name: str(files[name]) if name in files else None)
    files["kernels.probe_helper"].write_text("def helper(v):\n    return v + 1\n")
    files["kernels.probe_kernel"].write_text("from kernels.probe_helper import helper\n\n"
                                             "def kernel(x):\n    x[0] = helper(x[0])\n")

    def digest() -> str:
        kernel_cache.source_closure_digest.cache_clear()
        return kernel_cache.source_closure_digest("kernels.probe_kernel")

    first = digest()
    assert digest() == first
    files["kernels.probe_helper"].write_text("def helper(v):\n    return v + 2\n")        # the helper changed
    second = digest()
    assert second != first
    files["kernels.probe_kernel"].write_text(files["kernels.probe_kernel"].read_text() + "# edited\n")
    assert digest() != second
    kernel_cache.source_closure_digest.cache_clear()


def test_a_real_kernel_module_key_covers_the_operators_it_imports():
    digest = kernel_cache.source_closure_digest("kernels.algorithms.kclique.gpu_list")
    assert len(digest) == 64
    imports = kernel_cache._kernels_imports(kernel_cache._module_file("kernels.algorithms.kclique.gpu_list"),
                                            "kernels.algorithms.kclique")
    assert "kernels.operators.sorted_search" in imports


def test_a_stored_entry_comes_back_and_a_damaged_one_is_removed(tmp_path):
    store = Store(tmp_path, limit=1 << 20)
    store.put("a" * 64, b"payload")
    assert store.get("a" * 64) == b"payload"
    path = store.path("a" * 64)
    data = path.read_bytes()
    for damaged in (data[:-3], data[:-1] + b"X", b"not a cache entry" + data, b""):
        path.write_bytes(damaged)
        assert store.get("a" * 64) is None
        assert not path.exists()              # removed: the next run compiles and stores it again
        store.put("a" * 64, b"payload")
    assert store.get("b" * 64) is None


def _write_many(root: str, payload: bytes, rounds: int) -> None:
    store = Store(root, limit=1 << 30)
    for _ in range(rounds):
        store.put("c" * 64, payload)


def test_processes_writing_one_entry_at_once_leave_it_whole(tmp_path):
    payloads = [bytes([i]) * (200_000 + i) for i in range(4)]
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_write_many, args=(str(tmp_path), p, 30)) for p in payloads]
    for p in procs:
        p.start()
    store = Store(tmp_path)
    seen = set()
    while any(p.is_alive() for p in procs):
        got = store.get("c" * 64)
        if got is not None:
            assert got in payloads            # never a mixture, never torn
            seen.add(len(got))
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    assert store.get("c" * 64) in payloads
    assert not [f for f in os.listdir(store.path("c" * 64).parent) if f.endswith(".tmp")]


def test_the_size_limit_evicts_the_least_recently_used(tmp_path):
    store = Store(tmp_path, limit=10_000)
    for i in range(8):
        store.put(f"{i:064d}", bytes(2_000))
        old = time.time() - 1000 + i          # entry i was used at time i
        os.utime(store.path(f"{i:064d}"), (old, old))
    os.utime(store.path(f"{0:064d}"))         # entry 0 was just used: it stays
    store.evict()
    left = {int(e.name[:64]) for e in store.entries()}
    assert 0 in left and sum(os.path.getsize(store.path(f"{i:064d}")) for i in left) <= 10_000
    assert 1 not in left and 2 not in left    # the oldest went first
    assert store.info()["entries"] == len(left)
    assert store.clear() == len(left) and store.info()["entries"] == 0


class FakeKernel:
    def __init__(self, tag: str):
        self.tag = tag

    def _reduce_states(self):
        return {"tag": self.tag}


class FakeDispatcher:
    def __init__(self, func, options=None):
        self.py_func, self.targetoptions = func, options or {}


class FakeContext:
    def refresh(self):
        pass


def test_the_numba_hook_stores_what_was_compiled_and_loads_it_next_time(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel_cache, "device_facts", lambda: FACTS)
    monkeypatch.setattr(KernelDiskCache, "_rebuild", lambda self, blob, ctx: FakeKernel(pickle.loads(blob)["tag"]))
    store = Store(tmp_path)
    before = kernel_cache.STATS.copy()
    cache = KernelDiskCache(FakeDispatcher(factory(64, 4)), store)
    assert cache.load_overload(SIG, FakeContext()) is None           # a miss: numba compiles...
    cache.save_overload(SIG, FakeKernel("compiled"))                 # ...and hands the kernel over
    other = KernelDiskCache(FakeDispatcher(factory(64, 4)), store)   # another process, the same kernel
    assert other.load_overload(SIG, FakeContext()).tag == "compiled"
    assert KernelDiskCache(FakeDispatcher(factory(64, 8)), store).load_overload(SIG, FakeContext()) is None
    stats = kernel_cache.STATS.copy().since(before)
    assert (stats.hits, stats.compiled) == (1, 1)


def test_an_entry_that_does_not_load_is_compiled_again(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel_cache, "device_facts", lambda: FACTS)
    store = Store(tmp_path)
    cache = KernelDiskCache(FakeDispatcher(factory(32, 1)), store)
    store.put(cache._key(SIG), b"not a pickle")                      # whole, but not a kernel
    before = kernel_cache.STATS.copy()
    assert cache.load_overload(SIG, FakeContext()) is None
    assert kernel_cache.STATS.copy().since(before).damaged == 1
    assert store.get(cache._key(SIG)) is None                        # removed


def test_the_cache_folder_and_limit_come_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(kernel_cache.CACHE_ENV, str(tmp_path / "k"))
    assert kernel_cache.cache_dir() == tmp_path / "k"
    monkeypatch.setenv(kernel_cache.CACHE_ENV, "off")
    assert kernel_cache.cache_dir() is None and kernel_cache.default_store() is None
    monkeypatch.setenv(kernel_cache.LIMIT_ENV, "500M")
    assert kernel_cache.size_limit() == 500 << 20
    monkeypatch.setenv(kernel_cache.LIMIT_ENV, "lots")
    assert kernel_cache.size_limit() == kernel_cache.DEFAULT_LIMIT_BYTES


def test_the_jit_wrapper_is_numbas_under_the_simulator():
    if not kernel_cache_simulated():
        pytest.skip("a real GPU: tests/test_kernel_cache_gpu.py")
    from kernels.cuda.jit import jit

    def kernel(x):
        x[0] = 1

    assert type(jit(kernel)).__name__ == "FakeCUDAKernel"


def kernel_cache_simulated() -> bool:
    return importlib.import_module("kernels.measure.targets").simulator_enabled()


def test_cache_info_and_clear_from_the_command_line(tmp_path, monkeypatch, capsys):
    from kernels.cli import main as cli_main

    monkeypatch.setenv(kernel_cache.CACHE_ENV, str(tmp_path))
    store = Store(tmp_path)
    store.put("d" * 64, b"x" * 1000)
    store.put("e" * 64, b"y" * 1000)
    assert cli_main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path) in out and "2 compiled kernel(s)" in out
    assert cli_main(["cache", "clear"]) == 0
    assert "removed 2 compiled kernel(s)" in capsys.readouterr().out
    assert store.info()["entries"] == 0
    monkeypatch.setenv(kernel_cache.CACHE_ENV, "off")
    assert cli_main(["cache", "info"]) == 0 and "off" in capsys.readouterr().out
