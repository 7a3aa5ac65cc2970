"""Compile every GPU variant's kernels and the operators' to PTX, without a GPU: ``python -m
kernels.run.ptx_check [--cc 9.0] [--list]``.

The CUDA simulator runs kernels as Python, so it cannot catch what only numba's CUDA
compiler sees (typing of tuples, atomics on each dtype, local/shared array shapes). This
compiles, with ``numba.cuda.compile_ptx`` (NVVM and NVRTC, no device):

* the kernels of **every GPU variant of the registry**, as its launch shape names them
  (``LaunchShape.ptx``: a function of the variant's own module returning its kernels and the
  argument types it launches them with; a kernel built with a signature brings its own,
  :func:`kernels.cuda.jit.signatures_deferred`). A GPU variant without one is a failure naming
  it; ``vendor`` variants (CuPy) have no kernels of ours;
* the operators the variants share (advance, filter, compute, scan, intersection for both
  views, both balances, both output modes, BFS and SSSP functors: what the traversals' host loop
  launches) and the device batch updates.

``--list`` prints what would be compiled, variant by variant, and compiles nothing (no CUDA
compiler libraries needed: ``tests/test_operators_ptx.py`` runs it). ``--lower`` types every
kernel and lowers it to LLVM IR (numba-cuda's ``compile_cuda``), stopping before NVVM: it needs
no CUDA compiler libraries either, so machines without them (CI) still catch what the simulator
cannot type, only not what NVVM itself rejects. Exit status: 0 when every kernel compiles, 1
when one fails (each failure printed), 77 when the CUDA compiler libraries are not installed
(nothing checked; not with ``--lower``).

Must run without ``NUMBA_ENABLE_CUDASIM`` (the simulator has no compiler).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import sys
import traceback

import numpy as np

SKIPPED = 77


def _types():
    from numba import types

    from kernels.cuda.jit import array_type
    from kernels.operators.views import view_types

    i32, i64, f64, u8 = (array_type(np.int32), array_type(np.int64), array_type(np.float64), array_type(np.uint8))
    return {"i32": i32, "i64": i64, "f64": f64, "u8": u8, "int": types.int64, "views": view_types()}


class MissingKernels(Exception):
    """A GPU variant whose launch shape names no kernels for this check."""


def variant_kernels(variant) -> list:
    """(name, dispatcher, argument types or None) of one GPU variant, as its launch shape's ``ptx``
    function gives them; names start with ``family/variant``."""
    label = f"{variant.family}/{variant.name}"
    if variant.launch is None or not variant.launch.ptx:
        raise MissingKernels(f"{label} declares no launch shape naming its kernels (Variant(launch=LaunchShape("
                             "..., ptx='package.module:function')))")
    module_name, _, function_name = variant.launch.ptx.partition(":")
    kernels = getattr(importlib.import_module(module_name), function_name)(variant)
    if not kernels:
        raise MissingKernels(f"{label}: {variant.launch.ptx} returned no kernels")
    return [(f"{label}: {name}", dispatcher, argtypes) for name, dispatcher, argtypes in kernels]


def gpu_variants() -> list:
    """Every variant of the registry whose kernels are ours (kind ``gpu``)."""
    from kernels.algorithms.registry import families

    return [var for fam in families().values() for var in fam.variants.values() if var.kind == "gpu"]


def signatures(dispatcher, argtypes) -> list[tuple]:
    """The argument types to compile ``dispatcher`` for: those given, else the ones it declares."""
    if argtypes is not None:
        return [tuple(argtypes)]
    declared = getattr(dispatcher, "declared_signatures", None)
    if not declared:
        raise MissingKernels(f"{getattr(dispatcher, '__name__', dispatcher)}: no argument types given or declared")
    return [tuple(sig) for sig in declared]


def operator_kernels():
    """(name, dispatcher, argument types) of the operators the variants share: every kernel a
    traversal's host loop can launch, and the device batch updates."""
    from numba import types

    from kernels.algorithms.traversal import gpu_bfs, gpu_sssp
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
    out.extend(batch_update_kernels(t))
    return out


