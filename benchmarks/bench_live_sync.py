"""Live pages over a Dask cluster: what crosses after edits, against sending the whole graph.

    python3 benchmarks/bench_live_sync.py [--input gen:rmat:scale=18] [--page-size 512]
                                          [--rounds 5] [--edits 1000] [--scheduler ADDRESS]

A slotted structure is edited here, as the GUI does (random batches of edge edits, each one
page delta), and a GPU worker of a Dask cluster (``graph-kernels cluster local`` on this
machine unless ``--scheduler`` names one) keeps its replica: before each ``bfs/gpu-slotted``
run the backend sends only the deltas since the replica's revision, and the worker's device
mirror uploads only the pages they wrote (:meth:`ComputeBackend.run_on_document`). Each round
records what crossed the network (bytes, time) and what crossed to the GPU (pages, bytes,
time), next to the first round's snapshot and a CSR rebuilt and sent whole: the thesis'
argument for slotted pages (small uploads after edits), measured over a network hop. Every
run is verified against SciPy on the replica's CSR.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from _common import ROOT, say, shown_path, slug

os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")


def random_batch(g, size: int, rng):
    """``size`` random edge edits on ``g`` (half removals of existing edges, half new edges) as
    one recorded edit: ``(result, PageDelta)``."""
    csr = g.to_csr()
    rows = np.repeat(np.arange(csr.n_rows), np.diff(csr.indptr))
    pick = rng.choice(len(rows), size=min(size // 2, len(rows)), replace=False)
    r_u, r_v = rows[pick], csr.indices[pick]
    keep = r_u < r_v if not g.directed else np.ones(len(r_u), bool)
    r_u, r_v = r_u[keep].astype(np.int64), r_v[keep].astype(np.int64)
    alive = g.vertices()
    a_u, a_v = rng.choice(alive, size - len(r_u)), rng.choice(alive, size - len(r_u))
    ok = np.array([u != v and not g.has_edge(int(u), int(v)) for u, v in zip(a_u, a_v, strict=True)], bool)
    a_u, a_v = a_u[ok], a_v[ok]

    def edit(graph):
        if len(r_u):
            graph.remove_edges(r_u, r_v)
        if len(a_u):
            graph.add_edges(a_u, a_v)
        return len(r_u) + len(a_u)

    touched = np.unique(np.concatenate([r_u, r_v, a_u, a_v])).tolist()
    return g.record_edit(edit, touched)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", default="gen:rmat:scale=18,edge_factor=16,seed=3")
    p.add_argument("--page-size", type=int, default=512)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--edits", type=int, default=1000, help="edge edits per round")
    p.add_argument("--scheduler", help="an existing cluster; default: one started here on every GPU")
    p.add_argument("--target", default="cuda", choices=("cuda", "sim"))
    p.add_argument("--out-dir", default=str(ROOT / "benchmarks" / "results"))
    args = p.parse_args()

    from kernels.compute.backend import Job
    from kernels.compute.dask.backend import DaskBackend
    from kernels.compute.documents import EditJournal, payload_bytes
    from kernels.graph.slotted import SlottedGraph
    from kernels.inputs import load_input
    from kernels.measure.environment import environment

    graph = load_input(args.input)
    g = SlottedGraph.from_csr(graph, page_size=args.page_size)
    journal = EditJournal(g)
    say(f"input {graph.name}: {graph.n_rows:,} vertices, {graph.nnz:,} entries; {g.num_pages:,} pages of "
        f"{g.page_size} words")
    cluster = None
    if args.scheduler is None:
        from kernels.compute.dask.cluster import start_local_cluster

        cluster, _ = start_local_cluster(gpus="all" if args.target == "cuda" else 0, workers=1)
        address = cluster.scheduler_address
    else:
        address = args.scheduler
    rng = np.random.default_rng(7)
    rounds = []
    try:
        with DaskBackend(address) as backend:
            for r in range(args.rounds + 1):
                edits = 0
                if r > 0:
                    (count, delta) = random_batch(g, args.edits, rng)
                    edits = count
                    journal.record(delta, True)
                job = Job("", "bfs", "gpu-slotted", {"source": 0}, target=args.target, repeat=5, warmup=1,
                          time_limit=600)
                t0 = time.perf_counter()
                outcome, sync = backend.run_on_document("bench-doc", journal, job)
                wall = time.perf_counter() - t0
                if not outcome.ok:
                    say(f"round {r}: failed: {outcome.reason}")
                    return 1
                g.mark_synced()
                rec = outcome.record
                row = {"round": r, "edits": edits, "sync": sync.to_json(), "wall_s": wall,
                       "verified": rec["verified"], "kernel_median_s": rec["timing"]["kernel"]["median_s"],
                       "worker": outcome.worker, "device": outcome.device}
                rounds.append(row)
                say(f"round {r} ({edits} edits): {sync.summary()}; BFS {rec['timing']['kernel']['median_s'] * 1e3:.3f}"
                    f" ms, verified {rec['verified']}, {wall:.2f} s in all")
        csr_bytes = payload_bytes(g.to_csr())
        snapshot = rounds[0]["sync"]
        later = rounds[1:]
        env = environment(args.target)
        report = {"benchmark": "live pages over a Dask cluster", "date": time.strftime("%Y-%m-%d"),
                  "device": env["device"].get("name"), "environment": env, "input": args.input,
                  "page_size": g.page_size, "pages": g.num_pages, "edits_per_round": args.edits,
                  "rounds": rounds, "csr_payload_bytes": csr_bytes,
                  "snapshot_bytes": snapshot["bytes_sent"], "snapshot_seconds": snapshot["seconds"],
                  "mean_delta_bytes": float(np.mean([x["sync"]["bytes_sent"] for x in later])) if later else None,
                  "mean_delta_seconds": float(np.mean([x["sync"]["seconds"] for x in later])) if later else None,
                  "mean_device_pages": float(np.mean([x["sync"]["device"]["pages"] for x in later])) if later else None}
        out = Path(args.out_dir) / f"live-sync-{slug(report['device'] or args.target)}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2, default=str) + "\n")
        say(f"snapshot {snapshot['bytes_sent'] / 2**20:.1f} MiB in {snapshot['seconds'] * 1e3:.0f} ms; a round of "
            f"{args.edits} edits sends {report['mean_delta_bytes'] / 2**20:.2f} MiB in "
            f"{report['mean_delta_seconds'] * 1e3:.1f} ms and uploads {report['mean_device_pages']:.0f} of "
            f"{g.num_pages} pages; the CSR alone is {csr_bytes / 2**20:.1f} MiB")
        say(f"wrote {shown_path(out)}")
    finally:
        if cluster is not None:
            cluster.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
