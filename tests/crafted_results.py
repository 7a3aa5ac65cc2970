"""Crafted and damaged result files: sweeps and run records a hostile or broken source could hand
a user. Each is a (name, bytes) pair; every one must be refused with one line naming the file."""

from __future__ import annotations

import copy
import json


def valid_record(variant: str = "cpu-serial", median: float = 1e-3) -> dict:
    """A run record as ``run_variant`` writes it (the fields the GUI and the CSV export read)."""
    return {
        "schema": 1, "timestamp": "2026-01-01T10:00:00+00:00", "family": "spmv", "variant": variant,
        "kind": "cpu-serial", "target": "cpu", "params": {"dtype": "fp64"}, "seed": 0,
        "input": {"name": "m", "fingerprint": "abc", "source": "m.mtx", "rows": 4, "cols": 4, "nnz": 8,
                  "edges": 8, "directed": True},
        "notices": [], "result": {"norm": 1.0}, "verified": True,
        "verification": {"ok": True, "reference": "scipy", "detail": "equal", "worst": []},
        "timing": {"compile_s": 0.1, "h2d_s": 0.0, "d2h_s": 0.0,
                   "kernel": {"median_s": median, "min_s": median * 0.9, "max_s": median * 1.1, "mean_s": median,
                              "cv": 0.01, "samples": [median], "launches_per_sample": 1},
                   "method": "perf_counter", "launch_bound": False, "fits_in_l2": None, "repeat": 1, "warmup": 0},
        "metric": {"name": "GFLOP/s", "unit": "GFLOP/s", "value": 0.016},
        "metrics": [{"name": "GFLOP/s", "unit": "GFLOP/s", "value": 0.016}],
        "environment": {"device": {"name": "cpu"}}, "status": "ok",
    }


def valid_sweep() -> dict:
    """A 2 × 2 sweep as ``run_sweep`` writes it: an invalid cell, a failed one, two with records."""
    cells = [
        {"params": {"wg": 32, "rows": 1}, "status": "ok", "record": valid_record(median=2e-3), "median_s": 2e-3},
        {"params": {"wg": 32, "rows": 64}, "status": "invalid", "reason": "constraint 'rows <= wg' broken"},
        {"params": {"wg": 64, "rows": 1}, "status": "ok", "record": valid_record(median=1e-3), "median_s": 1e-3},
        {"params": {"wg": 64, "rows": 64}, "status": "failed", "reason": "crashed: the worker died"},
    ]
    return {"kind": "sweep", "schema": 1, "family": "spmv", "variant": "gpu-tunable", "target": "sim",
            "input": {"name": "m", "fingerprint": "abc", "rows": 4, "cols": 4, "nnz": 8},
            "grid": {"wg": [32, 64], "rows": [1, 64]}, "fixed": {}, "repeat": 1, "cells": cells, "total_cells": 4,
            "cancelled": False, "started": "2026-01-01T10:00:00+00:00", "finished": "2026-01-01T10:01:00+00:00",
            "environment": {"device": {"name": "cpu"}},
            "best": {"params": {"wg": 64, "rows": 1}, "median_s": 1e-3},
            "within_5pct": [{"wg": 64, "rows": 1}], "within_10pct": [{"wg": 64, "rows": 1}]}


def _json(obj) -> bytes:
    return json.dumps(obj, allow_nan=True).encode()


def _changed(base: dict, change) -> bytes:
    doc = copy.deepcopy(base)
    change(doc)
    return _json(doc)


def _set(path: str, value):
    """A change that sets ``a.b[0].c`` (``[i]`` indexes lists) to ``value``."""
    def change(doc):
        parts = path.replace("]", "").replace("[", ".").split(".")
        target = doc
        for part in parts[:-1]:
            target = target[int(part)] if isinstance(target, list) else target[part]
        last = parts[-1]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return change


def _drop(key: str):
    return lambda doc: doc.pop(key)