def batch_update_kernels(t: dict):
    """The device batch updates (kernels/operators/device_updates.py), for the argument types
    ``DeviceUpdater`` passes, with float64 and float32 weight pools."""
    import numba
    from numba import types

    from kernels.operators import scan
    from kernels.operators.device_updates import FUSED_MAX_REGISTERS, SCAN_BLOCK, WARP_BLOCK, _kernels

    k = _kernels()
    i32, i64, u8, n = t["i32"], t["i64"], t["u8"], t["int"]
    i32_2d = numba.typeof(np.zeros((2, 2), dtype=np.int32))
    i64_2d = numba.typeof(np.zeros((2, 2), dtype=np.int64))
    block, ipt = scan.FIRST_LEVEL["cuda"]
    out = [("updates zero[int64]", k.zero, (i64, n)), ("updates zero[uint8]", k.zero, (u8, n)),
           ("updates expand", k.expand, (i32, i32, i64, i64, n, i32, i32_2d, n, n, n, n, i32, i32, i64, i64, i64,
                                         i64, i64, n, i64, i64, i64, n, n, i64, i32)),
           ("updates long scan", k.long_scan, (i32, i32_2d, n, n, i64, i64, i64, n)),
           ("updates scatter", k.scatter, (i32, i64, i64, n, i64, i64, i64, i64, i32, i64, n, i64, n)),
           ("updates sort groups", k.sort_groups, (i64, n, i64, i64, i64)),
           ("updates sort small groups", k.sort_small_groups, (i64, n, i64, i64, i64, n, i64, i64)),
           ("updates sort big groups", k.sort_big_groups, (i64, i64, i64, i64, i64)),
           ("updates check", k.check, (i64, n, n, i32, i64, i64, i64, i64)),
           ("updates mark touched", k.mark_touched, (i64, n, i32, i32_2d, n, n, u8)),
           ("updates count pages", k.count_pages, (i32, i32_2d, n, n, u8, i64, i64, i64, i32_2d, i32)),
           ("updates scan[columns]", scan.scan_pass(k.column_sums_load, block, ipt),
            (types.Tuple((i32_2d, u8, i64, n, n)), n, i64, i64, i64)),
           ("updates totals", k.totals, (i64, i64_2d, n, i64, i64)),
           ("updates unpack sums", k.unpack_sums, (i64_2d, n, i64_2d)),
           ("updates describe", k.describe, (i32, i32, i32_2d, n, n, u8, i64, i64, i64_2d, i32_2d, i32)),
           ("updates choose pages", k.choose_pages, (i32_2d, n, i32_2d, i64_2d, i32, n, n, i64)),
           ("updates rewrite index", k.rewrite_index, (i32_2d, n, n, u8, i64, i64_2d, i32_2d, i64, i32, i32, i32_2d)),
           ("updates gather pages[int32]", k.gather_pages, (i32, i64, n, n, i32)),
           ("updates compact front", k.front_c, (i64, i64, i64, i64, n, i32, i32_2d, n, n, n, i64, i64, i64, i64,
                                                 i64, i64, i64, i64, u8, i64, i64_2d, i32_2d, i32, n, i64, i32)),
           ("updates compact scan", k.scan_columns(SCAN_BLOCK["cuda"]), (i64_2d, n, i64_2d, i64, n, i64))]
    for wname in ("f64", "f32"):
        w = t["f64"] if wname == "f64" else numba.typeof(np.zeros(2, dtype=np.float32))
        out += [(f"updates gather[{wname}]", k.gather, (i64, i64, n, i32, i64, i64, w, n, i32, i64, i64, w)),
                (f"updates copy old[{wname}]", k.copy_old, (i32_2d, n, n, u8, i64_2d, i32, w, n, i32, i32, w)),
                (f"updates write pages[{wname}]", k.write_pages, (i32_2d, n, i64, i32, w, i32, i32_2d, n, i64, i64, n,
                                                                  i64, i64, w, i32, n, i32, w, n)),
                (f"updates free pages[{wname}]", k.free_pages, (i32_2d, n, n, u8, i64, i32, w, n)),
                (f"updates reweigh[{wname}]", k.reweigh, (i64, n, i32, i64, w, i32, i32_2d, n, n, w, i64)),
                (f"updates gather pages[{wname}]", k.gather_pages, (w, i64, n, n, w)),
                (f"updates compact check[{wname}]", k.check_c, (i64, n, n, i64, i64, i64, i64, w, n, i64, i32, i64,
                                                                i64, w, i64)),
                (f"updates compact copy[{wname}]", k.copy_c, (n, n, i64, i64_2d, i64_2d, i32_2d, n, i32, w, n, i32, w,
                                                              i32, i64, i64, i32_2d, i32, i32, n, n, n, n, i64,
                                                              i32_2d)),
                (f"updates compact fused[{wname}]", k.fused_c(WARP_BLOCK["cuda"], FUSED_MAX_REGISTERS),
                 # (longs, pool, index, P, epos, skey, perm, dfull, ifull, cpos, utouched, um, vals, desc_dummy,
                 #  newoff, gaps, W, weighted, ssrc, stag, spos, sw, pre, info, wpool, scratch, wscratch, scrmap,
                 #  desc, out, new_index, loc, degree, refresh, long_list, by_directory, by_grid, partial, passes):
                 #  the batch's sizes ride in `longs`
                 (i64, i32, i32_2d, n, i64, i64, i64, i64, i64, i64, u8, i64, i64_2d, i32_2d, i32, i64, w, n, i32, i64,
                  i64, w, i64_2d, i64, w, i32, w, i32, i32_2d, i64, i32_2d, i64, i32, n, i64, n, n, i64_2d, n)),
                (f"updates compact write[{wname}]", k.write_c, (n, n, n, i64, i64_2d, i64_2d, i32_2d, i64, i32, w, i32,
                                                                i32_2d, n, i64, i64, n, i64, w, i32, n, i32, w, n, u8,
                                                                i64, i32_2d))]
    # the vertex directory every batch (and every sync) rebuilds (kernels/graph/directory.py)
    from kernels.graph import directory

    clear, fill = directory.directory_kernels()
    out += [("directory clear", clear, (i64, i32)), ("directory fill", fill, (i32, i32_2d, n, n, i64, i32))]
    return out


