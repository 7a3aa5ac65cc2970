import time, numpy as np, numba
from kernels.algorithms.spmv.cpu import spmv_parallel
from kernels.graph.io import read_graph
g = read_graph("tests/data/lp_afiro.mtx")
v = np.ones(g.nnz); x = np.ones(g.n_cols); y = np.empty(g.n_rows)
spmv_parallel(g.indptr, g.indices, v, x, y)
print("threading layer", numba.threading_layer(), "threads", numba.get_num_threads())
for label in ("before cuda", "after cuda"):
    ts = []
    for _ in range(5):
        t = time.perf_counter(); spmv_parallel(g.indptr, g.indices, v, x, y); ts.append(time.perf_counter() - t)
    print(label, ["%.3f ms" % (t * 1e3) for t in ts])
    from numba import cuda; cuda.to_device(np.ones(10)); cuda.synchronize()
