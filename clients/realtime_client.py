"""A Realtime API caller over one WebSocket: what an app built on the OpenAI Realtime API does, for
``python -m clients.cli realtime`` and the benchmarks (the tests drive the server with the official
``openai`` package instead).

    async with connect(url, additional_headers={"Authorization": "Bearer KEY"}) as ws:
        caller = RealtimeCaller(ws)
        await caller.begin(voice="alice", instructions="Be brief.")   # session.created → session.update
        await caller.stream(pcm24k, trailing_s=1.0)                    # input_audio_buffer.append, real time

The caller appends PCM16 24 kHz at real-time pace and "plays" each response as it arrives: a response's audio
plays from its first delta on, at real time. When the server reports speech (``speech_started``) over a
response still playing, the caller stops it and tells the server how much it played
(``conversation.item.truncate``), as OpenAI's own examples do; ``played`` keeps only what was heard.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from clients.framing import VOICED_DBFS, frame_dbfs

RATE = 24000
CHUNK_MS = 40
DEFAULT_MODEL = "voice-agent"


async def wait_for(check: Callable[[], bool], changed: asyncio.Event, timeout_s: float) -> bool:
    """Wait until ``check()`` holds, looking again each time ``changed`` is set; ``False`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not check():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        changed.clear()
        try:
            await asyncio.wait_for(changed.wait(), remaining)
        except TimeoutError:
            return False
    return True


class RealtimeFailed(Exception):
    """The server refused the session (its ``error`` event's message)."""


@dataclass(slots=True)
class Response:
    id: str
    item_id: str
    audio: bytearray = field(default_factory=bytearray)
    transcript: str = ""
    first_audio_at: float | None = None
    status: str | None = None
    truncated_ms: int | None = None
    last_voice_sent_at: float | None = None
    """When the caller's last audible audio before this response was sent (the caller's voice-to-voice
    runs from there to ``first_audio_at``)."""

    @property
    def client_voice_to_voice_ms(self) -> float | None:
        if self.first_audio_at is None or self.last_voice_sent_at is None:
            return None
        return (self.first_audio_at - self.last_voice_sent_at) * 1000

    @property
    def audio_ms(self) -> float:
        return len(self.audio) / (RATE * 2 / 1000)

    def played_ms(self, now: float) -> float:
        if self.first_audio_at is None:
            return 0.0
        return min(self.audio_ms, (now - self.first_audio_at) * 1000)


@dataclass(slots=True)
class Turn:
    """One utterance of the caller: when it stopped, what it was heard as, the response's first audio."""

    item_id: str
    stopped_at: float
    transcript: str | None = None
    response: Response | None = None

    @property
    def voice_to_voice_ms(self) -> float | None:
        """From the server's end of speech to the first audio of the response (the caller's wait, less the
        server's hangover, which the server counts from the last voiced frame)."""
        response = self.response
        if response is None or response.first_audio_at is None:
            return None
        return (response.first_audio_at - self.stopped_at) * 1000


class RealtimeCaller:
    def __init__(self, ws: ClientConnection, on_progress: Callable[[str], None] | None = None) -> None:
        self.ws = ws
        self.events: list[dict[str, Any]] = []
        self.responses: dict[str, Response] = {}
        self.turns: list[Turn] = []
        self.errors: list[dict[str, Any]] = []
        self._say = on_progress or (lambda _text: None)
        self._playing: Response | None = None
        self._reader: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        self.last_voice_sent_at: float | None = None

    async def begin(self, voice: str | None = None, instructions: str | None = None) -> dict[str, Any]:
        """Wait for ``session.created``; then ``session.update`` with ``voice``/``instructions`` if given.
        Returns the session. Raises ``RealtimeFailed`` when the server refuses the update."""
        self._reader = asyncio.create_task(self._read())
        await self.wait(lambda: any(e["type"] == "session.created" for e in self.events), 10)
        session: dict[str, Any] = next(e for e in self.events if e["type"] == "session.created")["session"]
        if voice is None and instructions is None:
            return session
        update: dict[str, Any] = {"type": "realtime"}
        if instructions is not None:
            update["instructions"] = instructions
        if voice is not None:
            update["audio"] = {"output": {"voice": voice}}
        await self.send({"type": "session.update", "session": update})
        await self.wait(lambda: bool(self.errors) or any(e["type"] == "session.updated" for e in self.events), 10)
        if self.errors:
            raise RealtimeFailed(self.errors[0]["error"]["message"])
        return next(e for e in self.events if e["type"] == "session.updated")["session"]  # type: ignore[no-any-return]

    async def send(self, event: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(event))

    async def stream(self, pcm: bytes, trailing_s: float = 1.0, chunk_ms: int = CHUNK_MS) -> None:
        """Append ``pcm`` (PCM16 24 kHz) and then ``trailing_s`` of silence, in ``chunk_ms`` appends at real
        time (remembering when the last audible one was sent)."""
        size = RATE * 2 * chunk_ms // 1000
        audio = pcm + bytes(int(RATE * trailing_s) * 2)
        start = time.monotonic()
        for n, i in enumerate(range(0, len(audio), size)):
            chunk = audio[i : i + size].ljust(size, b"\0")
            await self.send({"type": "input_audio_buffer.append", "audio": base64.b64encode(chunk).decode()})
            if frame_dbfs(chunk) > VOICED_DBFS:
                self.last_voice_sent_at = time.monotonic()
            await asyncio.sleep(max(0.0, start + (n + 1) * chunk_ms / 1000 - time.monotonic()))

    async def settle(self, timeout_s: float) -> bool:
        """Wait until every turn is answered and every response done and played; ``False`` on timeout."""

        def settled() -> bool:
            pending = any(t.response is None or t.response.status is None for t in self.turns if t.transcript)
            playing = self._playing is not None and self._playing.played_ms(time.monotonic()) < self._playing.audio_ms
            return not pending and not playing

        deadline = time.monotonic() + timeout_s
        while not settled():
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.1)
        return True

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        await self.ws.close()

    async def wait(self, check: Callable[[], bool], timeout_s: float) -> bool:
        return await wait_for(check, self._changed, timeout_s)

    def played(self) -> bytes:
        """Every response's audio as far as it was heard (cut where the caller talked over it)."""
        parts = []
        for response in self.responses.values():
            end = len(response.audio) if response.truncated_ms is None else response.truncated_ms * RATE * 2 // 1000
            parts.append(bytes(response.audio[:end]))
        return b"".join(parts)

    # -------------------------------------------------------------------------------------------------

    async def _read(self) -> None:
        try:
            async for message in self.ws:
                event: dict[str, Any] = json.loads(message)
                self.events.append(event)
                await self._on(event, time.monotonic())
                self._changed.set()
        except ConnectionClosed:
            self._changed.set()

    async def _on(self, event: dict[str, Any], now: float) -> None:
        kind = event["type"]
        if kind == "error":
            self.errors.append(event)
            self._say(f"error [{event['error'].get('code')}]: {event['error'].get('message')}")
        elif kind == "input_audio_buffer.speech_started":
            await self._interrupted(now)
        elif kind == "input_audio_buffer.speech_stopped":
            self.turns.append(Turn(event["item_id"], now))
        elif kind == "conversation.item.input_audio_transcription.completed":
            for turn in self.turns:
                if turn.item_id == event["item_id"]:
                    turn.transcript = event["transcript"]
            self._say(f"you said: {event['transcript']}")
        elif kind == "response.output_item.added":
            response = Response(event["response_id"], event["item"]["id"])
            self.responses[response.id] = response
            waiting = [t for t in self.turns if t.transcript is not None and t.response is None]
            if waiting:
                waiting[-1].response = response
        elif kind in ("response.output_audio.delta", "response.audio.delta"):
            response = self.responses[event["response_id"]]
            if response.first_audio_at is None:
                response.first_audio_at = now
                response.last_voice_sent_at = self.last_voice_sent_at
                self._playing = response
            response.audio += base64.b64decode(event["delta"])
        elif kind in ("response.output_audio_transcript.done", "response.audio_transcript.done"):
            self.responses[event["response_id"]].transcript = event["transcript"]
        elif kind == "response.done":
            body = event["response"]
            done = self.responses.get(body["id"])
            if done is not None:
                done.status = body["status"]
                self._say(f"agent ({body['status']}): {done.transcript}")

    async def _interrupted(self, now: float) -> None:
        """The caller talks over a response still playing: stop it, and say how much was played."""
        response = self._playing
        if response is None or response.played_ms(now) >= response.audio_ms:
            return
        self._playing = None
        response.truncated_ms = int(response.played_ms(now))
        self._say(f"(talked over the reply after {response.truncated_ms} ms)")
        await self.send(
            {
                "type": "conversation.item.truncate",
                "item_id": response.item_id,
                "content_index": 0,
                "audio_end_ms": response.truncated_ms,
            }
        )
