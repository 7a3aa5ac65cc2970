"""GPU facts come from one module (kernels/cuda/device.py): read from the device on a GPU, the
nominal H100's without one; the occupancy models and launch shapes use them."""

from __future__ import annotations

from kernels.cuda import device, occupancy


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
    monkeypatch.setattr(occupancy, "device_facts", lambda: half)
    assert gpu_oriented.resident_blocks_per_sm(256, 1024, 32) < base


def test_occupancy_is_the_tightest_of_threads_blocks_shared_memory_and_registers(monkeypatch):
    gpu = device.DeviceFacts(multiprocessors=10, shared_bytes_per_sm=100 * 1024, registers_per_sm=65536,
                             threads_per_sm=2048, max_blocks_per_sm=32)
    monkeypatch.setattr(occupancy, "device_facts", lambda: gpu)
    assert occupancy.blocks_per_sm(256) == 8                          # threads
    assert occupancy.blocks_per_sm(32) == 32                          # blocks
    assert occupancy.blocks_per_sm(128, shared_bytes=40 * 1024) == 2  # shared memory
    # 64 registers a thread: 2048 a warp, 32 warps an SM, 4 blocks of 8 warps
    assert occupancy.blocks_per_sm(256, registers=64) == 4
    assert occupancy.blocks_per_sm(256, registers=63) == 4            # allocated 256 at a time per warp
    assert occupancy.blocks_per_sm(1024, shared_bytes=200 * 1024) == 1  # never below one
    assert occupancy.resident_blocks(512) == 10 * 4
    assert occupancy.register_cap(256) == occupancy.MAX_REGISTERS_PER_THREAD
    assert occupancy.register_cap(1024) == 64


def test_no_hopper_figure_is_written_outside_the_nominal_gpu():
    """The SM count, shared memory and registers of an H100 are written once, in NOMINAL."""
    import re
    from pathlib import Path

    root = Path(device.__file__).resolve().parents[1]
    pattern = re.compile(r"\b(227 \* 1024|232448|65536 // |registers_per_sm=65536|multiprocessors=132"
                         r"|50 \* 1000 \* 1000)")
    found = [f"{path.relative_to(root)}:{n}" for path in root.rglob("*.py") if path.name != "device.py"
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert found == []
