"""Launch-cost probe: what one numba kernel launch costs on the host, by path.

Paths: the dispatcher (``k[g, b](*args)``), the compiled kernel's ``launch`` (no typing),
cuda.core ``launch`` with prepared arguments, the project's planned launch
(``kernels.cuda.fast_launch``), and a CUDA graph captured from numba
launches (cuda.core graph builder, and CuPy stream capture), plus a cooperative grid sync.
Writes JSON to argv[1] (or stdout).
"""
import json
import sys
import time
from pathlib import Path

import numpy as np
from numba import cuda

out = {}


def now():
    return time.perf_counter()


@cuda.jit
def tiny(a, b, c, d, e, f, g, h, n, x):
    i = cuda.grid(1)
    if i < n:
        a[i] += x


arrs = [cuda.device_array(1024, np.float64) for _ in range(8)]
args = (*arrs, 1024, 1.0)
k = tiny[4, 256]
k(*args)
cuda.synchronize()


def bench(fn, reps=2000):
    fn()
    cuda.synchronize()
    t0 = now()
    for _ in range(reps):
        fn()
    t1 = now()
    cuda.synchronize()
    t2 = now()
    return {"host_us": (t1 - t0) / reps * 1e6, "wall_us": (t2 - t0) / reps * 1e6}


out["dispatcher_10args"] = bench(lambda: k(*args))
kern = next(iter(tiny.overloads.values()))
stream = cuda.default_stream()
out["kernel_launch_10args"] = bench(lambda: kern.launch(args, (4,), (256,), stream, 0))

retr, kargs = [], []
for t, v in zip(kern.argument_types, args, strict=True):
    kern._prepare_args(t, v, stream, retr, kargs)
from cuda.core import LaunchConfig, launch  # noqa: E402

cfg = LaunchConfig(grid=4, block=256, shmem_size=0)
cufunc = kern._codelibrary.get_cufunc()
ker = cufunc.kernel
stream = cuda.default_stream()
try:
    out["cuda_core_launch_prepared"] = bench(lambda: launch(stream, cfg, ker, *kargs))
except Exception as exc:  # noqa: BLE001
    out["cuda_core_launch_prepared"] = repr(exc)

# raw driver launch with a packed parameter buffer
try:
    import ctypes

    from cuda.bindings import driver as drv
    holder = []
    ptrs = (ctypes.c_void_p * len(kargs))()
    for i, v in enumerate(kargs):
        c = v if isinstance(v, ctypes._SimpleCData) else ctypes.c_ssize_t(int(v))
        holder.append(c)
        ptrs[i] = ctypes.addressof(c)
    fn_handle = cufunc.handle
    out["fn_handle_type"] = str(type(fn_handle))
    def raw():
        drv.cuLaunchKernel(fn_handle, 4, 1, 1, 256, 1, 1, 0, 0, ctypes.addressof(ptrs), 0)
    raw()
    out["raw_cuLaunchKernel"] = bench(raw)
except Exception as exc:  # noqa: BLE001
    out["raw_cuLaunchKernel"] = repr(exc)

# CUDA graph via CuPy stream capture of numba launches
try:
    import cupy as cp
    out["cupy"] = cp.__version__
    s = cp.cuda.Stream(non_blocking=True)
    ns = cuda.external_stream(s.ptr)
    kk = tiny[4, 256, ns]
    kk(*args)
    s.synchronize()
    N = 100
    with s:
        s.begin_capture()
        for _ in range(N):
            kk(*args)
        graph = s.end_capture()
    graph.launch(s)
    s.synchronize()
    reps = 200
    t0 = now()
    for _ in range(reps):
        graph.launch(s)
    t1 = now()
    s.synchronize()
    t2 = now()
    out["cupy_graph_100_nodes"] = {"host_us_per_graph": (t1 - t0) / reps * 1e6,
                                   "wall_us_per_node": (t2 - t0) / reps / N * 1e6}
except Exception as exc:  # noqa: BLE001
    out["cupy_graph_100_nodes"] = repr(exc)

# the project's planned launch (kernels/cuda/fast_launch.py): numba's overload, our parameter words
try:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from kernels.cuda.fast_launch import FastKernel

    planned = FastKernel(tiny)
    planned[4, 256](*args)
    out["planned_launch_10args"] = bench(lambda: planned[4, 256](*args))
except Exception as exc:  # noqa: BLE001
    out["planned_launch_10args"] = repr(exc)

# cooperative grid sync
try:
    from numba.cuda import cg

    @cuda.jit
    def syncs(a, rounds):
        g = cg.this_grid()
        for _ in range(rounds):
            if cuda.grid(1) == 0:
                a[0] += 1
            g.sync()

    arr = cuda.to_device(np.zeros(1, np.int64))
    syncs[132, 256](arr, 1)
    cuda.synchronize()
    kern2 = next(iter(syncs.overloads.values()))
    mx = kern2.max_cooperative_grid_blocks(256)
    out["coop_max_blocks_256"] = mx
    for blocks in (132, mx):
        for rounds in (1, 10001):
            cuda.synchronize()
            t0 = now()
            syncs[blocks, 256](arr, rounds)
            cuda.synchronize()
            out[f"coop_{blocks}x256_{rounds}"] = (now() - t0) * 1e6
    out["coop_sync_us"] = (out["coop_132x256_10001"] - out["coop_132x256_1"]) / 10000
except Exception as exc:  # noqa: BLE001
    out["coop"] = repr(exc)

# planned launches of one 10-argument kernel with a grid sync against the same without: what
# cuLaunchCooperativeKernel itself costs the host
try:
    from numba.cuda import cg as cg2

    from kernels.cuda.fast_launch import FastKernel

    def tiny_body(a, b, c, d, e, f, g, h, n, x):
        i = cuda.grid(1)
        if i < n:
            a[i] += x

    @cuda.jit
    def tiny_synced(a, b, c, d, e, f, g, h, n, x):
        i = cuda.grid(1)
        if i < n:
            a[i] += x
        cg2.this_grid().sync()

    plain, coop = FastKernel(cuda.jit(tiny_body)), FastKernel(tiny_synced)
    for name, kernel in (("plain", plain), ("cooperative", coop)):
        kernel[4, 256](*args)
        kernel[4, 256](*args)
        out[f"planned_{name}_10args"] = bench(lambda kernel=kernel: kernel[4, 256](*args))
except Exception as exc:  # noqa: BLE001
    out["planned_cooperative"] = repr(exc)

try:                                     # the device and the code version this was measured with
    from kernels.measure.environment import environment

    out["environment"] = environment("cuda")
except Exception as exc:  # noqa: BLE001
    out["environment"] = repr(exc)

text = json.dumps(out, indent=1)
print(text)
if len(sys.argv) > 1:
    Path(sys.argv[1]).write_text(text)