def _answer_for_the_device(cc: tuple[int, int]) -> None:
    """numba compiles a called device function for "the current device"; with no device the
    query fails, so answer it with the compute capability being checked."""
    from types import SimpleNamespace

    from numba.cuda import dispatcher

    dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=cc)


def _enumerate() -> tuple[dict[str, list], list[str]]:
    """Every kernel to compile, by variant, and one line per variant that names none."""
    from kernels.cuda.jit import signatures_deferred

    found, problems = {}, []
    with signatures_deferred():
        for var in gpu_variants():
            label = f"{var.family}/{var.name}"
            try:
                found[label] = [(name, dispatcher, signatures(dispatcher, argtypes))
                                for name, dispatcher, argtypes in variant_kernels(var)]
            except MissingKernels as exc:
                problems.append(str(exc))
            except Exception as exc:  # noqa: BLE001 - a variant whose kernels cannot be built: say which, go on
                problems.append(f"{label}: its kernels could not be built ({var.launch.ptx}: {type(exc).__name__}: "
                                f"{str(exc).splitlines()[0] if str(exc) else ''})")
        found["operators"] = [(name, dispatcher, [tuple(args)]) for name, dispatcher, args in operator_kernels()]
    for kernels in found.values():
        for name, dispatcher, sigs in kernels:
            wrong = arity_problem(name, dispatcher, sigs)
            if wrong:
                problems.append(wrong)
    return found, problems


