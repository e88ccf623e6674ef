"""Talking to a Pipecat bot as bench/pipecat_side_by_side.py's caller: Pipecat's protobuf frames
(pipecat/frames/protobufs/frames.proto, without protobuf) and one conversation over its WebSocket; changes only with
Pipecat's wire.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from bench.latency_sets import RATE
from bench.pipecat_report import Sample
from clients.framing import FRAME_MS, VOICED_DBFS, FramePacer, frame_bytes, frame_dbfs, split_frames

# --- Pipecat's protobuf frames (pipecat/frames/protobufs/frames.proto), without protobuf ---------------------

FRAME_KINDS = {1: "text", 2: "audio", 3: "transcription", 4: "message", 5: "interruption"}
"""The oneof ``frame`` of ``pipecat.Frame``: field number -> kind."""


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes | int) -> bytes:
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def encode_audio(pcm: bytes, sample_rate: int, num_channels: int = 1) -> bytes:
    """``Frame{audio: AudioRawFrame{audio, sample_rate, num_channels}}`` as Pipecat's serializer reads it."""
    inner = _field(3, pcm) + _field(4, sample_rate) + _field(5, num_channels)
    return _field(2, inner)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of a protobuf message: ints for varints, bytes for length-delimited fields."""
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(data, pos)
            yield number, value
        elif wire == 2:
            size, pos = _read_varint(data, pos)
            if pos + size > len(data):
                raise ValueError("truncated field")
            yield number, data[pos : pos + size]
            pos += size
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            raise ValueError(f"unsupported wire type {wire}")


@dataclass(frozen=True, slots=True)
class PipecatFrame:
    kind: str
    """``audio``, ``message``, ``interruption``, ``text``, ``transcription`` or ``unknown``."""
    audio: bytes = b""
    sample_rate: int = 0
    num_channels: int = 1
    data: str = ""
    """``message``: its JSON text; ``text`` and ``transcription``: the text."""


def decode_frame(data: bytes) -> PipecatFrame:
    """One WebSocket message from Pipecat's ``ProtobufFrameSerializer``. Raises ``ValueError`` if malformed."""
    for number, value in _fields(data):
        kind = FRAME_KINDS.get(number)
        if kind is None or not isinstance(value, bytes):
            continue
        inner = dict(_fields(value))
        if kind == "audio":
            audio, rate, channels = inner.get(3, b""), inner.get(4, 0), inner.get(5, 1)
            assert isinstance(audio, bytes) and isinstance(rate, int) and isinstance(channels, int)
            return PipecatFrame(kind, audio=audio, sample_rate=rate, num_channels=channels or 1)
        text = inner.get(1 if kind == "message" else 3, b"")
        return PipecatFrame(kind, data=text.decode("utf-8", "replace") if isinstance(text, bytes) else "")
    return PipecatFrame("unknown")


@dataclass(slots=True)
class PipecatListener:
    """What the caller hears from the Pipecat bot: when each audio frame came, a simulated player, its
    interruptions, and the transcripts it sends (monotonic seconds)."""

    arrivals: list[float] = field(default_factory=list)
    interruptions: list[float] = field(default_factory=list)
    played_until: float = 0.0
    heard: str = ""
    """The latest transcript."""
    transcripts: list[tuple[float, str]] = field(default_factory=list)

    def on_message(self, message: bytes | str, now: float) -> None:
        if isinstance(message, str):
            return
        frame = decode_frame(message)
        text = ""
        if frame.kind == "audio" and frame.audio:
            self.arrivals.append(now)
            seconds = len(frame.audio) / 2 / max(frame.sample_rate, 1) / max(frame.num_channels, 1)
            self.played_until = max(self.played_until, now) + seconds
        elif frame.kind == "interruption":
            self.interruptions.append(now)
        elif frame.kind == "transcription":
            text = frame.data.strip()
        elif frame.kind == "message":
            with contextlib.suppress(ValueError, AttributeError):
                msg = json.loads(frame.data)
                if msg.get("type") in ("user-transcription", "user-input") and msg.get("data", {}).get("text"):
                    text = str(msg["data"]["text"]).strip()
        if text:
            self.heard = text
            self.transcripts.append((now, text))


async def converse_pipecat(
    url: str, plan: Sequence[tuple[str, str]], audio: Sequence[bytes], args: argparse.Namespace
) -> tuple[list[Sample], bool]:
    """One session: each utterance, then silence until its reply has played (``--gap`` at least)."""
    from websockets.asyncio.client import connect

    listener = PipecatListener()
    samples = [Sample(label, text) for label, text in plan]
    frame_s = FRAME_MS / 1000
    silence = encode_audio(bytes(frame_bytes(RATE)), RATE)
    pacer = FramePacer(frame_s)
    timed_out = False
    async with connect(url, compression=None, max_size=None, open_timeout=10) as ws:

        async def receive() -> None:
            async for message in ws:
                listener.on_message(message, time.monotonic())

        receiver = asyncio.create_task(receive())
        try:
            for _ in range(int(0.5 / frame_s)):
                await pacer.wait()
                await ws.send(silence)
            for sample, pcm in zip(samples, audio, strict=True):
                first_voice = last_voice = None
                listener.heard = ""
                for frame in split_frames(pcm, RATE):
                    await pacer.wait()
                    await ws.send(encode_audio(frame, RATE))
                    if frame_dbfs(frame) > VOICED_DBFS:
                        last_voice = time.monotonic()
                        first_voice = first_voice or last_voice
                sent = 0.0
                while True:
                    now = time.monotonic()
                    reply = next((t for t in listener.arrivals if last_voice and t > last_voice), None)
                    if sent >= args.gap and reply is not None and now >= listener.played_until + args.quiet:
                        break
                    if sent >= args.turn_timeout:
                        timed_out = True
                        break
                    await pacer.wait()
                    await ws.send(silence)
                    sent += frame_s
                if first_voice is not None and last_voice is not None:
                    sample.early = any(first_voice < t <= last_voice for t in listener.arrivals)
                    sample.value_ms = None if reply is None else (reply - last_voice) * 1000
                    sample.cut = reply is not None and any(t > reply for t in listener.interruptions)
                sample.heard = listener.heard
        finally:
            receiver.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await receiver
    return samples, timed_out
