"""Launch modes of the kernel timing (``auto``, ``graph``, ``direct``): the fallback reasons, the
record's ``timing.launch`` field and its schema, the ``--launch`` option, the mode's way through
sweeps and jobs, and that every capturable execution queues its work on ``self.stream``.

The capture itself needs CuPy and a GPU: the fallback logic is driven here by injected fake
capturers, and the stream discipline is checked on the CUDA simulator by recording the stream
of every kernel configuration and device copy. Real captures are in ``tests/test_launch_modes_gpu.py``.
"""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

from kernels.algorithms.execution import Execution
from kernels.algorithms.registry import get_variant
from kernels.cli import main as cli_main
from kernels.errors import GraphFormatError, ParameterError
from kernels.graph.csr import CSRGraph
from kernels.graph.io import read_graph
from kernels.measure.cuda_graphs import LAUNCH_MODES, check_launch_mode, plan_launches
from kernels.measure.targets import simulator_enabled
from kernels.results.schema import check_record
from kernels.run.runner import run_variant
from tests.conftest import data_path

# ---- the plan: fallbacks and their reasons -------------------------------------------------------

class FakeExecution(Execution):
    def __init__(self, capturable=True, needs_reset=False):
        self.capturable, self.needs_reset = capturable, needs_reset
        self.calls = []             # ("launch" | "reset", the stream it was queued on)

    def launch(self):
        self.calls.append(("launch", self.stream))

    def reset(self):
        self.calls.append(("reset", self.stream))


class FakeCapturer:
    """Stands for CuPy: a stream, a capture that records what ran, replays counted."""

    made = 0

    def __init__(self, fail_capture: BaseException | None = None):
        FakeCapturer.made += 1
        self.numba_stream = object()
        self.fail_capture = fail_capture
        self.replays = self.closed = self.synchronized = 0

    def synchronize(self):
        self.synchronized += 1

    def capture(self, fn):
        fn()
        if self.fail_capture is not None:
            raise self.fail_capture
        return "graph"

    def replay(self, graph):
        assert graph == "graph"
        self.replays += 1

    def close(self):
        self.closed += 1


def test_a_capturable_execution_is_warmed_captured_and_replayed_on_the_capture_stream():
    ex = FakeExecution(needs_reset=True)
    made = {}

    def factory():
        made["c"] = FakeCapturer()
        return made["c"]

    plan = plan_launches(ex, "cuda", "auto", capturer_factory=factory)
    cap = made["c"]
    assert plan.mode == "graph" and plan.reason is None and plan.notice is None
    assert plan.stream is cap.numba_stream
    # the reset and the warm-up launch went on the capture stream, then the captured launch
    assert ex.calls == [("reset", cap.numba_stream), ("launch", cap.numba_stream), ("launch", cap.numba_stream)]
    assert cap.synchronized >= 1
    plan.launch()
    plan.launch()
    assert cap.replays == 2 and len(ex.calls) == 3       # replays run no Python launch
    plan.close()
    assert cap.closed == 1 and ex.stream == 0


def test_direct_mode_never_tries_a_capture():
    FakeCapturer.made = 0
    ex = FakeExecution()
    plan = plan_launches(ex, "cuda", "direct", capturer_factory=FakeCapturer)
    assert plan.mode == "direct" and plan.reason is None and plan.notice is None
    assert FakeCapturer.made == 0 and ex.calls == []
    plan.launch()
    assert ex.calls == [("launch", 0)]


@pytest.mark.parametrize("mode", ["auto", "graph"])
def test_an_execution_that_is_not_capturable_runs_direct_and_says_so_only_when_a_graph_was_asked_for(mode):
    ex = FakeExecution(capturable=False)
    plan = plan_launches(ex, "cuda", mode, capturer_factory=FakeCapturer)
    assert plan.mode == "direct"
    assert "not a fixed kernel sequence" in plan.reason
    assert (plan.notice is not None) == (mode == "graph")
    assert ex.calls == []


def test_queued_mode_times_the_executions_own_launches_without_a_capture():
    FakeCapturer.made = 0
    ex = FakeExecution()
    plan = plan_launches(ex, "cuda", "queued", capturer_factory=FakeCapturer)
    assert plan.mode == "queued" and plan.reason is None and plan.notice is None
    assert FakeCapturer.made == 0 and plan.stream == 0
    plan.launch()
    assert ex.calls == [("launch", 0)]


