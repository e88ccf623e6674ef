"""Log hygiene over real sockets (issue 19): at DEBUG, where ``websockets`` writes every handshake's request
line and headers and every frame, no credential reaches a log handler protected the way ``agent.__main__``
protects its handlers (``agent.security.logsafe.protect``, with the wires' ``SECRET_HEADERS``); and what a
phone peer sends never splits a log record into lines a reader would take for the server's own (a ``callSid``,
a keypress, a Telnyx error, a Vonage call id).

Stand-in models keep it fast; the server, the upgrade checks, the codecs and the telephony core are the real
ones. ``tests/integration/test_secure_start.py`` checks the same through ``python -m agent --log-level DEBUG``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Iterator

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from agent.front_door.listener import running_server
from agent.security import logsafe
from agent.security.auth import Authenticator
from agent.wires.endpoints import SECRET_HEADERS
from agent.wires.phone.twilio import codec as twilio
from agent.wires.phone.vonage import codec as vonage
from clients.telnyx_client import TelnyxCaller
from clients.twilio_client import TwilioCaller
from clients.vonage_client import VonageCaller
from tests.integration.conftest import local_settings
from tests.integration.standins import standin_components, utterance
from tests.integration.test_bad_input import error_count, started

SECRET = "SECRETVALUE"
AUTH_SECRET = "log-hygiene-auth-secret-0123456789abcdef"
TWILIO_TOKEN = "twilio-auth-token-0123456789abcdef"
VONAGE_SECRET = "vonage-signature-secret-0123456789ab"
PUBLIC_TWILIO_URL = "wss://agent.example.com/twilio"
FORGED = "\nCRITICAL agent.security.auth: forged"


class Lines(logging.Handler):
    """Keeps each record's message at the moment it is handled."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def unprotected() -> Iterator[Lines]:
    """What ``websockets`` logs before any protected handler sees it (proof that the credentials were there)."""
    lines = Lines()
    logger = logging.getLogger("websockets")
    logger.addHandler(lines)
    try:
        yield lines
    finally:
        logger.removeHandler(lines)


async def test_no_credential_reaches_a_protected_handler_at_debug(
    caplog: pytest.LogCaptureFixture, unprotected: Lines
) -> None:
    caplog.set_level(logging.DEBUG)
    logsafe.protect(caplog.handler, SECRET_HEADERS)
    settings = local_settings(
        auth={"secret": AUTH_SECRET},
        twilio={"auth_token": TWILIO_TOKEN, "public_url": PUBLIC_TWILIO_URL},
        telnyx={"stream_auth_token": SECRET},
        vonage={"signature_secret": VONAGE_SECRET},
    )
    token = Authenticator.from_settings(settings.auth).mint("default", ["call"])
    signature = twilio.signature(TWILIO_TOKEN, PUBLIC_TWILIO_URL)
    jwt = vonage.jwt(VONAGE_SECRET, {"iat": int(time.time())})
    components = standin_components(0.1)
    async with running_server(settings, lambda: components) as server:
        await server.wait_ready()
        base = server.http_url.replace("http://", "ws://")
        # /ws: a bearer header that is no token (refused; the handshake is what logs it)
        with contextlib.suppress(InvalidStatus):
            async with connect(server.ws_url, additional_headers={"Authorization": f"Bearer {SECRET}"}):
                pass
        # /ws: a real token in session.start, a frame longer than websockets shows whole
        async with connect(server.ws_url) as ws:
            start = {"type": "session.start", "sample_rate": 16000, "voice": None, "token": token}
            await started(ws, json.dumps(start))
        for path, headers in [
            (f"/telnyx?token={SECRET}", {}),
            ("/telnyx", {"x-telnyx-streaming-auth-token": SECRET}),
            ("/twilio", {"X-Twilio-Signature": signature}),
            ("/vonage", {"Authorization": f"Bearer {jwt}"}),
        ]:
            async with connect(base + path, additional_headers=headers):
                pass  # accepted: each credential was right
    credentials = [SECRET, token, token[-16:], signature, jwt, jwt[-16:], AUTH_SECRET, TWILIO_TOKEN, VONAGE_SECRET]
    raw = "\n".join(unprotected.messages)
    assert SECRET in raw and signature in raw and jwt in raw and token[-16:] in raw  # websockets did log them
    logged = [record.getMessage() for record in caplog.records] + [caplog.text]
    for credential in credentials:
        assert not any(credential in text for text in logged), credential
    messages = [record.getMessage() for record in caplog.records]
    assert any(m.endswith("Authorization: [redacted]") for m in messages)
    assert any("/telnyx?token=[redacted]" in m for m in messages)
    assert any("holding a credential: not shown" in m for m in messages)  # the session.start frame


async def test_what_a_phone_peer_sends_stays_on_one_log_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    logsafe.protect(caplog.handler, SECRET_HEADERS)
    components = standin_components(0.1)
    async with running_server(local_settings(), lambda: components) as server:
        await server.wait_ready()
        base = server.http_url.replace("http://", "ws://")
        refused = await asyncio.to_thread(error_count, server, "bad_message")
        async with connect(base + "/twilio") as ws:
            caller = TwilioCaller(ws)
            fmt = {"encoding": "audio/x-mulaw", "sampleRate": twilio.RATE, "channels": 1}
            start = {"streamSid": "MZ0001", "callSid": "CA1" + FORGED, "tracks": ["inbound"], "mediaFormat": fmt}
            await caller.send_json({"event": "start", "streamSid": "MZ0001", "start": start})  # dropped: not an id
            await caller.begin()
            await caller.send_json({"event": "dtmf", "streamSid": "MZ0001", "dtmf": {"digit": "5" + FORGED}})
            await caller.send_json({"event": "dtmf", "streamSid": "MZ0001", "dtmf": {"digit": "5"}})
            caller.say(utterance(caller.rate))
            assert await caller.run_until(lambda: len(caller.received.media_times) >= 3, 20), "the call stopped"
            await caller.hang_up()
        async with connect(base + "/telnyx") as ws:
            telnyx_caller = TelnyxCaller(ws)
            await telnyx_caller.begin()
            error = {"code": "1" + FORGED, "title": "t" + FORGED, "detail": "d" + FORGED}
            await telnyx_caller.send_json({"event": "error", "payload": error})
            telnyx_caller.say(utterance(telnyx_caller.rate))
            assert await telnyx_caller.run_until(lambda: len(telnyx_caller.received.media_times) >= 3, 20)
            await telnyx_caller.hang_up()
        async with connect(base + "/vonage") as ws:
            vonage_caller = VonageCaller(ws, call_uuid="aaaa" + FORGED)
            await vonage_caller.begin()
            await vonage_caller.send_json({"event": "websocket:dtmf", "digit": "1", "duration": 260})
            vonage_caller.say(utterance(vonage_caller.rate))
            assert await vonage_caller.run_until(lambda: len(vonage_caller.received.media_times) >= 3, 20)
            await vonage_caller.hang_up()
        assert await asyncio.to_thread(error_count, server, "bad_message") >= refused + 2  # callSid, keypress
    ours = [record.getMessage() for record in caplog.records if record.name.startswith("agent")]
    assert "twilio call CA0001: DTMF 5" in ours and "vonage call -: DTMF 1" in ours
    (telnyx_error,) = [m for m in ours if "reports error" in m]
    assert repr("d" + FORGED) in telnyx_error
    assert not [m for m in ours if "\n" in m or "\r" in m]
    assert not [line for line in caplog.text.splitlines() if line.startswith("CRITICAL")]
