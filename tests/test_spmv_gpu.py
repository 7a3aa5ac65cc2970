"""The SpMV GPU variants on the CUDA simulator: every result verified against SciPy.

Inputs stay tiny (the simulator runs one Python thread per CUDA thread) and runs use one
launch (``repeat=1, warmup=0``). Real-GPU runs are at the end, marked ``gpu``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kernels.algorithms.registry import get_family, get_variant
from kernels.errors import ConstraintError, TargetUnavailableError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph
from kernels.run.runner import run_variant

ROOT = Path(__file__).resolve().parents[1]
REAL_FILES = ("west0067.mtx", "lp_afiro.mtx", "LFAT5.mtx", "karate.mtx", "GD98_c.mtx")
# small launch shapes, so that the simulator stays quick
VARIANTS = (("gpu-naive", {"wg": 32}), ("gpu-tunable", {"wg": 32, "rows": 8}), ("gpu-merge", {"wg": 32, "ipt": 3}))


def sim_run(graph, variant, params, **kw):
    rec = run_variant(graph, "spmv", variant, params, target="sim", repeat=1, warmup=0, **kw).record
    assert rec["target"] == "sim"
    return rec


def assert_verified(rec):
    assert rec["verified"], rec["verification"]
    assert rec["status"] == "ok"


def irregular_matrix(n_rows=40, n_cols=29, long_row=300, seed=3, name="irregular"):
    """Rectangular, with empty rows (first, last and a run in the middle) and one very long row."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 4, n_rows)
    lengths[[0, 1, n_rows - 1]] = 0
    lengths[10:16] = 0
    lengths[7] = long_row
    src = np.repeat(np.arange(n_rows), lengths)
    dst = rng.integers(0, n_cols, len(src))
    weights = rng.uniform(-2.0, 2.0, len(src))
    return CSRGraph.from_edges(n_rows, src, dst, weights, n_cols=n_cols, directed=True, name=name)


@pytest.mark.parametrize("variant,params", VARIANTS, ids=[v for v, _ in VARIANTS])
@pytest.mark.parametrize("filename", REAL_FILES)
def test_gpu_variants_match_scipy_on_real_matrices(data, filename, variant, params):
    graph = read_graph(data(filename))
    dtype = "fp32" if filename in ("karate.mtx", "LFAT5.mtx") else "fp64"
    rec = sim_run(graph, variant, {**params, "dtype": dtype})
    assert_verified(rec)
    assert rec["input"]["rows"] == graph.n_rows and rec["input"]["cols"] == graph.n_cols


def test_rectangular_input_keeps_its_shape(data):
    graph = read_graph(data("lp_afiro.mtx"))
    assert (graph.n_rows, graph.n_cols) == (27, 51)
    result = run_variant(graph, "spmv", "gpu-tunable", {"wg": 16, "rows": 4}, target="sim", repeat=1, warmup=0)
    assert result.output.shape == (27,)
    assert result.record["verified"]


@pytest.mark.parametrize("dtype", ["fp64", "fp32"])
@pytest.mark.parametrize("variant,params", VARIANTS, ids=[v for v, _ in VARIANTS])
def test_empty_rows_and_a_very_long_row(variant, params, dtype):
    graph = irregular_matrix()
    assert_verified(sim_run(graph, variant, {**params, "dtype": dtype}))


@pytest.mark.parametrize("wg,rows", [(1, 1), (4, 1), (4, 4), (32, 1), (32, 32), (64, 64), (64, 2), (64, 1)])
def test_tunable_on_every_kind_of_launch_shape(wg, rows):
    # T = wg/rows threads per row: 1 (no reduction), up to a warp (shuffles only), and 64
    # (a shared-memory step onto the first warp, then shuffles)
    graph = irregular_matrix(n_rows=24, long_row=150, seed=wg + rows)
    assert_verified(sim_run(graph, "gpu-tunable", {"wg": wg, "rows": rows, "reduce": "shuffle"}))


@pytest.mark.parametrize("wg,rows", [(4, 1), (32, 4), (64, 1)])
def test_tunable_with_the_papers_shared_memory_tree(wg, rows):
    graph = irregular_matrix(n_rows=24, long_row=150, seed=7)
    assert_verified(sim_run(graph, "gpu-tunable", {"wg": wg, "rows": rows, "reduce": "shared", "dtype": "fp32"}))


@pytest.mark.parametrize("ipt", [1, 2, 5])
def test_merge_path_with_rows_spanning_many_tiles(ipt):
    # tiles of 32 * ipt items: the 400-entry row crosses several tiles and many threads
    graph = irregular_matrix(n_rows=50, long_row=400, seed=ipt)
    assert_verified(sim_run(graph, "gpu-merge", {"wg": 32, "ipt": ipt}))


