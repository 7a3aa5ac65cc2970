"""Host time per statement of a device batch: the compact path's ``_apply_compact`` and
``_apply_on_device`` recompiled with a ``perf_counter`` stamp after each of their top-level
statements, then batches of N new edges inserted and deleted on a generated graph (after warm-up
batches); prints each statement's mean time and its source line. Nothing is synchronized that the
code does not synchronize itself, so an asynchronous launch shows its host cost and a read-back
its wait for the GPU.

    python3 benchmarks/diag/line_stopwatch.py [--graph delaunay|rmat] [--edges 1000] [--batches 20]
"""

from __future__ import annotations

import argparse
import ast
import inspect
import sys
import textwrap
import time
import types
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def instrument(cls, name: str, totals: dict) -> None:
    """Replace ``cls.name`` with a copy that adds the time since the last stamp to
    ``totals[(name, line)]`` after each top-level statement (and before a top-level return)."""
    fn = getattr(cls, name)
    raw = fn.__func__ if isinstance(inspect.getattr_static(cls, name), staticmethod) else fn
    lines, first = inspect.getsourcelines(raw)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first - 1)
    node = tree.body[0]
    node.decorator_list = []
    body = [ast.parse(f"_stamp_{name}({name!r}, {node.lineno})").body[0]]
    for stmt in node.body:
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            keep = ast.parse("_kept = None").body[0]
            keep.value = stmt.value
            body += [keep, ast.parse(f"_stamp_{name}({name!r}, {stmt.lineno})").body[0],
                     ast.parse("return _kept").body[0]]
            continue
        body += [stmt, ast.parse(f"_stamp_{name}({name!r}, {stmt.lineno})").body[0]]
    node.body = body
    ast.fix_missing_locations(tree)
    last = [time.perf_counter()]

    def stamp(where, line, last=last):
        now = time.perf_counter()
        totals[(where, line)].append(now - last[0])
        last[0] = now

    module = sys.modules[raw.__module__]
    env = dict(vars(module))
    exec(compile(tree, inspect.getsourcefile(raw), "exec"), env)
    # the copy runs in the module's own globals (names the module sets later, lazily, included)
    vars(module)[f"_stamp_{name}"] = stamp
    made = env[name]
    setattr(cls, name, types.FunctionType(made.__code__, vars(module), name, made.__defaults__, made.__closure__))
    return last


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", choices=("rmat", "delaunay"), default="delaunay")
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--edges", type=int, default=1000)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--functions", default="_apply_on_device,_apply_compact,_compact_inputs,_upload_grouped,"
                                           "_compact_limits,_compact_fused",
                    help="DeviceUpdater methods to instrument (a method's first stamp, on its def line, is the "
                         "time since its last call: ignore it)")
    args = ap.parse_args(argv)
    from device_update_profile import updater_on  # the same graphs, built the same way

    csr, updater = updater_on("cuda", args.graph, args.scale)
    from kernels.graph.update_batches import edge_keys, new_edges
    from kernels.operators.device_updates import DeviceUpdater
    rng = np.random.default_rng(3)
    keys = edge_keys(csr)
    for _ in range(3):
        u, v = new_edges(csr, args.edges, rng, keys=keys)
        updater.apply(insert=(u, v), verify=False)
        updater.apply(delete=(u, v), verify=False)
    totals: dict = defaultdict(list)
    clocks = [instrument(DeviceUpdater, name, totals) for name in args.functions.split(",")]
    seconds = []
    for _ in range(args.batches):
        u, v = new_edges(csr, args.edges, rng, keys=keys)
        for kind in ("insert", "delete"):
            now = time.perf_counter()
            for clock in clocks:
                clock[0] = now
            seconds.append(updater.apply(verify=False, **{kind: (u, v)}).report.seconds)
    batches = len(seconds)
    print(f"{args.graph} {args.scale}, {args.edges} edges, {batches} batches: median report "
          f"{np.median(seconds) * 1e3:.3f} ms")
    path = inspect.getsourcefile(sys.modules["kernels.operators.device_updates"])
    file_lines = Path(path).read_text().splitlines()
    rows = sorted(totals.items(), key=lambda item: -sum(item[1]))
    for (where, line), ts in rows[:40]:
        mean = sum(ts) / batches
        print(f"  {mean * 1e6:8.1f} us  {where}:{line}  {file_lines[line - 1].strip()[:90]}")
    print(f"  sum {sum(sum(ts) for ts in totals.values()) / batches * 1e3:.3f} ms a batch (both functions)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
