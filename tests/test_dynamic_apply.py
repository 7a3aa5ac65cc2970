"""``graph-kernels dynamic --apply host|gpu``: each round's batch applied by the vectorised host
path or by kernels on the device pages (CUDA simulator), the rerun verified against SciPy and,
for the device path, the host replay checked page for page."""

from __future__ import annotations

import json

import pytest

from kernels.cli import main
from kernels.dynamic import DynamicSettings, run_dynamic
from kernels.errors import ParameterError
from kernels.graph.io import read_graph
from tests.conftest import data_path


@pytest.mark.parametrize("apply", ["host", "gpu"], ids=["host-path", "device-path"])
def test_rounds_apply_their_batch_by_the_chosen_path(apply):
    result = run_dynamic(read_graph(data_path("karate.mtx")), DynamicSettings(
        algorithm="bfs", batch=0.1, rounds=2, page_size=16, source=3, block=32, apply=apply), target="sim")
    assert result["summary"]["all_verified"]
    for r in result["records"][1:]:
        assert r["apply"] == apply and r["batch"]["path"] == apply
        assert r["batch"]["updates"] == r["edits"]["removed"] + r["edits"]["added"] > 0
        assert r["batch"]["pages_touched"] > 0
        if apply == "gpu":
            assert r["batch"]["verified"] and r["dynamic"]["sync_strategy"] == "device batch"
            assert r["dynamic"]["sync_s"] == pytest.approx(r["batch"]["seconds"])
        else:
            assert r["dynamic"]["sync_pages"] > 0


def test_dynamic_command_takes_apply_and_refuses_other_paths(tmp_path, capsys):
    summary = tmp_path / "s.json"
    code = main(["dynamic", str(data_path("karate.mtx")), "--batch", "0.05", "--rounds", "1", "--page-size", "16",
                 "--param", "block=32", "--target", "sim", "--apply", "gpu", "--summary", str(summary)])
    assert code == 0
    assert "edits applied by gpu" in capsys.readouterr().out
    saved = json.loads(summary.read_text())
    assert saved["records"][1]["batch"]["path"] == "gpu"
    with pytest.raises(SystemExit):
        main(["dynamic", str(data_path("karate.mtx")), "--target", "sim", "--apply", "cpu"])
    assert "--apply" in capsys.readouterr().err
    with pytest.raises(ParameterError, match="apply"):
        DynamicSettings(apply="cpu").validate()