@pytest.mark.parametrize("variant,params", VARIANTS, ids=[v for v, _ in VARIANTS])
def test_matrix_without_entries_gives_zeros(variant, params):
    graph = CSRGraph(np.zeros(6, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0), n_cols=3,
                     directed=True, name="no-entries")
    result = run_variant(graph, "spmv", variant, params, target="sim", repeat=1, warmup=0)
    assert result.record["verified"]
    assert np.array_equal(result.output, np.zeros(5))


def test_wide_row_pointers_are_used_beyond_int32(monkeypatch):
    """Matrices with >= 2^31 entries get int64 row pointers: the same kernels, compiled for them."""
    from kernels.algorithms.spmv import gpu_common

    monkeypatch.setattr(gpu_common, "INT32_LIMIT", 10)
    assert gpu_common.index_dtype(11) == np.int64
    graph = irregular_matrix(n_rows=20, long_row=80, name="wide-pointers")
    for variant, params in VARIANTS:
        assert_verified(sim_run(graph, variant, params))


def test_matrix_stays_on_the_device_between_runs_and_the_record_says_so():
    from kernels.algorithms.spmv.gpu_common import ResidentMatrix

    ResidentMatrix.forget()
    graph = irregular_matrix(n_rows=12, long_row=20, name="resident")
    first = sim_run(graph, "gpu-naive", {"wg": 32})
    second = sim_run(graph, "gpu-tunable", {"wg": 8, "rows": 2})
    assert not any("already on the device" in n for n in first["notices"])
    assert any("already on the device" in n for n in second["notices"])
    assert_verified(second)
    third = sim_run(graph, "gpu-naive", {"wg": 32, "dtype": "fp32"})  # another precision: uploaded anew
    assert not any("already on the device" in n for n in third["notices"])


def test_rows_larger_than_wg_is_refused_naming_both():
    fam, var = get_variant("spmv", "gpu-tunable")
    with pytest.raises(ConstraintError) as err:
        fam.resolve_params(var, {"wg": 4, "rows": 8})
    assert "rows=8" in str(err.value) and "wg=4" in str(err.value)
    with pytest.raises(ConstraintError, match="wg \\* ipt"):
        fam.resolve_params(fam.variant("gpu-merge"), {"wg": 1024, "ipt": 3})


def test_registry_metadata_of_the_gpu_variants():
    fam = get_family("spmv")
    tunable = fam.variants["gpu-tunable"]
    wg = next(p for p in tunable.params if p.name == "wg")
    rows = next(p for p in tunable.params if p.name == "rows")
    valid = [(w, r) for w in wg.grid_values() for r in rows.grid_values() if r <= w]
    assert len(valid) == 45  # the paper-style table: wg and rows in 1..256
    assert fam.variants["cusparse"].kind == "vendor" and fam.variants["cusparse"].targets == ("cuda",)
    assert fam.variants["gpu-merge"].targets == ("cuda", "sim")


def test_cusparse_is_unavailable_here_with_a_reason():
    fam, var = get_variant("spmv", "cusparse")
    reason = var.available()
    assert reason and ("CuPy" in reason or "simulator" in reason or "GPU" in reason)
    with pytest.raises(TargetUnavailableError):
        run_variant(irregular_matrix(), "spmv", "cusparse", target="cuda")


def test_canonical_check_for_cusparse():
    from kernels.algorithms.spmv.vendor import is_canonical

    indptr = np.array([0, 2, 4, 4, 6])
    assert is_canonical(indptr, np.array([1, 3, 0, 2, 5, 6]))      # rows may restart low
    assert not is_canonical(indptr, np.array([1, 1, 0, 2, 5, 6]))  # a duplicate in row 0
    assert not is_canonical(indptr, np.array([1, 3, 2, 0, 5, 6]))  # row 1 unsorted


def test_listing_the_variants_imports_neither_numba_cuda_nor_cupy():
    code = ("import sys, json; from kernels.algorithms.registry import families\n"
            "json.dumps(families()['spmv'].to_json())\n"
            "print([m for m in ('numba.cuda', 'cupy') if m in sys.modules])")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# ---- real GPU (skipped without one) ------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("variant,params", [*VARIANTS, ("gpu-tunable", {"wg": 256, "rows": 32}),
                                            ("gpu-tunable", {"wg": 128, "rows": 1, "reduce": "shared"}),
                                            ("gpu-merge", {"wg": 256, "ipt": 7}), ("cusparse", {})])
def test_every_variant_on_the_real_gpu(variant, params):
    graph = irregular_matrix(n_rows=5000, n_cols=3000, long_row=100_000, name="gpu-irregular")
    rec = run_variant(graph, "spmv", variant, params, target="cuda", repeat=3).record
    assert_verified(rec)
    assert rec["timing"]["kernel"]["median_s"] > 0
