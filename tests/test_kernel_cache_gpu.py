"""The kernel disk cache with numba on a real GPU: a kernel compiled by one process is loaded,
not compiled, by the next, and runs to the same verified answer; an entry whose kernel source
changed is not used. Skipped without a GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.gpu

RUN = """
import json, sys
from kernels.inputs import load_input
from kernels.run.runner import run_variant
graph = load_input("gen:powerlaw_matrix:n_rows=4096,n_cols=4096,avg_nnz_per_row=8,seed=3")
out = []
for family, variant, params in [("spmv", "gpu-tunable", {"wg": 128, "rows": 4}),
                                ("triangles", "gpu-oriented", {"group_size": 8}),
                                ("bfs", "gpu-csr", {"block": 256})]:
    g = graph if family == "spmv" else load_input("gen:rmat:scale=10,seed=2")
    rec = run_variant(g, family, variant, params, target="cuda", repeat=2, warmup=1).record
    out.append({"variant": f"{family}/{variant}", "verified": rec["verified"], "cache": rec["timing"]["cache"]})
print(json.dumps(out))
"""


def run_in_child(cache: Path) -> list[dict]:
    env = {**os.environ, "GRAPH_KERNELS_KERNEL_CACHE": str(cache), "GRAPH_KERNELS_TARGET": "cuda",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_the_kernels_the_first_compiled(tmp_path):
    cold = run_in_child(tmp_path)
    assert all(r["verified"] for r in cold)
    assert all(r["cache"]["compiled"] >= 1 for r in cold), cold
    warm = run_in_child(tmp_path)
    assert all(r["verified"] for r in warm)
    assert all(r["cache"]["compiled"] == 0 and r["cache"]["hits"] >= 1 for r in warm), warm
    assert sum(r["cache"]["load_s"] for r in warm) < sum(r["cache"]["compile_s"] for r in cold)
