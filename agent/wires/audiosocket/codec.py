"""Asterisk AudioSocket codec: pure functions, no sockets.

AudioSocket is a TCP byte stream of messages ``kind (1 byte) | length (2 bytes, big-endian) | payload``.
Asterisk → server: ``0x01`` the call's UUID (16 bytes, always the first message), ``0x10`` audio (signed
linear 16-bit little-endian, 8 kHz mono; 20 ms = 320 bytes per message), ``0x03`` a DTMF digit (1 ASCII
byte), ``0x00`` hangup (closing the socket means the same), ``0xff`` an error (a 1-byte code; Asterisk's are
bit flags: ``0x01`` the caller hung up, ``0x02`` frame forwarding, ``0x04`` memory). Server → Asterisk:
``0x10`` audio, which Asterisk plays as it arrives, and ``0x00`` hangup; Asterisk ends the call on any other
kind, so nothing else is ever sent.

``Splitter`` cuts the stream into whole messages (it cannot fail: every 3-byte header says how long its
message is); ``decode`` checks one message and raises ``ProtocolError`` for anything else, which the
connection counts and drops while the call goes on. A message with a bad payload is still a whole message,
so the stream stays in step. Reference: https://docs.asterisk.org/Configuration/Channel-Drivers/AudioSocket/
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass

from agent.errors import ProtocolError

RATE = 8000
FRAME_MS = 20
FRAME_BYTES = RATE * 2 * FRAME_MS // 1000  # 320: PCM16 mono
MAX_AUDIO_BYTES = FRAME_BYTES * 10  # 200 ms: longer than any packetisation Asterisk uses
HEADER = struct.Struct(">BH")
MAX_MESSAGE_BYTES = HEADER.size + 0xFFFF

KIND_HANGUP = 0x00
KIND_UUID = 0x01
KIND_DTMF = 0x03
KIND_AUDIO = 0x10
KIND_ERROR = 0xFF
OTHER_RATES = frozenset(range(0x11, 0x19))
"""Audio at 12-192 kHz (newer Asterisk, ``Dial(AudioSocket/...)`` with a slin16+ codec): not taken here."""
ERROR_CALLER_HUNG_UP = 0x01
_DTMF = frozenset(b"0123456789*#ABCD")


@dataclass(frozen=True, slots=True)
class Uuid:
    """The call's identifier, as given to ``AudioSocket(uuid, host:port)`` in the dialplan."""

    value: uuid.UUID


@dataclass(frozen=True, slots=True)
class Audio:
    """Caller audio: PCM16LE, 8 kHz mono."""

    pcm: bytes


@dataclass(frozen=True, slots=True)
class Dtmf:
    digit: str


@dataclass(frozen=True, slots=True)
class Hangup:
    pass


@dataclass(frozen=True, slots=True)
class Error:
    """Asterisk reports an error; ``code`` 0 when the message carried none."""

    code: int

    @property
    def caller_hung_up(self) -> bool:
        return bool(self.code & ERROR_CALLER_HUNG_UP)


AudioSocketMessage = Uuid | Audio | Dtmf | Hangup | Error


class Splitter:
    """Cuts a byte stream into whole messages (header and payload), whatever the reads' boundaries.

    ``feed`` the bytes as they arrive; ``next`` returns one whole message or ``None`` until more bytes are
    needed. At most one message (3 + 65,535 bytes) and one read are buffered."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    @property
    def pending(self) -> int:
        """Bytes held that do not make a whole message yet."""
        return len(self._buffer)

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def next(self) -> bytes | None:
        if len(self._buffer) < HEADER.size:
            return None
        _, length = HEADER.unpack_from(self._buffer)
        end = HEADER.size + length
        if len(self._buffer) < end:
            return None
        message = bytes(self._buffer[:end])
        del self._buffer[:end]
        return message


def decode(message: bytes) -> AudioSocketMessage:
    """Check one whole message (as ``Splitter.next`` returns it). Raises ``ProtocolError``."""
    if len(message) < HEADER.size:
        raise ProtocolError("bad_message", "an AudioSocket message has a 3-byte header")
    kind, length = HEADER.unpack_from(message)
    payload = message[HEADER.size :]
    if len(payload) != length:
        raise ProtocolError("bad_message", f"header says {length} payload bytes, message holds {len(payload)}")
    if kind == KIND_AUDIO:
        if not payload or len(payload) % 2:
            raise ProtocolError("bad_audio", "audio must be whole 16-bit samples")
        if len(payload) > MAX_AUDIO_BYTES:
            raise ProtocolError("frame_too_long", f"audio message of {len(payload)} bytes")
        return Audio(payload)
    if kind == KIND_UUID:
        if len(payload) != 16:
            raise ProtocolError("bad_message", "the UUID message holds 16 bytes")
        return Uuid(uuid.UUID(bytes=payload))
    if kind == KIND_HANGUP:
        return Hangup()
    if kind == KIND_DTMF:
        if len(payload) != 1 or payload[0] not in _DTMF:
            raise ProtocolError("bad_message", "a DTMF message holds one digit of 0-9, *, #, A-D")
        return Dtmf(chr(payload[0]))
    if kind == KIND_ERROR:
        if len(payload) > 1:
            raise ProtocolError("bad_message", "an error message holds at most a 1-byte code")
        return Error(payload[0] if payload else 0)
    if kind in OTHER_RATES:
        raise ProtocolError("unsupported_sample_rate", "only 8 kHz audio (kind 0x10) is taken")
    raise ProtocolError("unknown_type", f"unknown message kind 0x{kind:02x}")


def message(kind: int, payload: bytes = b"") -> bytes:
    """One message. Raises ``ValueError`` for a kind outside 0-255 or a payload over 65,535 bytes."""
    if len(payload) > 0xFFFF:
        raise ValueError("an AudioSocket payload holds at most 65,535 bytes")
    return HEADER.pack(kind, len(payload)) + payload


def audio(pcm: bytes) -> bytes:
    """Reply audio (PCM16LE 8 kHz mono, a whole number of samples, not empty: Asterisk drops the call on an
    empty audio message)."""
    if not pcm or len(pcm) % 2:
        raise ValueError("audio must be a non-empty whole number of 16-bit samples")
    return message(KIND_AUDIO, pcm)


def audio_messages(pcm: bytes, frame_bytes: int = FRAME_BYTES) -> list[bytes]:
    """``pcm`` as audio messages of at most ``frame_bytes`` each (an odd last byte is dropped)."""
    pcm = pcm[: len(pcm) - len(pcm) % 2]
    return [audio(pcm[i : i + frame_bytes]) for i in range(0, len(pcm), frame_bytes)]


HANGUP = message(KIND_HANGUP)


def uuid_message(value: uuid.UUID) -> bytes:
    return message(KIND_UUID, value.bytes)
