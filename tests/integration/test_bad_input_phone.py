"""Bad input on ``/telnyx`` and ``/vonage`` over a real socket: malformed, out-of-order or wrongly formatted
messages are dropped and counted (``voice_agent_errors_total{code}``), as on ``/twilio``; the call goes on (it
still answers an utterance) and a bystander's session on ``/ws`` keeps working. Bad credentials are refused at
the upgrade (see also tests/integration/test_phone_gateways.py).

Stand-in models (``tests.integration.standins``) keep the table fast; the server, connection, codecs, the
telephony core and the synthesis pipeline are the real ones.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from agent.front_door.listener import RunningServer, running_server
from clients.phone_caller import PhoneCaller
from clients.telnyx_client import TelnyxCaller
from clients.vonage_client import VonageCaller
from tests.integration.conftest import local_settings
from tests.integration.standins import standin_components, utterance
from tests.integration.test_bad_input import error_count, one_turn, started

SECRET = "s" * 40


@pytest.fixture
async def server() -> AsyncIterator[RunningServer]:
    components = standin_components(0.1)
    async with running_server(local_settings(), lambda: components) as running:
        await running.wait_ready()
        yield running


Message = str | bytes | dict[str, Any]


@dataclass(frozen=True, slots=True)
class Case:
    """``messages`` sent on ``path`` (after the start when ``started``, else before it): each is dropped and
    counted under ``code``, and the call goes on."""

    id: str
    path: str
    messages: Sequence[Message]
    code: str
    started: bool = True


def telnyx_media(payload: Any, **media: Any) -> dict[str, Any]:
    return {"event": "media", "stream_id": "S1", "media": {"track": "inbound", "payload": payload, **media}}


def telnyx_start(**media_format: Any) -> dict[str, Any]:
    fmt = {"encoding": "PCMU", "sample_rate": 8000, "channels": 1, **media_format}
    return {"event": "start", "stream_id": "S2", "start": {"call_control_id": "v3:x", "media_format": fmt}}


FRAME = base64.b64encode(bytes(160)).decode()
CONNECTED = {"event": "websocket:connected", "content-type": "audio/l16;rate=16000"}

CASES = [
    Case("telnyx-not-json", "/telnyx", ["{not json"], "bad_json"),
    Case("telnyx-binary-frame", "/telnyx", [b"\x00\x01"], "bad_message"),
    Case("telnyx-unknown-event", "/telnyx", [{"event": "whatever"}], "unknown_type"),
    Case("telnyx-event-number", "/telnyx", [{"event": 7}], "bad_message"),
    Case("telnyx-media-not-object", "/telnyx", [{"event": "media", "media": "AAAA"}], "bad_message"),
    Case("telnyx-payload-not-base64", "/telnyx", [telnyx_media("%%%")], "bad_audio"),
    Case("telnyx-payload-empty", "/telnyx", [telnyx_media("")], "bad_audio"),
    Case("telnyx-payload-huge", "/telnyx", [telnyx_media(base64.b64encode(bytes(4000)).decode())], "frame_too_long"),
    Case("telnyx-outbound-track", "/telnyx", [telnyx_media(FRAME, track="outbound")], "bad_message"),
    Case("telnyx-mark-name-object", "/telnyx", [{"event": "mark", "mark": {"name": {"a": 1}}}], "bad_message"),
    Case("telnyx-dtmf-no-digit", "/telnyx", [{"event": "dtmf", "dtmf": {}}], "bad_message"),
    Case("telnyx-second-start", "/telnyx", [telnyx_start()], "already_started"),
    Case("telnyx-media-before-start", "/telnyx", [telnyx_media(FRAME)], "not_started", started=False),
    Case("telnyx-mark-before-start", "/telnyx", [{"event": "mark", "mark": {"name": "1:20"}}], "not_started", False),
    Case("telnyx-opus", "/telnyx", [telnyx_start(encoding="OPUS")], "unsupported_sample_rate", started=False),
    Case("telnyx-pcmu-16k", "/telnyx", [telnyx_start(sample_rate=16000)], "unsupported_sample_rate", False),
    Case("telnyx-stereo", "/telnyx", [telnyx_start(channels=2)], "unsupported_sample_rate", started=False),
    Case("vonage-not-json", "/vonage", ["{not json"], "bad_json"),
    Case("vonage-unknown-event", "/vonage", [{"event": "websocket:whatever"}], "unknown_type"),
    Case("vonage-command-as-event", "/vonage", [{"action": "clear"}], "bad_message"),
    Case("vonage-odd-audio", "/vonage", [bytes(641)], "bad_audio"),
    Case("vonage-empty-audio", "/vonage", [b""], "bad_audio"),
    Case("vonage-huge-audio", "/vonage", [bytes(8000)], "frame_too_long"),
    Case("vonage-dtmf-no-digit", "/vonage", [{"event": "websocket:dtmf"}], "bad_message"),
    Case("vonage-second-connected", "/vonage", [CONNECTED], "already_started"),
    Case("vonage-audio-before-connected", "/vonage", [bytes(640)], "not_started", started=False),
    Case("vonage-dtmf-before-connected", "/vonage", [{"event": "websocket:dtmf", "digit": "1"}], "not_started", False),
    Case(
        "vonage-rate-24k",
        "/vonage",
        [{**CONNECTED, "content-type": "audio/l16;rate=24000"}],
        "unsupported_sample_rate",
        False,
    ),
    Case(
        "vonage-pcmu",
        "/vonage",
        [{**CONNECTED, "content-type": "audio/pcmu;rate=8000"}],
        "unsupported_sample_rate",
        False,
    ),
]


def caller_for(path: str, ws: Any) -> PhoneCaller:
    return TelnyxCaller(ws) if path == "/telnyx" else VonageCaller(ws, rate=16000)


async def send_all(caller: PhoneCaller, messages: Sequence[Message]) -> None:
    for message in messages:
        await caller.ws.send(message if isinstance(message, str | bytes) else json.dumps(message))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_bad_input_is_dropped_and_the_call_goes_on(server: RunningServer, case: Case) -> None:
    counted = await asyncio.to_thread(error_count, server, case.code)
    url = server.http_url.replace("http://", "ws://") + case.path
    async with connect(server.ws_url) as bystander:
        await started(bystander)
        async with connect(url) as ws:
            caller = caller_for(case.path, ws)
            if case.path == "/telnyx":
                await send_all(caller, [{"event": "connected", "version": "1.0.0"}])
            if not case.started:
                await send_all(caller, case.messages)
            await caller.begin()
            if case.started:
                await send_all(caller, case.messages)
            caller.say(utterance(caller.rate))
            assert await caller.run_until(lambda: len(caller.received.media_times) >= 3, 20), "the call stopped"
            await caller.hang_up()
        await one_turn(bystander)
    assert await asyncio.to_thread(error_count, server, case.code) >= counted + 1


@pytest.mark.parametrize("path", ["/telnyx", "/vonage"])
async def test_with_auth_on_and_no_provider_credential_a_bearer_token_with_call_scope_is_needed(path: str) -> None:
    from agent.security.auth import Authenticator

    components = standin_components(0.1)
    settings = local_settings(auth={"secret": SECRET})
    auth = Authenticator.from_settings(settings.auth)
    async with running_server(settings, lambda: components) as srv:
        await srv.wait_ready()
        url = srv.http_url.replace("http://", "ws://") + path
        for headers, status in [
            ({}, 401),
            ({"Authorization": "Bearer forged"}, 401),
            ({"Authorization": f"Bearer {auth.mint('default', ['enroll'])}"}, 403),
        ]:
            with pytest.raises(InvalidStatus) as info:
                async with connect(url, additional_headers=headers):
                    pass
            assert info.value.response.status_code == status
        async with connect(url, additional_headers={"Authorization": f"Bearer {auth.mint('default', ['call'])}"}) as ws:
            caller = caller_for(path, ws)
            await caller.begin()
            caller.say(utterance(caller.rate))
            assert await caller.run_until(lambda: len(caller.received.media_times) >= 3, 20)
            await caller.hang_up()
