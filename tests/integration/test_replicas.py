"""Two replicas: two ``python -m agent`` processes sharing one S3 voice store (moto's S3 server on loopback) and
one auth secret, both speaking through the SageMaker emulator. Each serves, with no restart, the voices
enrolled through the other, and a voice removed through one is refused by the other.

The processes share nothing but the bucket, the secret and the endpoint: no files, no memory. Both are
ready before the first voice exists, so nothing is loaded at start-up that a restart would refresh.
"""

from __future__ import annotations

import asyncio
import base64
import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from agent.adapters.s3_voice_store import S3VoiceStore
from agent.security.auth import Authenticator
from clients.protocol_client import bearer, converse
from testing.agent_process import AgentProcess
from testing.emulators.sagemaker import SageMakerEmulator
from testing.reference_files import encode
from testing.s3 import s3_server
from testing.sockets import free_port, next_json
from testing.speech import silence, speech_pcm16
from testing.waits import until
from tests.integration.conftest import server_env
from tests.integration.sagemaker_fixtures import aws_env, emulator  # noqa: F401

pytestmark = pytest.mark.models
ROOT = Path(__file__).parents[2]
BUCKET = "replicas-test"
PREFIX = "voices/"
SECRET = "replica-test-secret-0123456789-abcdefghijklmnop"
SENTENCE = "Hello, my name is Joe and this is my voice for the assistant."
JOKE = "Could you tell me a joke, please?"
AWS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_CONFIG_FILE": "/dev/null",
    "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
    "AWS_EC2_METADATA_DISABLED": "true",
}


