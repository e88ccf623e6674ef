"""Voice enrollment over the WebSocket: the ``voice.enroll.*`` and ``voices.list`` exchange of one connection.

A connection gets one ``EnrollmentChannel`` (``channel_for(ws, ...)``), the same before and during its
session, so an upload may straddle ``session.start``. ``handle`` never raises for bad input: every refusal
is answered with an ``error`` message (docs/protocol.md) and the connection and its session go on.
The slow part (decoding, transcription, storing) runs in a task of its own, so the connection keeps
reading audio meanwhile; its answer (``voice.enrolled`` or ``error``) is sent straight to the socket.

Memory is bounded per connection: one upload at a time, at most ``MAX_UPLOAD_BYTES``, declared up front.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import weakref
from typing import Any, assert_never

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from agent.audio.reference import MAX_UPLOAD_BYTES
from agent.config import Settings
from agent.enrollment import Enrollment, EnrollmentRequest, record_to_dict
from agent.errors import AgentError, EnrollmentRejected, ProtocolError, ProviderError
from agent.runtime.components import Components
from agent.transport import browser

log = logging.getLogger(__name__)

_CHANNELS: weakref.WeakKeyDictionary[ServerConnection, EnrollmentChannel] = weakref.WeakKeyDictionary()
_RUNNING: set[asyncio.Task[None]] = set()  # strong references until each enrollment finishes


def channel_for(ws: ServerConnection, components: Components, settings: Settings) -> EnrollmentChannel:
    """The enrollment channel of ``ws`` (made on first use, forgotten with the connection)."""
    channel = _CHANNELS.get(ws)
    if channel is None:
        channel = _CHANNELS[ws] = EnrollmentChannel(ws, components, settings)
    return channel


def max_chunk_bytes(max_message_bytes: int) -> int:
    """Largest raw chunk whose base64 fits a message of ``max_message_bytes`` with its JSON wrapper."""
    return (max_message_bytes - 256) // 4 * 3


class _Upload:
    __slots__ = ("begin", "data", "name")

    def __init__(self, begin: browser.EnrollBegin, name: str) -> None:
        self.begin = begin
        self.name = name
        self.data = bytearray()


class EnrollmentChannel:
    def __init__(self, ws: ServerConnection, components: Components, settings: Settings) -> None:
        self._ws = ws
        self._store = components.voices
        self._service = None if components.voices is None else Enrollment(components.voices, components.stt)
        self._allowed = settings.voices.allow_ws_enrollment
        self._max_chunk = max_chunk_bytes(settings.server.max_message_bytes)
        self._upload: _Upload | None = None
        self._task: asyncio.Task[None] | None = None

    async def handle(self, message: browser.EnrollmentMessage) -> None:
        """Act on one enrollment message; refusals are sent as ``error`` messages, never raised."""
        try:
            match message:
                case browser.EnrollBegin():
                    await self._begin(message)
                case browser.EnrollChunk(data=data):
                    self._chunk(data)
                case browser.EnrollEnd():
                    self._end()
                case browser.EnrollCancel():
                    self._upload = None
                    await self._send({"type": "voice.enroll.cancelled"})
                case browser.VoicesList():
                    await self._list()
                case _:
                    assert_never(message)
        except (ProtocolError, EnrollmentRejected) as exc:
            log.info("enrollment message refused: %s", exc.code)
            await self._send(browser.error_body(exc.code, exc.message))
        except ProviderError as exc:
            log.warning("voice store failed: %s", exc)
            await self._send(browser.error_body("store_failed", f"the voice store failed: {exc}"))

    async def _send(self, body: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self._ws.send(json.dumps(body))

    def _service_or_refuse(self) -> Enrollment:
        if self._service is None:
            raise ProtocolError("voices_unavailable", "this server has no voice store")
        return self._service

    async def _begin(self, begin: browser.EnrollBegin) -> None:
        if not self._allowed:
            raise ProtocolError("enrollment_disabled", "this server does not accept enrollment over the WebSocket")
        service = self._service_or_refuse()
        if self._upload is not None or (self._task is not None and not self._task.done()):
            raise ProtocolError("enroll_busy", "an enrollment is already in progress on this connection")
        if begin.size > MAX_UPLOAD_BYTES:
            raise EnrollmentRejected(
                "too_large", f"the upload is {begin.size:,} bytes; the limit is {MAX_UPLOAD_BYTES:,} bytes"
            )
        name, _ = service.check(begin.name, begin.consent, begin.transcript, begin.language)
        await service.ensure_free(name)
        self._upload = _Upload(begin, name)
        await self._send({"type": "voice.enroll.ready", "name": name, "max_chunk_bytes": self._max_chunk})

    def _chunk(self, data: bytes) -> None:
        upload = self._upload
        if upload is None:
            raise ProtocolError("no_enrollment", "send voice.enroll.begin first")
        if len(upload.data) + len(data) > upload.begin.size:
            self._upload = None
            raise ProtocolError(
                "too_large", f"more data than the {upload.begin.size:,} bytes announced; the upload is dropped"
            )
        upload.data += data

    def _end(self) -> None:
        upload, self._upload = self._upload, None
        if upload is None:
            raise ProtocolError("no_enrollment", "send voice.enroll.begin first")
        if len(upload.data) != upload.begin.size:
            raise ProtocolError(
                "bad_message",
                f"received {len(upload.data):,} of the {upload.begin.size:,} bytes announced; the upload is dropped",
            )
        begin = upload.begin
        request = EnrollmentRequest(upload.name, bytes(upload.data), begin.consent, begin.transcript, begin.language)
        task = asyncio.create_task(self._enroll(request), name=f"enroll-{upload.name}")
        self._task = task
        _RUNNING.add(task)
        task.add_done_callback(_RUNNING.discard)

    async def _enroll(self, request: EnrollmentRequest) -> None:
        service = self._service_or_refuse()
        try:
            result = await service.enroll(request)
        except EnrollmentRejected as exc:
            log.info("enrollment of %r refused: %s", request.name, exc.code)
            await self._send(browser.error_body(exc.code, exc.message))
            return
        except AgentError as exc:
            log.warning("enrollment of %r failed: %s", request.name, exc)
            code = "store_failed" if isinstance(exc, ProviderError) else "enroll_failed"
            await self._send(browser.error_body(code, f"enrollment failed: {exc}"))
            return
        log.info("enrolled voice %r (%.1f s)", result.record.name, result.record.duration_s)
        body = {
            "type": "voice.enrolled",
            "voice": record_to_dict(result.record),
            "warnings": list(result.warnings),
            "transcribed": result.transcribed,
        }
        await self._send(body)

    async def _list(self) -> None:
        if self._store is None:
            raise ProtocolError("voices_unavailable", "this server has no voice store")
        records = await self._store.list()
        await self._send({"type": "voices", "voices": [record_to_dict(r) for r in records]})
