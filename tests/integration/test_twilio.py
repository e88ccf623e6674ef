"""The phone gateway over a real socket: a simulated Twilio caller, real tiny.en and Piper.

A caller asks for a story in μ-law media frames, hears about a second and a half of it (paced ``media``
messages, a ``mark`` after each, echoed back as it "plays"), then talks over it. The server must send
``clear``, stop the story, answer the new question, and tell the model only what the caller heard.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import io
import json
import urllib.request
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from agent.adapters.openai_compat_llm import OpenAICompatLLM
from agent.config import LlmSettings
from agent.runtime.components import Components
from agent.runtime.server import RunningServer, running_server
from agent.transport import twilio
from clients.twilio_client import TwilioCaller
from tests.fakes import openai_emulator as oai
from tests.fakes.openai_emulator import OpenAIEmulator
from tests.integration.conftest import local_settings
from tests.integration.test_barge_in import STORY
from tests.speech import silence, speech_pcm16

pytestmark = pytest.mark.models

PUBLIC_URL = "wss://agent.example.com/twilio"


async def test_caller_hears_paced_media_with_marks_and_barge_in_sends_clear(components: Components) -> None:
    async with OpenAIEmulator() as emulator:
        emulator.script(oai.text_reply(STORY))
        emulator.script(oai.text_reply(["It is ", "half past three."]))
        llm = OpenAICompatLLM(LlmSettings(backend="openai", model="m", base_url=emulator.base_url))
        try:
            served = dataclasses.replace(components, llm=llm)
            async with running_server(local_settings(), lambda: served) as server:
                await server.wait_ready()
                async with connect(server.twilio_url) as ws:
                    caller = TwilioCaller(ws)
                    await caller.begin()
                    caller.say(silence(300, 8000) + speech_pcm16("Please tell me a long story.", 8000))
                    got = caller.received
                    assert await caller.run_until(lambda: len(got.media_times) >= 75, 60)  # 1.5 s of story
                    story_frames = len(got.media_times)
                    caller.say(speech_pcm16("Stop. What time is it?", 8000))
                    assert await caller.run_until(lambda: bool(got.clears), 10), "no clear after barge-in"
                    cleared_at = got.clears[0]
                    assert await caller.run_until(lambda: len(emulator.requests) >= 2, 30)
                    answer_from = len(got.media_times)
                    assert await caller.run_until(lambda: len(got.media_times) >= answer_from + 40, 30)
                    await caller.hang_up()
        finally:
            await llm.aclose()

    # Paced, not a burst: 75 frames cannot arrive faster than real time minus the lead (a lower bound, which a
    # loaded machine cannot break). The pacer's exact schedule is unit-tested on an injected clock
    # (tests/unit/test_twilio_pacer.py); gap percentiles on real sockets are measured by bench/twilio_pacing.py.
    story = got.media_times[:story_frames]
    assert story[-1] - story[0] >= 1.2
    # A mark after each media frame, named turn:played_ms, counting up in 20 ms steps.
    names = [name for _, name in got.marks[:story_frames]]
    assert names[:3] == ["1:20", "1:40", "1:60"], names[:3]
    assert "1:200" in caller.echoed  # the caller reported what it played
    # Barge-in: clear, and no more story audio after it (only the answer's frames).
    after = [t for t in got.media_times if t > cleared_at]
    assert all(t >= got.media_times[answer_from] for t in after[1:]), "story audio after clear"
    assert all(not name.startswith("1:") for t, name in got.marks if t > cleared_at + 0.05)
    # The model heard only the part of the story that was played.
    second = emulator.requests[1].body["messages"]
    heard = [m["content"] for m in second if m["role"] == "assistant"]
    full_story = "".join(STORY).strip()
    assert len(heard) == 1 and heard[0].startswith("Once upon a time"), heard
    assert len(heard[0]) < len(full_story) / 2, heard[0]


def _get(url: str) -> str:
    with urllib.request.urlopen(url) as response:
        return str(response.read().decode())


async def test_malformed_and_out_of_order_messages_are_dropped_and_the_call_goes_on(server: RunningServer) -> None:
    async with connect(server.twilio_url) as ws:
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
        await caller.hang_up()
    metrics = await asyncio.to_thread(_get, server.http_url + "/metrics")
    for code in ("not_started", "bad_json", "bad_audio", "unknown_type", "already_started"):
        assert f'voice_agent_errors_total{{code="{code}"}}' in metrics, code


async def test_signature_is_checked_when_an_auth_token_is_set(components: Components) -> None:
    settings = local_settings(twilio={"auth_token": "tok", "public_url": PUBLIC_URL})
    async with running_server(settings, lambda: components) as server:
        await server.wait_ready()
        for header in (None, "bogus", twilio.signature("tok", server.twilio_url), twilio.signature("x", PUBLIC_URL)):
            headers = {} if header is None else {"X-Twilio-Signature": header}
            with pytest.raises(InvalidStatus) as info:
                async with connect(server.twilio_url, additional_headers=headers):
                    pass
            assert info.value.response.status_code == 403
        good = {"X-Twilio-Signature": twilio.signature("tok", PUBLIC_URL)}
        async with connect(server.twilio_url, additional_headers=good) as ws:
            caller = TwilioCaller(ws)
            await caller.begin()
            await asyncio.sleep(0.1)
            await caller.hang_up()
            await ws.wait_closed()
            assert ws.close_code == 1000
        # /ws is not affected by the Twilio token.
        async with connect(server.ws_url) as ws:
            await ws.send(json.dumps({"type": "session.start"}))
            assert json.loads(await ws.recv())["type"] == "session.started"


async def test_cli_twilio_mode_calls_and_saves_the_reply(server: RunningServer, tmp_path: Path) -> None:
    from agent.audio.wav import write_wav
    from clients import cli

    wav, out = tmp_path / "q.wav", tmp_path / "reply.wav"
    write_wav(wav, silence(300) + speech_pcm16("What time is it?") + silence(300), 16000)
    err = io.StringIO()
    args = cli.parse_args(["--twilio", "--url", server.twilio_url, "--wav", str(wav), "--out", str(out)])
    assert await cli.run(args, stderr=err) == cli.EXIT_OK, err.getvalue()
    assert "reply audio" in err.getvalue()
    assert out.stat().st_size > 8000  # over half a second of 8 kHz reply
