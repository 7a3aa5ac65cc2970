"""Compile every operator and traversal kernel to PTX, without a GPU: ``python -m
kernels.run.ptx_check [--cc 9.0]``.

The CUDA simulator runs kernels as Python, so it cannot catch what only numba's CUDA
compiler sees (typing of tuples, atomics on each dtype, local/shared array shapes). This
compiles each kernel for the argument types the traversals really pass -- both views, both
balances, both output modes, BFS and SSSP functors, weighted and not, the device-loop
kernels (:mod:`kernels.algorithms.traversal.device_loop`), the frontier-loop kernels
(:mod:`kernels.algorithms.traversal.frontier_loop`, with the hardware warp intrinsics) and the triangle family's device
preprocessing (``gpu-oriented``, ``preprocess=gpu``) -- with
``numba.cuda.compile_ptx``, which needs NVVM and NVRTC but no device. Exit status: 0 when
every kernel compiles, 1 when one fails (each failure printed), 77 when the CUDA compiler
libraries are not installed (nothing checked).

Must run without ``NUMBA_ENABLE_CUDASIM`` (the simulator has no compiler).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

import numpy as np

SKIPPED = 77


def _types():
    import numba
    from numba import types

    def arr(dtype, ndim=1):
        return numba.typeof(np.zeros((2,) * ndim, dtype=dtype))

    i32, i64, f32, f64, u8 = (arr(np.int32), arr(np.int64), arr(np.float32), arr(np.float64), arr(np.uint8))
    slotted = types.Tuple((i32, arr(np.int32, 2), f64, types.int64, types.int64))
    slotted_f32 = types.Tuple((i32, arr(np.int32, 2), f32, types.int64, types.int64))
    csr = types.Tuple((i64, i32, f64))
    return {"i32": i32, "i64": i64, "f64": f64, "u8": u8, "int": types.int64, "views": {
        "slotted": slotted, "slotted_f32": slotted_f32, "csr": csr}}


def _types_3d():
    import numba

    return numba.typeof(np.zeros((2, 2, 2), dtype=np.int64))


def kernels_to_check():
    """(name, dispatcher, argument types) of every kernel a traversal can launch."""
    from numba import types

    from kernels.algorithms.traversal import device_loop, gpu_bfs, gpu_sssp
    from kernels.operators import advance, compute, filter, intersection, scan

    t = _types()
    i32, i64, f64, u8, n = t["i32"], t["i64"], t["f64"], t["u8"], t["int"]
    out = []
    bfs_state = types.Tuple((i32, n))
    sssp_state = types.Tuple((f64, i32, n))
    for view_name, g in t["views"].items():
        kind = "csr" if view_name == "csr" else "slotted"
        load = advance.locate_load(kind)
        out.append((f"scan[{view_name} locate]", scan.scan_pass(load, 256, 8),
                    (types.Tuple((g, i32, i64)), n, i64, i64, i64)))
        functors = [("bfs visit", gpu_bfs.visit, bfs_state),
                    ("sssp relax", gpu_sssp.relax_functor(kind, True), sssp_state),
                    ("sssp unit", gpu_sssp.relax_functor(kind, False), sssp_state),
                    ("emit all", advance.emit_all, types.Tuple(()))]
        for fname, functor, state in functors:
            for output in ("append", "positions"):
                for degrees in ((False, True) if output == "append" else (False,)):
                    sources = output == "positions"
                    tag = f"{view_name} {fname} {output}{' degrees' if degrees else ''}"
                    out.append((f"lb expand[{tag}]",
                                advance.lb_expand_kernel(kind, functor, 256, output, sources, degrees),
                                (g, i32, i64, i64, n, i64, i64, n, state, i32, i32, i64, n, n)))
                    out.append((f"tpv[{tag}]", advance.tpv_kernel(kind, functor, output, sources, degrees),
                                (g, i32, i64, i64, n, i64, state, i32, i32, i64, n, n)))
        out.append((f"intersection[{view_name}]", intersection.intersection_kernel(kind, kind == "csr"),
                    (g, i32, i32, n, i64, i64)))
        if kind == "csr":
            out.append(("bottom-up csr", gpu_bfs.bottom_up_csr(256), (g, n, i32, n, i64, n, n)))
        else:
            out.append((f"bottom-up slotted[{view_name}]", gpu_bfs.bottom_up_slotted(256, 32), (g, i32, n, i64, n, n)))
    i64_3d = _types_3d()
    for view_name, g in t["views"].items():
        kind = "csr" if view_name == "csr" else "slotted"
        for algorithm, weighted, group, optimizing, output in (("bfs", False, 32, False, i32),
                                                               ("bfs", False, 32, True, i32),
                                                               ("bfs", False, 1, True, i32),
                                                               ("sssp", True, 32, False, f64),
                                                               ("sssp", False, 1, False, f64)):
            # (g, n, m, source, out, bits: the distances' int64 view, stamp, small, chunks,
            # counters, result, trace)
            tag = (f"{view_name} {algorithm}{' weighted' if weighted else ''} group={group}"
                   f"{' optimizing' if optimizing else ''}")
            out.append((f"device loop[{tag}]",
                        device_loop.device_loop_kernel(kind, algorithm, weighted, 256, group, optimizing),
                        (g, n, n, n, output, i64, i32, i64_3d, i64_3d, i64, i64, i64_3d)))
    out.extend(frontier_loop_kernels(t))
    out.append(("scan[array]", scan.scan_pass(scan.load_array, 1024, 4), (types.UniTuple(i64, 1), n, i64, i64, i64)))
    out.append(("add pass", scan.add_pass(2048), (i64, n, i64)))
    out.append(("partition", advance.partition_kernel(), (i64, n, i64, n, i64, n)))
    level_state = types.Tuple((i32, n))
    for over_range in (True, False):
        out.append((f"filter scan[range={over_range}]", scan.scan_pass(filter.flag_load(gpu_bfs.at_level, over_range),
                                                                       256, 8),
                    (types.Tuple((i32, u8, level_state)), n, i64, i64, i64)))
        out.append((f"scatter[range={over_range}]", filter.scatter_kernel(over_range), (i32, u8, i64, n, i32)))
    out.append(("compute[bfs start]", compute.compute_kernel(gpu_bfs.start_levels, True),
                (i32, n, types.Tuple((i32, n, i32, i64)))))
    out.append(("compute[sssp start]", compute.compute_kernel(gpu_sssp.start_distances, True),
                (i32, n, types.Tuple((f64, i32, n, i32, i64)))))
    out.extend(triangle_preprocessing_kernels(t))
    out.extend(batch_update_kernels(t))
    return out


def batch_update_kernels(t: dict):
    """The device batch updates (kernels/operators/device_updates.py), for the argument types
    ``DeviceUpdater`` passes, with float64 and float32 weight pools."""
    import numba
    from numba import types

    from kernels.operators import scan
    from kernels.operators.device_updates import _kernels

    k = _kernels()
    i32, i64, u8, n = t["i32"], t["i64"], t["u8"], t["int"]
    i32_2d = numba.typeof(np.zeros((2, 2), dtype=np.int32))
    i64_2d = numba.typeof(np.zeros((2, 2), dtype=np.int64))
    block, ipt = scan.FIRST_LEVEL["cuda"]
    out = [("updates zero[int64]", k.zero, (i64, n)), ("updates zero[uint8]", k.zero, (u8, n)),
           ("updates expand", k.expand, (i32, i32, i64, i64, n, i32, i32_2d, n, n, n, n, i32, i32, i64, i64, i64,
                                         i64, i64)),
           ("updates scatter", k.scatter, (i32, i64, i64, n, i64, i64, i64, i64)),
           ("updates sort groups", k.sort_groups, (i64, n, i64, i64, i64)),
           ("updates check", k.check, (i64, n, n, i32, i64, i64, i64, i64)),
           ("updates mark touched", k.mark_touched, (i64, n, i32, i32_2d, n, n, u8)),
           ("updates count pages", k.count_pages, (i32, i32_2d, n, n, u8, i64, i64, i64, i32_2d, i32)),
           ("updates scan[columns]", scan.scan_pass(k.column_sums_load, block, ipt),
            (types.Tuple((i32_2d, u8, i64, n, n)), n, i64, i64, i64)),
           ("updates totals", k.totals, (i64, i64_2d, n, i64)),
           ("updates unpack sums", k.unpack_sums, (i64_2d, n, i64_2d)),
           ("updates describe", k.describe, (i32, i32, i32_2d, n, n, u8, i64, i64, i64_2d, i32_2d, i32)),
           ("updates choose pages", k.choose_pages, (i32_2d, n, i32_2d, i64_2d, i32, n, n, i64)),
           ("updates rewrite index", k.rewrite_index, (i32_2d, n, n, u8, i64, i64_2d, i32_2d, i64, i32, i32, i32_2d)),
           ("updates gather pages[int32]", k.gather_pages, (i32, i64, n, n, i32))]
    for wname in ("f64", "f32"):
        w = t["f64"] if wname == "f64" else numba.typeof(np.zeros(2, dtype=np.float32))
        out += [(f"updates gather[{wname}]", k.gather, (i64, i64, n, i32, i64, i64, w, n, i32, i64, i64, w)),
                (f"updates copy old[{wname}]", k.copy_old, (i32_2d, n, n, u8, i64_2d, i32, w, n, i32, i32, w)),
                (f"updates write pages[{wname}]", k.write_pages, (i32_2d, n, i64, i32, w, i32, i32_2d, n, i64, i64, n,
                                                                  i64, i64, w, i32, n, i32, w)),
                (f"updates free pages[{wname}]", k.free_pages, (i32_2d, n, n, u8, i64, i32, w, n)),
                (f"updates reweigh[{wname}]", k.reweigh, (i64, n, i32, i64, w, i32, i32_2d, n, n, w, i64)),
                (f"updates gather pages[{wname}]", k.gather_pages, (w, i64, n, n, w))]
    return out


def frontier_loop_kernels(t: dict):
    """gpu-do / gpu-nearfar (kernels/algorithms/traversal/frontier_loop.py) with the hardware warp
    intrinsics, for the argument types ``FrontierLoopTraversal.run`` passes."""
    import numba

    from kernels.algorithms.traversal import frontier_loop

    i32, i64, f64, n = t["i32"], t["i64"], t["f64"], t["int"]
    i64_3d = _types_3d()
    u32_2d = numba.typeof(np.zeros((2, 2), dtype=np.uint32))
    out = []
    for view_name, g in t["views"].items():
        kind = "csr" if view_name == "csr" else "slotted"
        for algorithm, weighted, group, optimizing, output in (("bfs", False, 32, True, i32),
                                                               ("bfs", False, 1, False, i32),
                                                               ("sssp", True, 32, False, f64),
                                                               ("sssp", False, 1, False, f64)):
            tag = (f"{view_name} {algorithm}{' weighted' if weighted else ''} group={group}"
                   f"{' optimizing' if optimizing else ''}")
            # (g, n, m, source, out, bits, stamp, small, chunks, counters, result, fb, far, pending, fstamp, tune)
            out.append((f"frontier loop[{tag}]",
                        frontier_loop.frontier_loop_kernel(kind, algorithm, weighted, 256, group, optimizing, True),
                        (g, n, n, n, output, i64, i32, i64_3d, i64_3d, i64, i64, u32_2d, i32, i32, i32, f64)))
    return out


def triangle_preprocessing_kernels(t: dict):
    """gpu-oriented's device preprocessing (kernels/algorithms/triangles/device_orientation.py),
    for the argument types ``orient_on_device`` passes: int64 indptr, int32 indices."""
    from numba import types

    from kernels.algorithms.triangles import device_orientation as dev
    from kernels.operators import bin_sort, scan

    i32, i64, n = t["i32"], t["i64"], t["int"]
    block, ipt = scan.FIRST_LEVEL["cuda"]
    scans = [("keep", dev.keep_load, (i64, i32, i32)), ("partner", dev.partner_load, (i32, i32, i64, i64)),
             ("owned", dev.owned_load, (i64, i64)), ("work", dev.work_load, (i64, i32, i64, n)),
             ("chunk", dev.chunk_load, (i32, i64, i64, i32, n, n))]
    out = [(f"triangles scan[{name}]", scan.scan_pass(load, block, ipt), (types.Tuple(args), n, i64, i64, i64))
           for name, load, args in scans]
    out += [("triangles rows", dev.rows_kernel, (i64, n, n, i32)),
            ("triangles out lists", dev.out_lists_kernel, (i64, i32, n, n, i64, i64, i32)),
            ("triangles partners", dev.partners_kernel, (i64, i32, i32, n, i64, i64, i32, i32)),
            ("triangles keys", dev.keys_kernel, (i64, i64, i64, n, n, n, i64, i32)),
            ("triangles chunks", dev.chunks_kernel, (i32, i64, i64, i32, n, n, n, i64, i32, i64, i64)),
            ("triangles chunk keys", dev.chunk_keys_kernel, (i64, i64, i64, n, i32)),
            ("triangles gather chunks", dev.gather_chunks_kernel, (i32, n, i32, i64, i64, i32, i64, i64)),
            ("bin sort histogram", bin_sort.histogram_kernel(dev.BINS), (i32, n, n, n, i64)),
            ("bin sort scatter", bin_sort.scatter_kernel(dev.BINS), (i32, n, n, n, i64, i32))]
    return out


def _answer_for_the_device(cc: tuple[int, int]) -> None:
    """numba compiles a called device function for "the current device"; with no device the
    query fails, so answer it with the compute capability being checked."""
    from types import SimpleNamespace

    from numba.cuda import dispatcher

    dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=cc)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cc", default="9.0", help="compute capability to compile for (default 9.0: H100/H200)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        print("ptx_check: unset NUMBA_ENABLE_CUDASIM (the simulator has no compiler)", file=sys.stderr)
        return 2
    from numba import cuda, types

    cc = tuple(int(x) for x in args.cc.split("."))
    _answer_for_the_device(cc)
    try:
        cuda.compile_ptx(lambda a: None, "void(int32[::1])", cc=cc)
    except Exception as exc:  # noqa: BLE001 - NVVM / NVRTC missing: nothing can be checked here
        print(f"ptx_check: the CUDA compiler libraries are not available ({type(exc).__name__}); skipped",
              file=sys.stderr)
        return SKIPPED
    failures = 0
    checked = kernels_to_check()
    for name, dispatcher, argtypes in checked:
        try:
            cuda.compile_ptx(dispatcher.py_func, types.void(*argtypes), cc=cc)
            if not args.quiet:
                print(f"ok      {name}")
        except Exception as exc:  # noqa: BLE001 - report every kernel, then fail
            failures += 1
            print(f"FAILED  {name}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            if not args.quiet:
                traceback.print_exc(limit=3)
    print(f"{len(checked) - failures} of {len(checked)} kernels compile for sm_{cc[0]}{cc[1]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
