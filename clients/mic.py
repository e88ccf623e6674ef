"""Live conversation from the default microphone and speaker (optional extra ``mic``: ``sounddevice``).

    python -m clients.cli mic [--voice alice] [--language de]

Microphone audio goes to ``/ws`` in 20 ms frames; reply audio plays through the default output device from
a buffer (``clients/playback.py``) that ``playback.clear`` empties at once, and ``playback.mark`` reports what
has been played, so barge-in works as in the browser. The session asks for ``playback.pause``: when the caller
starts speaking over a reply the server pauses it (the buffer is dropped, "(paused)" is printed) and then
either resumes it from where it stopped ("(resumed)") or clears it ("(interrupted)"). Use headphones: this
client does no echo cancellation. The sound devices are not covered by the automated tests (the test machines
have none); the buffer and the handling of the server's messages are.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from websockets.asyncio.client import connect

from clients.playback import CAPABILITIES, PlaybackBuffer
from clients.protocol_client import bearer, session_start

FRAME_MS = 20


class Speaker:
    """A PCM16 mono output stream fed from a ``PlaybackBuffer`` (the jitter buffer), clearable at once."""

    def __init__(self, sounddevice: Any, rate: int) -> None:
        self.buffer = PlaybackBuffer(rate)
        self._stream = sounddevice.RawOutputStream(
            samplerate=rate, channels=1, dtype="int16", blocksize=rate * FRAME_MS // 1000, callback=self._fill
        )
        self._stream.start()

    def _fill(self, out: Any, frames: int, _time: Any, _status: Any) -> None:
        need = frames * 2
        chunk = self.buffer.read(need)
        out[:] = chunk + bytes(need - len(chunk))

    def close(self) -> None:
        self._stream.stop()
        self._stream.close()


def on_server_message(buffer: PlaybackBuffer, message: str | bytes) -> str | None:
    """Apply one message from the server to the playback buffer; returns the line to print, if any."""
    if isinstance(message, bytes):
        return "  (resumed)" if buffer.push(message) else None
    event = json.loads(message)
    kind = event.get("type")
    if kind == "audio.start":
        buffer.start_turn(event["turn"])
    elif kind == "playback.pause":
        turn = event.get("turn")
        if isinstance(turn, int) and buffer.pause(turn, float(event.get("played_ms") or 0)):
            return "  (paused)"
    elif kind == "playback.clear":
        buffer.clear()
        return "  (interrupted)"
    elif kind == "transcript":
        language = event.get("language")
        return f"you [{language}]: {event['text']}" if isinstance(language, str) else f"you: {event['text']}"
    elif kind == "reply.done":
        return f"agent: {event['text']}"
    elif kind == "error":
        return f"server error [{event.get('code')}]: {event.get('message')}"
    return None


async def live(
    url: str,
    voice: str | None,
    rate: int = 16000,
    output_rate: int = 24000,
    token: str | None = None,
    language: str | None = None,
) -> int:
    """Talk until Ctrl-C, in ``language`` (a code, or ``"auto"``; ``None``: the server's default, detection).
    Returns an exit status (1 if ``sounddevice`` is missing)."""
    try:
        import sounddevice
    except ImportError:
        print("the microphone needs the optional extra: pip install 'voice-agent-server[mic]'")
        return 1
    loop = asyncio.get_running_loop()
    frames: asyncio.Queue[bytes] = asyncio.Queue(maxsize=100)

    def captured(data: Any, _frames: int, _time: Any, _status: Any) -> None:
        with contextlib.suppress(asyncio.QueueFull, RuntimeError):
            loop.call_soon_threadsafe(frames.put_nowait, bytes(data))

    speaker = Speaker(sounddevice, output_rate)
    mic = sounddevice.RawInputStream(
        samplerate=rate, channels=1, dtype="int16", blocksize=rate * FRAME_MS // 1000, callback=captured
    )
    async with connect(url, additional_headers=bearer(token)) as ws:
        start = session_start(
            rate, voice=voice, output_sample_rate=output_rate, capabilities=CAPABILITIES, language=language
        )
        await ws.send(json.dumps(start))

        async def send_audio() -> None:
            while True:
                await ws.send(await frames.get())

        async def report_played() -> None:
            while True:
                await asyncio.sleep(0.15)
                mark = speaker.buffer.mark()
                if mark is not None:
                    await ws.send(json.dumps(mark))

        tasks = [asyncio.create_task(send_audio()), asyncio.create_task(report_played())]
        mic.start()
        print("listening; speak (Ctrl-C to stop)")
        try:
            async for message in ws:
                line = on_server_message(speaker.buffer, message)
                if line is not None:
                    print(line)
        finally:
            for task in tasks:
                task.cancel()
            mic.stop()
            mic.close()
            speaker.close()
    return 0
