"""Measured device peaks (kernels/roofline/peaks.py): measured once per device with a probe (a
fake here), kept in a JSON file keyed by name, UUID and driver, read back, remeasured on demand;
and a GPU run's record carries its work model (and the kept peaks)."""

from __future__ import annotations

import json

import pytest

from kernels.graph.csr import CSRGraph
from kernels.results.schema import check_record
from kernels.roofline import peaks

H100 = {"target": "cuda", "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-1111", "driver": "12.8",
        "compute_capability": "9.0"}


class FakeProbe:
    def __init__(self, bandwidth=3.0e12):
        self.calls, self.bandwidth = 0, bandwidth

    def __call__(self):
        self.calls += 1
        return {"bandwidth_Bps": self.bandwidth, "rates": {"add+min-fp64": 2.0e13, "int32": 3.0e13},
                "method": {"bandwidth": "fake"}}


@pytest.fixture
def peaks_file(tmp_path, monkeypatch):
    path = tmp_path / "peaks.json"
    monkeypatch.setenv(peaks.PEAKS_ENV, str(path))
    return path


def test_measured_once_and_kept(peaks_file):
    probe = FakeProbe()
    first, measured = peaks.measure_peaks(H100, probe)
    again, measured_again = peaks.measure_peaks(H100, probe)
    assert measured and not measured_again and probe.calls == 1
    assert again["bandwidth_Bps"] == 3.0e12 and again["device"]["uuid"] == "GPU-1111"
    assert peaks.stored_peaks(H100)["rates"]["int32"] == 3.0e13
    on_disk = json.loads(peaks_file.read_text())
    assert list(on_disk["devices"]) == ["NVIDIA H100 80GB HBM3|GPU-1111|12.8"]


def test_remeasure_replaces(peaks_file):
    peaks.measure_peaks(H100, FakeProbe(3.0e12))
    newer, measured = peaks.measure_peaks(H100, FakeProbe(2.5e12), remeasure=True)
    assert measured and peaks.stored_peaks(H100)["bandwidth_Bps"] == 2.5e12 == newer["bandwidth_Bps"]


def test_keyed_by_uuid_and_driver(peaks_file):
    peaks.measure_peaks(H100, FakeProbe())
    assert peaks.stored_peaks({**H100, "uuid": "GPU-2222"}) is None
    assert peaks.stored_peaks({**H100, "driver": "13.0"}) is None
    assert peaks.stored_peaks({"target": "sim", "name": "CUDA simulator"}) is None
    with pytest.raises(ValueError):
        peaks.measure_peaks({"target": "sim", "name": "CUDA simulator"}, FakeProbe())


def test_a_damaged_file_or_a_bad_probe_is_never_trusted(peaks_file):
    peaks_file.write_text("{not json")
    assert peaks.stored_peaks(H100) is None
    with pytest.raises(ValueError):
        peaks.measure_peaks(H100, lambda: {"bandwidth_Bps": 0, "rates": {}})
    _, measured = peaks.measure_peaks(H100, FakeProbe())
    assert measured and peaks.stored_peaks(H100) is not None


def test_a_simulator_run_records_its_work_model(peaks_file):
    from kernels.run.runner import run_variant

    g = CSRGraph.from_edges(4, [0, 0, 1, 2], [1, 2, 2, 3], directed=False, both_directions=True, name="paw")
    record = run_variant(g, "triangles", "gpu-row-block", {"block_size": 32}, target="sim", repeat=1,
                         warmup=0).record
    assert record["roofline"]["bytes"] == 80 and record["roofline"]["ops"] == 4.0
    assert "peaks" not in record["roofline"]            # the simulator has none
    check_record(record, "run.jsonl", 1)
    cpu = run_variant(g, "triangles", "cpu-serial", target="cpu", repeat=1, warmup=0).record
    assert "roofline" not in cpu


def test_command_lists_kept_peaks_without_a_gpu(peaks_file, capsys):
    from kernels.cli import main

    assert main(["device-peaks", "--all"]) == 0
    assert "no measured peaks kept" in capsys.readouterr().out
    peaks.measure_peaks(H100, FakeProbe())
    assert main(["device-peaks", "--all"]) == 0
    out = capsys.readouterr().out
    assert "H100" in out and "3,000 GB/s" in out and "add+min-fp64" in out


@pytest.mark.gpu
def test_probes_measure_a_real_gpu(peaks_file):
    from kernels.measure.environment import device_description
    from kernels.measure.targets import activate
    from kernels.roofline import OP_KINDS
    from kernels.roofline.probes import probe_device

    activate("cuda")
    got, measured = peaks.measure_peaks(device_description("cuda"), probe_device)
    assert measured and set(got["rates"]) == set(OP_KINDS)
    assert 1e11 < got["bandwidth_Bps"] < 2e13            # 100 GB/s .. 20 TB/s: a GPU's memory
    assert all(1e11 < r < 1e15 for r in got["rates"].values())


@pytest.mark.gpu
def test_a_gpu_run_carries_its_model_peaks_and_energy(peaks_file):
    from kernels.graph.generators import rmat
    from kernels.measure.environment import device_description
    from kernels.roofline.percent import roofline_point
    from kernels.roofline.probes import probe_device
    from kernels.run.runner import run_variant

    peaks.measure_peaks(device_description("cuda"), probe_device)
    g = rmat(16, 16, seed=1, weights="uniform")
    record = run_variant(g, "spmv", "gpu-adaptive", target="cuda", repeat=3, warmup=1, energy=True).record
    check_record(record, "run.jsonl", 1)
    assert record["roofline"]["peaks"]["bandwidth_Bps"] > 0 and record["roofline"]["op"] == "fma-fp64"
    point = roofline_point(record)
    assert point is not None and (point.above or 0 < point.pct_bandwidth <= 100)
    if "energy" in record:              # NVML present: clocks sampled through the window
        assert record["energy"]["clock_samples"] >= 2 and record["energy"]["joules_per_launch"] > 0
    else:
        assert any("NVML" in n for n in record["notices"])
