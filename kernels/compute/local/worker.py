"""The worker process: ``python -m kernels worker [--target cuda|sim|cpu]``.

It owns the CUDA context (or the simulator), keeps the graphs it was sent and the replicas
of live documents (:class:`~kernels.compute.live.LiveDocument`: slotted pages brought up to
date by page deltas, with their device mirror), and runs jobs one at a time, answering on
stdout with frames of :mod:`kernels.compute.local.protocol`. A kernel fault,
a hang or a sticky CUDA error kills only this process: the client restarts it.

stdout carries frames only; anything a library prints goes to stderr (we swap the file
descriptors at start-up so a stray ``print`` cannot corrupt the stream).
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback

from kernels.compute.local.launch import adopt_plugin_directories, lower_priority, tie_to_parent
from kernels.compute.local.protocol import ProtocolError, read_frame, write_frame
from kernels.errors import GraphKernelsError
from kernels.measure.targets import TARGETS, Target


def _claim_stdout():
    """Keep the real stdout for frames; point fd 1 (and sys.stdout) at stderr."""
    frames = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return frames


def serve(target: str | None = None, stdin=None, stdout=None) -> int:
    if target is not None and Target.parse(target).simulated:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    if stdin is None:                 # a real worker process, not a test driving serve() in-process
        tie_to_parent()
        lower_priority()
        adopt_plugin_directories()
    frames_out = stdout or _claim_stdout()
    frames_in = stdin or sys.stdin.buffer
    graphs: dict = {}
    documents: dict = {}

    from kernels.run.runner import run_variant

    def document(key):
        from kernels.compute.live import UnknownDocument

        if key not in documents:
            raise UnknownDocument(f"the worker holds no replica of document {key!r} (open it with a snapshot)")
        return documents[key]

    while True:
        try:
            msg = read_frame(frames_in)
        except ProtocolError:
            return 0
        op = msg.get("op")
        try:
            if op == "ping":
                reply = {"op": "pong", "pid": os.getpid(),
                         "simulator": os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")}
            elif op == "warm":       # a process started ahead of its jobs does its start-up work now
                reply = {"op": "warmed", **warm_up(msg.get("target"), capture=bool(msg.get("capture")))}
            elif op == "load":
                graphs[msg["key"]] = msg["graph"]
                reply = {"op": "loaded", "key": msg["key"]}
            elif op == "forget":
                graphs.pop(msg["key"], None)
                reply = {"op": "forgotten", "key": msg["key"]}
            elif op == "prepare":    # import the variant's family now, outside the run's time limit
                from kernels.algorithms.registry import get_variant
                from kernels.measure.environment import environment

                get_variant(msg["family"], msg["variant"])
                environment(msg.get("target") or "cpu")     # library versions, device: cached after this
                reply = {"op": "prepared"}
            elif op == "run":
                graph = graphs[msg["key"]]
                # the client's time limit counts from here: the run, not the worker's start
                write_frame(frames_out, {"op": "progress", "stage": "started", "id": msg.get("id")})
                result = run_variant(graph, msg["family"], msg["variant"], msg.get("params"),
                                     target=msg.get("target"), repeat=msg.get("repeat", 5),
                                     warmup=msg.get("warmup", 1), seed=msg.get("seed", 0),
                                     launch=msg.get("launch", "auto"), energy=bool(msg.get("energy", False)))
                reply = {"op": "result", "id": msg.get("id"), "record": result.record,
                         "output": result.output if msg.get("want_output") else None}
            elif op == "compile":    # compile ahead: the cell up to its compile stage (kernels.compute.precompile)
                from kernels.run.runner import compile_variant

                summary = compile_variant(graphs[msg["key"]], msg["family"], msg["variant"], msg.get("params"),
                                          target=msg.get("target") or "cuda", seed=msg.get("seed", 0))
                reply = {"op": "compiled", "id": msg.get("id"), "summary": summary}
            elif op == "open_document":
                from kernels.compute.live import LiveDocument

                old = documents.pop(msg["key"], None)
                if old is not None:
                    old.close()
                doc = LiveDocument(msg["key"], msg["arrays"], msg["revision"], name=msg.get("name"),
                                   verify_deltas=bool(msg.get("verify_deltas", False)))
                documents[msg["key"]] = doc
                reply = {"op": "opened", "key": msg["key"], "summary": doc.summary()}
            elif op == "update_document":
                doc = document(msg["key"])
                doc.apply(msg["deltas"], msg["revision"])
                reply = {"op": "updated", "key": msg["key"], "summary": doc.summary()}
            elif op == "batch_document":     # edge updates applied on the replica's device pages
                doc = document(msg["key"])
                reply = {"op": "batched", "key": msg["key"], "result": doc.apply_batch(msg["batch"], msg["revision"]),
                         "summary": doc.summary()}
            elif op == "run_document":
                doc = document(msg["key"])
                result = doc.run(msg["family"], msg["variant"], msg.get("params"), target=msg.get("target"),
                                 repeat=msg.get("repeat", 5), warmup=msg.get("warmup", 1), seed=msg.get("seed", 0),
                                 launch=msg.get("launch", "auto"))
                reply = {"op": "result", "id": msg.get("id"), "record": result.record,
                         "output": result.output if msg.get("want_output") else None}
            elif op == "close_document":
                doc = documents.pop(msg["key"], None)
                if doc is not None:
                    doc.close()
                reply = {"op": "closed", "key": msg["key"]}
            elif op == "sleep":  # for tests of hangs and kills; harmless otherwise
                import time

                time.sleep(float(msg.get("seconds", 1)))
                reply = {"op": "slept"}
            elif op == "quit":
                write_frame(frames_out, {"op": "bye"})
                return 0
            else:
                reply = {"op": "error", "id": msg.get("id"), "kind": "ProtocolError",
                         "message": f"unknown request {op!r}"}
        except GraphKernelsError as exc:
            reply = {"op": "error", "id": msg.get("id"), "kind": type(exc).__name__, "message": str(exc)}
        except KeyError as exc:
            reply = {"op": "error", "id": msg.get("id"), "kind": "KeyError",
                     "message": f"the worker has no graph {exc} (send it with 'load' first)"}
        except Exception as exc:  # report, keep serving: only a real crash ends the process
            traceback.print_exc(file=sys.stderr)
            reply = {"op": "error", "id": msg.get("id"), "kind": type(exc).__name__,
                     "message": f"{type(exc).__name__}: {exc}"}
        write_frame(frames_out, reply)


def warm_up(target: str | None, capture: bool = False) -> dict:
    """What a process's first job would otherwise pay: the runner's imports and, for a real GPU,
    the device's context and numba-cuda's first compile (its typing and target contexts, NVVM and
    the linker are set up once a process, by the first kernel compiled or loaded from the cache)
    and, with ``capture`` (a measuring process), the first CUDA graph capture (CuPy's import and
    its stream: 0.2-0.7 s that a sweep's first cell paid on an H200 host). Returns the seconds
    each took, so a pool can say what warming saved."""
    import time

    stamps = [time.perf_counter()]
    import kernels.run.runner  # noqa: F401 - the import is the work
    from kernels.measure.environment import environment

    stamps.append(time.perf_counter())
    parsed = Target.parse(target) if target else None
    first_compile_s = 0.0
    no_capture = None
    if parsed is not None and parsed.real_gpu:
        from numba import cuda

        cuda.current_context()
        before = time.perf_counter()
        no_capture = _first_kernel(cuda, capture)
        first_compile_s = time.perf_counter() - before
    environment(str(parsed) if parsed is not None else "cpu")
    stamps.append(time.perf_counter())
    reply = {"pid": os.getpid(), "import_s": round(stamps[1] - stamps[0], 4),
             "context_s": round(stamps[2] - stamps[1] - first_compile_s, 4),
             "first_compile_s": round(first_compile_s, 4)}
    if no_capture:
        reply["no_capture"] = no_capture
    return reply


def _first_kernel(cuda, capture: bool) -> str | None:
    """Compile and launch a one-thread kernel (not through the kernel cache: nothing to keep) and,
    with ``capture``, capture and replay it as a CUDA graph the way timed launches are
    (:class:`kernels.measure.cuda_graphs.CupyCapturer`). Returns why no graph was captured, if
    none was (the timed runs then fall back and say so in their cells)."""
    import numpy as np

    @cuda.jit("void(int32[::1])")
    def touch(out):
        out[0] = 1

    out = cuda.device_array(1, dtype=np.int32)
    touch[1, 1](out)
    cuda.synchronize()
    if not capture:
        return None
    from kernels.measure.cuda_graphs import CupyCapturer

    try:
        capturer = CupyCapturer()
    except Exception as exc:  # noqa: BLE001 - no CuPy, or no capture stream: the reason is the answer
        return f"{type(exc).__name__}: {exc}"
    try:
        graph = capturer.capture(lambda: touch[1, 1, capturer.numba_stream](out))
        capturer.replay(graph)
    except Exception as exc:  # noqa: BLE001 - as above
        return f"{type(exc).__name__}: {exc}"
    finally:
        with contextlib.suppress(Exception):
            capturer.close()
    return None


def register(sub) -> None:
    p = sub.add_parser("worker", help="serve kernel jobs on stdin/stdout (used by the GUI and sweeps)")
    p.add_argument("--target", choices=TARGETS, default=None)
    p.set_defaults(func=lambda args: serve(args.target))
