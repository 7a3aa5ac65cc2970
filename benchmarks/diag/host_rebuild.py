"""The host path's batches with the touched units rebuilt in place against through one pool-sized
scratch (``batch_host.REBUILD_IN_PLACE``), interleaved in one process on the same graph and
batches: each batch's seconds (``BatchReport.seconds``) and the time of each pass.

    python3 benchmarks/diag/host_rebuild.py [--graphs rmat20,delaunay20] [--sizes 100000,1000000]
        [--repeat 3] [--out OUT.json]

Both variants apply the same drawn batch to their own copy of the graph, and the two copies are
checked equal (pools, index, free stack) after every batch.
"""
import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from bench_updates import FULL, QUICK, batches_for  # noqa: E402

from kernels.graph.generators.registry import generate  # noqa: E402
from kernels.graph.page_size import page_size_for  # noqa: E402
from kernels.graph.slotted import SlottedGraph, batch_host  # noqa: E402
from kernels.graph.update_batches import edge_keys, stored_edges  # noqa: E402
from kernels.measure.environment import environment  # noqa: E402

PASSES = ("group_part", "lookup", "plan", "column_sums", "rebuild", "rebuild_in_place")


def timed_passes():
    """Wrap the passes of ``batch_host`` so that each call adds its seconds to the returned dict."""
    spent: dict[str, float] = {}
    for name in PASSES:
        fn = getattr(batch_host, name)

        def wrapper(*a, _fn=fn, _name=name, **k):
            t = time.perf_counter()
            out = _fn(*a, **k)
            spent[_name] = spent.get(_name, 0.0) + time.perf_counter() - t
            return out

        setattr(batch_host, name, wrapper)
    return spent


def same(a: SlottedGraph, b: SlottedGraph) -> bool:
    """Pools, weights, index and free stacks equal."""
    return (all(np.array_equal(x, y) for x, y in zip(a.host_arrays(), b.host_arrays(), strict=True))
            and np.array_equal(a.free_page_stack(), b.free_page_stack()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default="rmat20")
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    specs = {g[0]: g for g in FULL["graphs"] + QUICK["graphs"]}
    spent = timed_passes()
    out = {"environment": environment("cpu"), "rows": []}
    for name in args.graphs.split(","):
        spec = specs[name]
        csr = generate(spec[1], **spec[2])
        graphs = {flag: SlottedGraph.from_csr(csr, page_size=page_size_for(csr)) for flag in (True, False)}
        rng = np.random.default_rng(7)
        keys, edges = edge_keys(csr), stored_edges(csr)
        for _kind, batch in batches_for(csr, 100, rng, keys, edges):       # compile both, warm
            for in_place, g in graphs.items():
                batch_host.REBUILD_IN_PLACE = in_place
                g.apply_updates(**batch)
        for size in (int(s) for s in args.sizes.split(",")):
            for rep in range(args.repeat):
                for kind, batch in batches_for(csr, size, rng, keys, edges):
                    row = {"graph": name, "size": size, "kind": kind, "repeat": rep}
                    order = (True, False) if rep % 2 == 0 else (False, True)
                    for in_place in order:
                        batch_host.REBUILD_IN_PLACE = in_place
                        spent.clear()
                        report = graphs[in_place].apply_updates(**batch)
                        label = "in_place" if in_place else "scratch"
                        row[label] = {"seconds": report.seconds, "passes": dict(spent)}
                    row["equal"] = same(graphs[True], graphs[False])
                    out["rows"].append(row)
                    print(f"{name} {size:>9,} {kind:<14} in place {row['in_place']['seconds'] * 1e3:8.2f} ms "
                          f"(rebuild {row['in_place']['passes'].get('rebuild_in_place', 0) * 1e3:7.2f})  scratch "
                          f"{row['scratch']['seconds'] * 1e3:8.2f} ms (rebuild "
                          f"{row['scratch']['passes'].get('rebuild', 0) * 1e3:7.2f})  equal={row['equal']}",
                          flush=True)
                    if not row["equal"]:
                        print("the two rebuilds disagree", flush=True)
                        return 1
    batch_host.REBUILD_IN_PLACE = True
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
