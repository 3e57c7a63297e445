# Set-up is part of every target: a fresh clone needs only `make demo` or `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test bench docs clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet -e ".[datasets,plot,dev,dask,onnx]"
	$(PY) -m leansvm.precompile
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m leansvm.demo

test: $(STAMP)
	$(PY) -m pytest -q

BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[bench]"
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(PY) benchmarks/run.py

# the documentation (docs/ + API reference from docstrings) into site/; its own extra, not in `make test`
DOCS_STAMP := $(VENV)/.docs-installed

$(DOCS_STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet -e ".[docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(PY) -m mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache site
