"""Live conversation from the default microphone and speaker (optional extra ``mic``: ``sounddevice``).

    python -m clients.cli --mic [--voice alice]

Microphone audio goes to ``/ws`` in 20 ms frames; reply audio plays through the default output device from
a buffer that ``playback.clear`` empties at once, and ``playback.mark`` reports what has been played, so
barge-in works as in the browser. Use headphones: this client does no echo cancellation. Not covered by
the automated tests (the test machines have no sound devices).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from typing import Any

from websockets.asyncio.client import connect

from clients.protocol_client import bearer

FRAME_MS = 20


class Speaker:
    """A PCM16 mono output stream fed from a buffer (the jitter buffer), clearable at once."""

    def __init__(self, sounddevice: Any, rate: int) -> None:
        self.rate = rate
        self._buf = bytearray()
        self._lock = threading.Lock()
        self.turn: int | None = None
        self.played_bytes = 0
        self._stream = sounddevice.RawOutputStream(
            samplerate=rate, channels=1, dtype="int16", blocksize=rate * FRAME_MS // 1000, callback=self._fill
        )
        self._stream.start()

    def _fill(self, out: Any, frames: int, _time: Any, _status: Any) -> None:
        need = frames * 2
        with self._lock:
            chunk = bytes(self._buf[:need])
            del self._buf[:need]
            self.played_bytes += len(chunk)
        out[:] = chunk + bytes(need - len(chunk))

    def start_turn(self, turn: int) -> None:
        with self._lock:
            self.turn, self.played_bytes = turn, 0

    def push(self, pcm: bytes) -> None:
        with self._lock:
            self._buf += pcm

    def clear(self) -> None:
        with self._lock:
            self._buf.clear()

    def played_ms(self) -> float:
        return self.played_bytes / 2 / self.rate * 1000

    def close(self) -> None:
        self._stream.stop()
        self._stream.close()


async def live(
    url: str, voice: str | None, rate: int = 16000, output_rate: int = 24000, token: str | None = None
) -> int:
    """Talk until Ctrl-C. Returns an exit status (1 if ``sounddevice`` is missing)."""
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
        start = {"type": "session.start", "sample_rate": rate, "output_sample_rate": output_rate, "voice": voice}
        await ws.send(json.dumps(start))

        async def send_audio() -> None:
            while True:
                await ws.send(await frames.get())

        async def report_played() -> None:
            while True:
                await asyncio.sleep(0.15)
                if speaker.turn is not None:
                    mark = {"type": "playback.mark", "turn": speaker.turn, "played_ms": round(speaker.played_ms())}
                    await ws.send(json.dumps(mark))

        tasks = [asyncio.create_task(send_audio()), asyncio.create_task(report_played())]
        mic.start()
        print("listening; speak (Ctrl-C to stop)")
        try:
            async for message in ws:
                if isinstance(message, bytes):
                    speaker.push(message)
                    continue
                event = json.loads(message)
                kind = event.get("type")
                if kind == "audio.start":
                    speaker.start_turn(event["turn"])
                elif kind == "playback.clear":
                    speaker.clear()
                    print("  (interrupted)")
                elif kind == "transcript":
                    print(f"you: {event['text']}")
                elif kind == "reply.done":
                    print(f"agent: {event['text']}")
                elif kind == "error":
                    print(f"server error [{event.get('code')}]: {event.get('message')}")
        finally:
            for task in tasks:
                task.cancel()
            mic.stop()
            mic.close()
            speaker.close()
    return 0
