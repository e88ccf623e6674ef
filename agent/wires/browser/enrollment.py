"""Voice enrollment over protocol v1 (``/ws``): the ``voice.enroll.*``, ``voices.list`` and ``voices.remove``
exchange, the side channel (``agent.runtime.call.wire.SideChannel``) a browser connection serves beside its call.

A connection owns one ``EnrollmentChannel``, the same before and during its session, so an upload may
straddle ``session.start``. The channel acts for the connection's ``Principal``: it enrols into, lists and
removes from that principal's tenant only, and adding or removing needs the ``enroll`` scope (else ``error``
``forbidden``). ``handle`` never raises for bad input: every refusal is answered with an ``error`` message
(docs/protocol.md) and the connection and its session go on. Every answer goes through ``send``, which
puts a text payload on the connection's outbox, like every other message. The slow part (decoding,
transcription, storing) runs in the channel's own task, so the connection keeps reading audio meanwhile;
``close()`` cancels it when the connection ends.

Memory is bounded per connection: one upload at a time, at most ``MAX_UPLOAD_BYTES``, declared up front.
Every connection of a server shares one ``EnrollmentLimits`` (per-tenant quota and rate, from
``settings.voices``, built once with the components); ``voice.enroll.begin`` is refused at once when the tenant
is over either, before any upload.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any, assert_never

from agent.audio.reference import MAX_UPLOAD_BYTES
from agent.config import Settings
from agent.errors import AgentError, EnrollmentRejected, ProtocolError, ProviderError, UnknownVoice
from agent.ports import VoiceStore
from agent.runtime.call import stages
from agent.runtime.components import Components
from agent.security.auth import Principal
from agent.security.logsafe import shown
from agent.voices.enrollment import Enrollment, EnrollmentRequest
from agent.voices.records import record_wire
from agent.wires.browser import codec as browser

log = logging.getLogger(__name__)

Send = Callable[[str], None]
"""Puts one text payload on the connection's outbox."""


