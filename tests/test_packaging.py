"""Packaging: the wheel and sdist, the desktop files, the icon, the frozen entry point, --self-test.

The slow test builds the sdist and the wheel (the wheel from the sdist, as ``python -m build``
does), installs the wheel into a fresh virtual environment and runs the installed commands
from a temporary directory. The PyInstaller bundle itself is not built here (a minute or
more, half a gigabyte): ``make package`` builds it and runs ``packaging/smoke_test.py``;
what the bundle adds to the wheel - ``packaging/frozen_main.py`` - is tested directly below.
"""

from __future__ import annotations

import ast
import configparser
import importlib.util
import os
import re
import shutil
import struct
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DESKTOP = ROOT / "resources" / "desktop"
ICONS = ROOT / "resources" / "icons"
PACKAGING = ROOT / "packaging"
MIME_NS = "{http://www.freedesktop.org/standards/shared-mime-info}"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def clean_env(**extra) -> dict:
    """The environment for a subprocess that must not see the source tree through PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(extra)
    return env


def load_frozen_main():
    spec = importlib.util.spec_from_file_location("frozen_main", PACKAGING / "frozen_main.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- desktop files ---------------------------------------------------------------------------------
def desktop_entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str                      # keys are case-sensitive
    parser.read(DESKTOP / "gpu-graph-explorer.desktop", encoding="utf-8")
    return parser["Desktop Entry"]


def mime_types() -> dict[str, ET.Element]:
    root = ET.parse(DESKTOP / "io.github.gpu_graph_explorer.mime.xml").getroot()
    return {e.get("type"): e for e in root.findall(f"{MIME_NS}mime-type")}


def test_desktop_entry_opens_graph_files_with_the_app():
    entry = desktop_entry()
    assert entry["Type"] == "Application"
    assert entry["Exec"].split()[0] == "gpu-graph-explorer" and entry["Exec"].endswith("%F")  # files, several
    assert entry["Icon"] == "gpu-graph-explorer"
    declared = [t for t in entry["MimeType"].split(";") if t]
    assert "text/x-matrix-market" in declared and "text/x-edge-list" in declared
    types = mime_types()
    for mime in declared:                          # every type the entry claims is defined by us
        assert mime in types, mime


def test_mime_types_recognise_matrix_market_by_name_and_content():
    mtx = mime_types()["text/x-matrix-market"]
    assert "*.mtx" in [g.get("pattern") for g in mtx.findall(f"{MIME_NS}glob")]
    magic = [m.get("value") for m in mtx.iter(f"{MIME_NS}match")]
    assert "%%MatrixMarket" in magic
    sample = (ROOT / "resources" / "graphs" / "karate.mtx").read_text()
    assert sample.startswith("%%MatrixMarket")      # the magic matches what our files start with
    edges = mime_types()["text/x-edge-list"]
    assert {"*.edges", "*.el"} <= {g.get("pattern") for g in edges.findall(f"{MIME_NS}glob")}


def test_metainfo_describes_the_desktop_entry():
    root = ET.parse(DESKTOP / "io.github.gpu_graph_explorer.metainfo.xml").getroot()
    assert root.get("type") == "desktop-application"
    assert root.findtext("id") == "io.github.gpu_graph_explorer"
    assert root.find("launchable").text == "gpu-graph-explorer.desktop"
    assert root.find("provides/binary").text == "gpu-graph-explorer"
    provided = {m.text for m in root.findall("provides/mediatype")}
    assert provided == {t for t in desktop_entry()["MimeType"].split(";") if t}
    from kernels import __version__

    assert root.find("releases/release").get("version") == __version__


@pytest.mark.skipif(not shutil.which("desktop-file-validate"), reason="desktop-file-utils is not installed")
def test_desktop_entry_validates():
    result = subprocess.run(["desktop-file-validate", str(DESKTOP / "gpu-graph-explorer.desktop")],
                            capture_output=True, text=True)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


@pytest.mark.skipif(not shutil.which("appstreamcli"), reason="appstream is not installed")
def test_metainfo_validates():
    result = subprocess.run(["appstreamcli", "validate", "--no-net", "--pedantic",
                             str(DESKTOP / "io.github.gpu_graph_explorer.metainfo.xml")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(os.name != "posix" or not shutil.which("sh"), reason="the script is for freedesktop systems")
def test_install_desktop_script_installs_and_removes(tmp_path):
    data = tmp_path / "share"
    env = clean_env(XDG_DATA_HOME=str(data))
    script = PACKAGING / "install-desktop.sh"
    subprocess.run(["sh", str(script)], env=env, check=True, capture_output=True)
    entry = data / "applications" / "gpu-graph-explorer.desktop"
    assert "Exec=gpu-graph-explorer %F" in entry.read_text()   # from a checkout: the command on PATH
    for size in ICON_SIZES:
        assert (data / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "gpu-graph-explorer.png").is_file()
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / "gpu-graph-explorer.svg").is_file()
    assert (data / "mime" / "packages" / "io.github.gpu_graph_explorer.mime.xml").is_file()
    if shutil.which("update-mime-database"):        # the cache the desktop reads maps *.mtx to our type
        assert "text/x-matrix-market:*.mtx" in (data / "mime" / "globs2").read_text()
    subprocess.run(["sh", str(script), "--uninstall"], env=env, check=True, capture_output=True)
    assert not entry.exists()
    assert not list(data.rglob("gpu-graph-explorer*"))


# ---- icon ------------------------------------------------------------------------------------------
def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", head[16:24])


def test_icon_in_every_size_and_as_svg():
    for size in ICON_SIZES:
        assert png_size(ICONS / f"gpu-graph-explorer-{size}.png") == (size, size)
    svg = ET.parse(ICONS / "gpu-graph-explorer.svg").getroot()
    assert svg.get("viewBox") == "0 0 256 256" and svg.get("width") == "256"


def test_window_icon_comes_from_the_package_data(qapp):
    from explorer.icons import app_icon, icon_files

    files = icon_files()
    assert [int(p.stem.rsplit("-", 1)[1]) for p in files] == list(ICON_SIZES)
    icon = app_icon()
    assert not icon.isNull()
    assert {s.width() for s in icon.availableSizes()} >= {16, 32, 256}


def test_icon_script_draws_the_committed_icon(tmp_path, qapp):
    """packaging/make_icons.py still produces the committed pictures (sizes and SVG)."""
    spec = importlib.util.spec_from_file_location("make_icons", PACKAGING / "make_icons.py")
    make_icons = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_icons)
    assert make_icons.main(tmp_path) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in ICONS.iterdir())
    assert png_size(tmp_path / "gpu-graph-explorer-64.png") == (64, 64)


# ---- the frozen entry point --------------------------------------------------------------------------
def test_numba_cache_goes_to_a_per_user_directory():
    fm = load_frozen_main()
    home = Path("/home/u")
    assert fm.user_cache_dir({}, "linux", home) == home / ".cache" / "gpu-graph-explorer"
    assert fm.user_cache_dir({"XDG_CACHE_HOME": "/c"}, "linux", home) == Path("/c/gpu-graph-explorer")
    assert fm.user_cache_dir({"XDG_CACHE_HOME": "rel"}, "linux", home) == home / ".cache" / "gpu-graph-explorer"
    assert fm.user_cache_dir({}, "darwin", home) == home / "Library" / "Caches" / "gpu-graph-explorer"
    assert fm.user_cache_dir({"LOCALAPPDATA": "C:/L"}, "win32", home) == Path("C:/L/gpu-graph-explorer/Cache")
    env = {"XDG_CACHE_HOME": "/c"}
    fm.configure_environment(env)
    assert env["NUMBA_CACHE_DIR"] == str(Path("/c/gpu-graph-explorer/numba"))
    env = {"NUMBA_CACHE_DIR": "/mine"}
    fm.configure_environment(env)                   # the user's own choice wins
    assert env["NUMBA_CACHE_DIR"] == "/mine"


def test_frozen_program_finds_plugins_through_pythonpath():
    fm = load_frozen_main()
    bundle = ["/app/_internal/base_library.zip", "/app/_internal"]
    env = {"PYTHONPATH": os.pathsep.join(["/work", "", "/app/_internal", "/plugins"])}
    assert fm.plugin_search_path(bundle, env) == [*bundle, "/work", "/plugins"]   # after the bundle's own
    assert fm.plugin_search_path(bundle, {}) == bundle


def run_frozen_main(*args, cwd, env=None, timeout=120):
    return subprocess.run([sys.executable, str(PACKAGING / "frozen_main.py"), *args], cwd=cwd,
                          env=env or clean_env(PYTHONPATH=str(ROOT)), capture_output=True, text=True,
                          timeout=timeout)


def test_frozen_entry_runs_only_its_own_modules(tmp_path):
    result = run_frozen_main("-m", "kernels", "--version", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.startswith("graph-kernels "), result.stderr
    result = run_frozen_main("-m", "os", cwd=tmp_path)
    assert result.returncode == 2 and "runs only its own modules" in result.stderr
    result = run_frozen_main("-m", "kernels.no_such_module", cwd=tmp_path)
    assert result.returncode == 2 and "no such module" in result.stderr
    result = run_frozen_main("-m", cwd=tmp_path)
    assert result.returncode == 2 and "needs a module name" in result.stderr


def test_frozen_entry_serves_as_the_worker_process(tmp_path):
    """In a bundle the GUI starts ``sys.executable -m kernels worker``, i.e. this entry point:
    it must speak the worker's protocol on its pipes and run a kernel."""
    from kernels.compute.local.protocol import read_frame, write_frame
    from kernels.graph.io import read_graph
    from kernels.samples import sample_path

    proc = subprocess.Popen([sys.executable, str(PACKAGING / "frozen_main.py"), "-m", "kernels", "worker"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=tmp_path,
                            env=clean_env(PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(tmp_path / "cache")))
    try:
        write_frame(proc.stdin, {"op": "ping"})
        assert read_frame(proc.stdout)["op"] == "pong"
        write_frame(proc.stdin, {"op": "load", "key": "k", "graph": read_graph(sample_path())})
        assert read_frame(proc.stdout)["op"] == "loaded"
        write_frame(proc.stdin, {"op": "run", "id": 1, "key": "k", "family": "triangles", "variant": "cpu-serial",
                                 "params": {}, "target": "cpu", "repeat": 1, "warmup": 0})
        started = read_frame(proc.stdout)          # the job began: a time limit counts from here
        assert started == {"op": "progress", "stage": "started", "id": 1}, started
        reply = read_frame(proc.stdout)
        assert reply["op"] == "result", reply
        assert reply["record"]["result"]["triangles"] == 45 and reply["record"]["verified"]
        write_frame(proc.stdin, {"op": "quit"})
        assert read_frame(proc.stdout)["op"] == "bye"
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # the entry point pointed numba's cache at the per-user directory (kernels compiled with cache=True)
    assert list((tmp_path / "cache" / "gpu-graph-explorer" / "numba").rglob("*.nbi"))


def test_spec_keeps_every_qt_module_the_app_imports():
    """The bundle leaves out Qt modules nobody imports; one that explorer (or pyqtgraph, which
    needs QtOpenGL and QtOpenGLWidgets) starts using must come off that list."""
    tree = ast.parse((PACKAGING / "gpu-graph-explorer.spec").read_text())
    unused = next(ast.literal_eval(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "QT_UNUSED")
    assert {"QtQml", "QtQuick", "QtNetwork", "QtWebEngineCore"} <= set(unused)
    used = {"QtCore", "QtGui", "QtWidgets", "QtOpenGL", "QtOpenGLWidgets"}
    for path in (ROOT / "explorer").rglob("*.py"):
        used |= set(re.findall(r"PySide6\.(Qt\w+)", path.read_text(encoding="utf-8")))
        used |= {m for line in re.findall(r"from PySide6 import ([\w, ]+)", path.read_text(encoding="utf-8"))
                 for m in re.split(r"[,\s]+", line) if m}
    assert not used & set(unused), f"the spec leaves out Qt modules the app imports: {used & set(unused)}"


# ---- --self-test ---------------------------------------------------------------------------------------
def test_self_test_takes_no_files():
    from explorer.app import main

    assert main(["--self-test", "some.mtx"]) == 2


@pytest.mark.gui
def test_self_test_says_what_failed(tmp_path):
    """With the simulator unavailable (only the CPU target forced) the self-test fails, says
    which check and why, and exits 1."""
    result = subprocess.run([sys.executable, "-m", "explorer", "--self-test"], cwd=ROOT, capture_output=True,
                            text=True, timeout=240,
                            env=clean_env(GRAPH_KERNELS_TARGET="cpu", QT_QPA_PLATFORM="offscreen",
                                          XDG_CONFIG_HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path)))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "ok    triangles/cpu-serial on cpu: 45 triangles, verified" in result.stdout
    assert "FAIL  triangles/gpu-row-block on sim" in result.stdout
    assert "self-test FAILED: triangles/gpu-row-block on sim" in result.stdout


# ---- the wheel, installed ----------------------------------------------------------------------------------
def venv_bin(venv: Path) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin")


def venv_site_packages(venv: Path) -> Path:
    return Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built as ``python -m build`` does: sdist first, then the wheel from the unpacked
    sdist (so the sdist must hold everything)."""
    pytest.importorskip("build", reason="the test extra installs 'build' (pip install -e '.[test]')")
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], check=True,
                   capture_output=True, env=clean_env())
    return next(dist.glob("*.whl"))


def wheel_requirements(wheel: Path) -> list:
    from packaging.requirements import Requirement

    with zipfile.ZipFile(wheel) as zf:
        metadata = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    return [Requirement(line.split(":", 1)[1].strip()) for line in metadata.splitlines()
            if line.startswith("Requires-Dist:")]


def extras_of(requirement) -> set[str]:
    """The extras whose installation brings ``requirement`` on some Python we support (empty: the
    core needs it)."""
    def needed(extra: str) -> bool:
        return requirement.marker is None or any(requirement.marker.evaluate({"extra": extra, "python_version": v})
                                                 for v in ("3.10", "3.11", "3.12", "3.13"))

    if needed(""):
        return set()
    return {extra for extra in ("gui", "test", "cuda", "package") if needed(extra)}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_wheel_needs_qt_only_for_the_gui_extra(wheel):
    """``pip install gpu-graph-explorer[cuda]`` on a GPU server brings no GUI toolkit."""
    requirements = wheel_requirements(wheel)
    core = {r.name.lower() for r in requirements if not extras_of(r)}
    assert {"numpy", "numba", "numba-cuda", "matplotlib"} <= core
    qt = [r for r in requirements if r.name.lower() in ("pyside6-essentials", "pyside6", "pyqtgraph", "shiboken6")]
    assert {r.name for r in qt} == {"PySide6-Essentials", "pyqtgraph"}
    for r in qt:
        assert extras_of(r) == {"gui"}, f"{r} is installed by more than the gui extra"
    assert not any("pyside6" in str(r).lower() or "pyqt" in str(r).lower()
                   for r in requirements if "cuda" in extras_of(r))
    # the test and package extras bring the GUI through the gui extra
    for extra in ("test", "package"):
        assert any(r.name == "gpu-graph-explorer" and r.extras == {"gui"} and extra in extras_of(r)
                   for r in requirements), extra


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_wheel_installs_working_commands(tmp_path, wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for data in ("gge_resources/graphs/karate.mtx", "gge_resources/icons/gpu-graph-explorer-48.png",
                 "gge_resources/icons/gpu-graph-explorer.svg", "gge_resources/desktop/gpu-graph-explorer.desktop",
                 "gge_resources/desktop/io.github.gpu_graph_explorer.mime.xml",
                 "kernels/results/schemas/sweep.schema.json", "kernels/results/schemas/record.schema.json"):
        assert data in names, data

    # A fresh environment with the wheel alone (--no-deps). Installing numba, SciPy and PySide6
    # again would take minutes and hundreds of megabytes: a .pth file makes this environment's
    # already installed dependencies visible instead. Paths from a .pth file come after the new
    # environment's own site-packages, so the wheel's kernels/explorer win over anything there;
    # .pth files inside the added folder are not run, hence the explicit numba.cuda redirection
    # that numba-cuda's own .pth would have installed.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv_bin(venv) / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    "--no-compile", str(wheel)], check=True, capture_output=True, env=clean_env())
    site_packages = venv_site_packages(venv)
    lines = list(dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]))
    if importlib.util.find_spec("_numba_cuda_redirector") is not None:
        lines.append("import _numba_cuda_redirector")
    (site_packages / "zz-test-dependencies.pth").write_text("\n".join(lines) + "\n")

    work = tmp_path / "work"                         # not the source tree: nothing imports from the checkout
    work.mkdir()
    env = clean_env(QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"),
                    XDG_DATA_HOME=str(tmp_path / "data"), XDG_CACHE_HOME=str(tmp_path / "cache"))

    def run(*cmd, timeout=300):
        result = subprocess.run([str(c) for c in cmd], cwd=work, env=env, capture_output=True, text=True,
                                timeout=timeout)
        assert result.returncode == 0, f"{cmd}: exit {result.returncode}\n{result.stdout}\n{result.stderr}"
        return result.stdout

    where = run(python, "-c", "import kernels, explorer, gge_resources; from kernels.samples import sample_path; "
                              "print(kernels.__file__); print(explorer.__file__); print(sample_path())").split()
    for path in where:
        assert Path(path).resolve().is_relative_to(site_packages.resolve()), path
    sample = where[2]

    from kernels.version import code_version

    # the installed copy of the same code has the same version, digest of its sources included
    assert run(venv_bin(venv) / "graph-kernels", "--version").strip() == f"graph-kernels {code_version()}"
    import json

    record = json.loads(run(venv_bin(venv) / "graph-kernels", "run", "triangles", "cpu-serial", sample,
                            "--repeat", "1", "--json"))
    assert record["result"]["triangles"] == 45 and record["verified"]
    out = run(venv_bin(venv) / "gpu-graph-explorer", "--self-test")
    assert "self-test passed" in out
    assert f"kernels from {Path(where[0]).parent}" in out
