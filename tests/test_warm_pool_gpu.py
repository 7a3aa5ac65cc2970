"""A warmed pool on a real GPU (``pytest -m gpu``): the measuring process and the compile-ahead
processes did their start-up (context, a first compile, the measuring process's first CUDA graph
capture) before any job, and the pool's jobs then run in those processes, verified."""

from __future__ import annotations

import pytest

from kernels.compute.backend import Job
from kernels.compute.pool import WorkerPool
from kernels.graph.csr import CSRGraph

pytestmark = pytest.mark.gpu


def test_a_warmed_pool_runs_verified_cuda_cells_in_the_processes_it_warmed(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPH_KERNELS_KERNEL_CACHE", str(tmp_path / "cache"))
    pool = WorkerPool(compile_ahead=2)
    try:
        report = pool.warm("cuda", timeout=600)
        assert report["compile_ahead"] == 2 and report["compile_ahead_warmed"] == 2, report
        assert report["measuring"]["first_compile_s"] > 0 and report["measuring"]["pid"] > 0
        graph = CSRGraph.from_edges(6, [0, 1, 2, 3, 4, 5, 0], [1, 2, 3, 4, 5, 0, 3], directed=True, name="ring")
        pool.add_graph("g", graph)
        jobs = [Job("g", "spmv", "gpu-tunable", {"wg": wg, "rows": 1, "reduce": "shuffle"}, target="cuda",
                    repeat=1, warmup=0) for wg in (32, 64, 128)]
        pool.compile_ahead(jobs)
        outcomes = [pool.run(job) for job in jobs]
        assert all(o.ok and o.record["verified"] for o in outcomes), [o.message for o in outcomes]
        assert pool.worker("cuda").pid == report["measuring"]["pid"]
    finally:
        pool.close()
