"""How the k-clique ``work`` rule does on measured data: for each (input, k) of a
``bench_kclique_auto.py`` JSONL, the variant the rule in ``kernels/algorithms/auto_rules.py``
picks from the recorded out-degree histogram (and the input's pair density from
``kclique-pair-density.json`` next to the files, ``kclique_density_fit.py --write``; unknown: 1.0),
against the best of gpu-vertex, gpu-edge and gpu-list measured there. No GPU needed: it re-reads
the measurements.

    python3 benchmarks/diag/kclique_auto_fit.py benchmarks/results/kclique-auto/<file>.jsonl [--min-nnz 2000]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kernels.algorithms.auto_rules import CliqueSearch, kclique_work  # noqa: E402

VARIANTS = ("gpu-vertex", "gpu-edge", "gpu-list")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("jsonl", nargs="+", type=Path)
    ap.add_argument("--min-nnz", type=int, default=2000, help="leave out inputs with fewer stored entries")
    ap.add_argument("--sms", type=int, default=132, help="the measuring GPU's SM count (H100: 132)")
    args = ap.parse_args()
    times: dict = defaultdict(dict)
    hist: dict = {}
    for path in args.jsonl:
        for line in path.read_text().splitlines():
            row = json.loads(line)
            if "median_s" not in row or not row.get("verified") or row["nnz"] < args.min_nnz:
                continue
            key = (row["input"], row["k"])
            times[key][row["variant"]] = row["median_s"]
            hist[key] = row["dplus_hist"]
    dens_file = args.jsonl[0].parent / "kclique-pair-density.json"
    density = json.loads(dens_file.read_text()) if dens_file.exists() else {}
    within = worst = total = 0
    for key in sorted(times):
        t = times[key]
        if not all(v in t for v in VARIANTS):
            continue
        degrees = np.repeat(np.arange(len(hist[key])), hist[key])
        search = dataclasses.replace(CliqueSearch.of(degrees, key[1], args.sms), pair_density=density.get(key[0], 1.0))
        pick = kclique_work(search).value
        best = min(t[v] for v in VARIANTS)
        ratio = t[f"gpu-{pick}"] / best
        total += 1
        within += ratio <= 1.10
        worst = max(worst, ratio)
        flag = "" if ratio <= 1.10 else "   <-- over 10 %"
        print(f"{key[0][:40]:40s} k={key[1]}  picks {pick:6s} x{ratio:.2f}  "
              + "  ".join(f"{v[4:]} {t[v] * 1e3:.3f} ms" for v in VARIANTS) + flag)
    print(f"within 10 % of the best in {within}/{total} cases, worst x{worst:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
