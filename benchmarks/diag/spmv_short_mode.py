#!/usr/bin/env python3
"""Which short-row mode of ``gpu-adaptive`` suits which rows? Group vs stream, plain vs streaming loads.

    python3 benchmarks/diag/spmv_short_mode.py [--json OUT.json]

Times ``gpu-adaptive`` (group mode with 2, 4, 8 threads a row; stream mode) and cuSPARSE on
matrices whose rows are all short: random columns with every row of ``k`` entries
(k = 2 ... 32, ~10^8 entries, 4M columns so that ``x`` is 32 MB as in the power-law matrix),
the 7-point stencil 256^3 and the 27-point stencil 160^3. The rule behind
``short_mode=auto`` (docs/spmv.md) is read off this table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

import numpy as np  # noqa: E402
from spmv_powerlaw_bins import event_time, time_adaptive, time_cusparse, upload  # noqa: E402

sys.path.insert(0, str(HERE.parent))  # the shared helpers, _common
from _common import say  # noqa: E402

ENTRIES = 100_000_000
COLUMNS = 1 << 22


def fixed_rows(k: int, rng):
    """``ENTRIES // k`` rows of ``k`` distinct-ish random columns each (sorted; duplicates are
    rare at 4M columns and harmless: both sides sum them)."""
    n = ENTRIES // k
    cols = np.sort(rng.integers(0, COLUMNS, size=(n, k), dtype=np.int32), axis=1)
    indptr = np.arange(0, n * k + 1, k, dtype=np.int64)
    return f"random k={k}", indptr, cols.ravel(), rng.random(n * k), COLUMNS


def stencil_matrix(kind, side):
    from kernels.graph.generators import stencil

    g = stencil(kind, side, side, side)
    values = np.ones(g.nnz) if g.weights is None else g.weights
    return f"stencil {kind} {side}^3", g.indptr, g.indices, values, g.n_cols


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    import scipy.sparse

    rng = np.random.default_rng(3)
    results = []

    def record(name, ms, **extra):
        results.append({"matrix": current, "name": name, "ms": ms, **extra})
        say(f"  {name:<44} {ms:8.4f} ms  " + " ".join(f"{k}={v}" for k, v in extra.items()))

    t0 = time.perf_counter()
    makers = [lambda k=k: fixed_rows(k, rng) for k in (2, 4, 8, 16, 32)]
    makers += [lambda: stencil_matrix("7pt", 256), lambda: stencil_matrix("27pt", 160)]
    configs = [("group", 4, 128, None, "plain"), ("group", 4, 128, None, "stream"), ("group", 2, 128, None, "plain"),
               ("group", 8, 128, None, "plain"), ("stream", 4, 128, None, "stream"), ("stream", 4, 128, None, "plain")]
    for make in makers:
        current, indptr, indices, values, n_cols = make()
        n = len(indptr) - 1
        x = rng.random(n_cols)
        reference = scipy.sparse.csr_matrix((values, indices, indptr), shape=(n, n_cols)) @ x
        say(f"{current}: {n:,} rows, {len(indices):,} entries ({time.perf_counter() - t0:.0f} s)")
        time_cusparse("cusparse", indptr, indices, values, x, np.ones(n, bool), reference, event_time, record)
        matrix = upload(indptr, indices, values, x)
        for config in configs:
            time_adaptive(config, matrix, indptr, n, 64, 16384, reference, ("all",), event_time, record, hardware=True)
        del matrix
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    say(f"done in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
