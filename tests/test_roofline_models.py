"""The roofline's work models (kernels/roofline) against hand counts on tiny graphs, and the
registry: every variant that runs on a real GPU has a model."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.algorithms.registry import families, get_family
from kernels.graph.csr import CSRGraph
from kernels.roofline import OP_KINDS, Work, model_for, work_of


def _problem(family: str, variant: str, graph, **params):
    fam = get_family(family)
    resolved = fam.resolve_params(fam.variant(variant), params)
    return fam.prepare(graph, resolved, 0), resolved


def _work(family, variant, graph, **params) -> Work:
    problem, resolved = _problem(family, variant, graph, **params)
    return work_of(family, variant, problem, resolved, {})


def _undirected(n, edges, weights=None):
    src, dst = zip(*edges, strict=True)
    return CSRGraph.from_edges(n, src, dst, weights, directed=False, both_directions=True, name="tiny")


# a triangle 0-1-2 and a pendant edge 2-3: rows [1 2] [0 2] [0 1 3] [2]
PAW = [(0, 1), (0, 2), (1, 2), (2, 3)]


def test_every_gpu_variant_has_a_model():
    missing = [f"{f.name}/{v.name}" for f in families().values() for v in f.variants.values()
               if "cuda" in v.targets and model_for(f.name, v.name) is None]
    assert missing == []


def test_cpu_variants_have_none():
    assert model_for("spmv", "scipy") is None and model_for("triangles", "cpu-serial") is None


def test_spmv_counts_each_array_once():
    # 3 x 3, 4 fp64 entries: values 4·8 + columns 4·4 + row pointers 4·4 (int32) + x 3·8 + y 3·8
    a = CSRGraph.from_edges(3, [0, 0, 1, 2], [0, 2, 1, 0], [1.0, 2.0, 3.0, 4.0], name="m")
    for v in ("gpu-naive", "gpu-merge", "cusparse"):
        w = _work("spmv", v, a)
        assert (w.bytes, w.ops, w.op) == (32 + 16 + 16 + 24 + 24, 4.0, "fma-fp64")
    w32 = _work("spmv", "gpu-tunable", a, dtype="fp32")
    assert (w32.bytes, w32.op) == (16 + 16 + 16 + 12 + 12, "fma-fp32")
    assert w32.intensity == pytest.approx(4 / 72)


def test_triangle_rows_merge_steps_by_hand():
    # (0,1): rest of row 0 after 1 = [2], row 1 above 1 = [2] -> 2; (0,2): 0 + [3] -> 1;
    # (1,2): 0 + [3] -> 1; (2,3): 0 + 0 -> 0.  Bytes: 8·5 row pointers + 4·8 columns + 8 (the total)
    g = _undirected(4, PAW)
    for v in ("gpu-row-block", "gpu-row-shared"):
        w = _work("triangles", v, g)
        assert (w.bytes, w.ops, w.op) == (40 + 32 + 8, 4.0, "int32")
    assert _work("triangles", "gpu-row-block", g, per_vertex=True).bytes == 40 + 32 + 8 * 5


def test_triangle_oriented_probes_by_hand():
    # degrees 2 2 3 1: order 3 < 0 < 1 < 2, so 3->2, 0->1, 0->2, 1->2; out-degrees 2 1 0 1
    # probes min(d+a, d+b): (0,1) 1, (0,2) 0, (1,2) 0, (3,2) 0.  Bytes: 8·5 + 4·4 oriented + 8
    w = _work("triangles", "gpu-oriented", _undirected(4, PAW))
    assert (w.bytes, w.ops) == (40 + 16 + 8, 1.0)


def test_triangle_spgemm_products_by_hand():
    # natural L = tril: row k of L = neighbours below k, column k = neighbours above:
    # in·out per k: 0: 2·0, 1: 1·1, 2: 1·2, 3: 0·1 -> 3 products
    g = _undirected(4, PAW)
    problem, resolved = _problem("triangles", "gpu-row-block", g)
    w = work_of("triangles", "gpu-spgemm", problem, {"ordering": "natural"}, {})
    assert (w.ops, w.op) == (3.0, "fma-fp32")


def test_bfs_and_sssp_count_only_what_is_reached():
    # path 0-1-2 and an isolated vertex 3, from 0: 3 reached, 4 entries scanned
    g = _undirected(4, [(0, 1), (1, 2)])
    bfs = _work("bfs", "gpu-csr", g, source=0, direction="push")
    assert (bfs.bytes, bfs.ops, bfs.op) == (3 * (16 + 4 + 8) + 4 * (4 + 4), 4.0, "int32")
    sssp = _work("sssp", "gpu-slotted", g, source=0)
    assert (sssp.bytes, sssp.ops, sssp.op) == (3 * (16 + 8 + 8) + 4 * (4 + 8 + 8), 4.0, "add+min-fp64")
    alone = _work("bfs", "gpu-csr", g, source=3, direction="push")   # nothing to scan from the isolated vertex
    assert (alone.bytes, alone.ops) == (16 + 4 + 8, 0.0)


def test_a_direction_optimizing_bfs_gets_the_lower_bound_not_the_top_down_count():
    # bottom-up steps stop at the first visited parent, so the top-down count (every entry of every
    # reached vertex) is no model of gpu-csr's default: per reached vertex row pointers, level, one
    # entry (column, neighbour's level); the frontier bitmap once (4 vertices: one byte)
    g = _undirected(4, [(0, 1), (1, 2)])
    optimizing = _work("bfs", "gpu-csr", g, source=0)                 # the default direction
    assert (optimizing.bytes, optimizing.ops) == (3 * (16 + 4 + 4 + 4) + 1, 3.0)
    assert optimizing == _work("bfs", "gpu-do", g, source=0)


def test_apsp_floyd_warshall_passes_by_hand():
    g = _undirected(3, [(0, 1), (1, 2)], [1.0, 2.0])
    naive = _work("apsp", "gpu-fw-naive", g)
    assert (naive.bytes, naive.ops, naive.op) == (2 * 27 * 8, 27.0, "add+min-fp64")
    # tile 8: the matrix padded to 8 x 8, one round
    blocked = _work("apsp", "gpu-fw-blocked", g, tile=8, warps_per_block=2)
    assert blocked.bytes == 2 * 1 * 64 * 8 and blocked.ops == 27.0
    staged = _work("apsp", "gpu-fw-staged", g, tile=8, stage=4, warps_per_block=2, dtype="fp32",
                   predecessors=True)
    assert (staged.bytes, staged.op) == (2 * 64 * (4 + 4), "add+min-fp32")


def test_apsp_dijkstra_by_hand():
    g = _undirected(3, [(0, 1), (1, 2)], [1.0, 2.0])
    problem, resolved = _problem("apsp", "gpu-dijkstra", g)
    w = work_of("apsp", "gpu-dijkstra", problem, resolved, {})
    d = problem.data
    csr = d["indptr"].nbytes + d["indices"].nbytes + d["weights"].nbytes
    assert (w.bytes, w.ops) == (csr + 3 * 9 * 8, 3.0 * 4)          # 4 stored entries, 3 sources


def test_kclique_models_by_hand():
    # K4 oriented: out-degrees 3 2 1 0. Vertex: lookups 2+1+0 + 1+0 + 0 = 4, words 3+2+1 = 6.
    # Edge: Σ (d+v + d+u) over the 6 edges = 5+4+3+3+2+1 = 18. Bytes 8·5 + 4·6 + 8
    k4 = _undirected(4, [(a, b) for a in range(4) for b in range(a + 1, 4)])
    vertex = _work("kclique", "gpu-vertex", k4, k=3)
    assert (vertex.bytes, vertex.ops, vertex.op) == (72, 10.0, "int32")
    assert _work("kclique", "gpu-list", k4, k=3).ops == 4.0
    assert _work("kclique", "gpu-edge", k4, k=3).ops == 18.0
    assert _work("kclique", "gpu", k4, k=3, work="edge").ops == 18.0


def test_work_refuses_an_unknown_operation_kind():
    with pytest.raises(ValueError):
        Work(1, 1.0, "fma-fp16", "x")
    assert set(OP_KINDS) >= {"fma-fp64", "add+min-fp64", "int32"}


def test_models_scale_with_the_input():
    # a real check on a larger graph: the rows model's bytes grow with the entries, its ops too
    rng = np.random.default_rng(1)
    edges = {tuple(sorted(map(int, rng.choice(60, 2, replace=False)))) for _ in range(200)}
    small, big = _undirected(60, sorted(edges)[:50]), _undirected(60, sorted(edges))
    ws, wb = _work("triangles", "gpu-row-block", small), _work("triangles", "gpu-row-block", big)
    assert wb.bytes - ws.bytes == 4 * (big.nnz - small.nnz) and wb.ops > ws.ops


def test_oriented_model_counts_the_probes_the_kernel_reports():
    # gpu-oriented counts its hash probes on the device (result "probes"): the model must agree
    from kernels.graph.generators import rmat
    from kernels.run.runner import run_variant

    g = rmat(5, 8, seed=3)
    record = run_variant(g, "triangles", "gpu-oriented", {"group_size": 8}, target="sim", repeat=1, warmup=0).record
    assert record["result"]["probes"] > 0 and record["roofline"]["ops"] == record["result"]["probes"]
