"""Issue 25's first goal: under the default launch mode (``auto``) every speedup shown over cuSPARSE
equals the device-time ratio (both variants ``--launch queued``) within 10 %.

    python3 benchmarks/diag/auto_vs_queued.py [--out DIR]

Six matrices of 0.08-2.6 M entries (three real ones of tests/data, three generated); for each,
``spmv gpu-adaptive`` and ``spmv cusparse`` with ``auto`` and with ``queued``, every run verified.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

MATRICES = ("bcsstk13.mtx", "as-caida20071105.mtx", "delaunay_n15.mtx",
            "gen:powerlaw_matrix:n_rows=65536,n_cols=65536,avg_nnz_per_row=16,seed=1",
            "gen:stencil:kind=27pt,nx=48", "gen:rmat:scale=17,seed=1")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "diag")
    args = p.parse_args()
    from _common import load_real

    from kernels.inputs import load_input
    from kernels.run.runner import run_variant

    rows = []
    for name in MATRICES:
        graph = load_input(name) if name.startswith("gen:") else load_real(name)
        t = {}
        for variant in ("gpu-adaptive", "cusparse"):
            for mode in ("auto", "queued"):
                rec = run_variant(graph, "spmv", variant, {}, target="cuda", repeat=20, warmup=3, launch=mode).record
                assert rec["verified"], (name, variant, mode, rec["verification"])
                t[(variant, mode)] = (rec["timing"]["kernel"]["median_s"], rec["timing"]["launch"])
        shown = t[("cusparse", "auto")][0] / t[("gpu-adaptive", "auto")][0]
        device = t[("cusparse", "queued")][0] / t[("gpu-adaptive", "queued")][0]
        row = {"matrix": graph.name, "nnz": graph.nnz,
               "modes_auto": {"gpu-adaptive": t[("gpu-adaptive", "auto")][1], "cusparse": t[("cusparse", "auto")][1]},
               "us": {f"{v} {m}": round(s * 1e6, 2) for (v, m), (s, _) in t.items()},
               "speedup_shown": round(shown, 3), "speedup_device": round(device, 3),
               "agrees_within_10pct": abs(shown / device - 1) <= 0.10}
        rows.append(row)
        print(json.dumps(row), flush=True)
    agree = sum(r["agrees_within_10pct"] for r in rows)
    print(f"{agree} of {len(rows)} shown speedups within 10 % of the device-time ratio")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "auto-vs-queued.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
