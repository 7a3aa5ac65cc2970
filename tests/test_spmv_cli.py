"""``graph-kernels run spmv ...`` from the command line, on the CUDA simulator."""

from __future__ import annotations

import json

import numpy as np

from kernels.algorithms.registry import get_variant
from kernels.cli import main as cli_main
from kernels.graph.io import read_graph


def test_run_gpu_tunable_prints_the_record_and_saves_y(data, tmp_path, capsys):
    path = data("west0067.mtx")
    out = tmp_path / "y.npy"
    code = cli_main(["run", "spmv", "gpu-tunable", str(path), "--target", "sim", "--param", "wg=32",
                     "--param", "rows=4", "--repeat", "1", "--warmup", "0", "--json", "--output", str(out)])
    assert code == 0
    rec = json.loads(capsys.readouterr().out)
    for key in ("family", "variant", "target", "params", "result", "verified", "timing", "metric"):
        assert key in rec
    assert (rec["family"], rec["variant"], rec["target"]) == ("spmv", "gpu-tunable", "sim")
    assert rec["params"] == {"dtype": "fp64", "wg": 32, "rows": 4, "reduce": "shuffle"}
    assert rec["verified"] is True
    assert rec["metric"]["name"] == "GFLOP/s"
    assert rec["timing"]["kernel"]["median_s"] > 0

    # y.npy is A x for the x the run used (seed 0), computed here by SciPy
    graph = read_graph(path)
    fam, var = get_variant("spmv", "gpu-tunable")
    x = fam.prepare(graph, fam.resolve_params(var, {}), 0).data["x"]
    expected = graph.to_scipy() @ x
    np.testing.assert_allclose(np.load(out), expected, rtol=1e-12, atol=1e-12)


def test_invalid_wg_is_refused_with_a_message(data, capsys):
    code = cli_main(["run", "spmv", "gpu-tunable", str(data("karate.mtx")), "--target", "sim",
                     "--param", "wg=3"])
    assert code == 1
    err = capsys.readouterr().err
    assert "wg" in err and "3" in err and "power of two" in err


def test_rows_above_wg_is_refused_before_running(data, capsys):
    code = cli_main(["run", "spmv", "gpu-tunable", str(data("karate.mtx")), "--target", "sim",
                     "--param", "wg=4", "--param", "rows=8"])
    assert code == 1
    err = capsys.readouterr().err
    assert "rows <= wg" in err and "rows=8" in err and "wg=4" in err
