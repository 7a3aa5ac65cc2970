"""Install each path the README names in its own clean virtual environment and run its commands.

    python tools/check_install_paths.py [--paths core,cuda,gui] [--workdir DIR] [--keep]

The test suite runs in one environment with every extra, which hides a dependency missing from
one install path (a `[cuda]` server once lacked `distributed` and `jsonschema`). Here each path
gets a fresh `python -m venv`, a plain `pip install` of this checkout as a user types it, and
the commands that path promises, run from an empty directory with no PYTHONPATH:

- `core` (`pip install .`): every `graph-kernels` command on the CPU and the CUDA simulator
  (info, generate, convert, pages, run, sweep, --resume, heatmap text/CSV/PNG/SVG, export,
  import, dynamic, self-test), `gpu-graph-explorer --self-test` without the GUI, and the cluster
  commands refused in one line that names the `cluster` extra.
- `cuda` (`pip install ".[cuda]"` less NVIDIA's wheels, which need a GPU machine's drivers to
  mean anything and weigh gigabytes: its other requirements are installed as written): the same,
  plus `cluster local`, `cluster ADDRESS`, `run`/`sweep`/`dynamic --scheduler` and the self-test's
  loopback cluster.
- `gui` (`pip install ".[gui]"`): `gpu-graph-explorer --version` and `--self-test` offscreen.

Exit status 0 when every command of every path did what it promises. `.ci/run` runs it
(`make check-installs`); a path takes one to three minutes with a warm pip cache.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KARATE = ROOT / "tests" / "data" / "karate.mtx"
# NVIDIA's CUDA wheels: a requirement of the cuda extra that is one of these is left out here
NVIDIA = re.compile(r"^(cupy-cuda|nvidia-|cuda-)|\[cu\d+\]")
COMMAND_TIMEOUT_S = 600


@dataclass
class Path_:
    name: str
    extras: list[str]
    more: list[str] = field(default_factory=list)     # requirements installed beside the project
    left_out: list[str] = field(default_factory=list)


def install_paths() -> dict[str, Path_]:
    import tomllib  # Python 3.11+ (CI's); the project itself supports 3.10

    optional = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    cuda = Path_("cuda", [])
    for req in optional["cuda"]:
        self_ref = re.match(r"^gpu-graph-explorer\[(.+)\]$", req.strip())
        if self_ref:
            cuda.extras += [e.strip() for e in self_ref.group(1).split(",")]
        elif NVIDIA.search(req):
            cuda.left_out.append(req)
        else:
            cuda.more.append(req)
    return {"core": Path_("core", []), "cuda": cuda, "gui": Path_("gui", ["gui"])}


class Checker:
    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.results: list[tuple[str, str, bool, str]] = []

    def say(self, text: str) -> None:
        print(text, flush=True)

    def record(self, path: str, what: str, ok: bool, detail: str = "") -> bool:
        self.results.append((path, what, ok, detail))
        self.say(f"  {'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if detail and not ok else ""))
        return ok

    # ---- environments ----------------------------------------------------------------------------
    def make_env(self, spec: Path_) -> Path | None:
        env_dir = self.workdir / f"venv-{spec.name}"
        shutil.rmtree(env_dir, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
        python = env_dir / "bin" / "python"
        target = str(ROOT) + (f"[{','.join(spec.extras)}]" if spec.extras else "")
        started = time.monotonic()
        done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", target,
                               *spec.more], capture_output=True, text=True, cwd=self.workdir)
        what = f"pip install {target.replace(str(ROOT), '.')}"
        what += "".join(f" {m!r}" for m in spec.more)
        if spec.left_out:
            what += f" (left out: {', '.join(spec.left_out)})"
        if not self.record(spec.name, f"{what} ({time.monotonic() - started:.0f} s)", done.returncode == 0,
                           done.stderr[-2000:]):
            return None
        return env_dir / "bin"

    def environment(self, extra: dict | None = None) -> dict:
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "NUMBA_ENABLE_CUDASIM", "GRAPH_KERNELS_PLUGINS", "VIRTUAL_ENV")}
        env.update(extra or {})
        return env

    def run(self, path: str, bin_dir: Path, argv: list[str], *, expect: int = 0, contains: str = "",
            one_line_error: bool = False, env: dict | None = None, cwd: Path | None = None) -> bool:
        program = str(bin_dir / argv[0])
        started = time.monotonic()
        try:
            done = subprocess.run([program, *argv[1:]], capture_output=True, text=True, cwd=cwd or self.workdir,
                                  env=self.environment(env), timeout=COMMAND_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return self.record(path, " ".join(argv), False, f"no answer in {COMMAND_TIMEOUT_S} s")
        text = done.stdout + done.stderr
        problems = []
        if done.returncode != expect:
            problems.append(f"exit status {done.returncode}, expected {expect}")
        if contains and contains not in text:
            problems.append(f"{contains!r} not in the output")
        if "Traceback" in text:
            problems.append("a traceback")
        if one_line_error and len(done.stderr.strip().splitlines()) != 1:
            problems.append(f"{len(done.stderr.strip().splitlines())} lines on stderr, expected one sentence")
        label = " ".join(a if len(a) < 60 else "…" + a[-40:] for a in argv)
        detail = "; ".join(problems) + ("\n" + text[-3000:] if problems else "")
        return self.record(path, f"{label} ({time.monotonic() - started:.1f} s)", not problems, detail)

    # ---- what each path promises ---------------------------------------------------------------------
    def command_line(self, path: str, bin_dir: Path, work: Path, *, cluster_extra: bool) -> None:
        karate = str(KARATE)
        sweep = ["graph-kernels", "sweep", "triangles", "gpu-row-block", karate, "--target", "sim", "--grid",
                 "block_size=32,64", "--repeat", "1", "--out", "sweep.json", "-q"]
        steps = [
            (["graph-kernels", "--version"], {"contains": "graph-kernels"}),
            (["graph-kernels", "info", karate], {"contains": "34"}),
            (["graph-kernels", "generate", "delaunay", "--n", "200", "--seed", "1", "--out", "d.mtx"], {}),
            (["graph-kernels", "convert", "d.mtx", "d.el"], {}),
            (["graph-kernels", "pages", karate, "--page-size", "64"], {}),
            (["graph-kernels", "algorithms", "--json"], {"contains": "spmv"}),
            (["graph-kernels", "targets"], {"contains": "sim"}),
            (["graph-kernels", "run", "triangles", "cpu-serial", karate, "--record", "runs.jsonl"],
             {"contains": "45"}),
            (["graph-kernels", "run", "triangles", "gpu-row-block", karate, "--target", "sim", "--repeat", "1",
              "--param", "block_size=32", "--record", "runs.jsonl"], {"contains": "45"}),
            (sweep, {}),
            ([*sweep, "--resume"], {}),
            (["graph-kernels", "heatmap", "sweep.json"], {"contains": "block_size"}),
            (["graph-kernels", "heatmap", "sweep.json", "--out", "h.png", "--csv", "h.csv"], {}),
            (["graph-kernels", "heatmap", "sweep.json", "--out", "h.svg"], {}),
            (["graph-kernels", "export", "sweep.json", "--out", "kt.json"], {}),
            (["graph-kernels", "import", "kt.json", "--out", "back.json"], {}),
            (["graph-kernels", "dynamic", karate, "--algorithm", "bfs", "--rounds", "1", "--batch", "0.05",
              "--page-size", "64", "--target", "sim", "--param", "block=32"], {}),
            (["graph-kernels", "self-test"], {"contains": "self-test passed"}),
        ]
        for argv, options in steps:
            self.run(path, bin_dir, argv, cwd=work, **options)
        if not cluster_extra:
            for argv in (["graph-kernels", "cluster", "local", "--gpus", "0"],
                         ["graph-kernels", "run", "triangles", "cpu-serial", karate, "--scheduler",
                          "tcp://127.0.0.1:9"]):
                self.run(path, bin_dir, argv, expect=1, contains="[cluster]", one_line_error=True, cwd=work)
        self.run(path, bin_dir, ["gpu-graph-explorer", "--self-test"], contains="self-test passed", cwd=work)

    def cluster_commands(self, path: str, bin_dir: Path, work: Path) -> None:
        karate = str(KARATE)
        proc = subprocess.Popen([str(bin_dir / "graph-kernels"), "cluster", "local", "--gpus", "0", "--workers", "1",
                                 "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                cwd=work, env=self.environment(), start_new_session=True)
        try:
            line = proc.stdout.readline()
            if not self.record(path, "graph-kernels cluster local --gpus 0 --workers 1 --port 0",
                               line.startswith("scheduler tcp://"), line):
                return
            address = line.split()[1].rstrip(":")
            self.run(path, bin_dir, ["graph-kernels", "cluster", address], contains="1 worker(s)", cwd=work)
            self.run(path, bin_dir, ["graph-kernels", "run", "triangles", "gpu-row-block", karate, "--target", "sim",
                                     "--repeat", "1", "--scheduler", address], contains="45", cwd=work)
            self.run(path, bin_dir, ["graph-kernels", "sweep", "triangles", "gpu-row-block", karate, "--target", "sim",
                                     "--grid", "block_size=32,64", "--repeat", "1", "--out", "cluster-sweep.json",
                                     "--scheduler", address, "-q"], cwd=work)
            self.run(path, bin_dir, ["graph-kernels", "dynamic", karate, "--algorithm", "bfs", "--rounds", "1",
                                     "--batch", "0.05", "--page-size", "64", "--param", "block=32", "--scheduler",
                                     address], cwd=work)
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=COMMAND_TIMEOUT_S)
            self.record(path, "Ctrl-C stops cluster local", code == 0, f"exit status {code}")
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()

    def check(self, spec: Path_) -> None:
        self.say(f"{spec.name}:")
        bin_dir = self.make_env(spec)
        if bin_dir is None:
            return
        work = self.workdir / f"work-{spec.name}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        if spec.name == "gui":
            self.run(spec.name, bin_dir, ["gpu-graph-explorer", "--version"], contains="gpu-graph-explorer", cwd=work)
            self.run(spec.name, bin_dir, ["gpu-graph-explorer", "--self-test"], contains="self-test passed",
                     env={"QT_QPA_PLATFORM": "offscreen"}, cwd=work)
            self.run(spec.name, bin_dir, ["graph-kernels", "self-test"], contains="self-test passed", cwd=work)
            return
        cluster_extra = "cluster" in spec.extras
        self.command_line(spec.name, bin_dir, work, cluster_extra=cluster_extra)
        if cluster_extra:
            self.cluster_commands(spec.name, bin_dir, work)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--paths", default="core,cuda,gui", help="which install paths (default core,cuda,gui)")
    p.add_argument("--workdir", type=Path, help="where the environments go (default: a temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep the environments")
    args = p.parse_args(argv)
    specs = install_paths()
    wanted = [n.strip() for n in args.paths.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in specs]
    if unknown:
        p.error(f"unknown install path(s) {unknown}; known: {', '.join(specs)}")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="gge-install-paths-"))
    workdir.mkdir(parents=True, exist_ok=True)
    checker = Checker(workdir.resolve())
    started = time.monotonic()
    try:
        for name in wanted:
            checker.check(specs[name])
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    failed = [r for r in checker.results if not r[2]]
    print(f"install paths {', '.join(wanted)}: {len(checker.results) - len(failed)} of {len(checker.results)} checks "
          f"passed in {time.monotonic() - started:.0f} s")
    for path, what, _, detail in failed:
        print(f"FAILED [{path}] {what}: {detail}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
