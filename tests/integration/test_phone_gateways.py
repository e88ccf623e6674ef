"""Twilio, Telnyx and Vonage over a real socket: each provider's simulated caller (written from its
documentation), real tiny.en and Piper, the reply paced in real time, barge-in that clears it.

A caller asks for a story, hears about a second and a half of it (paced media, a mark after each frame:
Twilio and Telnyx ``mark``, Vonage ``notify``, echoed back as it "plays"), then talks over it. The server must send the
provider's clear, stop the story, answer the new question, and tell the model only what the caller heard.
Then a call from the CLI (``--telnyx``, ``--vonage``) and the provider's handshake authentication. Every call
ends the way a hang-up ends it (``testing.sockets.hang_up_cleanly``; the CLI's, seen in the server's log,
``logged_hang_up``): a call the server dropped fails, whatever it had sent.
"""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from agent.front_door.listener import RunningServer, running_server
from agent.runtime.components import Components
from agent.wires.phone.telnyx import codec as telnyx
from agent.wires.phone.vonage import codec as vonage
from clients.phone_caller import PhoneCaller
from clients.telnyx_client import TelnyxCaller
from clients.twilio_client import TwilioCaller
from clients.vonage_client import VonageCaller, vonage_jwt
from testing.sockets import hang_up_cleanly, logged_hang_up
from testing.speech import silence, speech_pcm16
from testing.waits import until
from tests.integration.conftest import local_settings
from tests.integration.scripted import scripted_server
from tests.integration.test_barge_in import STORY

pytestmark = pytest.mark.models


@dataclass(frozen=True, slots=True)
class Provider:
    id: str
    path: str
    rate: int
    make: Callable[[ClientConnection], PhoneCaller]

    def url(self, server: RunningServer) -> str:
        return server.http_url.replace("http://", "ws://") + self.path


PROVIDERS = [
    Provider("twilio", "/twilio", 8000, lambda ws: TwilioCaller(ws)),
    Provider("telnyx-pcma", "/telnyx", 8000, lambda ws: TelnyxCaller(ws, encoding="PCMA")),
    Provider("vonage-16k", "/vonage", 16000, lambda ws: VonageCaller(ws, rate=16000)),
]


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.id)
async def test_caller_hears_paced_audio_with_marks_and_barge_in_clears(
    components: Components, provider: Provider
) -> None:
    rate = provider.rate
    async with (
        scripted_server(components, [STORY, ["It is ", "half past three."]]) as (server, emulator),
        connect(provider.url(server)) as ws,
    ):
        caller = provider.make(ws)
        await caller.begin()
        caller.say(silence(300, rate) + speech_pcm16("Please tell me a long story.", rate))
        got = caller.received
        assert await caller.run_until(lambda: len(got.media_times) >= 75, 60)  # 1.5 s of story
        story_frames = len(got.media_times)
        caller.say(speech_pcm16("Stop. What time is it?", rate))
        assert await caller.run_until(lambda: bool(got.clears), 10), "no clear after barge-in"
        cleared_at = got.clears[0]
        assert await caller.run_until(lambda: len(emulator.requests) >= 2, 30)
        answer_from = len(got.media_times)
        assert await caller.run_until(lambda: len(got.media_times) >= answer_from + 40, 30)
        await hang_up_cleanly(caller)

    # Paced, not a burst: a lower bound a loaded machine cannot break (the exact schedule is unit-tested on an
    # injected clock in tests/unit/test_telephony.py).
    story = got.media_times[:story_frames]
    assert story[-1] - story[0] >= 1.2
    assert len(got.audio) >= story_frames * rate * 2 // 50  # every frame is 20 ms of audio at the call's rate
    names = [name for _, name in got.marks[:story_frames]]
    assert names[:3] == ["1:20", "1:40", "1:60"], names[:3]
    assert "1:200" in caller.echoed  # the caller reported what it played
    after = [t for t in got.media_times if t > cleared_at]
    assert all(t >= got.media_times[answer_from] for t in after[1:]), "story audio after the clear"
    assert all(not name.startswith("1:") for t, name in got.marks if t > cleared_at + 0.05)
    if isinstance(caller, VonageCaller):
        assert caller.wrong_sizes == []  # every binary frame exactly 20 ms
    second = emulator.requests[1].body["messages"]
    heard = [m["content"] for m in second if m["role"] == "assistant"]
    assert len(heard) == 1 and heard[0].startswith("Once upon a time"), heard
    assert len(heard[0]) < len("".join(STORY).strip()) / 2, heard[0]


