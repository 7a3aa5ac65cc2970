import statistics, sys, time
sys.path.insert(0, ".")
import numpy as np
from kernels.measure.targets import activate
activate("cuda")
from numba import cuda
from kernels.operators.launch import Workspace, _direct_copy
from kernels.cuda.fast_launch import default_stream_handle
ws = Workspace()
def med(f, reps=300):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0); cuda.synchronize()
    return statistics.median(ts) * 1e6
cuda.synchronize()
print("synchronize, idle", round(med(cuda.synchronize), 1), "us")
print("default_stream_handle", round(med(default_stream_handle), 1), "us")
for n in (1000, 10000, 100000):
    host = ws.staging("x", np.int64, n); host[:n] = 1
    dev = ws.send("x", host, n, asynchronous=True); cuda.synchronize()
    ptr = int(dev.device_ctypes_pointer.value)
    print(n, "words:",
          "send async", round(med(lambda: ws.send("x", host, n, asynchronous=True)), 1),
          "send sync", round(med(lambda: ws.send("x", host, n)), 1),
          "get", round(med(lambda: ws.get("x", host.dtype, n)), 1),
          "pointer", round(med(lambda: int(dev.device_ctypes_pointer.value)), 1),
          "cuMemcpyHtoDAsync", round(med(lambda: _direct_copy("cuMemcpyHtoDAsync", ptr, host.ctypes.data, n * 8)), 1),
          "host.ctypes.data", round(med(lambda: host.ctypes.data), 1), "us")
