"""Protocol v1 (``/ws``, the browser page and the CLI client): the ``BrowserWire`` a ``Connection`` runs on.

JSON text frames and binary PCM both ways (``agent.wires.browser.codec``), each sent as soon as it is ready:
the client's own buffer plays the reply, and it reports what it played (``playback.mark``).
"""

from __future__ import annotations

from agent.core.events import ClientEnded, ConversationEvent, PlaybackMark, ServerEvent, ToolResult
from agent.errors import ProtocolError
from agent.runtime.call.outbox import Payload
from agent.runtime.call.socket import CallSocket
from agent.runtime.call.wire import Aside, Inbound
from agent.wires.browser import codec as browser


class BrowserWire:
    """Protocol v1 (``/ws``): JSON text frames and binary PCM, sent as soon as they are ready."""

    phone_line = False

    def __init__(self, start: browser.SessionStart, output_rate: int, frame_ms: int, max_input_frame_ms: int) -> None:
        self._start = start
        self._output_rate = output_rate
        self._frame_ms = frame_ms
        self._max_ms = max_input_frame_ms

    @property
    def input_rate(self) -> int:
        return self._start.sample_rate

    @property
    def output_rate(self) -> int:
        return self._output_rate

    @property
    def frame_ms(self) -> int:
        return self._frame_ms

    @property
    def can_pause(self) -> bool:
        return "playback.pause" in self._start.capabilities

    @property
    def pause_overrun_ms(self) -> int:
        return 0  # the page drops what it buffered at once

    def opening(self, session_id: str, voice: str) -> list[Payload]:
        start = self._start
        rates = (self.input_rate, self._output_rate)
        return [browser.session_started(session_id, *rates, voice, start.capabilities, start.language, start.tools)]

    def decode(self, message: str | bytes) -> Inbound:
        if isinstance(message, bytes):
            return browser.check_audio(message, self.input_rate, self._max_ms)
        request = browser.decode_text(message)
        if isinstance(request, browser.SessionEnd):
            return ClientEnded()
        if isinstance(request, browser.PlaybackMarkMessage):
            return PlaybackMark(request.turn, request.played_ms)
        if isinstance(request, ToolResult):
            return request  # the reply waiting on the call goes on; a result nobody waits for is dropped
        if isinstance(request, browser.SessionStart):
            raise ProtocolError("already_started", "this session has already started")
        return Aside(request)  # voice enrollment: the connection's side channel serves it

    def encode(self, event: ServerEvent) -> list[Payload]:
        if isinstance(event, ConversationEvent):
            return []  # answers to requests a v1 client cannot make
        return [browser.encode(event)]

    async def send(self, ws: CallSocket, turn: int | None, payload: Payload) -> None:
        await ws.send(payload)

    def summary(self) -> None:
        return None  # the connection's own lines say it all
