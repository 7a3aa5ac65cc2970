"""``gpu-adaptive`` (row-binned SpMV in one launch) on the CUDA simulator, checked against SciPy.

Small thresholds (``short_row``, ``long_row``) let tiny matrices fill every kind of row: short
rows (natural order; ``threads_per_row`` lanes a row, or 32 rows a warp in ``stream`` mode),
vector rows (a warp each) and long rows split into chunks over several blocks. Inputs stay at
a few hundred entries: under the simulator every emulated shuffle is a block-wide barrier of
Python threads.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from numba import cuda  # a module global, as the simulator requires of kernels' modules

from kernels.algorithms.registry import get_variant
from kernels.errors import ConstraintError, ParameterError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph
from kernels.run.runner import run_variant

SMALL = {"short_row": 4, "long_row": 16}  # stream <= 4 < vector <= 16 < long


@pytest.fixture(autouse=True, scope="module")
def quick_thread_switches():
    """The simulator's barriers wait for every Python thread of a block, and with the default
    5 ms GIL switch interval each one costs tens of milliseconds; restored after this module."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(5e-4)
    yield
    sys.setswitchinterval(before)


def matrix_from_lengths(lengths, n_cols, seed=0, name="adaptive"):
    """A matrix whose row ``i`` has ``lengths[i]`` entries (random columns, duplicates allowed)."""
    rng = np.random.default_rng(seed)
    lengths = np.asarray(lengths, dtype=np.int64)
    src = np.repeat(np.arange(len(lengths)), lengths)
    dst = rng.integers(0, n_cols, len(src))
    weights = rng.uniform(-2.0, 2.0, len(src))
    return CSRGraph.from_edges(len(lengths), src, dst, weights, n_cols=n_cols, directed=True, name=name)


