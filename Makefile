# Set-up is part of every target: a fresh clone needs only `make demo` or `make test`.
# The package is installed, not linked (`pip install .`): its build compiles the solvers into it
# (setup.py), so the tests and the demo run what a user installs. An edit to src/ reinstalls.
PYTHON  ?= python3
VENV    ?= .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
SOURCES := pyproject.toml setup.py $(shell find src -name '*.py' -not -path '*/__pycache__/*')

.PHONY: demo test bench docs clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): $(PY) $(SOURCES)
	$(PY) -m pip install --quiet ".[datasets,plot,dev,dask,onnx]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m leansvm.demo

test: $(STAMP)
	$(PY) -m pytest -q

BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet ".[datasets,plot,dev,dask,onnx,bench]"
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(PY) benchmarks/suite.py run headline

# the documentation (docs/ + API reference from docstrings) into site/; its own extra, not in `make test`
DOCS_STAMP := $(VENV)/.docs-installed

$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet ".[datasets,plot,dev,dask,onnx,docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(PY) -m mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache site
	find src -name "*.nbi" -delete -o -name "*.nbc" -delete