def test_queued_mode_needs_a_launch_that_never_waits_for_the_device():
    plan = plan_launches(FakeExecution(capturable=False), "cuda", "queued", capturer_factory=FakeCapturer)
    assert plan.mode == "direct" and "do not wait for the device" in plan.reason
    assert plan.notice.startswith("launch=queued fell back to direct launches: ")


@pytest.mark.parametrize("target", ["sim", "cpu"])
def test_a_target_other_than_cuda_runs_direct_with_the_reason(target):
    plan = plan_launches(FakeExecution(), target, "graph", capturer_factory=FakeCapturer)
    assert plan.mode == "direct"
    assert "real GPU" in plan.reason and target in plan.reason
    assert plan.notice.startswith("launch=graph fell back to direct launches: ")


def test_without_cupy_auto_queues_the_launches_and_graph_runs_direct_naming_cupy():
    def no_cupy():
        raise ImportError("No module named 'cupy'")

    ex = FakeExecution()
    plan = plan_launches(ex, "cuda", "auto", capturer_factory=no_cupy)
    assert plan.mode == "queued" and "CuPy is not installed" in plan.reason     # device time all the same
    assert plan.notice.startswith("launch=auto timed queued launches (device time")
    plan = plan_launches(ex, "cuda", "graph", capturer_factory=no_cupy)
    assert plan.mode == "direct" and "CuPy" in plan.notice
    assert ex.stream == 0


@pytest.mark.parametrize("mode, runs", [("auto", "queued"), ("graph", "direct")])
def test_a_capture_that_raises_is_timed_queued_under_auto_and_direct_under_graph(mode, runs):
    """cuSPARSE under CuPy's stream capture: ``auto`` compares device time with device time."""
    made = {}

    def factory():
        made["c"] = FakeCapturer(fail_capture=RuntimeError("cudaErrorStreamCaptureUnsupported:\noperation "
                                                          "not permitted when stream is capturing"))
        return made["c"]

    ex = FakeExecution()
    plan = plan_launches(ex, "cuda", mode, capturer_factory=factory)
    assert plan.mode == runs and plan.stream == 0 and ex.stream == 0
    assert "RuntimeError" in plan.reason and "cudaErrorStreamCaptureUnsupported" in plan.reason
    assert "\n" not in plan.notice                    # one sentence for the record
    assert made["c"].closed == 1
    ex.calls.clear()
    plan.launch()
    assert ex.calls == [("launch", 0)]


def test_a_capture_stream_that_cannot_be_made_is_a_reason_too():
    def broken():
        raise OSError("cudaErrorNoDevice")

    plan = plan_launches(FakeExecution(), "cuda", "graph", capturer_factory=broken)
    assert plan.mode == "direct" and "cudaErrorNoDevice" in plan.reason


@pytest.mark.parametrize("bad", ["Graph", "cuda-graph", "", None, 1])
def test_an_unknown_launch_mode_is_refused_naming_the_allowed_ones(bad):
    with pytest.raises(ParameterError) as refused:
        check_launch_mode(bad)
    text = str(refused.value)
    assert "\n" not in text and "launch" in text and all(m in text for m in LAUNCH_MODES)


# ---- the record -------------------------------------------------------------------------------

KARATE = str(data_path("karate.mtx"))


def test_a_cpu_run_records_direct_launches_and_validates_against_the_schema(tmp_path):
    rec = run_variant(read_graph(KARATE), "spmv", "cpu-serial", {}, repeat=1, warmup=0, launch="graph").record
    assert rec["timing"]["launch"] == "direct"
    assert not any("launch=graph" in n for n in rec["notices"])   # CPU runs are untouched
    check_record(json.loads(json.dumps(rec)), tmp_path / "r.jsonl")


def test_run_variant_refuses_an_unknown_launch_mode_before_running():
    with pytest.raises(ParameterError, match="launch"):
        run_variant(read_graph(KARATE), "spmv", "cpu-serial", {}, repeat=1, launch="sometimes")


