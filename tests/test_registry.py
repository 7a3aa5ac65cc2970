"""Registry metadata: parameters are parsed and validated, constraints checked, errors name things."""

from __future__ import annotations

import pytest

from kernels.algorithms.registry import Constraint, Param, families, get_family, get_variant
from kernels.errors import ConstraintError, ParameterError


def test_param_parsing_and_messages():
    wg = Param("wg", int, 128, "threads per block", minimum=1, maximum=1024, power_of_two=True)
    assert wg.parse("256") == 256
    assert wg.parse("5.12e2") == 512  # a float spelling of an integer is accepted
    assert wg.parse("0x100") == 256
    with pytest.raises(ParameterError) as e:
        wg.parse("3")
    assert "'wg'" in str(e.value) and "3" in str(e.value) and "power of two" in str(e.value)
    with pytest.raises(ParameterError, match="from 1 to 1024"):
        wg.parse("2048")
    with pytest.raises(ParameterError):
        wg.parse("many")
    assert wg.grid_values() == [2 ** i for i in range(11)]


def test_choice_and_bool_params():
    d = Param("dtype", str, "fp64", choices=("fp64", "fp32"))
    with pytest.raises(ParameterError, match="one of fp64, fp32"):
        d.parse("fp16")
    b = Param("per_vertex", bool, False)
    assert b.parse("true") is True and b.parse("0") is False
    with pytest.raises(ParameterError):
        b.parse("maybe")


def test_constraint_expressions():
    c = Constraint("rows <= wg", "each row needs a thread")
    assert c.holds({"rows": 4, "wg": 8})
    assert not c.holds({"rows": 16, "wg": 8})
    assert "rows=16" in c.message({"rows": 16, "wg": 8}) and "wg=8" in c.message({"rows": 16, "wg": 8})


def test_every_family_declares_complete_metadata():
    fams = families()
    assert "spmv" in fams
    for fam in fams.values():
        meta = fam.to_json()
        assert meta["variants"] and meta["metrics"]
        assert fam.reference_name in fam.variants
        for v in meta["variants"]:
            assert v["kind"] in ("cpu-serial", "cpu-parallel", "library", "gpu", "vendor")
            assert v["targets"]
            for p in v["params"]:
                assert p["allowed"] and "default" in p
        for var in fam.variants.values():
            fam.resolve_params(var, {})  # defaults always satisfy the constraints


def test_resolve_refuses_unknown_and_invalid_before_running():
    fam, var = get_variant("spmv", "cpu-serial")
    with pytest.raises(ParameterError, match="unknown parameter"):
        fam.resolve_params(var, {"nope": "1"})
    with pytest.raises(ParameterError):
        get_family("no-such-family")
    with pytest.raises(ParameterError, match="cpu-serial"):
        fam.variant("no-such-variant")


def test_constraint_violation_is_a_constraint_error():
    fam = get_family("spmv")
    tunable = fam.variant("gpu-tunable")
    with pytest.raises(ConstraintError, match="rows <= wg"):
        fam.resolve_params(tunable, {"wg": "4", "rows": "8"})


def test_a_constraint_naming_no_parameter_is_refused_when_the_variant_is_added():
    """A misspelt name used to make a constraint hold for ever (NameError was read as 'not this
    variant's'); the registry now refuses it at once."""
    import pytest

    from kernels.algorithms.registry import Constraint, Family, Param, Variant

    fam = Family(name="t", title="t", description="", prepare=None, reference=None, verify=None,
                 summarize=None, metrics=(), reference_name="none")
    good = Variant("ok", "gpu", "", lambda *a: None, params=(Param("wg", int, 32, ""), Param("rows", int, 1, "")),
                   constraints=(Constraint("rows <= wg"),))
    fam.add(good)
    typo = Variant("typo", "gpu", "", lambda *a: None, params=(Param("wg", int, 32, ""), Param("rows", int, 1, "")),
                   constraints=(Constraint("rows <= wgg"),))
    with pytest.raises(ValueError, match="names wgg, not a parameter"):
        fam.add(typo)
    assert Constraint("rows <= wg").names == {"rows", "wg"}
    assert not Constraint("rows <= wg").holds({"rows": 64, "wg": 32})


def test_every_gpu_variant_declares_its_launch_shape_and_simulator_params():
    """The one declaration the simulator estimate, the conformance and launch-mode tests, the PTX
    check and the benchmarks read: a GPU variant registered without it fails here, by name."""
    from kernels.inputs import load_input

    tiny = load_input("gen:gnp:n=14,p=0.45,seed=2,weights=uniform")
    missing = [f"{fam.name}/{var.name}" for fam in families().values() for var in fam.variants.values()
               if var.kind == "gpu" and (var.launch is None or not var.launch.sim_params or not var.launch.ptx)]
    assert not missing, ("GPU variants without a launch shape, simulator parameters and PTX kernels "
                         f"(Variant(launch=LaunchShape(block, grid, sim_params={{...}}, ptx='module:function'))): "
                         f"{', '.join(missing)}")
    for fam in families().values():
        for var in fam.variants.values():
            if var.kind != "gpu":
                continue
            params = fam.resolve_params(var, var.launch.sim_params)
            threads = var.launch.threads(tiny, params, True)
            # a few thousand simulated threads at most on a tiny input (each is a Python thread)
            assert 0 < threads <= 4096, (fam.name, var.name, threads)
            assert var.launch.threads(tiny, fam.resolve_params(var, {}), False) > 0
            assert ":" in var.launch.ptx and var.launch.text


def test_simulator_params_are_checked_when_the_variant_is_added():
    from kernels.algorithms.registry import Family, LaunchShape, Variant, block_param

    fam = Family(name="t", title="t", description="", prepare=None, reference=None, verify=None,
                 summarize=None, metrics=(), reference_name="none")
    params = (Param("wg", int, 128, "", minimum=32, maximum=1024), Param("rows", int, 1, ""))

    def shape(sim_params):
        return LaunchShape(block_param("wg"), lambda g, p, sim: 1, sim_params=sim_params, ptx="m:f")

    fam.add(Variant("ok", "gpu", "", lambda *a: None, params=params, launch=shape({"wg": 32})))
    with pytest.raises(ValueError, match="t/typo: the simulator parameters name wgg, not a parameter"):
        fam.add(Variant("typo", "gpu", "", lambda *a: None, params=params, launch=shape({"wgg": 32})))
    with pytest.raises(ParameterError, match="wg"):
        fam.add(Variant("small", "gpu", "", lambda *a: None, params=params, launch=shape({"wg": 16})))
    with pytest.raises(ConstraintError, match="rows <= wg"):
        fam.add(Variant("broken", "gpu", "", lambda *a: None, params=params, launch=shape({"wg": 32, "rows": 64}),
                        constraints=(Constraint("rows <= wg"),)))
    assert set(fam.variants) == {"ok"}
