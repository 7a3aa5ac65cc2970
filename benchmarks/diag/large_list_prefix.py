"""How much of a mixed batch's large-list rewrite is unchanged: counted on the CPU, no GPU.

    python3 benchmarks/diag/large_list_prefix.py [--scale 22] [--deletions 500] [--batches 20]

A mixed batch (``bench_updates.py``'s: half its edges deleted, drawn from the stored edges) falls
on hubs' large lists, and the device path rewrites a touched large list whole (its survivors
shift). The pages before the list's first deletion keep every word, but for its first page, which
holds the degree. For ``--batches`` draws of ``--deletions`` stored edges on R-MAT of ``--scale``
(edge factor 16, seed 1, pages of 1,024 words, list positions as built from the CSR), this
counts the touched large lists, their pages, and those unchanged leading pages (medians): the
most that skipping them in the copy and write phases could save (docs/updates.md, "Limitations").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--deletions", type=int, default=500)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--page-size", type=int, default=1024)
    args = ap.parse_args(argv)
    from kernels.graph.generators.registry import generate
    from kernels.graph.update_batches import existing_edges, stored_edges

    csr = generate("rmat", scale=args.scale, edge_factor=16, seed=1)
    edges = stored_edges(csr)
    per = args.page_size - 6                  # a large list's entries a page (docs/slotted.md)
    indptr, indices = csr.indptr, csr.indices
    degree = np.diff(indptr)
    rng = np.random.default_rng(3)
    lists, pages, unchanged = [], [], []
    for _ in range(args.batches):
        du, dv = existing_edges(csr, args.deletions, rng, edges=edges)
        first = {}                            # a large list's first deleted position
        for u, v in zip(np.concatenate([du, dv]), np.concatenate([dv, du]), strict=True):
            if degree[u] <= per:
                continue
            at = int(np.flatnonzero(indices[indptr[u]:indptr[u + 1]] == v)[0])
            first[u] = min(first.get(u, at), at)
        lists.append(len(first))
        pages.append(sum(-(-int(degree[u]) // per) for u in first))
        unchanged.append(sum(max(0, at // per - 1) for at in first.values()))
    print(f"R-MAT {args.scale}, {args.deletions} deletions a batch, medians of {args.batches}: "
          f"{np.median(lists):.0f} large lists touched, {np.median(pages):.0f} pages, "
          f"{np.median(unchanged):.0f} of them unchanged leading pages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
