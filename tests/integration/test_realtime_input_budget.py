"""/v1/realtime over a real socket: one input budget per session for every message that carries audio, in the
session's format of the moment (``AGENT_SERVER__MAX_INPUT_RATE`` × real time, a burst of 7.5 s).

Each case sends far more audio than the burst allows, as fast as the socket takes it, so the outcome does not
depend on how fast this machine is: refusals (``rate_limited``) and, once more than another burst was dropped,
the flood's close (1008 ``audio faster than real time``). Before the budget counted them, audio items were never
limited (two clients had 402 s of audio transcribed in 20 s), and after a switch to G.711 the limiter went on
counting bytes at the PCM16 rate (3× more audio than allowed).
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any, NoReturn

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from agent.audio import mulaw
from agent.front_door.listener import RunningServer
from testing.sockets import read_until
from testing.speech import silence
from testing.waits import within

pytestmark = pytest.mark.models

KEY = {"Authorization": "Bearer any-key"}
PATIENCE_S = 60.0  # only against a hang


def _url(server: RunningServer) -> str:
    return server.realtime_base_url.replace("http://", "ws://") + "/realtime?model=voice-agent"


async def _outcome(ws: ClientConnection) -> tuple[list[str], int | None, str | None]:
    """Error codes seen until the server closes the session (or goes quiet), and its close code and reason."""
    codes: list[str] = []

    async def errors() -> NoReturn:
        while True:
            event: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if event["type"] == "error":
                codes.append(event["error"]["code"])

    try:
        await within(errors(), PATIENCE_S, lambda: f"the close or a quiet moment, after errors {codes}")
    except TimeoutError:
        return codes, None, None  # quiet: the session goes on
    except ConnectionClosed:
        return codes, ws.close_code, ws.close_reason


async def _flood(ws: ClientConnection, messages: list[str]) -> None:
    try:
        for message in messages:
            await ws.send(message)
    except ConnectionClosed:
        pass  # closed for flooding before all was sent


async def test_audio_inside_items_counts_in_the_input_budget(server: RunningServer) -> None:
    async with connect(_url(server), additional_headers=KEY) as ws:
        await ws.recv()  # session.created
        # 30 recorded messages of 0.9 s each (27 s of audio; PCM16 at 24 kHz, the session's input format).
        part = {"type": "input_audio", "audio": base64.b64encode(silence(900, 24000)).decode()}
        item = json.dumps(
            {"type": "conversation.item.create", "item": {"type": "message", "role": "user", "content": [part]}}
        )
        sender = asyncio.create_task(_flood(ws, [item] * 30))
        codes, close_code, reason = await _outcome(ws)
        await sender
    assert codes.count("rate_limited") >= 1, (codes, close_code, reason)  # a dropped item is always answered
    assert close_code == 1008 and reason == "audio faster than real time", (codes, close_code, reason)


async def test_a_switch_to_g711_re_rates_the_input_budget(server: RunningServer) -> None:
    async with connect(_url(server), additional_headers=KEY) as ws:
        await ws.recv()  # session.created
        formats = {"input": {"format": {"type": "audio/pcmu"}, "turn_detection": None}}
        await ws.send(json.dumps({"type": "session.update", "session": {"type": "realtime", "audio": formats}}))
        await read_until(ws, "session.updated", PATIENCE_S)
        # 20 s of μ-law at 8 kHz in 200 ms messages, as fast as they go: counted at the PCM16 24 kHz byte rate
        # it would look like 6.7 s, inside the 7.5 s burst.
        chunk = base64.b64encode(mulaw.encode(silence(200, 8000))).decode()
        append = json.dumps({"type": "input_audio_buffer.append", "audio": chunk})
        sender = asyncio.create_task(_flood(ws, [append] * 100))
        codes, close_code, reason = await _outcome(ws)
        await sender
    assert codes.count("rate_limited") >= 1, (codes, close_code, reason)
    assert close_code == 1008 and reason == "audio faster than real time", (codes, close_code, reason)
