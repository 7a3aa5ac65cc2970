"""Execution targets: detection never raises, forcing works, activation guards the simulator."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kernels.errors import TargetUnavailableError
from kernels.measure import targets


def test_describe_lists_three_targets_with_one_default():
    entries = targets.describe_targets()
    assert [e["target"] for e in entries] == ["cuda", "sim", "cpu"]
    assert sum(e["default"] for e in entries) == 1
    assert entries[1]["available"] and entries[2]["available"]


def test_forced_target_from_environment(monkeypatch):
    monkeypatch.setenv(targets.ENV_VAR, "cpu")
    assert targets.default_target() == "cpu"
    monkeypatch.setenv(targets.ENV_VAR, "quantum")
    with pytest.raises(TargetUnavailableError, match="quantum"):
        targets.default_target()


def test_detection_without_a_driver_returns_none(monkeypatch):
    targets.probe_gpu.cache_clear()
    monkeypatch.setattr(targets, "_load_driver", lambda: None)
    try:
        assert targets.probe_gpu() is None
        assert targets.target_label("cpu") == "CPU only"
        assert targets.target_label("sim") == "CUDA simulator"
    finally:
        targets.probe_gpu.cache_clear()


def test_activate_cuda_refuses_inside_the_simulator(monkeypatch):
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    with pytest.raises(TargetUnavailableError, match="simulator"):
        targets.activate("cuda")


def test_probe_does_not_import_numba_cuda():
    code = "import sys, kernels.measure.targets as t; t.describe_targets(); print('numba.cuda' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
