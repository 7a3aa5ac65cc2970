"""Warp shuffles come from one module (kernels/cuda/warp.py): the hardware intrinsics on a GPU,
one shared-memory emulation under the CUDA simulator, which behaves like them."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from numba import cuda  # a module global, as the simulator requires of kernels' modules

from kernels.cuda.warp import WARP, exchange_slots, lane_mask, make_shuffles
from kernels.measure.targets import simulator_enabled

ROOT = Path(__file__).resolve().parents[1]
needs_simulator = pytest.mark.skipif(not simulator_enabled(), reason="needs NUMBA_ENABLE_CUDASIM=1")


def probe_kernel(block: int, base: int):
    shuffles = make_shuffles(block, hardware=False, base=base)
    down, up, idx, reset = shuffles.down, shuffles.up, shuffles.idx, shuffles.reset
    slots = base + exchange_slots(block, hardware=False)
    width = min(block, WARP)

    @cuda.jit
    def probe(out, d):
        exchange = cuda.shared.array(slots, np.int64)
        t = cuda.threadIdx.x
        if t < base:
            exchange[t] = -7            # a kernel's own data in front of the exchange
        reset(exchange, t)
        out[0, t] = down(exchange, t, t, d)
        out[1, t] = up(exchange, t, t, d)
        out[2, t] = idx(exchange, t, 100 + t, (t * 7 + d) % width)
        out[3, t] = up(exchange, t, 1000 + t, d)
        cuda.syncthreads()
        out[4, t] = exchange[t] if t < base else -7

    return probe


@needs_simulator
@pytest.mark.parametrize("block,base", [(64, 0), (64, 64), (8, 8), (32, 0)])
def test_emulated_shuffles_behave_like_the_hardware_ones(block, base):
    """Lane i gets lane i+d (down) / i-d (up), keeping its own value past the warp's (or a
    smaller block's) edge, or lane s of its warp (idx); calls in a row use the two halves of the
    exchange in turn; slots in front of ``base`` stay the kernel's."""
    probe = probe_kernel(block, base)
    lanes = np.arange(block)
    width = min(block, WARP)
    for d in (1, 3, width // 2):
        out = np.zeros((5, block), dtype=np.int64)
        probe[1, block](out, d)
        assert np.array_equal(out[0], np.where(lanes % 32 + d < width, lanes + d, lanes))
        assert np.array_equal(out[1], np.where(lanes % 32 >= d, lanes - d, lanes))
        assert np.array_equal(out[2], 100 + lanes - lanes % 32 + (lanes * 7 + d) % width)
        assert np.array_equal(out[3], 1000 + np.where(lanes % 32 >= d, lanes - d, lanes))
        assert np.all(out[4] == -7)


def test_the_hardware_shuffles_use_the_warps_lanes():
    assert lane_mask(32) == lane_mask(1024) == 0xFFFFFFFF
    assert lane_mask(8) == 0xFF
    assert exchange_slots(128, hardware=True) == 1 and exchange_slots(128, hardware=False) == 3 * 128
    with pytest.raises(ValueError):
        make_shuffles(48, hardware=False)


def test_no_kernel_calls_a_warp_intrinsic_or_emulates_one_itself():
    """Every kernel reaches warp shuffles, ballots and warp syncs through kernels.cuda.warp."""
    intrinsics = {"shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "ballot_sync",
                  "syncwarp", "any_sync", "all_sync", "eq_sync", "match_any_sync", "match_all_sync", "activemask"}
    found = []
    for path in (ROOT / "kernels").rglob("*.py"):
        if path == ROOT / "kernels" / "cuda" / "warp.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in intrinsics:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.attr}")
            if isinstance(node, ast.FunctionDef) and "shfl" in node.name:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} def {node.name}")
    assert found == []
