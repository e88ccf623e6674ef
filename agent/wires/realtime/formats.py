"""The Realtime API's audio formats: their names (beta ``pcm16``, GA ``audio/pcm``...), rates and codecs.

Pure. What a payload in each format is lives in ``agent.audio.codecs`` (G.711 and linear PCM, shared with the
phone gateways); this module says which of them the Realtime API names, at which rate, and how a payload that
is not whole samples is refused (``RealtimeError``, naming the parameter).
"""

from __future__ import annotations

from typing import Literal

from agent.audio.codecs import G711_RATE, PCM16LE, PCMA, PCMU, Codec
from agent.errors import AudioFormatError
from agent.wires.realtime.fields import RealtimeError

AudioFormat = Literal["pcm16", "g711_ulaw", "g711_alaw"]
"""A format by its beta name, the one this server uses inside."""
FORMAT_RATES: dict[AudioFormat, int] = {"pcm16": 24000, "g711_ulaw": G711_RATE, "g711_alaw": G711_RATE}
GA_FORMATS: dict[str, AudioFormat] = {"audio/pcm": "pcm16", "audio/pcmu": "g711_ulaw", "audio/pcma": "g711_alaw"}
"""The GA names (``session.audio.input.format.type``) of the formats."""
GA_FORMAT_TYPES: dict[AudioFormat, str] = {name: kind for kind, name in GA_FORMATS.items()}
_CODECS: dict[AudioFormat, Codec] = {"pcm16": PCM16LE, "g711_ulaw": PCMU, "g711_alaw": PCMA}


def to_pcm(fmt: AudioFormat, audio: bytes, param: str) -> bytes:
    """Caller audio in ``fmt`` → PCM16LE. Raises ``RealtimeError`` (``invalid_value`` for ``param``) for pcm16
    audio that is not whole 16-bit samples."""
    try:
        return _CODECS[fmt].decode(audio)
    except AudioFormatError:
        raise RealtimeError("invalid_value", "pcm16 audio must be whole 16-bit samples", param) from None


def from_pcm(fmt: AudioFormat, pcm: bytes) -> bytes:
    """Reply PCM16LE → audio in ``fmt``."""
    return _CODECS[fmt].encode(pcm)