def refusal(exc: ProtocolError | EnrollmentRejected) -> dict[str, Any]:
    """The ``error`` message for a refusal; ``retry_after_s`` when the same request may succeed later."""
    body = browser.error_body(exc.code, exc.message)
    retry = getattr(exc, "retry_after_s", None)
    if retry is not None:
        body["retry_after_s"] = retry
    return body


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
    """One connection's enrollment and voice listing, as ``principal``; answers go to ``send``."""

    def __init__(self, components: Components, settings: Settings, principal: Principal, send: Send) -> None:
        self._store = store = components.voices
        self._service = (
            None if store is None else Enrollment(store, components.stt, limits=components.enrollment_limits)
        )
        self._allowed = settings.voices.allow_ws_enrollment
        self._max_chunk = max_chunk_bytes(settings.server.max_message_bytes)
        self._principal = principal
        self._send_text = send
        self._upload: _Upload | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def busy(self) -> bool:
        """An enrollment is being decoded, transcribed or stored."""
        return self._task is not None and not self._task.done()

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
                    self._send({"type": "voice.enroll.cancelled"})
                case browser.VoicesList():
                    await self._list()
                case browser.VoicesRemove(name=name):
                    await self._remove(name)
                case _:
                    assert_never(message)
        except (ProtocolError, EnrollmentRejected) as exc:
            log.info("enrollment message refused: %s (tenant %s)", exc.code, self._principal.tenant)
            self._send(refusal(exc))
        except ProviderError as exc:
            log.warning("voice store failed: %s", exc)
            self._send(browser.error_body("store_failed", "the voice store failed; nothing was changed"))

    def close(self) -> None:
        """Drop any upload and cancel a running enrollment (the connection is ending)."""
        self._upload = None
        if self._task is not None:
            self._task.cancel()

    def _send(self, body: dict[str, Any]) -> None:
        self._send_text(json.dumps(body))

    def _store_or_refuse(self) -> VoiceStore:
        if self._store is None:
            raise ProtocolError("voices_unavailable", "this server has no voice store")
        return self._store

    def _service_or_refuse(self) -> Enrollment:
        if self._service is None:
            raise ProtocolError("voices_unavailable", "this server has no voice store")
        return self._service

    async def _begin(self, begin: browser.EnrollBegin) -> None:
        if not self._allowed:
            raise ProtocolError("enrollment_disabled", "this server does not accept enrollment over the WebSocket")
        service = self._service_or_refuse()
        service.authorize(self._principal)
        if self._upload is not None or self.busy:
            raise ProtocolError("enroll_busy", "an enrollment is already in progress on this connection")
        if begin.size > MAX_UPLOAD_BYTES:
            raise EnrollmentRejected(
                "too_large", f"the upload is {begin.size:,} bytes; the limit is {MAX_UPLOAD_BYTES:,} bytes"
            )
        name, _ = service.check(begin.name, begin.consent, begin.transcript, begin.language, begin.speaker)
        await service.ensure_free(self._principal.tenant, name)
        await service.ensure_allowed(self._principal.tenant)
        self._upload = _Upload(begin, name)
        self._send({"type": "voice.enroll.ready", "name": name, "max_chunk_bytes": self._max_chunk})

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
        request = EnrollmentRequest(
            upload.name, bytes(upload.data), begin.consent, begin.transcript, begin.language, begin.speaker
        )
        self._task = asyncio.create_task(self._enroll(request), name=f"enroll-{upload.name}")

    async def _enroll(self, request: EnrollmentRequest) -> None:
        principal = self._principal
        try:
            result = await self._service_or_refuse().enroll(request, principal)
        except EnrollmentRejected as exc:
            log.info("enrollment of %s refused: %s", shown(request.name, quote=True), exc.code)
            self._send(refusal(exc))
            return
        except ProviderError as exc:
            log.warning("enrollment of %s failed: %s", shown(request.name, quote=True), exc)
            self._send(browser.error_body("store_failed", "the voice store failed; nothing was stored"))
            return
        except AgentError as exc:
            log.warning("enrollment of %s failed: %s", shown(request.name, quote=True), exc)
            self._send(browser.error_body("enroll_failed", "enrollment failed"))
            return
        except Exception:  # never let a bug end the connection silently
            log.exception("enrollment of %s failed unexpectedly", shown(request.name, quote=True))
            self._send(browser.error_body("enroll_failed", "enrollment failed"))
            return
        record = result.record
        log.info(
            "enrolled voice %s (%.1f s) in tenant %s by %s",
            shown(record.name, quote=True), record.duration_s, record.tenant, principal.subject,
        )  # fmt: skip
        body = {
            "type": "voice.enrolled",
            "voice": record_wire(record, detail=True),
            "warnings": list(result.warnings),
            "transcribed": result.transcribed,
        }
        self._send(body)

    async def _list(self) -> None:
        records = await self._store_or_refuse().list(self._principal.tenant)
        detail = self._principal.allows("enroll")
        self._send({"type": "voices", "voices": [record_wire(r, detail=detail) for r in records]})

    async def _remove(self, name: str) -> None:
        store = self._store_or_refuse()
        Enrollment.authorize(self._principal)
        try:
            await store.remove(self._principal.tenant, name)
        except UnknownVoice:
            raise ProtocolError("unknown_voice", f"no voice named {name[:64]!r}") from None
        log.info(
            "removed voice %s from tenant %s by %s",
            shown(name, quote=True),
            self._principal.tenant,
            self._principal.subject,
        )
        self._send({"type": "voices.removed", "name": name.strip().lower()})


class Enrollments:
    """A connection's enrollment exchange: its ``EnrollmentChannel``, made for the connection's principal on
    first use and kept until the connection ends (``close``), before the session and during it. ``log``: the
    connection's, for the bug that a message's handling raises (logged, answered ``internal_error``)."""

    def __init__(self, components: Components, settings: Settings, send: Send, log: logging.LoggerAdapter[Any]) -> None:
        self._components = components
        self._settings = settings
        self._send = send
        self._log = log
        self._channel: EnrollmentChannel | None = None

    @property
    def busy(self) -> bool:
        """An enrollment is being decoded, transcribed or stored."""
        return self._channel is not None and self._channel.busy

    async def handle(self, principal: Principal, message: browser.EnrollmentMessage) -> None:
        """Act on one enrollment message as ``principal``; never raises."""
        if self._channel is None:
            self._channel = EnrollmentChannel(self._components, self._settings, principal, self._send)
        try:
            await self._channel.handle(message)
        except Exception:
            self._log.exception("enrollment message raised an unexpected error")
            self._send(json.dumps(browser.error_body(stages.INTERNAL_ERROR, stages.INTERNAL_MESSAGE)))

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close()
