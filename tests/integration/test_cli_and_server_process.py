"""`python -m agent` as a real process, then `python -m clients.cli` with a spoken WAV: the README's path."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.audio.wav import write_wav
from testing.sockets import free_port
from testing.speech import silence, speech_pcm16, wer
from testing.waits import until_sync
from tests.integration.conftest import server_env

pytestmark = pytest.mark.models
ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def server_process() -> Iterator[str]:
    port = free_port()
    env = server_env(AGENT_SERVER__PORT="1")  # the flag below must win over the environment
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/healthz"

    def ready() -> bool:
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else "server exited"
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, ConnectionError):
            return False

    try:
        until_sync(ready, 60, "the server to become ready", every_s=0.2)
        yield f"ws://127.0.0.1:{port}/ws"
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=20)
        assert proc.returncode == 0, out
        assert "turn 1:" in out  # one INFO line per turn with its latencies


def test_cli_with_a_stereo_44k_wav_prints_json_and_saves_reply(server_process: str, tmp_path: Path) -> None:
    import numpy as np
    import soundfile as sf

    sentence = "Could you please tell me a funny joke about computers?"
    mono = np.frombuffer(silence(300, 44100) + speech_pcm16(sentence, 44100), dtype="<i2")
    wav_in = tmp_path / "question.wav"
    sf.write(wav_in, np.stack([mono, mono], axis=1).astype(np.float32) / 32768.0, 44100, subtype="FLOAT")
    wav_out = tmp_path / "reply.wav"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "clients.cli",
            "--url",
            server_process,
            "--wav",
            str(wav_in),
            "--out",
            str(wav_out),
            "--json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == 1
    turn = lines[0]
    assert set(turn) == {"turn", "transcript", "language", "reply", "audio_seconds", "metrics"}
    assert turn["language"] == "en"
    assert wer(sentence, turn["transcript"]) <= 0.15, turn["transcript"]
    assert turn["audio_seconds"] > 1.0
    assert turn["metrics"]["voice_to_voice_ms"] > 0
    data, rate = sf.read(wav_out)
    assert rate == 24000 and len(data) / rate == pytest.approx(turn["audio_seconds"], abs=0.05)
    assert float(np.sqrt(np.mean(data**2))) > 0.02


def test_help_texts() -> None:
    for module, flag in (("agent", "--port"), ("clients.cli", "--url")):
        result = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 0
        assert "usage:" in result.stdout and flag in result.stdout


def test_write_wav_roundtrip_helper(tmp_path: Path) -> None:
    write_wav(tmp_path / "x.wav", silence(100), 16000)
    assert (tmp_path / "x.wav").stat().st_size == 44 + 3200
