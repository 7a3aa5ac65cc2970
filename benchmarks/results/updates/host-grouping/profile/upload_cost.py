"""The host time of the compact path's upload pieces on a GPU machine (what made `upload-cost.log`).

    python3 benchmarks/results/updates/host-grouping/profile/upload_cost.py     # from the repository root

Medians of 300 calls, each followed by a ``cuda.synchronize()`` outside the timing: an idle
synchronize, the default stream's handle, and for 10^3-10^5 int64 words ``Workspace.send``
(queued and synchronous), ``Workspace.get``, the device pointer, the driver's copy alone and the
host buffer's address.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path.cwd()))


def median_us(cuda, call, reps: int = 300) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
        cuda.synchronize()
    return round(statistics.median(times) * 1e6, 1)


def main() -> int:
    from kernels.measure.targets import activate

    activate("cuda")
    from numba import cuda

    from kernels.cuda.fast_launch import default_stream_handle
    from kernels.operators.launch import Workspace, _direct_copy

    ws = Workspace()
    cuda.synchronize()
    print("synchronize, idle", median_us(cuda, cuda.synchronize), "us")
    print("default_stream_handle", median_us(cuda, default_stream_handle), "us")
    for n in (1000, 10000, 100000):
        host = ws.staging("x", np.int64, n)
        host[:n] = 1
        dev = ws.send("x", host, n, asynchronous=True)
        cuda.synchronize()
        ptr = int(dev.device_ctypes_pointer.value)
        pieces = {
            "send async": lambda n=n, host=host: ws.send("x", host, n, asynchronous=True),
            "send sync": lambda n=n, host=host: ws.send("x", host, n),
            "get": lambda n=n, host=host: ws.get("x", host.dtype, n),
            "pointer": lambda dev=dev: int(dev.device_ctypes_pointer.value),
            "cuMemcpyHtoDAsync": lambda n=n, host=host, ptr=ptr: _direct_copy("cuMemcpyHtoDAsync", ptr,
                                                                              host.ctypes.data, n * 8),
            "host.ctypes.data": lambda host=host: host.ctypes.data,
        }
        print(n, "words:", " ".join(f"{name} {median_us(cuda, call)}" for name, call in pieces.items()), "us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
