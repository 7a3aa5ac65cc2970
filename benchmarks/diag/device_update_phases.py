"""Where a device batch's time goes, launch by launch: median batch time (``report.seconds``)
of insert and delete batches of each size (``--mixed``: mixed batches, half deletions of stored
edges and half new edges, and their inverses), then one traced batch of each, in which every
kernel launch is bracketed by ``cuda.synchronize()`` and timed (its host-side launch cost plus its
GPU time), or with ``--events`` by CUDA events and nothing synchronized (each launch's GPU time,
and the host's share of the call); the host's grouping and copies are timed too (a read-back's
time includes its wait for the GPU).

    python3 benchmarks/diag/device_update_phases.py [--graph rmat20|delaunay20] [--sizes 100,1000,100000]

Run it once with ``GRAPH_KERNELS_FAST_LAUNCH=0`` and once without to compare numba's launch path
with the planned launches (:mod:`kernels.cuda.fast_launch`); ``--out`` writes the JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

GRAPHS = {"rmat20": ("rmat", {"scale": 20, "edge_factor": 16, "seed": 1}),
          "rmat16": ("rmat", {"scale": 16, "edge_factor": 16, "seed": 1}),
          "rmat22": ("rmat", {"scale": 22, "edge_factor": 16, "seed": 1}),
          "delaunay20": ("delaunay", {"n": 1 << 20, "seed": 1})}


class Traced:
    """Stands for a kernel: each launch synchronized before and after, its time added to ``spent``;
    with ``events`` (a dict) nothing is synchronized: CUDA events bracket the launch (its GPU
    time, read after the batch) and ``perf_counter`` the host's share of the call."""

    def __init__(self, name, kernel, spent, cuda, events=None):
        self.name, self.kernel, self.spent, self.cuda, self.events = name, kernel, spent, cuda, events

    def __getitem__(self, config):
        launcher = self.kernel[config]

        def call(*args):
            if self.events is not None:
                start, end = self.cuda.event(), self.cuda.event()
                t0 = time.perf_counter()
                start.record()
                launcher(*args)
                end.record()
                self.spent[self.name].append(time.perf_counter() - t0)
                self.events[self.name].append((start, end))
                return
            self.cuda.synchronize()
            t0 = time.perf_counter()
            launcher(*args)
            self.cuda.synchronize()
            self.spent[self.name].append(time.perf_counter() - t0)

        return call

    def __getattr__(self, name):
        return getattr(self.kernel, name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default="rmat20", choices=sorted(GRAPHS))
    ap.add_argument("--sizes", default="100,1000,10000,100000")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--events", action="store_true",
                    help="time each launch with CUDA events, no synchronization (GPU time, and the host's share)")
    ap.add_argument("--mixed", action="store_true",
                    help="mixed batches (half deletions drawn from the stored edges, as bench_updates.py's, so "
                         "a hub's deletions gather in its group) and their inverses instead of inserts and deletes")
    ap.add_argument("--variant", action="append", default=[],
                    help="device_updates settings to compare in this one process, e.g. "
                         "'FULL_LONG_LIST=1024 WRITE_BY_WARP=0' (repeat it; each size is measured under every "
                         "variant in turn, interleaved; default: the module's own settings)")
    args = ap.parse_args(argv)
    from kernels.measure.targets import activate

    activate("cuda")
    from numba import cuda

    from kernels.cuda.fast_launch import enabled
    from kernels.graph.device import DeviceMirror
    from kernels.graph.generators.registry import generate
    from kernels.graph.page_size import page_size_for
    from kernels.graph.slotted import SlottedGraph
    from kernels.graph.update_batches import edge_keys, existing_edges, new_edges, stored_edges
    from kernels.operators import device_updates
    from kernels.operators.device_updates import DeviceUpdater

    family, params = GRAPHS[args.graph]
    csr = generate(family, **params)
    g = SlottedGraph.from_csr(csr, page_size=page_size_for(csr))
    updater = DeviceUpdater(DeviceMirror(g))
    rng = np.random.default_rng(3)
    keys = edge_keys(csr)
    sizes = [int(s) for s in args.sizes.split(",")]
    edges = stored_edges(csr) if args.mixed else None
    kinds = ("mixed", "mixed-inverse") if args.mixed else ("insert", "delete")

    def batch_pair(size):
        """A batch of ``size`` edges and its inverse (the graph is as before after both)."""
        if not args.mixed:
            u, v = new_edges(csr, size, rng, keys=keys)
            return {"insert": (u, v)}, {"delete": (u, v)}
        du, dv = existing_edges(csr, size // 2, rng, edges=edges)
        mu, mv = new_edges(csr, size - size // 2, rng, keys=keys)
        return {"delete": (du, dv), "insert": (mu, mv)}, {"delete": (mu, mv), "insert": (du, dv)}

    from kernels.measure.environment import environment

    # the device (name, compute capability, driver) and the code version (versions, gpu-graph-explorer)
    out = {"graph": args.graph, "fast_launch": enabled(), "environment": environment("cuda"),
           "env": {k: v for k, v in os.environ.items() if k.startswith("GRAPH_KERNELS")}, "sizes": {}}
    print(f"{args.graph}: {csr.n_rows:,} vertices, {csr.nnz:,} entries; fast launch {'on' if enabled() else 'off'}")
    variants = [dict(item.split("=") for item in text.split()) for text in args.variant] or [{}]
    # UPLOAD_BEFORE=1: the compact path's host grouping and upload as before 2026-11-29
    # (benchmarks/diag/compact_upload_before.py); every other name is a device_updates setting
    defaults = {name: getattr(device_updates, name) for v in variants for name in v if name != "UPLOAD_BEFORE"}
    upload_now = DeviceUpdater._upload_grouped

    def use(variant):
        for name, value in defaults.items():
            setattr(device_updates, name, type(value)(int(variant.get(name, value))))
        before = int(variant.get("UPLOAD_BEFORE", 0))
        if before:
            sys.path.insert(0, str(Path(__file__).resolve().parent))      # also when run with -m
            from compact_upload_before import upload_grouped_before
        DeviceUpdater._upload_grouped = upload_grouped_before if before else upload_now

    for variant in variants:
        use(variant)
        for size in sizes:                               # compile and warm every path first
            forward, inverse = batch_pair(size)
            updater.apply(**forward, verify=False)
            updater.apply(**inverse, verify=False)
    k = device_updates._kernels()
    mode = "event-timed" if args.events else "synchronized"
    # the fused compact kernel is not traced: it is one launch, and its phases are its own stamps
    names = [n for n in vars(k) if not n.startswith("_")
             and n not in ("cuda", "column_sums_load", "scan_columns", "fused_c")]
    if len(variants) > 1:
        out["variants"] = {}
    for size, variant in ((size, variant) for size in sizes for variant in variants):
        use(variant)
        label = " ".join(f"{n}={v}" for n, v in variant.items())
        if label:
            print(f"  [{label}]")
        times = {kind: [] for kind in kinds}
        for _ in range(args.reps):
            forward, inverse = batch_pair(size)
            times[kinds[0]].append(updater.apply(**forward, verify=False).report.seconds)
            times[kinds[1]].append(updater.apply(**inverse, verify=False).report.seconds)
        med = {kind: statistics.median(ts) for kind, ts in times.items()}
        # one traced batch (then its inverse, untraced)
        spent, events, host = defaultdict(list), (defaultdict(list) if args.events else None), defaultdict(list)
        originals = {n: getattr(k, n) for n in names}
        scan_original = k.scan_columns
        for n in names:
            setattr(k, n, Traced(n, originals[n], spent, cuda, events))
        k.scan_columns = lambda block, _f=scan_original, _s=spent, _e=events: Traced("scan_columns", _f(block), _s,
                                                                                     cuda, _e)
        from numba.cuda.cudadrv.devicearray import DeviceNDArray

        from kernels.operators import scan
        patched = [(scan, n, getattr(scan, n)) for n in ("exclusive_scan", "scan_array")]
        copies = [(DeviceNDArray, n, getattr(DeviceNDArray, n)) for n in ("copy_to_device", "copy_to_host")]
        grouping = [(DeviceUpdater, "_group_on_host", DeviceUpdater.__dict__["_group_on_host"])]
        from kernels.operators.launch import Workspace
        # the rest of a batch's host side: copies through the workspace, the directory's rebuild
        # (synchronized: its launches and GPU time), page bookkeeping
        host_calls = [(Workspace, n, getattr(Workspace, n)) for n in ("upload", "staging", "send", "download", "get")]
        host_calls += [(DeviceUpdater, "_upload_grouped", DeviceUpdater._upload_grouped),   # the compact path's
                       (DeviceMirror, "ensure_pages", DeviceMirror.ensure_pages),
                       (DeviceUpdater, "_index_buffer", DeviceUpdater._index_buffer),
                       (type(g), "free_page_stack", type(g).free_page_stack)]
        device_calls = [(DeviceMirror, "refresh_directory", DeviceMirror.refresh_directory)]

        def timed(name, fn, spent=spent, events=events):
            def call(*call_args, **kw):
                if events is not None:
                    start_event, end_event = cuda.event(), cuda.event()
                    t0 = time.perf_counter()
                    start_event.record()
                    result = fn(*call_args, **kw)
                    end_event.record()
                    spent[name].append(time.perf_counter() - t0)
                    events[name].append((start_event, end_event))
                    return result
                cuda.synchronize()
                t0 = time.perf_counter()
                result = fn(*call_args, **kw)
                cuda.synchronize()
                spent[name].append(time.perf_counter() - t0)
                return result
            return call

        depth, outermost = [0], []      # host calls nest (upload -> staging, send -> get): only the
                                        # outermost count towards what the listed calls account for

        def host_timed(name, fn, host=host, depth=depth, outermost=outermost):
            def call(*call_args, **kw):
                depth[0] += 1
                t0 = time.perf_counter()
                try:
                    return fn(*call_args, **kw)
                finally:
                    spent_s = time.perf_counter() - t0
                    depth[0] -= 1
                    host[name].append(spent_s)
                    if depth[0] == 0:
                        outermost.append(spent_s)
            return call

        for owner, n, fn in patched:
            setattr(owner, n, timed(n, fn))
        for owner, n, fn in copies:
            setattr(owner, n, host_timed(n, fn))
        for owner, n, fn in grouping:
            setattr(owner, n, staticmethod(host_timed(n, fn.__func__)))
        for owner, n, fn in host_calls:
            setattr(owner, n, host_timed(n, fn))
        for owner, n, fn in device_calls:
            setattr(owner, n, timed(n, fn))
        try:
            forward, inverse = batch_pair(size)
            cuda.synchronize()
            traced = updater.apply(**forward, verify=False).report.seconds
            flow, phases = updater.last_flow, updater.last_phases
        finally:
            for n in names:
                setattr(k, n, originals[n])
            k.scan_columns = scan_original
            for owner, n, fn in patched + copies + grouping + host_calls + device_calls:
                setattr(owner, n, fn)
        updater.apply(**inverse, verify=False)
        gpu = {}
        if events is not None:
            cuda.synchronize()
            gpu = {n: sum(cuda.event_elapsed_time(a, b) for a, b in pairs) / 1e3 for n, pairs in events.items()}
        launches = {n: (len(ts), sum(ts)) for n, ts in spent.items()}
        in_launches = sum(s for _, s in launches.values())
        path = flow or ("compact" if (size if csr.directed else 2 * size) <= device_updates.COMPACT_MAX_ENTRIES
                        else "full")
        host_s = {n: sum(ts) for n, ts in host.items()}
        accounted = in_launches + sum(outermost)
        record = out["sizes"] if len(variants) == 1 else out["variants"].setdefault(label, {})
        record[size] = {"path": path, "median_s": med, "rate": {kind: size / s for kind, s in med.items()},
                              "traced_s": traced, "traced_launches_s": in_launches, "mode": mode,
                              "launches": {n: {"count": c, "s": s, "gpu_s": gpu.get(n)}
                                           for n, (c, s) in launches.items()},
                              "host_s": host_s, "fused_phases_us": phases if flow.startswith("fused") else None}
        print(f"  {size:>8,} edges ({path}): "
              + ", ".join(f"{kind} {med[kind] * 1e3:.3f} ms ({size / med[kind]:.3g}/s)" for kind in kinds)
              + f"; traced {traced * 1e3:.3f} ms, "
              f"{in_launches * 1e3:.3f} ms of it in {sum(c for c, _ in launches.values())} {mode} launches"
              + (f" ({sum(gpu.values()) * 1e3:.3f} ms on the GPU)" if gpu else ""))
        if flow.startswith("fused") and phases:
            print("      fused phases (us): " + ", ".join(f"{n} {v:.0f}" if isinstance(v, float) else f"{n} {v}"
                                                      for n, v in phases.items()))
        for n, (c, s) in sorted(launches.items(), key=lambda item: -(gpu.get(item[0]) or item[1][1]))[:10]:
            print(f"      {n:<16} x{c:<3} {s * 1e3:8.3f} ms" + (f"   GPU {gpu[n] * 1e3:8.3f} ms" if n in gpu else ""))
        for n, t in sorted(host_s.items(), key=lambda item: -item[1]):
            print(f"      host {n:<16} x{len(host[n]):<3} {t * 1e3:8.3f} ms")
        print(f"      not in the above (Python between the calls): {(traced - accounted) * 1e3:.3f} ms")
        record[size]["unaccounted_s"] = traced - accounted
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
