"""One tuning, two GPUs (kernels/results/portability.py) on synthetic sweeps whose answer is known."""

from __future__ import annotations

import json

import pytest

from kernels.cli import main as cli_main
from kernels.errors import GraphKernelsError
from kernels.results.portability import compare, pair_of, spearman, split_by_device


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


# ---- what a damaged or mismatched pair gives: one sentence, never a crash ------------------------------------
def test_every_mismatch_is_refused_in_one_sentence():
    a = sweep("A", {32: 1.0, 64: 2.0})
    cases = [
        ({"family": "triangles"}, "different families: spmv and triangles"),
        ({"target": "sim"}, "different targets"),
        ({"grid": {"rows": [1, 2]}}, "vary different parameters"),
        ({"fixed": {"reduce": "shared"}}, r"fix other parameters \(reduce=- and shared\)"),
        ({"input": {"name": "other"}}, "different inputs"),          # no fingerprint: the names decide
        ({"grid": None}, "without its grid"),
    ]
    for change, message in cases:
        with pytest.raises(GraphKernelsError, match=message):
            compare(a, {**sweep("B", {32: 1.0, 64: 2.0}), **change})


def test_no_common_verified_cell_says_how_many_each_verified():
    a = sweep("A", {32: 1.0, 64: 2.0})
    b = sweep("B", {32: 1.0, 64: 2.0})
    for cell in b["cells"]:
        cell["status"] = "failed"
    with pytest.raises(GraphKernelsError, match=r"no cell was verified in both sweeps \(2 verified on A, 0 on B\)"):
        compare(a, b)
    disjoint = sweep("B", {128: 1.0})
    disjoint["grid"] = {"wg": [32, 64, 128]}
    with pytest.raises(GraphKernelsError, match="no cell was verified in both"):
        compare(a, disjoint)


def test_damaged_times_are_not_compared_and_a_repeated_cell_keeps_its_faster_time():
    a = sweep("A", {32: 1.0, 64: 2.0, 128: 3.0})
    b = sweep("B", {32: 1.0, 64: 2.0, 128: 3.0})
    b["cells"][0]["median_s"] = -1.0                   # crafted: a negative time
    b["cells"][1]["median_s"] = float("nan")
    b["cells"][2]["median_s"] = True                   # a boolean is not a time
    with pytest.raises(GraphKernelsError, match="0 on B"):
        compare(a, b)
    b = sweep("B", {32: 1.0, 64: 2.0})
    b["cells"].append({"params": {"wg": 64}, "status": "ok", "median_s": 0.5})    # resumed: measured again
    p = compare(a, b)
    assert p.best_b == {"wg": 64} and p.best_b_s == 0.5 and p.only_a == 1 and p.only_b == 0
    assert "1 cell(s) verified on A only" in p.sentence()


def test_notes_an_input_known_by_name_one_gpu_twice_and_unlike_launch_modes():
    a, b = sweep("A", {32: 1.0, 64: 2.0}), sweep("A", {32: 1.1, 64: 2.0})
    for s in (a, b):
        s["input"] = {"name": "m"}
    for cell, mode in zip(a["cells"] + b["cells"], ["graph", "graph", "direct", "direct"], strict=True):
        cell["record"] = {"timing": {"launch": mode}}
    notes = " ".join(compare(a, b).notes)
    assert "matched by its name only" in notes and "two runs of one kind of GPU" in notes
    assert "timed differently (graph on A, direct on A)" in notes
    lines = compare(a, b).lines()
    assert lines[0].startswith("Best on A: wg=32, 1 s.") and "Spearman" not in " ".join(lines)   # 2 cells: no ρ
    assert any(line.startswith("The input was matched by its name only") for line in lines)


def test_the_words_say_what_is_lost():
    p = compare(sweep("A", {32: 1.0, 64: 1.2, 128: 1.5}), sweep("B", {32: 0.9, 64: 0.5, 128: 0.6}))
    text = " ".join(p.lines())
    assert "A's best run on B takes 1.800x B's best (80.0 % slower than its own best)" in text
    assert "Spearman's ρ = -0.50" in text and "Best on B: wg=64, 500 ms." in text


def test_a_split_cluster_sweep_is_two_sweeps_of_their_own():
    a, b = sweep("NVIDIA H100", {32: 1.0, 64: 1.1}), sweep("NVIDIA H200 (CUDA_VISIBLE_DEVICES=2)", {32: 0.8, 64: 0.7})
    for s, name in ((a, "NVIDIA H100"), (b, "NVIDIA H200")):
        for cell in s["cells"]:
            cell["record"] = {"environment": {"device": {"name": name}}}
    mixed = dict(a, cells=a["cells"] + b["cells"], environment={"device": {"name": "NVIDIA H100"}},
                 best={"params": {"wg": 64}, "median_s": 0.7}, tied_with_best=[{"wg": 64}])
    h100, h200 = split_by_device(mixed)
    # each part's best and environment are its own cells', not the mixed file's
    assert h100["best"]["params"] == {"wg": 32} and h200["best"]["params"] == {"wg": 64}
    assert h100["environment"]["device"]["name"] == "NVIDIA H100"
    assert h200["environment"]["device"]["name"] == "NVIDIA H200"
    assert {"wg": 64} not in h100["tied_with_best"]
    assert pair_of([mixed], ["mixed.json"])[1]["device"] == "NVIDIA H200"
    with pytest.raises(GraphKernelsError, match="mixed.json: every cell ran on NVIDIA H100; give a second sweep"):
        pair_of([a], ["mixed.json"])
    three = dict(mixed, cells=mixed["cells"] + [dict(a["cells"][0], device="NVIDIA A100")])
    with pytest.raises(GraphKernelsError, match="3 kinds of GPU"):
        pair_of([three], ["x.json"])


def test_the_command_line_refuses_a_mismatched_pair_in_one_line(tmp_path, capsys):
    header = {"kind": "sweep", "schema": 2, "family": "spmv", "variant": "gpu-tunable", "target": "cuda",
              "grid": {"wg": [32, 64]}, "total_cells": 2, "strategy": {"name": "grid"}}
    for name, fingerprint in (("a", "f"), ("b", "g")):
        lines = [{**header, "device": name, "input": {"name": name, "fingerprint": fingerprint}},
                 {"kind": "cell", "params": {"wg": 32}, "status": "ok", "median_s": 1.0}]
        (tmp_path / f"{name}.json").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert cli_main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) != 0
    err = capsys.readouterr().err
    assert "different inputs (a and b)" in err and "Traceback" not in err
