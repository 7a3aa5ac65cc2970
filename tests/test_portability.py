"""One tuning, two GPUs (kernels/results/portability.py) on synthetic sweeps whose answer is known."""

from __future__ import annotations

import json

import pytest

from kernels.cli import main as cli_main
from kernels.errors import GraphKernelsError
from kernels.results.portability import compare, spearman, split_by_device


def sweep(device: str, times: dict, fingerprint: str = "f") -> dict:
    cells = [{"params": {"wg": wg}, "status": "ok", "median_s": t, "device": device} for wg, t in times.items()]
    return {"family": "spmv", "variant": "gpu-tunable", "grid": {"wg": list(times)}, "device": device,
            "input": {"name": "m", "fingerprint": fingerprint}, "cells": cells}


def test_the_loss_is_the_other_gpus_time_of_ones_best_over_its_own_best():
    a = sweep("A", {32: 1.0, 64: 1.2, 128: 1.5})
    b = sweep("B", {32: 0.9, 64: 0.5, 128: 0.6})
    p = compare(a, b)
    assert p.best_a == {"wg": 32} and p.best_b == {"wg": 64}
    assert p.loss_a_on_b == pytest.approx(0.9 / 0.5) and p.loss_b_on_a == pytest.approx(1.2 / 1.0)
    assert p.cells == 3 and p.speed_b_over_a == pytest.approx((1.0 / 0.9 * 1.2 / 0.5 * 1.5 / 0.6) ** (1 / 3))
    assert "1.800x the best time on B" in p.sentence()


def test_the_same_order_on_both_loses_nothing():
    a = sweep("A", {1: 3.0, 2: 2.0, 4: 1.0, 8: 4.0})
    b = sweep("B", {1: 1.5, 2: 1.0, 4: 0.5, 8: 2.0})
    p = compare(a, b)
    assert p.loss_a_on_b == p.loss_b_on_a == 1.0 and p.spearman == pytest.approx(1.0)
    assert p.speed_b_over_a == pytest.approx(2.0)
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


def test_only_cells_verified_on_both_count_and_other_inputs_are_refused():
    a = sweep("A", {32: 1.0, 64: 2.0})
    b = sweep("B", {32: 1.0, 64: 0.1})
    b["cells"][1]["status"] = "wrong"                # B's fastest cell gave a wrong answer
    assert compare(a, b).best_b == {"wg": 32} and compare(a, b).cells == 1
    with pytest.raises(GraphKernelsError, match="different inputs"):
        compare(a, sweep("B", {32: 1.0}, fingerprint="g"))
    other = sweep("B", {32: 1.0})
    other["variant"] = "gpu-naive"
    with pytest.raises(GraphKernelsError, match="different variants"):
        compare(a, other)


def test_a_mixed_gpu_cluster_sweep_splits_by_the_kind_that_ran_each_cell(tmp_path, capsys):
    a, b = sweep("NVIDIA H100", {32: 1.0, 64: 1.1}), sweep("NVIDIA H200 (CUDA_VISIBLE_DEVICES=2)", {32: 0.8, 64: 0.7})
    mixed = dict(a, cells=[a["cells"][0], b["cells"][1]])
    mixed["grid"] = {"wg": [32, 64]}
    parts = split_by_device(mixed)
    assert [p["device"] for p in parts] == ["NVIDIA H100", "NVIDIA H200"]
    header = {"kind": "sweep", "schema": 2, "family": "spmv", "variant": "gpu-tunable", "target": "cuda",
              "input": {"name": "m", "fingerprint": "f"}, "grid": {"wg": [32, 64]}, "total_cells": 2,
              "strategy": {"name": "grid"}, "device": "NVIDIA H100"}
    for name, s in (("a", a), ("b", b)):
        lines = [{**header, "device": s["device"]}] + [{"kind": "cell", **c} for c in s["cells"]]
        (tmp_path / f"{name}.json").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert cli_main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out
    assert "the best on NVIDIA H100 (wg=32)" in out and "rank correlation" in out
