# Two entry points: `make run` (start the server on local defaults) and `make test` (the whole suite).
# Both create the virtual environment in .venv if it is missing, from the lock (exact versions with hashes):
# requirements/dev.txt here and in CI, requirements/runtime.txt in the Dockerfile. `make lock` refreshes both.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
LOCK_DEV     := requirements/dev.txt
LOCK_RUNTIME := requirements/runtime.txt
LOCK_SMART_TURN := requirements/smart-turn.txt

.PHONY: run test lint typecheck unit bench lock clean smart-turn-model

# The locked dependencies only (pip refuses anything unpinned or with another hash), then the project itself,
# editable, without dependencies and built with the locked setuptools. Reinstalls when pyproject.toml or the
# lock changes. Then the Smart Turn model (agent/adapters/smart_turn.py): only its ONNX file, taken out of the
# hash-locked pipecat-ai wheel from PyPI (requirements/smart-turn.txt), into the virtual environment.
$(STAMP): pyproject.toml $(LOCK_DEV) $(LOCK_SMART_TURN)
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required, found " + sys.version.split()[0]'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --require-hashes -r $(LOCK_DEV)
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(MAKE) --no-print-directory smart-turn-model
	touch $(STAMP)

# The Smart Turn model alone (also for an existing .venv): pip downloads the locked wheel, the adapter extracts it.
smart-turn-model:
	rm -rf $(VENV)/downloads/smart-turn
	$(PY) -m pip download --quiet --no-deps --require-hashes -r $(LOCK_SMART_TURN) -d $(VENV)/downloads/smart-turn
	$(PY) -m agent.adapters.smart_turn install $(VENV)/downloads/smart-turn/*.whl
	rm -rf $(VENV)/downloads/smart-turn

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

# Re-resolve pyproject.toml into the locks, keeping every pin that still fits (UPGRADE=1: newest versions).
# Universal (Linux and macOS markers), for Python 3.11, with the hashes of every file of each pinned version.
# pip and setuptools are pinned too (the installer and the project's build backend). The runtime lock (no extras)
# is constrained by the dev lock, so the image gets the same versions as the tests.
UV_COMPILE = $(VENV)/bin/uv pip compile --quiet --universal --python-version 3.11 --generate-hashes \
	--custom-compile-command "make lock" $(if $(UPGRADE),--upgrade)

lock: $(STAMP)
	printf 'pip\nsetuptools\n' | $(UV_COMPILE) pyproject.toml - --extra dev -o $(LOCK_DEV)
	printf 'pip\nsetuptools\n' | $(UV_COMPILE) pyproject.toml - -c $(LOCK_DEV) -o $(LOCK_RUNTIME)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
