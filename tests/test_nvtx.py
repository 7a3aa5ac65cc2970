"""NVTX ranges around the runner's stages (kernels/measure/nvtx_ranges.py), seen through a
stand-in ``nvtx`` module: the four stages, by name, pushed and popped in order."""

from __future__ import annotations

import os
import sys
import types

import pytest

from kernels.graph.io import read_graph
from kernels.measure import nvtx_ranges
from kernels.run.runner import run_variant

KARATE = os.path.join(os.path.dirname(__file__), "..", "resources", "graphs", "karate.mtx")


@pytest.fixture
def fake_nvtx(monkeypatch):
    calls = []
    module = types.ModuleType("nvtx")
    module.push_range = lambda message=None, color=None, domain=None, **kw: calls.append(("push", message, domain))
    module.pop_range = lambda domain=None: calls.append(("pop", domain))
    monkeypatch.setitem(sys.modules, "nvtx", module)
    return calls


def test_the_runner_names_its_stages_in_nvtx_ranges(fake_nvtx, monkeypatch):
    monkeypatch.setenv(nvtx_ranges.NVTX_ENV, "1")            # on the CPU too (no GPU here)
    run_variant(read_graph(KARATE), "spmv", "cpu-serial", {}, repeat=2, warmup=1)
    domain = nvtx_ranges.DOMAIN
    assert fake_nvtx == [call for stage in ("compile", "upload", "kernel", "download")
                         for call in (("push", f"spmv/cpu-serial {stage}", domain), ("pop", domain))]


def test_no_ranges_off_the_gpu_unless_asked(fake_nvtx, monkeypatch):
    monkeypatch.delenv(nvtx_ranges.NVTX_ENV, raising=False)
    run_variant(read_graph(KARATE), "spmv", "cpu-serial", {}, repeat=1, warmup=0)
    assert fake_nvtx == []


def test_ranges_can_be_switched_off_and_a_missing_nvtx_is_a_no_op(fake_nvtx, monkeypatch):
    monkeypatch.setenv(nvtx_ranges.NVTX_ENV, "0")
    assert fake_nvtx == [] and isinstance(nvtx_ranges.stage_ranges("a/b", "cuda")("kernel"),
                                          type(nvtx_ranges.contextlib.nullcontext()))
    monkeypatch.setenv(nvtx_ranges.NVTX_ENV, "1")
    monkeypatch.setitem(sys.modules, "nvtx", None)          # "import nvtx" fails
    with nvtx_ranges.stage_ranges("a/b", "cuda")("kernel"):
        pass


def test_a_stage_that_fails_still_pops_its_range(fake_nvtx, monkeypatch):
    monkeypatch.setenv(nvtx_ranges.NVTX_ENV, "1")
    with pytest.raises(RuntimeError), nvtx_ranges.stage_ranges("a/b", "cpu")("kernel"):
        raise RuntimeError("kernel fault")
    assert [c[0] for c in fake_nvtx] == ["push", "pop"]
