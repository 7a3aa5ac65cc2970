# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP_RUN  := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test

.PHONY: run test lint venv screenshots package clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP_RUN): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

$(STAMP_TEST): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[test]"
	touch $@ $(STAMP_RUN)

venv: $(STAMP_RUN)

## Open the app on the bundled sample graph.
run: $(STAMP_RUN)
	$(PY) -m explorer --sample

## Lint, then the whole suite (Qt offscreen, CUDA simulator, no GPU needed).
test: $(STAMP_TEST)
	$(VENV)/bin/ruff check .
	QT_QPA_PLATFORM=offscreen NUMBA_ENABLE_CUDASIM=1 $(PY) -m pytest -q

lint: $(STAMP_TEST)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache
