"""gpu-adaptive cells around its defaults on bench_spmv's power-law matrix (4,194,304 rows,
~109 M entries), graph replays, beside cuSPARSE's device time (queued) before and after.

    python3 benchmarks/diag/spmv_powerlaw_cells.py [OUT.json]
"""
import itertools
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kernels.graph.generators import powerlaw_matrix  # noqa: E402
from kernels.run.runner import run_variant  # noqa: E402

graph = powerlaw_matrix(1 << 22, 1 << 22, 26.0, 2.0, 1 << 20, seed=1)  # bench_spmv.py's matrix
rows = []


def cusparse(label):
    rec = run_variant(graph, "spmv", "cusparse", {}, target="cuda", repeat=7, launch="queued").record
    rows.append({"variant": "cusparse", "label": label, "median_s": rec["timing"]["kernel"]["median_s"]})
    print(f"cusparse ({label}) {rows[-1]['median_s'] * 1e3:.4f} ms", flush=True)
    return rows[-1]["median_s"]


base = cusparse("first")
for block, short_row, long_row in itertools.product((128, 256), (64, 128, 256), (8192, 16384, 32768)):
    params = {"block": block, "short_row": short_row, "long_row": long_row}
    rec = run_variant(graph, "spmv", "gpu-adaptive", params, target="cuda", repeat=7, launch="graph").record
    t = rec["timing"]["kernel"]["median_s"]
    rows.append({"variant": "gpu-adaptive", "params": params, "median_s": t, "verified": rec["verified"]})
    print(f"{params} {t * 1e3:.4f} ms  x{base / t:.3f} of cuSPARSE{'' if rec['verified'] else ' WRONG'}", flush=True)
last = cusparse("last")
best = min((r for r in rows if r["variant"] == "gpu-adaptive"), key=lambda r: r["median_s"])
print(f"best {best['params']} {best['median_s'] * 1e3:.4f} ms: x{min(base, last) / best['median_s']:.3f} of the "
      f"faster cuSPARSE run, x{max(base, last) / best['median_s']:.3f} of the slower", flush=True)
if len(sys.argv) > 1:
    Path(sys.argv[1]).write_text(json.dumps(rows, indent=1))
