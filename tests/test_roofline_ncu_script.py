"""benchmarks/diag/ncu_bytes.py without a GPU: a missing ncu is said and nothing runs; ncu's CSV
log is summed over the profiled kernels in base units."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "diag" / "ncu_bytes.py"


def load():
    spec = importlib.util.spec_from_file_location("ncu_bytes", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


COLUMNS = '"ID","Process ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"'
LOG = "\n".join([
    "==PROF== Connected to process 1234",        # ncu's own lines come before the table
    COLUMNS,
    '"0","1234","scan","Command line profiler metrics","dram__bytes.sum","byte","1,048,576"',
    '"1","1234","relax","Command line profiler metrics","dram__bytes.sum","Kbyte","512"',
    '"1","1234","relax","Command line profiler metrics","gpu__time_duration.sum","nsecond","900"',
]) + "\n"


def test_dram_bytes_are_summed_over_kernels_in_bytes():
    total, kernels = load().dram_bytes(LOG)
    assert (total, kernels) == (1_048_576 + 512_000, 2)
    assert load().dram_bytes("==PROF== no kernels\n") == (0.0, 0)


def test_missing_ncu_is_said_and_nothing_runs(tmp_path, monkeypatch, capsys):
    script = load()
    monkeypatch.setattr(script.shutil, "which", lambda name: None)
    monkeypatch.setattr(script.glob, "glob", lambda pattern: [])
    assert script.find_ncu() is None
    assert script.main(["--out", str(tmp_path)]) == 2
    assert "ncu (Nsight Compute) was not found" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []
