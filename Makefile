# hetfl_explore — one-command set-up. `make demo` and `make test` create .venv if missing and install the pinned set.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export OMP_NUM_THREADS ?= 1
export PYTHONUNBUFFERED := 1
# Idle OpenMP threads sleep instead of spinning (with 2 threads on a busy core, tiny ops ran 50x slower).
export OMP_WAIT_POLICY ?= PASSIVE
# pip installs without byte-compiling (compiling every module of torch, ray and scipy took 40 of the install's 105 s);
# Python then caches the bytecode of what is actually imported, once, so a shell's PYTHONDONTWRITEBYTECODE is dropped
# here (with it every process, and every notebook kernel, would compile its imports again).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: help install demo test test-fast smoke-wheel docs readme lab export clean-nbs check-sync bench browsers apt-dry-run results results-check results-check-all robust student clean

help:
	@echo "make demo   - install, then run the main job (FedDiverse vs random) and write reports/demo.html"
	@echo "make test   - install, then run every notebook, the tests, the docs build and the browser tests"
	@echo "make smoke-wheel - build the wheel and sdist, install the wheel into a fresh venv (core only) and smoke-test it there"
	@echo "make lab    - JupyterLab on the notebooks"
	@echo "make docs   - render the docs site into _docs/"
	@echo "make bench  - run the benchmarks; each writes benchmarks/results/<name>.json with the machine and flags figures >25% worse than the record"
	@echo "make results        - regenerate every committed result file in data/results (with its .meta.json record)"
	@echo "make results-check  - recompute every result file (whole, or a drawn subset of its seeds) and compare (CI runs this)"
	@echo "make results-check-all - recompute every seed of every result file and compare (as long as make results)"
	@echo "make student - write the solution-free student edition of the classroom labs into nbs/labs/student"
	@echo "make robust - re-run every learned-outcome check over seeds 0-9 and 1 and 2 threads; print the margins (tools/robustness.py)"
	@echo "make apt-dry-run - simulate every apt-get install line of the project (tools/apt_dry_run.py); names a package conflict"

# Re-installs whenever the constraints, settings or setup change; otherwise reuses the environment.
$(STAMP): constraints.txt settings.ini setup.py
	@$(PYTHON) tools/verify_env.py
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --no-compile -c constraints.txt -e ".[dev]"
	@$(PY) tools/verify_env.py --installed
	@touch $(STAMP)

install: $(STAMP)

demo: install
	$(PY) -m hetfl_explore.feddiverse.experiments --out reports/demo.html

# The docs build needs node/npm and the browser tests Chromium: tools/browsers.sh installs, one at a time, only the
# missing ones (root + apt; never Debian's npm beside another Node.js). Without root they skip locally with one line
# saying how to install them, and fail in CI (HETFL_REQUIRE_BROWSER=1, set by .ci/run).
browsers: apt-dry-run
	@bash tools/browsers.sh

# Dry-runs (apt-get install -s) every apt-get install line of .ci/run, this Makefile and tools/*.sh; names a conflict.
apt-dry-run:
	@$(PYTHON) tools/apt_dry_run.py

docs: install
	$(PY) tools/build_docs.py

# The missing browser tools install (apt: download and unpacking) beside pip's install, which leaves a core idle.
test:
	@$(MAKE) --no-print-directory -j2 install browsers
	@$(MAKE) --no-print-directory docs
	$(PY) -m pytest tests -n 2 --dist worksteal -p no:cacheprovider

test-fast: install
	$(PY) -m pytest tests -n 2 --dist worksteal -p no:cacheprovider --ignore=tests/test_browser_docs.py --ignore=tests/test_browser_lab.py

# The package as an importer installs it (tools/smoke_wheel.py): wheel + sdist with their package data, the wheel in a
# fresh virtual environment without the repository on its path (pip's cache and constraints.txt), a smoke check there.
smoke-wheel: install
	$(PY) tools/smoke_wheel.py

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

# The classroom labs without their solutions (tools/student.py); tests/test_student.py checks the committed copy is current.
student: install
	$(PY) tools/student.py build

results: install
	$(PY) tools/results.py all

# Every file, whole or a printed random draw of its seeds (and of its dataset, for the grids): about 10 minutes on one core.
results-check: install
	$(PY) tools/results.py --check all

results-check-all: install
	$(PY) tools/results.py --check all --all-seeds

robust: install
	$(PY) tools/robustness.py --jobs 2

# Torch threads of the panel and engine benchmarks: 1 matches the committed records (taken on a shared 2-core machine).
BENCH_THREADS ?= 1

bench: install
	OMP_NUM_THREADS=1 $(PY) benchmarks/hetero.py
	OMP_NUM_THREADS=1 $(PY) benchmarks/backends.py --threads 1
	OMP_NUM_THREADS=1 $(PY) benchmarks/selection_sim.py
	OMP_NUM_THREADS=$(BENCH_THREADS) $(PY) benchmarks/widgets.py --threads $(BENCH_THREADS)
	OMP_NUM_THREADS=$(BENCH_THREADS) $(PY) benchmarks/engine.py --threads $(BENCH_THREADS)
	OMP_NUM_THREADS=2 $(PY) benchmarks/engine.py --threads 2 --quick --workloads cmnist24,digits1000,cifar1000 --runners engine-sequential,plain,flower,flower-plain,flower-fedavg,flower-feddiverse --scaling '' --section flower
	OMP_NUM_THREADS=$(BENCH_THREADS) $(PY) benchmarks/gpu.py --threads $(BENCH_THREADS)
	OMP_NUM_THREADS=1 $(PY) benchmarks/crowd.py
	OMP_NUM_THREADS=$(BENCH_THREADS) $(PY) benchmarks/trust.py
	OMP_NUM_THREADS=$(BENCH_THREADS) $(PY) benchmarks/clustering.py
	OMP_NUM_THREADS=1 $(PY) benchmarks/sweeps.py

clean:
	rm -rf _docs _docs_exec _proc test-artifacts .pytest_cache