@pytest.fixture(scope="module")
def s3_url() -> Iterator[str]:
    import boto3

    with s3_server() as url:
        s3 = boto3.client(
            "s3",
            endpoint_url=url,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        s3.create_bucket(Bucket=BUCKET)
        yield url


Replica = AgentProcess  # one `python -m agent` replica: its process, port and log


def _status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def spawn(env: dict[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "agent", "--host", "127.0.0.1", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


async def start_replica(name: str, tmp_path: Path, emu_url: str, s3_url: str) -> Replica:
    port = free_port()
    env = server_env("AWS_")
    env.update(AWS)
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "AGENT_AUTH__SECRET": SECRET,  # the same on every replica: a token minted anywhere works everywhere
            "AGENT_TTS__BACKEND": "sagemaker",
            "AGENT_TTS__ENDPOINT_URL": emu_url,
            "AGENT_TTS__WARM_PHRASES": "false",  # only the reply's requests reach the endpoint
            "AGENT_TURN__HOLD_AFTER_MS": "0",
            "AGENT_TURN__IDLE_PROMPT_S": "0",
            "AGENT_VOICES__BACKEND": "s3",
            "AGENT_VOICES__S3_BUCKET": BUCKET,
            "AGENT_VOICES__S3_PREFIX": PREFIX,
            "AGENT_VOICES__S3_REGION": "us-east-1",
            "AGENT_VOICES__S3_ENDPOINT_URL": s3_url,
            "AGENT_VOICES__DIR": str(tmp_path / f"unused-{name}"),  # must stay empty: voices are in the bucket
        }
    )
    log = tmp_path / f"replica-{name}.log"
    replica = Replica(name, spawn(env, port, log), port, log)

    async def ready() -> bool:
        assert replica.proc.poll() is None, f"replica {name} exited:\n{replica.output()}"
        return await asyncio.to_thread(_status, f"http://127.0.0.1:{port}/healthz") == 200

    await until(ready, 120, lambda: f"replica {name} to be ready:\n{replica.output()}", every_s=0.2)
    return replica


def stop(replica: Replica) -> int:
    if replica.proc.poll() is None:
        replica.proc.send_signal(signal.SIGTERM)
    try:
        return replica.proc.wait(timeout=120)  # a guard against a hang, not a speed check
    except subprocess.TimeoutExpired:
        replica.proc.kill()
        replica.proc.wait()
        raise


@pytest.fixture
async def replicas(
    tmp_path: Path,
    emulator: SageMakerEmulator,  # noqa: F811
    s3_url: str,
) -> AsyncIterator[tuple[Replica, Replica]]:
    started: list[Replica] = []
    try:
        for name in ("a", "b"):
            started.append(await start_replica(name, tmp_path, emulator.url, s3_url))
        yield started[0], started[1]
    finally:
        codes = {r.name: await asyncio.to_thread(stop, r) for r in started}
    assert codes == {r.name: 0 for r in started}, "\n".join(r.output() for r in started)
    for r in started:
        assert "Traceback" not in r.output(), r.output()
        assert not (tmp_path / f"unused-{r.name}").exists() or not any((tmp_path / f"unused-{r.name}").iterdir())


async def ask(url: str, token: str, body: dict[str, Any]) -> dict[str, Any]:
    async with connect(url, additional_headers=bearer(token)) as ws:
        await ws.send(json.dumps(body))
        return await next_json(ws)


async def enroll(url: str, token: str, name: str) -> dict[str, Any]:
    pad = silence(300, 24000)
    data = encode(pad + speech_pcm16(SENTENCE, 24000) + pad, 24000, "wav")
    begin = {
        "type": "voice.enroll.begin",
        "name": name,
        "consent": f"I, {name}, agree to this voice being cloned.",
        "speaker": name,
        "size": len(data),
        "transcript": SENTENCE,
        "language": "english",
    }
    async with connect(url, additional_headers=bearer(token)) as ws:
        await ws.send(json.dumps(begin))
        ready = await next_json(ws)
        assert ready["type"] == "voice.enroll.ready", ready
        step = ready["max_chunk_bytes"]
        for i in range(0, len(data), step):
            await ws.send(
                json.dumps({"type": "voice.enroll.chunk", "data": base64.b64encode(data[i : i + step]).decode()})
            )
        await ws.send(json.dumps({"type": "voice.enroll.end"}))
        return await next_json(ws)


async def refused_voice(url: str, token: str, voice: str) -> str:
    """The error code a ``session.start`` naming ``voice`` gets."""
    answer = await ask(url, token, {"type": "session.start", "sample_rate": 16000, "voice": voice})
    assert answer["type"] == "error", answer
    return str(answer["code"])


async def assert_serves(replica: Replica, token: str, voice: str, emu: SageMakerEmulator, store: S3VoiceStore) -> None:
    """One spoken turn on ``replica`` in ``voice``: every endpoint request carries the voice's clip and
    transcript as stored in the bucket, and the caller hears exactly the endpoint's audio."""
    seen = len(emu.requests)
    pcm = silence(400) + speech_pcm16(JOKE) + silence(200)
    conversation = await converse(replica.ws_url, pcm, 16000, token=token, voice=voice, speed=2.0, timeout_s=30)
    assert conversation.session["voice"] == voice
    assert conversation.errors == [], conversation.errors
    (turn,) = conversation.turns
    stored = await store.get("acme", voice)
    requests = emu.requests[seen:]
    assert requests, f"replica {replica.name} never called the endpoint"
    texts: list[str] = []
    for request in requests:
        assert request.status == 200 and request.body is not None
        head, _, data = request.body["ref_audio"].partition(",")
        assert head == "data:audio/wav;base64" and base64.b64decode(data) == stored.wav
        assert request.body["ref_text"] == SENTENCE
        if request.body["input"] not in texts:
            texts.append(request.body["input"])
    # A reply prepared before the end of turn and discarded unheard (preemption: the caller went on) may have
    # asked for sentences of its own: only those of the reply the caller got are heard.
    texts = [text for text in texts if text in turn.reply]
    expected = b"".join([await emu.audio(text) for text in texts])
    heard = bytes(turn.audio)
    assert len(expected) > 0 and heard[: len(expected)] == expected and not any(heard[len(expected) :])


async def test_each_replica_serves_the_voices_enrolled_through_the_other(
    replicas: tuple[Replica, Replica],
    emulator: SageMakerEmulator,  # noqa: F811
    s3_url: str,
) -> None:
    a, b = replicas
    auth = Authenticator(SECRET.encode())
    owner = auth.mint("acme", ["call", "enroll"])  # minted here, accepted by both: tokens carry no server state
    caller = auth.mint("acme", ["call"])
    stranger = auth.mint("globex", ["call", "enroll"])
    store = S3VoiceStore(BUCKET, PREFIX, "us-east-1", s3_url)

    # Both are up before any voice exists.
    assert await refused_voice(b.ws_url, caller, "alice") == "unknown_voice"

    enrolled = await enroll(a.ws_url, owner, "alice")
    assert enrolled["type"] == "voice.enrolled", enrolled
    listed = await ask(b.ws_url, caller, {"type": "voices.list"})
    assert [v["name"] for v in listed["voices"]] == ["alice"]
    await assert_serves(b, caller, "alice", emulator, store)

    enrolled = await enroll(b.ws_url, owner, "bob")
    assert enrolled["type"] == "voice.enrolled", enrolled
    await assert_serves(a, caller, "bob", emulator, store)

    # Tenants stay apart across replicas: another tenant sees and uses nothing of acme's.
    assert (await ask(a.ws_url, stranger, {"type": "voices.list"}))["voices"] == []
    assert await refused_voice(b.ws_url, stranger, "bob") == "unknown_voice"

    # Removal through one replica is seen by the other at the next session.
    removed = await ask(a.ws_url, owner, {"type": "voices.remove", "name": "alice"})
    assert removed == {"type": "voices.removed", "name": "alice"}
    assert await refused_voice(b.ws_url, caller, "alice") == "unknown_voice"
    listed = await ask(b.ws_url, caller, {"type": "voices.list"})
    assert [v["name"] for v in listed["voices"]] == ["bob"]
