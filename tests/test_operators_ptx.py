"""Every GPU variant's kernels and the operators compile with numba's real CUDA compiler (to PTX
for an H100/H200, sm_90), which the simulator never exercises. Runs in a child process without
the simulator; skipped where the CUDA compiler libraries (NVVM, NVRTC) are not installed. What it
compiles comes from the registry: every GPU variant's launch shape names its kernels, and the
enumeration itself is checked everywhere (``--list`` needs no compiler)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernels.algorithms.registry import Family, LaunchShape, Variant, block_param, families
from kernels.run.ptx_check import SKIPPED, MissingKernels, variant_kernels

ROOT = Path(__file__).resolve().parents[1]


def _without_simulator() -> dict:
    return {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}


@pytest.mark.slow            # about 4 minutes of NVVM on a busy two-core machine (256 kernels), where it is installed
@pytest.mark.timeout(1200)
def test_every_kernel_compiles_for_sm90():
    proc = subprocess.run([sys.executable, "-m", "kernels.run.ptx_check", "--quiet", "--cc", "9.0"],
                          cwd=ROOT, env=_without_simulator(), capture_output=True, text=True, timeout=1100)
    if proc.returncode == SKIPPED:
        pytest.skip(proc.stderr.strip() or "CUDA compiler libraries not installed")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "kernels compile for sm_90" in proc.stdout


@pytest.mark.timeout(600)
def test_the_fused_batch_kernel_types_and_lowers_without_the_cuda_compiler():
    """``--lower`` types a kernel and lowers it to LLVM IR with no NVVM or NVRTC, so it runs on
    machines without them (CI). The compact path's fused kernel is the one whose typing the
    simulator missed twice in one session (a shared array shaped by a module attribute, a device
    function looked up on a namespace object), each found only by the GPU machine's compile."""
    proc = subprocess.run([sys.executable, "-m", "kernels.run.ptx_check", "--quiet", "--lower", "--match",
                           "updates compact fused"], cwd=ROOT, env=_without_simulator(), capture_output=True,
                          text=True, timeout=550)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^2 of 2 kernels type and lower \(no NVVM\)", proc.stdout, re.MULTILINE), proc.stdout


def test_the_check_enumerates_the_kernels_of_every_gpu_variant_of_the_registry():
    """``--list`` builds every kernel the check would compile, compiling none (no CUDA compiler
    needed): each GPU variant of the registry brings at least one, with argument types."""
    proc = subprocess.run([sys.executable, "-m", "kernels.run.ptx_check", "--list"], cwd=ROOT,
                          env=_without_simulator(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = dict(re.findall(r"^(\S+): (\d+) kernels$", proc.stdout, re.MULTILINE))
    gpu = [f"{fam.name}/{var.name}" for fam in families().values() for var in fam.variants.values()
           if var.kind == "gpu"]
    assert gpu
    missing = [name for name in gpu if int(listed.get(name, 0)) == 0]
    assert not missing, f"GPU variants the PTX check does not compile: {missing}"
    assert int(listed["operators"]) > 50
    # the SpMV, triangle and k-clique kernels (left out before the registry named them) are in
    for name in ("spmv/gpu-tunable", "triangles/gpu-row-shared", "kclique/gpu-list", "apsp/gpu-fw-staged"):
        assert int(listed[name]) >= 2, name


def test_a_gpu_variant_without_kernels_for_the_check_is_named():
    fam = Family("toy", "Toy", "", prepare=None, reference=None, verify=None, summarize=None, metrics=(),
                 reference_name="cpu")
    bare = fam.add(Variant("gpu-bare", "gpu", "", make=None, params=()))
    with pytest.raises(MissingKernels, match="toy/gpu-bare declares no launch shape"):
        variant_kernels(bare)
    from kernels.algorithms.registry import Param

    empty = fam.add(Variant("gpu-empty", "gpu", "", make=None,
                            params=(Param("block", int, 64, minimum=32, maximum=1024),),
                            launch=LaunchShape(block_param("block"), lambda g, p, sim: 1, sim_params={"block": 32},
                                               ptx="tests.test_operators_ptx:no_kernels")))
    with pytest.raises(MissingKernels, match="toy/gpu-empty: tests.test_operators_ptx:no_kernels returned no"):
        variant_kernels(empty)


def no_kernels(variant):
    return []


def test_a_kernel_given_the_wrong_number_of_argument_types_is_named():
    """The fused batch kernel's list kept 49 argument types after the kernel went to 35: only the
    GPU machine's compile said so. ``--list`` (run above, everywhere) now checks the counts."""
    from types import SimpleNamespace

    from kernels.run.ptx_check import arity_problem

    def kernel(a, b, c):
        pass

    fake = SimpleNamespace(py_func=kernel)
    assert arity_problem("k", fake, [("i", "i", "i")]) is None
    assert arity_problem("k", fake, [("i", "i")]) == "k: 2 argument types given for a kernel of 3 parameters"
