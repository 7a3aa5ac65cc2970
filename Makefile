# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP_RUN  := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test

.PHONY: run test lint venv screenshots package clean check-installs

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# the GUI is an extra (`gui`): the core and graph-kernels alone need no Qt (see docs/packaging.md)
$(STAMP_RUN): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[gui]"
	touch $@

$(STAMP_TEST): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[gui,test]"
	touch $@ $(STAMP_RUN)

venv: $(STAMP_RUN)

## Open the app on the bundled sample graph.
run: $(STAMP_RUN)
	$(PY) -m explorer --sample

## Lint (`make lint`: ruff and the import contracts), then the whole suite (Qt offscreen, CUDA
## simulator, no GPU needed), on two processes (pytest-xdist: CI has two cores; TEST_WORKERS=0
## runs it in this one process).
TEST_WORKERS ?= 2
test: lint
	QT_QPA_PLATFORM=offscreen NUMBA_ENABLE_CUDASIM=1 $(PY) -m pytest -q -n $(TEST_WORKERS)

## Each install path the README names (core, [cuda] less NVIDIA's wheels, [gui]) in its own clean
## virtual environment, running that path's commands (tools/check_install_paths.py; CI runs it).
check-installs:
	$(PYTHON) tools/check_install_paths.py

## ruff, and import-linter's contracts in pyproject.toml: the core's storeys (no import runs
## back up, so no package cycle between them), no package cycle inside a package, no Qt in the core.
lint: $(STAMP_TEST)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

## Screenshots of the GUI for the README and docs/gui.md, rendered offscreen (no display, no GPU:
## the GPU variants of the timing chart and the heatmap run on numba's CUDA simulator, ~3 minutes).
SHOTS     := docs/images
SHOT_WORK := build/screenshots
COMPARE_PAIR := benchmarks/results/sweep/h100-x1/sweep-spmv-warm.json \
                benchmarks/results/sweep/h200-x4-capped/sweep-spmv-cluster-1gpu.json
SHOOT     := QT_QPA_PLATFORM=offscreen $(PY) -m explorer.screenshot
screenshots: $(STAMP_RUN)
	mkdir -p $(SHOTS) $(SHOT_WORK)
	$(SHOOT) $(SHOTS)/window.png --page-size 32
	$(SHOOT) $(SHOTS)/page-map.png --view page-map --page-size 256 --random-edits 200 tests/data/as-caida20071105.mtx.gz
	$(SHOOT) $(SHOTS)/inspector.png --view inspector --page-size 64 --random-edits 12 tests/data/karate.mtx
	rm -f $(SHOT_WORK)/runs.jsonl
	for v in cpu-serial cpu-parallel scipy; do $(VENV)/bin/graph-kernels run spmv $$v tests/data/lp_afiro.mtx \
	  --repeat 5 --record $(SHOT_WORK)/runs.jsonl > /dev/null || exit 1; done
	for v in gpu-naive gpu-tunable gpu-merge; do NUMBA_ENABLE_CUDASIM=1 $(VENV)/bin/graph-kernels run spmv $$v \
	  tests/data/lp_afiro.mtx --target sim --repeat 5 --record $(SHOT_WORK)/runs.jsonl > /dev/null || exit 1; done
	$(SHOOT) $(SHOTS)/timing.png --view timing tests/data/lp_afiro.mtx $(SHOT_WORK)/runs.jsonl
	NUMBA_ENABLE_CUDASIM=1 $(VENV)/bin/graph-kernels sweep spmv gpu-tunable tests/data/lp_afiro.mtx --target sim \
	  --grid wg=32,64,128 --grid rows=1,4,16,64 --repeat 2 --quiet --out $(SHOT_WORK)/sweep.json > /dev/null
	$(SHOOT) $(SHOTS)/heatmap.png --view heatmap tests/data/lp_afiro.mtx $(SHOT_WORK)/sweep.json
	$(SHOOT) $(SHOTS)/heatmap-h200.png --view heatmap benchmarks/results/spmv-sweep-nvidia-h200.json
	$(VENV)/bin/graph-kernels compare $(COMPARE_PAIR) --png $(SHOTS)/compare-h100-h200.png --dpi 100 > /dev/null
	QT_QPA_PLATFORM=offscreen $(PY) -m explorer.render compare $(COMPARE_PAIR) $(SHOTS)/compare-window.png --size 1366x768

## Build the desktop application as one folder, dist/gpu-graph-explorer/ (PyInstaller, about a minute),
## then smoke-test the program built (--version, -m kernels, --self-test offscreen). By hand: not in CI.
STAMP_PACKAGE := $(VENV)/.installed-package
$(STAMP_PACKAGE): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[gui,package]"
	touch $@ $(STAMP_RUN)

package: $(STAMP_PACKAGE)
	$(PY) packaging/build.py --smoke-test

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache
