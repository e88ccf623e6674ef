"""The Twilio gateway over a real socket: a simulated Twilio caller, real tiny.en and Piper: dropped and
out-of-order messages, the handshake signature, the CLI. The barge-in call is in test_phone_gateways.py."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import logging
import urllib.request
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from agent.front_door.listener import RunningServer, running_server
from agent.runtime.components import Components
from agent.wires.phone.twilio import codec as twilio
from clients.twilio_client import TwilioCaller
from testing.sockets import hang_up_cleanly, logged_hang_up
from testing.speech import silence, speech_pcm16
from tests.integration.conftest import local_settings

pytestmark = pytest.mark.models

PUBLIC_URL = "wss://agent.example.com/twilio"


# The call itself (paced media, a mark after each frame, barge-in that sends clear, the model told only what
# was heard) runs for every phone gateway in tests/integration/test_phone_gateways.py, Twilio included.


def _get(url: str) -> str:
    with urllib.request.urlopen(url) as response:
        return str(response.read().decode())


async def test_malformed_and_out_of_order_messages_are_dropped_and_the_call_goes_on(server: RunningServer) -> None:
    async with connect(server.url("twilio")) as ws:
        caller = TwilioCaller(ws, voice="no-such-voice")  # an unknown voice falls back to the default
        await caller.send_json({"event": "media", "media": {"payload": base64.b64encode(bytes(160)).decode()}})
        await ws.send("{not json")
        await caller.begin()
        await ws.send(json.dumps({"event": "media", "media": {"track": "inbound", "payload": "%%%"}}))
        await ws.send(json.dumps({"event": "whatever"}))
        await caller.send_json({"event": "mark", "streamSid": caller.stream_sid, "mark": {"name": "not-ours"}})
        await caller.send_json({"event": "dtmf", "streamSid": caller.stream_sid, "dtmf": {"digit": "5"}})
        await caller.send_json({"event": "start", "start": {"callSid": "CA2", "streamSid": "MZ2"}})
        caller.say(silence(200, 8000) + speech_pcm16("What time is it?", 8000))
        assert await caller.run_until(lambda: len(caller.received.media_times) >= 10, 40), "no reply media"
        await hang_up_cleanly(caller)  # the call went on: the server ends it with 1000 at the stop
    metrics = await asyncio.to_thread(_get, server.http_url + "/metrics")
    for code in ("not_started", "bad_json", "bad_audio", "unknown_type", "already_started"):
        assert f'voice_agent_errors_total{{code="{code}"}}' in metrics, code


async def test_signature_is_checked_when_an_auth_token_is_set(components: Components) -> None:
    settings = local_settings(twilio={"auth_token": "tok", "public_url": PUBLIC_URL})
    async with running_server(settings, lambda: components) as server:
        await server.wait_ready()
        for header in (None, "bogus", twilio.signature("tok", server.url("twilio")), twilio.signature("x", PUBLIC_URL)):
            headers = {} if header is None else {"X-Twilio-Signature": header}
            with pytest.raises(InvalidStatus) as info:
                async with connect(server.url("twilio"), additional_headers=headers):
                    pass
            assert info.value.response.status_code == 403
        good = {"X-Twilio-Signature": twilio.signature("tok", PUBLIC_URL)}
        async with connect(server.url("twilio"), additional_headers=good) as ws:
            caller = TwilioCaller(ws)
            await caller.begin()
            await hang_up_cleanly(caller)
        # /ws is not affected by the Twilio token.
        async with connect(server.ws_url) as ws:
            await ws.send(json.dumps({"type": "session.start"}))
            assert json.loads(await ws.recv())["type"] == "session.started"


async def test_cli_twilio_mode_calls_and_saves_the_reply(
    server: RunningServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from agent.audio.wav import write_wav
    from clients import cli

    caplog.set_level(logging.INFO)
    wav, out = tmp_path / "q.wav", tmp_path / "reply.wav"
    write_wav(wav, silence(300) + speech_pcm16("What time is it?") + silence(300), 16000)
    err = io.StringIO()
    args = cli.parse_args(["--twilio", "--url", server.url("twilio"), "--wav", str(wav), "--out", str(out)])
    assert await cli.run(args, stderr=err) == cli.EXIT_OK, err.getvalue()
    assert "reply audio" in err.getvalue()
    assert "closed by the server 1000 'session ended'" in err.getvalue()  # as the CLI saw the call end
    assert out.stat().st_size > 8000  # over half a second of 8 kHz reply
    await logged_hang_up(caplog.records, stop_message=True)  # the CLI's stop ended the call: 1000, not a drop