@pytest.mark.parametrize("flag", ["--telnyx", "--vonage"])
async def test_cli_calls_through_the_gateway_and_saves_the_reply(
    server: RunningServer, tmp_path: Path, caplog: pytest.LogCaptureFixture, flag: str
) -> None:
    from agent.audio.wav import write_wav
    from clients import cli

    caplog.set_level(logging.INFO)
    wav, out = tmp_path / "q.wav", tmp_path / "reply.wav"
    write_wav(wav, silence(300) + speech_pcm16("What time is it?") + silence(300), 16000)
    err = io.StringIO()
    url = server.http_url.replace("http://", "ws://") + "/" + flag.removeprefix("--")
    args = cli.parse_args([flag, "--url", url, "--wav", str(wav), "--out", str(out)])
    assert await cli.run(args, stderr=err) == cli.EXIT_OK, err.getvalue()
    assert "reply audio" in err.getvalue()
    ended = "closed by the server 1000 'session ended'" if flag == "--telnyx" else "answered by the server with 1000"
    assert ended in err.getvalue()  # as the CLI saw the call end
    assert out.stat().st_size > 8000  # over half a second of reply
    await logged_hang_up(caplog.records, stop_message=flag == "--telnyx")  # Vonage's caller closes the socket


SECRET = "vonage-signature-secret"


async def _refused(url: str, headers: dict[str, str]) -> int:
    with pytest.raises(InvalidStatus) as info:
        async with connect(url, additional_headers=headers):
            pass
    return info.value.response.status_code


async def _starts(caller: PhoneCaller) -> None:
    """The call opens, streams, and ends cleanly: the server ends the session at the hang-up, not before."""
    await caller.begin()
    caller.say(silence(100, caller.rate))
    await until(lambda: bool(caller.speech_onsets), what="the caller's first audio")
    await hang_up_cleanly(caller)


async def test_provider_credentials_are_checked_at_the_upgrade(components: Components) -> None:
    settings = local_settings(
        telnyx={"stream_auth_token": "tnx-token"},
        vonage={"signature_secret": SECRET, "authorization": "Custom abc"},
    )
    async with running_server(settings, lambda: components) as server:
        await server.wait_ready()
        base = server.http_url.replace("http://", "ws://")
        for headers in ({}, {telnyx.AUTH_HEADER: "wrong"}, {"Authorization": "Bearer tnx-token"}):
            assert await _refused(base + "/telnyx", headers) == 403
        assert await _refused(base + "/telnyx?token=wrong", {}) == 403
        async with connect(base + "/telnyx", additional_headers={telnyx.AUTH_HEADER: "tnx-token"}) as ws:
            await _starts(TelnyxCaller(ws))
        async with connect(base + "/telnyx?token=tnx-token") as ws:  # TeXML: the token in the stream URL
            await _starts(TelnyxCaller(ws))
        stale = vonage_jwt(SECRET, now=time.time() - 3600)
        forged = "Bearer " + vonage.jwt("another-secret", {"iat": int(time.time())})
        for headers in ({}, {"Authorization": stale}, {"Authorization": forged}, {"Authorization": "Custom ab"}):
            assert await _refused(base + "/vonage", headers) == 403
        for authorization in (vonage_jwt(SECRET), "Custom abc"):
            async with connect(base + "/vonage", additional_headers={"Authorization": authorization}) as ws:
                await _starts(VonageCaller(ws))
        # /ws is not affected by the providers' credentials.
        async with connect(server.ws_url) as ws:
            await ws.send(json.dumps({"type": "session.start"}))
            assert json.loads(await ws.recv())["type"] == "session.started"