def test_records_without_a_launch_field_stay_valid_and_a_wrong_one_is_refused(tmp_path):
    rec = run_variant(read_graph(KARATE), "spmv", "cpu-serial", {}, repeat=1, warmup=0).record
    rec = json.loads(json.dumps(rec))
    del rec["timing"]["launch"]
    check_record(rec, tmp_path / "old.jsonl")
    rec["timing"]["launch"] = "sideways"
    with pytest.raises(GraphFormatError, match="launch"):
        check_record(rec, tmp_path / "bad.jsonl")


# ---- the command line -------------------------------------------------------------------------

def test_run_and_sweep_take_launch_with_auto_by_default():
    from kernels.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["run", "spmv", "cpu-serial", KARATE]).launch == "auto"
    assert parser.parse_args(["run", "spmv", "cpu-serial", KARATE, "--launch", "graph"]).launch == "graph"
    sweep = parser.parse_args(["sweep", "spmv", "cpu-serial", KARATE, "--grid", "dtype=", "--out", "s.json",
                               "--launch", "direct"])
    assert sweep.launch == "direct"


@pytest.mark.parametrize("command", [["run", "spmv", "cpu-serial", KARATE],
                                     ["sweep", "spmv", "cpu-serial", KARATE, "--grid", "dtype=", "--out", "s.json"]])
