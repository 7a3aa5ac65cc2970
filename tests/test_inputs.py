"""The INPUT argument of run/sweep: files or generated graphs (gen:KIND:opt=value,...)."""

from __future__ import annotations

import pytest

from kernels.cli import main
from kernels.errors import GraphKernelsError, ParameterError
from kernels.inputs import load_input


def test_generated_input_is_seeded_and_named():
    a = load_input("gen:rmat:scale=8,edge_factor=8,seed=3")
    b = load_input("gen:rmat:scale=8,edge_factor=8,seed=3")
    assert a.fingerprint == b.fingerprint and a.n_rows == 256
    assert a.name.startswith("rmat_s8")


def test_bad_generated_inputs_are_refused_clearly():
    with pytest.raises(ParameterError, match="bogus"):
        load_input("gen:rmat:scale=8,bogus=1")
    with pytest.raises(ParameterError, match="generator"):
        load_input("gen:nope")
    with pytest.raises(GraphKernelsError, match="opt=value"):
        load_input("gen:rmat:scale")


def test_run_command_accepts_a_generated_input(capsys):
    assert main(["run", "spmv", "cpu-serial", "gen:stencil:kind=7pt,nx=6,ny=6,nz=6", "--repeat", "2"]) == 0
    assert "verified  yes" in capsys.readouterr().out
