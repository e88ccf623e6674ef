"""/v1/realtime over a real socket: refusals in the documented ``error`` shape while the session goes on, and a
session without turn detection (the client commits and asks for the response) in G.711.

A plain WebSocket client here, since the official one refuses to send most of these malformed events.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from agent.audio import alaw, mulaw
from agent.front_door.listener import RunningServer
from testing.speech import silence, speech_pcm16

pytestmark = pytest.mark.models

KEY = {"Authorization": "Bearer any-key"}


def _url(server: RunningServer) -> str:
    return server.realtime_base_url.replace("http://", "ws://") + "/realtime?model=voice-agent"


async def _next(ws: ClientConnection, kind: str, timeout_s: float = 30) -> dict[str, Any]:
    """The next event of ``kind`` (others are skipped)."""

    async def find() -> dict[str, Any]:
        while True:
            event: dict[str, Any] = json.loads(await ws.recv())
            if event["type"] == kind:
                return event

    return await asyncio.wait_for(find(), timeout_s)


async def _refused(ws: ClientConnection, event: dict[str, Any] | str) -> dict[str, Any]:
    await ws.send(event if isinstance(event, str) else json.dumps(event))
    error: dict[str, Any] = (await _next(ws, "error"))["error"]
    assert set(error) >= {"type", "code", "message", "param", "event_id"}, error
    return error


async def _say(ws: ClientConnection, text: str) -> None:
    await ws.send(
        json.dumps(
            {
                "type": "conversation.item.create",
                "item": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
            }
        )
    )


async def test_bad_events_get_the_documented_error_and_the_session_goes_on(server: RunningServer) -> None:
    async with (
        connect(_url(server), additional_headers=KEY) as ws,
        connect(_url(server), additional_headers=KEY) as bystander,
    ):
        await _next(bystander, "session.created")
        await _next(ws, "session.created")
        error = await _refused(ws, {"type": "no.such.event", "event_id": "evt_1"})
        assert (error["code"], error["param"], error["event_id"]) == ("invalid_event_type", "type", "evt_1")
        assert (await _refused(ws, "{not json"))["code"] == "invalid_json"
        error = await _refused(ws, {"type": "input_audio_buffer.append", "audio": "%%%", "event_id": "evt_2"})
        assert (error["code"], error["param"], error["event_id"]) == ("invalid_value", "audio", "evt_2")
        odd = base64.b64encode(b"\x01\x02\x03").decode()
        assert (await _refused(ws, {"type": "input_audio_buffer.append", "audio": odd}))["code"] == "invalid_value"
        truncate = {"type": "conversation.item.truncate", "item_id": "item_x", "content_index": 0, "audio_end_ms": 5}
        assert (await _refused(ws, truncate))["code"] == "item_not_found"
        delete = {"type": "conversation.item.delete", "item_id": "item_x"}
        assert (await _refused(ws, delete))["code"] == "item_not_found"
        tools = {"type": "session.update", "session": {"tools": [{"type": "mcp", "server_label": "x"}]}}
        assert (await _refused(ws, tools))["param"] == "session.tools[0].type"
        voice = {"type": "session.update", "session": {"audio": {"output": {"voice": "nobody-here"}}}}
        assert (await _refused(ws, voice))["code"] == "invalid_value"
        image = {
            "type": "conversation.item.create",
            "item": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_image", "image_url": "data:image/png;base64,AAAA"}],
            },
        }
        assert (await _refused(ws, image))["param"] == "item.content[0].type"
        assert (await _refused(ws, {"type": "response.cancel"}))["code"] == "response_cancel_not_active"

        # The session is intact: a text message and a response, then a second response.create too early.
        await _say(ws, "What time is it?")
        added = await _next(ws, "conversation.item.added")
        assert added["item"]["content"][0] == {"type": "input_text", "text": "What time is it?"}
        await ws.send(json.dumps({"type": "response.create"}))
        await _next(ws, "response.created")
        error = await _refused(ws, {"type": "response.create"})
        assert error["code"] == "conversation_already_has_active_response", error
        done = await _next(ws, "response.done")
        assert done["response"]["status"] == "completed", done
        assert done["response"]["output"][0]["content"][0]["transcript"], done
        # Once it is done (the client may still be playing it), the next response may be asked for.
        await _say(ws, "Thanks.")
        await ws.send(json.dumps({"type": "response.create"}))
        assert (await _next(ws, "response.done"))["response"]["status"] == "completed"
        # Another call on the server saw none of it.
        await _say(bystander, "Hello?")
        await bystander.send(json.dumps({"type": "response.create"}))
        assert (await _next(bystander, "response.done"))["response"]["status"] == "completed"


async def test_without_turn_detection_the_client_commits_in_g711(server: RunningServer) -> None:
    async with connect(_url(server), additional_headers=KEY) as ws:
        await _next(ws, "session.created")
        formats = {
            "input": {"format": {"type": "audio/pcmu"}, "turn_detection": None},
            "output": {"format": {"type": "audio/pcma"}},
        }
        await ws.send(json.dumps({"type": "session.update", "session": {"type": "realtime", "audio": formats}}))
        session = (await _next(ws, "session.updated"))["session"]
        assert session["audio"]["input"]["turn_detection"] is None, session
        await ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
        assert (await _next(ws, "error"))["error"]["code"] == "input_audio_buffer_commit_empty"
        ulaw = mulaw.encode(silence(200, 8000) + speech_pcm16("What time is it?", 8000) + silence(300, 8000))
        for i in range(0, len(ulaw), 1600):  # 200 ms a message, as fast as it goes: no detector runs
            await ws.send(
                json.dumps(
                    {"type": "input_audio_buffer.append", "audio": base64.b64encode(ulaw[i : i + 1600]).decode()}
                )
            )
            await asyncio.sleep(0.2)
        await ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
        committed = await _next(ws, "input_audio_buffer.committed")
        transcript = await _next(ws, "conversation.item.input_audio_transcription.completed")
        assert transcript["item_id"] == committed["item_id"] and "time" in transcript["transcript"].lower()
        await ws.send(json.dumps({"type": "response.create"}))
        audio = bytearray()
        while (event := json.loads(await asyncio.wait_for(ws.recv(), 30)))["type"] != "response.done":
            if event["type"] == "response.output_audio.delta":
                audio += base64.b64decode(event["delta"])
        assert len(audio) >= 8000 * 0.3, "under 300 ms of A-law audio"
        # A recorded message as an item of its own: transcribed as if spoken.
        recorded = mulaw.encode(speech_pcm16("Good morning.", 8000))
        part = {"type": "input_audio", "audio": base64.b64encode(recorded).decode()}
        item = {"type": "message", "id": "rec1", "role": "user", "content": [part]}
        await ws.send(json.dumps({"type": "conversation.item.create", "item": item}))
        transcript = await _next(ws, "conversation.item.input_audio_transcription.completed")
        assert transcript["item_id"] == "rec1" and "morning" in transcript["transcript"].lower(), transcript
        pcm = alaw.decode(bytes(audio))
        assert max(abs(int.from_bytes(pcm[i : i + 2], "little", signed=True)) for i in range(0, len(pcm), 2)) > 1000


async def test_cli_realtime_mode_converses_and_saves_the_reply(server: RunningServer, tmp_path: Path) -> None:
    from agent.audio.wav import write_wav
    from clients import cli

    wav, out = tmp_path / "q.wav", tmp_path / "reply.wav"
    write_wav(wav, silence(300) + speech_pcm16("What time is it?") + silence(300), 16000)
    err, stdout = io.StringIO(), io.StringIO()
    url = server.realtime_base_url.replace("http://", "ws://") + "/realtime"
    args = cli.parse_args(["--realtime", "--url", url, "--wav", str(wav), "--out", str(out), "--json"])
    assert await cli.run(args, stdout=stdout, stderr=err) == cli.EXIT_OK, err.getvalue()
    (turn,) = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert "time" in turn["transcript"].lower() and turn["status"] == "completed", turn
    assert out.stat().st_size > 24000  # over half a second of 24 kHz reply