def test_a_bad_launch_value_is_refused_in_one_line_naming_launch_and_its_values(capsys, tmp_path, monkeypatch,
                                                                                command):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        cli_main([*command, "--launch", "graphs"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2
    assert err.count("\n") == 1 and "argument --launch: invalid value 'graphs'" in err
    assert "one of auto, graph, direct, queued" in err
    assert not (tmp_path / "s.json").exists()


# ---- sweeps carry the mode to every job and keep it in the header ------------------------------

def test_a_sweep_gives_every_job_its_launch_mode_and_a_resume_must_keep_it(tmp_path):
    from kernels.compute.resume import ResumeRefused
    from kernels.compute.sweep import run_sweep
    from tests.sweep_helpers import FakeBackend, load_synthetic, tiny_graph, unload_synthetic

    load_synthetic()
    try:
        seen = []

        class Recording(FakeBackend):
            def run_many(self, jobs, *, cancel=None):
                jobs = list(jobs)
                seen.extend(job.launch for job in jobs)
                yield from super().run_many(jobs, cancel=cancel)

        out = tmp_path / "s.json"
        backend = Recording(lambda p: 1e-3 * (1 + p["a"]))
        sweep = run_sweep(tiny_graph(), "synthetic", "cpu-serial", {"a": [1, 2]}, backend=backend, out=str(out),
                          launch="direct")
        assert seen == ["direct", "direct"]
        assert sweep["launch"] == "direct"
        first = json.loads(out.read_text().splitlines()[0])
        assert first["launch"] == "direct"
        with pytest.raises(ResumeRefused, match="launch mode is direct, this sweep's is graph"):
            run_sweep(tiny_graph(), "synthetic", "cpu-serial", {"a": [1, 2]}, backend=backend, out=str(out),
                      resume=True, launch="graph")
        with pytest.raises(ParameterError, match="launch"):
            run_sweep(tiny_graph(), "synthetic", "cpu-serial", {"a": [1]}, backend=backend, launch="maybe")
    finally:
        unload_synthetic()


def test_a_sweep_file_from_before_launch_modes_resumes_only_as_direct(tmp_path):
    from kernels.compute.resume import ResumeRefused, check_resumable

    old = {"family": "spmv", "variant": "gpu-naive", "input": {"fingerprint": "f"}, "grid": {"wg": [32]},
           "target": "cuda", "device": "H100"}
    check_resumable(old, {**old, "launch": "direct"}, tmp_path / "s.json")
    with pytest.raises(ResumeRefused, match="launch mode"):
        check_resumable(old, {**old, "launch": "auto"}, tmp_path / "s.json")


# ---- every capturable execution queues its work on self.stream (simulator) -----------------------

def wheel(n=8, weighted=False) -> CSRGraph:
    g = nx.wheel_graph(n)
    if weighted:
        for i, (u, v) in enumerate(g.edges()):
            g[u][v]["weight"] = 1.0 + (i % 3)
    return CSRGraph.from_networkx(g, weight="weight" if weighted else None, name=f"wheel{n}")


TINY = "gen:gnp:n=14,p=0.45,seed=2,weights=uniform"      # as tests/test_conformance.py


def stream_cases():
    """Every numba GPU variant of the registry, with its declared simulator parameters."""
    from kernels.algorithms.registry import families

    for fam in families().values():
        for var in fam.variants.values():
            if var.kind == "gpu":
                yield pytest.param(fam.name, var.name, id=f"{fam.name}/{var.name}")


@pytest.mark.parametrize("family,variant", list(stream_cases()))
def test_every_kernel_and_copy_of_a_capturable_launch_goes_on_the_execution_stream(monkeypatch, family, variant):
    if not simulator_enabled():
        pytest.skip("records launch configurations through the CUDA simulator's kernel objects")
    from numba import cuda
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    from kernels.inputs import load_input

    graph = load_input(TINY)
    fam, var = get_variant(family, variant)
    assert var.launch is not None, f"{family}/{variant} declares no launch shape"
    resolved = fam.resolve_params(var, var.launch.sim_params)
    problem = fam.prepare(graph, resolved, 0)
    resolved, _ = fam.resolve_auto(var, problem, resolved, "sim")   # as the runner does before make
    ex = var.make(problem, resolved, "sim")
    if not ex.capturable:
        pytest.skip(f"{family}/{variant} is not capturable with {var.launch.sim_params}: its launch is not a fixed "
                    "kernel sequence, so no stream discipline to check")
    ex.compile()
    ex.upload()
    ex.preprocess()       # the runner's stage between upload and the timed launches (a no-op for most)

    seen = []
    configure, copy = FakeCUDAKernel.__getitem__, FakeCUDAArray.copy_to_device

    def recording_configure(kernel, configuration):
        seen.append(("kernel", getattr(kernel.fn, "__name__", "?"),
                     configuration[2] if len(configuration) > 2 else "no stream"))
        return configure(kernel, configuration)

    def recording_copy(array, ary, stream=0):
        seen.append(("copy", "copy_to_device", stream))
        return copy(array, ary, stream=stream)

    monkeypatch.setattr(FakeCUDAKernel, "__getitem__", recording_configure)
    monkeypatch.setattr(FakeCUDAArray, "copy_to_device", recording_copy)
    stream = cuda.stream()
    ex.stream = stream
    if ex.needs_reset:
        ex.reset()
    ex.launch()
    monkeypatch.undo()
    assert any(kind == "kernel" for kind, _, _ in seen)
    off_stream = [(kind, name) for kind, name, s in seen if s is not stream]
    assert not off_stream, f"queued off the execution's stream: {off_stream}"

    ex.stream = 0
    output = ex.download()
    verification = fam.verify(output, fam.reference(problem, resolved), problem, resolved)
    assert verification.ok, verification.to_json()


@pytest.mark.parametrize("family", ["bfs", "sssp"])
def test_a_traversal_is_capturable_with_the_device_loop_and_not_with_the_host_loop(family):
    fam, var = get_variant(family, "gpu-csr")
    graph = wheel(weighted=family == "sssp")
    for loop, capturable in (("device", True), ("host", False)):
        resolved = fam.resolve_params(var, {"loop": loop, "block": 32})
        problem = fam.prepare(graph, resolved, 0)
        assert var.make(problem, resolved, "sim").capturable is capturable, loop


def test_fw_result_with_a_non_default_stream_equals_the_default_streams(monkeypatch):
    if not simulator_enabled():
        pytest.skip("simulator run")
    from numba import cuda

    graph = wheel(weighted=True)
    fam, var = get_variant("apsp", "gpu-fw-blocked")
    resolved = fam.resolve_params(var, {"tile": 8, "warps_per_block": 1})
    outputs = []
    for stream in (0, cuda.stream()):
        problem = fam.prepare(graph, resolved, 0)
        ex = var.make(problem, resolved, "sim")
        ex.compile()
        ex.upload()
        ex.stream = stream
        ex.reset()
        ex.launch()
        ex.stream = 0
        outputs.append(ex.download())
    assert np.array_equal(outputs[0], outputs[1])