def every_kind_of_row(seed=1):
    """70 x 37 (rectangular): empty rows (first, last, a run), short rows, rows just past each
    threshold and long rows of 2, 3 and 7 chunks (with ``SMALL``)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 5, 70)
    lengths[[0, 69]] = 0
    lengths[5:9] = 0
    lengths[[3, 20, 33]] = [5, 12, 16]      # vector rows, one at long_row exactly
    lengths[[40, 41, 60]] = [17, 40, 100]   # long rows
    return matrix_from_lengths(lengths, 37, seed, name="every-kind")


def sim_run(graph, params, **kw):
    rec = run_variant(graph, "spmv", "gpu-adaptive", params, target="sim", repeat=1, warmup=0, **kw).record
    assert rec["target"] == "sim"
    assert rec["verified"], rec["verification"]
    assert rec["status"] == "ok"
    return rec


@pytest.mark.parametrize("block,dtype", [(32, "fp64"), (64, "fp32"), (64, "fp64")])
def test_every_kind_of_row_matches_scipy(block, dtype):  # default short_mode and loads: auto
    from kernels.algorithms.spmv.gpu_adaptive import row_bins

    graph = every_kind_of_row()
    bins = row_bins(graph.indptr, **SMALL)
    assert bins.n_short and len(bins.vec_rows) == 3 and len(bins.long_rows) == 3 and bins.n_chunks == 12
    rec = sim_run(graph, {"block": block, "dtype": dtype, **SMALL})
    assert rec["input"]["rows"] == 70 and rec["input"]["cols"] == 37
    notice = next(n for n in rec["notices"] if n.startswith("preprocessing"))
    assert "3 vector rows" in notice and "3 long rows" in notice and "12 chunks" in notice


@pytest.mark.parametrize("threads_per_row,block", [(1, 32), (2, 64), (4, 32), (8, 64), (16, 32), (32, 64)])
def test_grouped_short_rows_for_every_threads_per_row(threads_per_row, block):
    """Rows of 0 to 9 entries against ``short_row`` = 6 and ``long_row`` = 8: empty rows (a
    run, first and last), rows exactly at each threshold and one past it, so a group has lanes
    without entries, lanes running the four-load loop (``threads_per_row`` <= 2) and rows of
    other kinds to skip; 37 rows leave the last block of rows partly empty."""
    lengths = np.random.default_rng(threads_per_row).integers(0, 10, 37)
    lengths[[0, 36]] = 0
    lengths[10:13] = 0
    lengths[[3, 4, 20, 21]] = [6, 7, 8, 9]  # = short_row, short_row + 1, = long_row, long_row + 1
    graph = matrix_from_lengths(lengths, 23, seed=threads_per_row, name="grouped")
    rec = sim_run(graph, {"block": block, "short_row": 6, "long_row": 8, "threads_per_row": threads_per_row,
                          "short_mode": "group"})
    assert f"threads_per_row={threads_per_row}" in next(n for n in rec["notices"] if n.startswith("preprocessing"))


def test_stream_mode_rows_spanning_many_rounds_of_a_warp():
    # short rows only (short_row = 32): a warp's 32 rows hold ~500 entries, so rows straddle
    # the 32-entry rounds, and the second group of rows is a partial warp
    lengths = np.random.default_rng(5).integers(0, 33, 45)
    lengths[[2, 30]] = [32, 0]
    rec = sim_run(matrix_from_lengths(lengths, 50, seed=5), {"block": 32, "short_row": 32, "short_mode": "stream"})
    assert "segmented scan" in next(n for n in rec["notices"] if n.startswith("preprocessing"))


def test_stream_mode_with_every_kind_of_row():
    sim_run(every_kind_of_row(seed=3), {"block": 64, "short_mode": "stream", **SMALL})


def test_lanes_with_many_entries_use_the_four_load_loops_and_their_remainders():
    # block 32: vector rows of 150 and 256 entries give a lane 4-8 entries, the 1000-entry row's
    # four chunks of 250 give a thread 7-8: the unrolled loops run, then 0-3 leftover entries
    lengths = np.random.default_rng(9).integers(0, 5, 40)
    lengths[[4, 11, 25]] = [150, 256, 1000]
    graph = matrix_from_lengths(lengths, 300, seed=9, name="deep-rows")
    rec = sim_run(graph, {"block": 32, "short_row": 4, "long_row": 256})
    assert "4 chunks" in next(n for n in rec["notices"] if n.startswith("preprocessing"))


def test_a_single_very_long_row_is_spread_over_many_blocks():
    graph = matrix_from_lengths([0, 3, 300, 1, 0], 40, seed=2, name="one-long-row")
    rec = sim_run(graph, {"block": 32, "short_row": 2, "long_row": 16})
    assert "19 chunks" in next(n for n in rec["notices"] if n.startswith("preprocessing"))


@pytest.mark.parametrize("short_mode", ["group", "stream"])
def test_every_launch_writes_every_row_and_leaves_the_tickets_at_zero(short_mode):
    """y is poisoned between launches: a row that a launch skipped would stay NaN. The long
    rows' tickets must be back at 0 after each launch, or the next would never finish them."""
    from kernels.algorithms.registry import get_family

    fam, var = get_variant("spmv", "gpu-adaptive")
    params = fam.resolve_params(var, {"block": 64, "short_mode": short_mode, **SMALL})
    graph = every_kind_of_row(seed=4)
    problem = fam.prepare(graph, params, 0)
    params, _ = fam.resolve_auto(var, problem, params, "sim")   # threads_per_row=auto, as the runner does
    execution = var.make(problem, params, "sim")
    execution.compile()
    execution.upload()
    reference = get_family("spmv").reference(problem, params)
    outputs = []
    for _ in range(2):
        execution.d_y.copy_to_device(np.full(graph.n_rows, np.nan))
        execution.launch()
        execution.synchronize()
        assert not execution.d_tickets.copy_to_host().any()
        outputs.append(execution.download())
        assert fam.verify(outputs[-1], reference, problem, params).ok
    assert np.array_equal(outputs[0], outputs[1])  # the long rows' partials are added in a fixed order
    execution.release()


def test_wide_row_pointers_beyond_int32(monkeypatch):
    from kernels.algorithms.spmv import gpu_common

    monkeypatch.setattr(gpu_common, "INT32_LIMIT", 10)
    sim_run(every_kind_of_row(seed=6), {"block": 64, **SMALL})


def test_a_matrix_without_entries_gives_zeros():
    graph = CSRGraph(np.zeros(6, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0), n_cols=3,
                     directed=True, name="no-entries")
    result = run_variant(graph, "spmv", "gpu-adaptive", {"block": 32}, target="sim", repeat=1, warmup=0)
    assert result.record["verified"]
    assert np.array_equal(result.output, np.zeros(5))


