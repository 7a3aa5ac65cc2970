"""GPU facts come from one module (kernels/cuda/device.py): read from the device on a GPU, the
nominal H100's without one; the occupancy models and launch shapes use them."""

from __future__ import annotations

from kernels.cuda import device


def test_without_a_device_the_nominal_gpu_is_used_and_said():
    facts = device.facts()
    # the suite runs on the simulator: nothing to ask, the nominal figures stand in
    assert facts == device.NOMINAL and not facts.measured
    assert facts.multiprocessors == 132 and facts.shared_bytes_per_sm == 227 * 1024


def test_the_triangle_occupancy_model_follows_the_device(monkeypatch):
    from kernels.algorithms.triangles import gpu_oriented

    base = gpu_oriented.resident_blocks_per_sm(256, 1024, 32)
    half = device.DeviceFacts(multiprocessors=66, shared_bytes_per_sm=227 * 1024, registers_per_sm=32768,
                              threads_per_sm=1024, max_blocks_per_sm=16)
    monkeypatch.setattr(gpu_oriented, "device_facts", lambda: half)
    assert gpu_oriented.resident_blocks_per_sm(256, 1024, 32) < base
