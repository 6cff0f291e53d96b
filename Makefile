# hetfl_explore — one-command set-up. `make demo` and `make test` create .venv if missing and install the pinned set.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export OMP_NUM_THREADS ?= 1
export PYTHONUNBUFFERED := 1

.PHONY: help install demo test test-fast docs readme lab export clean-nbs check-sync bench browsers clean

help:
	@echo "make demo   - install, then run the main job (FedDiverse vs random) and write reports/demo.html"
	@echo "make test   - install, then run every notebook, the tests, the docs build and the browser tests"
	@echo "make lab    - JupyterLab on the notebooks"
	@echo "make docs   - render the docs site into _docs/"
	@echo "make bench  - run the benchmarks (benchmarks/*.py; Flower needs the 'bench' extra)"

# Re-installs whenever the constraints, settings or setup change; otherwise reuses the environment.
$(STAMP): constraints.txt settings.ini setup.py
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e ".[dev]"
	@touch $(STAMP)

install: $(STAMP)

demo: install
	$(PY) -m hetfl_explore.experiments --out reports/demo.html

# Browser tests need Chromium: try to install it (root + apt) where it is missing; without it they skip locally
# and fail in CI (HETFL_REQUIRE_BROWSER=1, set by .ci/run).
browsers:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	  || echo "browsers: Chromium is not installed and could not be installed; browser tests will skip"; }

docs: install
	$(PY) tools/build_docs.py

test: install browsers docs
	$(PY) -m pytest tests -n 2 -p no:cacheprovider

test-fast: install
	$(PY) -m pytest tests -n 2 -p no:cacheprovider --ignore=tests/test_browser_docs.py --ignore=tests/test_browser_lab.py

readme: install
	$(PY) tools/build_docs.py --readme

lab: install
	$(VENV)/bin/jupyter lab nbs

export: install
	$(VENV)/bin/nbdev_export

clean-nbs: install
	$(VENV)/bin/nbdev_clean

# Fails when the exported modules, clean notebooks or README are out of sync with the notebooks.
check-sync: install
	$(VENV)/bin/nbdev_export && $(VENV)/bin/nbdev_clean && $(PY) tools/build_docs.py --readme >/dev/null
	git diff --exit-code -- hetfl_explore nbs README.md

bench: install
	$(PY) benchmarks/hetero.py
	$(PY) benchmarks/engine.py

clean:
	rm -rf _docs _docs_exec _proc test-artifacts .pytest_cache
