"""GPU variants from a plain command line on a machine without a GPU: the simulator must be
switched on even when numba was already imported by a CPU module (the test suite itself runs
with NUMBA_ENABLE_CUDASIM=1 set, so this runs the CLI in a clean environment)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kernels.measure.targets import probe_gpu
from kernels.samples import sample_path


@pytest.mark.skipif(probe_gpu() is not None, reason="with a GPU the default target is the GPU")
@pytest.mark.parametrize("extra", [["--target", "sim"], []])
def test_gpu_variant_runs_on_the_simulator_from_a_clean_environment(extra):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "GRAPH_KERNELS_TARGET")}
    cmd = [sys.executable, "-m", "kernels", "run", "triangles", "gpu-row-block", str(sample_path()),
           "--param", "block_size=32", "--repeat", "1", "--json", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["target"] == "sim" and record["result"]["triangles"] == 45 and record["verified"]