@pytest.mark.parametrize("filename,dtype", [("lp_afiro.mtx", "fp64"), ("karate.mtx", "fp32")])
def test_real_matrices_with_the_default_thresholds(data, filename, dtype):
    sim_run(read_graph(data(filename)), {"block": 64, "dtype": dtype})


def test_row_bins_partition_the_rows_and_chunks_cover_the_long_rows():
    from kernels.algorithms.spmv.gpu_adaptive import row_bins

    rng = np.random.default_rng(8)
    lengths = np.minimum((1.0 - rng.random(3000)) ** -1.2, 5000).astype(np.int64)  # power-law-ish
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    bins = row_bins(indptr, short_row=8, long_row=256)
    vec_len = lengths[bins.vec_rows]
    long_len = lengths[bins.long_rows]
    assert bins.n_short == int((lengths <= 8).sum())
    assert set(bins.vec_rows) == set(np.flatnonzero((lengths > 8) & (lengths <= 256)))
    assert set(bins.long_rows) == set(np.flatnonzero(lengths > 256))
    assert np.all(np.diff(vec_len) <= 0) and np.all(np.diff(long_len) <= 0)  # longest first
    lo, hi = bins.chunk_span[0::2], bins.chunk_span[1::2]
    assert np.all(hi - lo <= 256) and np.all(hi - lo >= 128)
    for slot, row in enumerate(bins.long_rows):
        first, last = bins.long_first[slot], bins.long_first[slot + 1]
        assert np.all(bins.chunk_slot[first:last] == slot)
        assert lo[first] == indptr[row] and hi[last - 1] == indptr[row + 1]
        assert np.array_equal(lo[first + 1:last], hi[first:last - 1])  # consecutive, no gap or overlap
    assert bins.nbytes == 4 * len(bins.vec_rows) + 8 * len(bins.long_rows) + 8 * (len(bins.long_rows) + 1) \
        + 4 * bins.n_chunks + 16 * bins.n_chunks


def test_parameters_are_refused_with_their_reason():
    fam, var = get_variant("spmv", "gpu-adaptive")
    defaults = fam.resolve_params(var, {})
    assert (defaults["block"], defaults["long_row"], defaults["short_mode"], defaults["threads_per_row"],
            defaults["loads"]) == (128, "auto", "auto", "auto", "auto")
    with pytest.raises(ConstraintError, match="short_row <= long_row"):
        fam.resolve_params(var, {"short_row": 64, "long_row": 32})
    for bad in ({"block": 48}, {"block": 16}, {"block": 2048}, {"long_row": 3000}, {"short_row": -1},
                {"short_row": 5000}, {"threads_per_row": 3}, {"threads_per_row": 64}, {"short_mode": "bins"}):
        with pytest.raises(ParameterError):
            fam.resolve_params(var, bad)
    with pytest.raises(ParameterError, match="loads.*one of auto, stream, plain"):
        fam.resolve_params(var, {"loads": "cached"})


# ---- short_mode=auto and the loads parameter ----------------------------------------------

def scattered_short_rows(seed=11):
    """48 rows of 0-4 entries over 6,000 columns: nearly every gather in its own line of x."""
    lengths = np.random.default_rng(seed).integers(0, 5, 48)
    return matrix_from_lengths(lengths, 6000, seed, name="scattered")


def test_gather_spread_tells_scattered_columns_from_stencils():
    from kernels.algorithms.spmv.gpu_adaptive import STREAM_SPREAD, choose_short_mode, gather_spread
    from kernels.graph.generators import powerlaw_matrix, stencil

    scattered = scattered_short_rows()
    assert gather_spread(scattered.indptr, scattered.indices, 64, 8) > 0.8
    plaw = powerlaw_matrix(5000, 200_000, 20.0, 2.0, 2000, seed=1)
    assert choose_short_mode(plaw.indptr, plaw.indices, 64, 8)[0] == "stream"
    for kind, side in (("7pt", 20), ("27pt", 12)):
        g = stencil(kind, side)
        mode, spread = choose_short_mode(g.indptr, g.indices, 64, 8)
        assert mode == "group" and spread < 0.2 < STREAM_SPREAD, (kind, spread)
    # fp32 packs twice the columns in a line: the same stencil is even more local
    assert gather_spread(g.indptr, g.indices, 64, 4) < gather_spread(g.indptr, g.indices, 64, 8)
    # no short rows in the sample: nothing to measure, group (the mode is then irrelevant)
    long_only = matrix_from_lengths([70] * 40, 100, name="long-only")
    assert np.isnan(gather_spread(long_only.indptr, long_only.indices, 64, 8))
    assert choose_short_mode(long_only.indptr, long_only.indices, 64, 8)[0] == "group"


