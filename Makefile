# Set-up is part of every target: a fresh clone needs only `make demo` or `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test bench docs clean recompile

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
	$(PY) benchmarks/suite.py run headline

# the documentation (docs/ + API reference from docstrings) into site/; its own extra, not in `make test`
DOCS_STAMP := $(VENV)/.docs-installed

$(DOCS_STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet -e ".[docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(PY) -m mkdocs build --strict --site-dir site

# numba checks a cached function against its own file only: an edit to a compiled callee in
# another file leaves its callers' cached code stale. After editing compiled code, drop the cache.
recompile: $(STAMP)
	find src -name "*.nbi" -delete -o -name "*.nbc" -delete
	$(PY) -m leansvm.precompile

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache site
