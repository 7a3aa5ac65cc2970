"""Execution targets: detection never raises, forcing works, activation guards the simulator."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kernels.errors import ParameterError, TargetUnavailableError
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


# ---- the typed target ----------------------------------------------------------------------------

@pytest.mark.parametrize("text", targets.ALLOWED)
def test_every_target_text_reads_back_to_itself(text):
    target = targets.Target.parse(text)
    assert str(target) == text
    assert targets.Target.parse(str(target)) is target         # one value per text
    assert targets.Target.of(text) is target and targets.Target.of(target) is target
    assert targets.Target.read(text) is target
    assert target.on_cluster == text.startswith("cluster:")
    assert target.local().device == target.device and not target.local().on_cluster
    assert target.on_the_cluster().on_cluster and target.on_the_cluster().local() is target.local()


def test_target_properties():
    T = targets.Target
    assert [t.device for t in T.devices()] == ["cuda", "sim", "cpu"]
    assert (T.CUDA.is_gpu, T.CUDA.real_gpu, T.CUDA.simulated) == (True, True, False)
    assert (T.SIM.is_gpu, T.SIM.real_gpu, T.SIM.simulated) == (True, False, True)
    assert (T.CPU.is_gpu, T.CPU.real_gpu, T.CPU.simulated) == (False, False, False)
    assert T.parse("cluster:sim").simulated and T.parse("cluster:cuda").real_gpu
    assert T.parse("cluster:cuda") != T.CUDA and T.parse("cluster:cuda").local() == T.CUDA
    assert targets.needs_gpu("cuda") and targets.needs_gpu(T.parse("cluster:cuda"))
    assert not targets.needs_gpu(None) and not targets.needs_gpu("sim")
    assert targets.GPU_TARGETS == ("cuda", "sim")
    assert T.of(None) is None


@pytest.mark.parametrize("bad", ["quantum", "CUDA", " cuda", "cluster:", "cluster:gpu", "cluster:cluster:sim",
                                 "local:cuda", "", None, 3])
def test_bad_target_text_is_refused_naming_every_allowed_value(bad):
    with pytest.raises(ParameterError) as caught:
        targets.Target.parse(bad)
    assert caught.value.parameter == "target"
    assert "parameter 'target'" in str(caught.value)
    for text in targets.ALLOWED:
        assert text in caught.value.allowed
    assert targets.Target.read(bad) is None                  # files: unknown text is no target, not an error


def test_a_device_that_is_none_is_refused():
    with pytest.raises(ParameterError, match="a device is one of cuda, sim, cpu"):
        targets.Target("gpu")


def test_a_cluster_target_is_not_activated_in_this_process():
    with pytest.raises(TargetUnavailableError, match="cluster"):
        targets.activate("cluster:sim")
    assert targets.target_label(targets.Target.SIM) == "CUDA simulator"