def test_auto_short_mode_keeps_group_mode_for_products_that_fit_in_the_l2():
    from kernels.algorithms.spmv.gpu_adaptive import L2_BYTES, choose_short_mode

    scattered = scattered_short_rows()
    assert choose_short_mode(scattered.indptr, scattered.indices, 4, 8)[0] == "stream"      # spread alone
    assert choose_short_mode(scattered.indptr, scattered.indices, 4, 8, L2_BYTES + 1)[0] == "stream"
    assert choose_short_mode(scattered.indptr, scattered.indices, 4, 8, L2_BYTES)[0] == "group"
    rec = sim_run(scattered, {"block": 32, "short_row": 4, "long_row": 16})
    assert any(n.startswith("short_mode=auto chose group: the product touches") for n in rec["notices"]), \
        rec["notices"]


def test_auto_short_mode_says_what_it_chose(monkeypatch):
    import kernels.algorithms.spmv.gpu_adaptive as gpu_adaptive

    monkeypatch.setattr(gpu_adaptive, "L2_BYTES", 0)     # as if the matrix were larger than any L2
    rec = sim_run(scattered_short_rows(), {"block": 32, "short_row": 4, "long_row": 16})
    assert any(n.startswith("short_mode=auto chose stream") for n in rec["notices"]), rec["notices"]
    assert "segmented scan" in next(n for n in rec["notices"] if n.startswith("preprocessing"))
    from kernels.graph.generators import stencil

    rec = sim_run(stencil("5pt", 6), {"block": 32})
    assert any(n.startswith("short_mode=auto chose group") for n in rec["notices"]), rec["notices"]
    rec = sim_run(stencil("5pt", 6), {"block": 32, "short_mode": "stream"})
    assert not any(n.startswith("short_mode=auto") for n in rec["notices"])


@pytest.mark.parametrize("loads,short_mode", [("plain", "group"), ("stream", "group"), ("plain", "stream"),
                                              ("stream", "stream")])
def test_every_loads_choice_gives_the_same_product(loads, short_mode):
    # under the simulator every load is plain indexing; this checks the kernels built for
    # each choice (two row-dot paths in auto/group) on every kind of row
    sim_run(every_kind_of_row(seed=7), {"block": 32, "loads": loads, "short_mode": short_mode, **SMALL})


def test_streaming_load_falls_back_to_indexing_under_the_simulator():
    from kernels.algorithms.spmv.gpu_loads import make_entry_load

    load = make_entry_load(True, hardware=False)

    @cuda.jit
    def read(src, out):
        out[0] = load(src, 2)

    out = np.zeros(1)
    read[1, 1](np.array([1.0, 2.0, 7.5]), out)
    assert out[0] == 7.5


# ---- real GPU (skipped without one) ------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("params", [{}, {"block": 128, "short_row": 8, "long_row": 1024},
                                    {"block": 512, "dtype": "fp32", "threads_per_row": 8, "short_mode": "group"},
                                    {"threads_per_row": 32, "long_row": 4096, "short_mode": "group"},
                                    {"short_mode": "stream", "loads": "plain"},
                                    {"short_mode": "group", "loads": "stream"}, {"dtype": "fp32", "loads": "stream"}])
def test_gpu_adaptive_on_the_real_gpu(params):
    from kernels.graph.generators import powerlaw_matrix

    graph = powerlaw_matrix(20000, 15000, 20.0, 2.0, 12000, seed=3)
    rec = run_variant(graph, "spmv", "gpu-adaptive", params, target="cuda", repeat=3).record
    assert rec["verified"], rec["verification"]
    assert rec["timing"]["kernel"]["median_s"] > 0


@pytest.mark.gpu
def test_gpu_adaptive_auto_on_a_stencil_on_the_real_gpu():
    from kernels.graph.generators import stencil

    rec = run_variant(stencil("27pt", 30), "spmv", "gpu-adaptive", {}, target="cuda", repeat=3).record
    assert rec["verified"], rec["verification"]
    assert any(n.startswith("short_mode=auto chose group") for n in rec["notices"]), rec["notices"]
