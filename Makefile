# Two entry points: `make run` (start the server on local defaults) and `make test` (the whole suite).
# Both create the virtual environment in .venv if it is missing.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test lint typecheck unit bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required, found " + sys.version.split()[0]'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

run: $(STAMP)
	HF_HUB_OFFLINE=1 $(PY) -m agent $(ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check agent clients tests bench
	$(VENV)/bin/ruff format --check agent clients tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy --strict agent clients

test: $(STAMP) lint typecheck
	HF_HUB_OFFLINE=1 $(PY) -m pytest

unit: $(STAMP)
	$(PY) -m pytest tests/unit

bench: $(STAMP)
	HF_HUB_OFFLINE=1 $(PY) bench/latency.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
