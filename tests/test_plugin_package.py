"""The worked example of docs/adding-an-algorithm.md: examples/plugin-triangles, a package of
its own, installed with ``pip install -e`` into a throwaway environment (never the shared one),
is found through its entry points: ``graph-kernels algorithms`` lists its variant, ``run``
verifies it against the triangles family's reference, a two-cell ``sweep`` runs it in the
worker process, and its ``triangle-list`` format reads files. A broken entry point is one
warning line and everything else still loads.

The throwaway environment is a venv whose ``.pth`` file adds this environment's site
directories (with their own ``.pth`` files, through ``site.addsitedir``): numba, SciPy and
setuptools are there already, and no network is needed (``--no-build-isolation``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "plugin-triangles"
KARATE = ROOT / "resources" / "graphs" / "karate.mtx"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory):
    """(python, environment, work directory) with the example installed in editable mode."""
    base = tmp_path_factory.mktemp("plugin")
    source = base / "plugin-triangles"                  # a copy: the build leaves egg-info next to the sources
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("*.egg-info", "build", "__pycache__"))
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = _venv_python(venv)
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site_packages = Path(subprocess.run([str(python), "-c", where], check=True, capture_output=True,
                                        text=True).stdout.strip())
    ours = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (site_packages / "zz-shared-environment.pth").write_text(
        "".join(f"import site; site.addsitedir({p!r})\n" for p in ours))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GRAPH_KERNELS_PLUGINS")}
    env["PYTHONPATH"] = str(ROOT)                      # this checkout's kernels, as the other tests
    install = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                              "--no-index", "--disable-pip-version-check", "-q", "-e", str(source)],
                             capture_output=True, text=True, timeout=300, env=env)
    assert install.returncode == 0, install.stdout + install.stderr
    work = base / "work"
    work.mkdir()
    return python, env, work, site_packages


def graph_kernels(plugin_env, *args, timeout=300):
    python, env, work, _ = plugin_env
    return subprocess.run([str(python), "-m", "kernels", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=work)


def test_the_installed_plugin_is_listed_with_its_parameters(plugin_env):
    out = graph_kernels(plugin_env, "algorithms", "--json")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    triangles = next(f for f in json.loads(out.stdout) if f["name"] == "triangles")
    variant = next(v for v in triangles["variants"] if v["name"] == "cpu-marker")
    assert variant["kind"] == "cpu-serial" and [p["name"] for p in variant["params"]] == ["order"]


@pytest.mark.parametrize("order", ["natural", "degree"])
def test_the_plugin_variant_runs_and_is_verified_against_the_family_reference(plugin_env, order):
    out = graph_kernels(plugin_env, "run", "triangles", "cpu-marker", KARATE, "--param", f"order={order}",
                        "--repeat", "2", "--json")
    assert out.returncode == 0, out.stderr
    record = json.loads(out.stdout)
    assert record["verified"] and record["result"]["triangles"] == 45       # karate has 45 triangles
    assert record["variant"] == "cpu-marker" and record["params"]["order"] == order


def test_a_two_cell_sweep_runs_the_plugin_in_the_worker(plugin_env, tmp_path):
    out_file = tmp_path / "sweep.json"
    out = graph_kernels(plugin_env, "sweep", "triangles", "cpu-marker", KARATE, "--grid", "order=natural,degree",
                        "--repeat", "1", "--warmup", "0", "--out", out_file)
    assert out.returncode == 0, out.stdout + out.stderr
    from kernels.results import load_sweep

    sweep = load_sweep(out_file)                 # JSON lines: a header, a line per cell, an end line
    assert [c["status"] for c in sweep["cells"]] == ["ok", "ok"], sweep["cells"]
    assert all(c["record"]["verified"] for c in sweep["cells"])


def test_the_plugin_format_reads_a_triangle_list(plugin_env, tmp_path):
    path = tmp_path / "two.tri"
    path.write_text("# triangle-list\n0 1 2\n2 3 4\n")
    out = graph_kernels(plugin_env, "info", path, "--json")
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert (info["vertices"], info["edges"]) == (5, 6)
    run = graph_kernels(plugin_env, "run", "triangles", "cpu-marker", path, "--repeat", "1", "--json")
    assert run.returncode == 0 and json.loads(run.stdout)["result"]["triangles"] == 2, run.stderr
    broken = tmp_path / "bad.tri"
    broken.write_text("# triangle-list\n0 1 2\n0 1\n")
    bad = graph_kernels(plugin_env, "info", broken)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "line 3" in bad.stderr, bad.stderr


def test_a_broken_entry_point_is_one_warning_line_and_everything_else_loads(plugin_env):
    _, _, _, site_packages = plugin_env
    dist = site_packages / "gge_broken_plugin-0.1.dist-info"   # a package whose entry points are wrong
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: gge-broken-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[gpu_graph_explorer.families]\nmisspelt = gge_brokn_plugin.family\n\n"
                                          "[gpu_graph_explorer.formats]\nnot-a-format = json:dumps\n")
    try:
        out = graph_kernels(plugin_env, "algorithms", "--json")
        assert out.returncode == 0
        lines = out.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("graph-kernels: warning: plug-in entry point 'misspelt"), lines
        assert "gge-broken-plugin" in lines[0] and "ModuleNotFoundError" in lines[0]
        triangles = next(f for f in json.loads(out.stdout) if f["name"] == "triangles")
        variants = [v["name"] for v in triangles["variants"]]
        assert "cpu-marker" in variants and "cpu-serial" in variants
        info = graph_kernels(plugin_env, "info", KARATE)                 # the formats load, one line about the bad one
        assert info.returncode == 0 and "vertices        34" in info.stdout
        assert [line for line in info.stderr.splitlines() if "not-a-format" in line and "warning" in line]
    finally:
        shutil.rmtree(dist)