def arity_problem(name: str, dispatcher, sigs) -> str | None:
    """A list of argument types that does not match the kernel's parameters (a kernel whose
    arguments changed while this list did not): said here, without a compiler, so that
    ``--list`` (run by the tests everywhere) catches it, not only the GPU machine."""
    py_func = getattr(dispatcher, "py_func", None)
    if py_func is None:
        return None
    wanted = len(inspect.signature(py_func).parameters)
    given = sorted({len(sig) for sig in sigs if len(sig) != wanted})
    if not given:
        return None
    return f"{name}: {', '.join(map(str, given))} argument types given for a kernel of {wanted} parameters"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cc", default="9.0", help="compute capability to compile for (default 9.0: H100/H200)")
    ap.add_argument("--list", action="store_true", help="print the kernels of every GPU variant, compile nothing")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--match", default="", help="only the kernels whose name holds this text")
    ap.add_argument("--lower", action="store_true",
                    help="type every kernel and lower it to LLVM IR only (numba-cuda's compile_cuda: no NVVM or "
                         "NVRTC needed, so it runs where they are not installed); catches typing errors "
                         "(a shared array's shape, a namespace looked up in a kernel), not NVVM's")
    args = ap.parse_args(argv)
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        print("ptx_check: unset NUMBA_ENABLE_CUDASIM (the simulator has no compiler)", file=sys.stderr)
        return 2
    from numba import cuda, types

    cc = tuple(int(x) for x in args.cc.split("."))
    if args.list:
        found, problems = _enumerate()
        for label, kernels in found.items():
            print(f"{label}: {sum(len(sigs) for _, _, sigs in kernels)} kernels")
            for name, _, sigs in kernels:
                print(f"    {name} ({len(sigs)} signature{'s' if len(sigs) != 1 else ''})")
        for problem in problems:
            print(f"PROBLEM  {problem}")
        return 1 if problems else 0
    _answer_for_the_device(cc)
    if args.lower:
        from numba.cuda.compiler import compile_cuda

        def compile_one(pyfunc, argtypes):
            compile_cuda(pyfunc, types.void, argtypes, cc=cc)
    else:
        try:
            cuda.compile_ptx(lambda a: None, "void(int32[::1])", cc=cc)
        except Exception as exc:  # noqa: BLE001 - NVVM / NVRTC missing: nothing can be checked here
            print(f"ptx_check: the CUDA compiler libraries are not available ({type(exc).__name__}); skipped "
                  "(--lower types and lowers the kernels without them)", file=sys.stderr)
            return SKIPPED

        def compile_one(pyfunc, argtypes):
            cuda.compile_ptx(pyfunc, types.void(*argtypes), cc=cc)
    found, problems = _enumerate()
    failures, checked, done = len(problems), 0, set()
    for problem in problems:
        print(f"FAILED  {problem}")
    for kernels in found.values():
        for name, dispatcher, sigs in kernels:
            if args.match not in name:
                continue
            for argtypes in sigs:
                key = (id(dispatcher.py_func), argtypes)     # variants sharing a kernel compile it once
                if key in done:
                    continue
                done.add(key)
                checked += 1
                try:
                    compile_one(dispatcher.py_func, argtypes)
                    if not args.quiet:
                        print(f"ok      {name}")
                except Exception as exc:  # noqa: BLE001 - report every kernel, then fail
                    failures += 1
                    print(f"FAILED  {name}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
                    if not args.quiet:
                        traceback.print_exc(limit=3)
    variants = len(found) - 1
    done_as = "type and lower (no NVVM)" if args.lower else "compile"
    print(f"{checked - failures + len(problems)} of {checked} kernels {done_as} for sm_{cc[0]}{cc[1]} "
          f"({variants} GPU variants and the operators; {len(problems)} variants name no kernels)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