GIANT = b"7" * 5000   # Python's int() refuses more than 4,300 digits with a raw ValueError


def _giant(base: dict, path: str, negative: bool = False) -> bytes:
    """``base`` with the integer at ``path`` written with 5,000 digits (json.dumps cannot write it)."""
    return _changed(base, _set(path, 424242)).replace(b"424242", (b"-" if negative else b"") + GIANT, 1)


def _kernel_tuner_cache(giant: bool) -> bytes:
    cache = {"tune_params_keys": ["wg"], "tune_params": {"wg": [32, 424242]},
             "cache": {"32": {"wg": 32, "time": 1.0}}}
    text = _json(cache)
    return text.replace(b"424242", GIANT) if giant else text


def _sweep_lines_with_a_giant_cell() -> bytes:
    from kernels.results.sweep_file import sweep_lines

    lines = [_json(line) for line in sweep_lines(valid_sweep())]
    assert b'"wg": 64' in lines[3]    # the third cell
    lines[3] = lines[3].replace(b'"wg": 64', b'"wg": ' + GIANT, 1)
    return b"\n".join(lines) + b"\n"


def crafted_sweeps() -> list[tuple[str, bytes]]:
    base = valid_sweep()
    text = _json(base)
    cases = {
        "repeat-5000-digits": _giant(base, "repeat"),
        "grid-value-5000-digits": _giant(base, "grid.wg[0]", negative=True),
        "cell-record-seed-5000-digits": _giant(base, "cells[0].record.seed"),
        "sweep-lines-cell-5000-digits": _sweep_lines_with_a_giant_cell(),
        "kernel-tuner-cache-5000-digits": _kernel_tuner_cache(giant=True),
        "no-grid": _changed(base, _drop("grid")),
        "grid-is-a-list": _changed(base, _set("grid", [32, 64])),
        "grid-empty": _changed(base, _set("grid", {})),
        "grid-axis-not-a-list": _changed(base, _set("grid.wg", 32)),
        "grid-axis-empty": _changed(base, _set("grid.wg", [])),
        "grid-value-an-object": _changed(base, _set("grid.wg", [{"x": 1}, 64])),
        "huge-declared-grid": _json({**base, "grid": {"wg": list(range(3000)), "rows": list(range(3000))},
                                     "cells": []}),
        "one-axis-too-long": _json({**base, "grid": {"wg": list(range(20_000))}, "cells": []}),
        "seventeen-axes": _json({**base, "grid": {f"p{i}": [1] for i in range(17)}, "cells": []}),
        "no-cells": _changed(base, _drop("cells")),
        "cells-not-a-list": _changed(base, _set("cells", {"0": {}})),
        "cells-of-numbers": _changed(base, _set("cells", [1, 2])),
        "cell-without-status": _changed(base, lambda d: d["cells"][0].pop("status")),
        "cell-status-unknown": _changed(base, _set("cells[0].status", "great")),
        "cell-param-not-swept": _changed(base, _set("cells[0].params", {"wg": 32, "rows": 1, "extra": 5})),
        "cell-param-missing": _changed(base, _set("cells[0].params", {"wg": 32})),
        "cell-value-not-in-grid": _changed(base, _set("cells[0].params.wg", 48)),
        "cell-value-bool-for-int": _changed(base, _set("cells[0].params.rows", True)),
        "median-a-string": _changed(base, _set("cells[0].median_s", "fast")),
        "median-nan": _changed(base, _set("cells[0].median_s", float("nan"))),
        "median-infinity": _changed(base, _set("cells[2].median_s", float("inf"))),
        "median-negative": _changed(base, _set("cells[0].median_s", -1.0)),
        "grid-value-nan": _changed(base, _set("grid.wg", [float("nan"), 64])),
        "record-in-cell-broken": _changed(base, _set("cells[0].record.timing.kernel.median_s", "slow")),
        "launch-unknown": _changed(base, _set("launch", "teleport")),
        "record-in-cell-launch-a-number": _changed(base, _set("cells[0].record.timing.launch", 3)),
        "record-in-cell-resolved-params-a-list": _changed(base, _set("cells[0].record.resolved_params", [1, 2])),
        "more-cells-than-combinations": _changed(base, lambda d: d["cells"].extend(copy.deepcopy(d["cells"]))),
        "schema-3": _changed(base, _set("schema", 3)),
        "kind-missing": _changed(base, _drop("kind")),
        "family-a-number": _changed(base, _set("family", 7)),
        "input-a-string": _changed(base, _set("input", "m.mtx")),
        "best-a-string": _changed(base, _set("best", "wg=64")),
        "top-level-array": _json([base]),
        "deeply-nested": b"[" * 100_000 + b"]" * 100_000,
        "deeply-nested-object": b'{"kind": "sweep", "grid": ' + b'{"a": ' * 50_000 + b"1" + b"}" * 50_001,
        "environment-nested-500": _changed(base, _set("environment", {"gpu": json.loads("[" * 500 + "]" * 500)})),
        "truncated": text[: len(text) // 2],
        "binary-garbage": bytes(range(256)) * 16,
        "utf16": json.dumps(base).encode("utf-16"),
        "empty": b"",
    }
    return list(cases.items())


def crafted_records() -> list[tuple[str, bytes]]:
    good = _json(valid_record()) + b"\n"

    def line(change) -> bytes:
        return good + _changed(valid_record("gpu-x"), change) + b"\n"

    cases = {
        "seed-5000-digits": good + _giant(valid_record("gpu-x"), "seed") + b"\n",
        "median-5000-digits": good + _giant(valid_record("gpu-x"), "timing.kernel.median_s", negative=True) + b"\n",
        "not-json": good + b"{not json\n",
        "array-line": good + b"[1, 2, 3]\n",
        "no-family": line(_drop("family")),
        "family-a-number": line(_set("family", 3)),
        "no-timing": line(_drop("timing")),
        "median-a-string": line(_set("timing.kernel.median_s", "fast")),
        "median-nan": line(_set("timing.kernel.median_s", float("nan"))),
        "min-infinity": line(_set("timing.kernel.min_s", float("inf"))),
        "max-negative": line(_set("timing.kernel.max_s", -2.0)),
        "params-a-list": line(_set("params", ["wg", 32])),
        "param-an-object": line(_set("params.wg", {"deep": [1, 2]})),
        "launch-unknown": line(_set("timing.launch", "warp-drive")),
        "resolved-params-a-string": line(_set("resolved_params", "wg=32")),
        "resolved-param-an-object": line(_set("resolved_params", {"wg": {"deep": [1, 2]}})),
        "resolved-params-nested-500": line(_set("resolved_params", {"wg": json.loads("[" * 500 + "]" * 500)})),
        "verified-a-string": line(_set("verified", "yes")),
        "schema-3": line(_set("schema", 3)),
        "input-a-string": line(_set("input", "m.mtx")),
        "status-unknown": line(_set("status", "meh")),
        "metric-value-a-string": line(_set("metric.value", "lots")),
        "structure-without-live": line(_set("structure", {"page_size": 256})),
        "structure-sync-negative-bytes": line(_set("structure", {"live": True, "sync": {
            "kind": "sync", "pages": 1, "bytes": -4, "seconds": 0.001}})),
        "structure-sync-unknown-kind": line(_set("structure", {"live": True, "sync": {
            "kind": "teleport", "pages": 1, "bytes": 4, "seconds": 0.001}})),
        "result-nested-500": line(_set("result", json.loads('{"a":' * 500 + "1" + "}" * 500))),
        "deeply-nested-line": good + b"[" * 100_000 + b"]" * 100_000 + b"\n",
        "truncated": good + good[: len(good) // 2],
        "binary-garbage": bytes(range(256)) * 16,
    }
    return list(cases.items())
