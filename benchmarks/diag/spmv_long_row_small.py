"""gpu-adaptive's long_row on the small power-law matrices users load (10^5-10^6 entries): is
one warp per "vector" row (up to long_row = 16384 entries) the tail of the product? Graph-mode
times of gpu-adaptive for several long_row values beside cuSPARSE's device time (queued).

    python3 benchmarks/diag/spmv_long_row_small.py [OUT.json]
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import load_real  # noqa: E402

from kernels.graph.generators import powerlaw_matrix  # noqa: E402
from kernels.run.runner import run_variant  # noqa: E402

mats = [load_real("as-caida20071105.mtx"), load_real("ca-HepTh.mtx"),
        powerlaw_matrix(1 << 14, 1 << 14, 8.0, 2.0, 1 << 11, seed=2),
        powerlaw_matrix(1 << 15, 1 << 15, 16.0, 2.0, 1 << 12, seed=1),
        powerlaw_matrix(1 << 16, 1 << 16, 14.0, 2.0, 1 << 13, seed=3)]
out = []
for g in mats:
    base = run_variant(g, "spmv", "cusparse", {}, target="cuda", repeat=7, launch="queued").record
    cs = base["timing"]["kernel"]["median_s"]
    line = [f"{g.name[:28]:28s} nnz {g.nnz:>8,} max row {int((g.indptr[1:] - g.indptr[:-1]).max()):>6} "
            f"cuSPARSE {cs * 1e3:.4f} ms |"]
    for long_row in (256, 512, 1024, 2048, 4096, 16384):
        for short_row in (32, 64):
            if short_row > long_row:
                continue
            rec = run_variant(g, "spmv", "gpu-adaptive", {"long_row": long_row, "short_row": short_row},
                              target="cuda", repeat=7, launch="graph").record
            t = rec["timing"]["kernel"]["median_s"]
            out.append({"matrix": g.name, "nnz": g.nnz, "long_row": long_row, "short_row": short_row,
                        "adaptive_s": t, "cusparse_device_s": cs, "verified": rec["verified"]})
            line.append(f"L={long_row}/s={short_row} {t / cs:.2f}")
    print(" ".join(line), flush=True)
if len(sys.argv) > 1:
    Path(sys.argv[1]).write_text(json.dumps(out, indent=1))
