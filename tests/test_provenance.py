"""Where a result came from: a cluster sweep's header names the GPUs that ran its cells (not the
client's CPU), and the code's version changes with the code."""

from __future__ import annotations

import shutil
from pathlib import Path

from kernels.compute.backend import WorkerInfo
from kernels.compute.sweep import _device_name
from kernels.version import code_version, source_digest

ROOT = Path(__file__).resolve().parents[1]


def gpu_worker(address: str, name: str) -> WorkerInfo:
    return WorkerInfo(address=address, gpu={"name": name}, cpu="Intel(R) Xeon(R) Processor")


class FakeCluster:
    kind = "dask"

    def __init__(self, workers, chosen=None):
        self.workers, self.chosen = workers, chosen

    def describe(self):
        return self.workers

    def choose_workers(self, target):
        return self.chosen, []


def test_a_cluster_sweep_names_the_gpu_kind_of_the_workers_that_run_it():
    workers = [gpu_worker("tcp://a:1", "NVIDIA H100 80GB HBM3"), gpu_worker("tcp://a:2", "NVIDIA H100 80GB HBM3"),
               WorkerInfo(address="tcp://b:1", cpu="AMD EPYC")]
    assert _device_name(FakeCluster(workers), "cuda") == "NVIDIA H100 80GB HBM3"
    mixed = [*workers, gpu_worker("tcp://c:1", "NVIDIA H200")]
    assert _device_name(FakeCluster(mixed, chosen=["tcp://a:1", "tcp://a:2"]), "cuda") == "NVIDIA H100 80GB HBM3"
    assert _device_name(FakeCluster(mixed), "cuda") == "2 x NVIDIA H100 80GB HBM3 + 1 x NVIDIA H200"   # --mixed-gpus
    assert _device_name(FakeCluster(workers), "sim") == "Intel(R) Xeon(R) Processor (CUDA simulator)"


def test_the_code_version_changes_when_a_source_file_changes(tmp_path):
    copy = tmp_path / "kernels"
    shutil.copytree(ROOT / "kernels", copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = source_digest(copy)
    assert source_digest(copy) == before
    target = copy / "algorithms" / "spmv" / "gpu_tunable.py"
    target.write_text(target.read_text() + "\n# an edit\n")
    assert source_digest(copy) != before
    (copy / "results" / "schemas" / "sweep.schema.json").write_text("{}")
    assert len({before, source_digest(copy)}) == 2


def test_records_and_the_command_line_carry_the_code_version(capsys):
    import pytest

    from kernels.cli import main as cli_main
    from kernels.measure.environment import library_versions

    version = code_version()
    assert version.startswith("0.1.0+src.") and len(version.split(".")[-1]) == 12
    assert library_versions()["gpu-graph-explorer"] == version
    with pytest.raises(SystemExit):
        cli_main(["--version"])
    assert version in capsys.readouterr().out
