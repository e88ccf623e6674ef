"""The espeak-ng fallback voice without running it: its WAV stream header, its voices, what it refuses at once;
and which language a Piper voice speaks, from its config."""

from __future__ import annotations

import struct

import pytest

from agent.adapters.espeak_tts import VOICES, wav_stream_header
from agent.adapters.piper_tts import voice_language
from agent.errors import ProviderError
from agent.languages import LANGUAGES


def _header(rate: int = 22050, channels: int = 1, bits: int = 16, extra: bytes = b"") -> bytes:
    fmt = struct.pack("<HHIIHH", 1, channels, rate, rate * channels * bits // 8, channels * bits // 8, bits)
    # espeak-ng streams: the RIFF and data sizes are placeholders (0x7fffffff-ish), never read.
    return b"RIFF\x24\xf0\xff\x7fWAVEfmt " + struct.pack("<I", 16) + fmt + extra + b"data\x00\xf0\xff\x7f"


def test_header_of_espeak_output() -> None:
    data = _header() + b"\x01\x00" * 10
    assert wav_stream_header(data) == (22050, 44)
    for cut in range(44):
        assert wav_stream_header(data[:cut]) is None  # not all there yet


def test_header_with_another_chunk_before_the_samples() -> None:
    extra = b"LIST" + struct.pack("<I", 5) + b"abcde\x00"  # odd size: padded to even
    assert wav_stream_header(_header(16000, extra=extra)) == (16000, 44 + 14)


@pytest.mark.parametrize(
    "data",
    [
        b"RIFX\x00\x00\x00\x00WAVE",
        b"RIFF\x00\x00\x00\x00AVI ",
        _header(channels=2),
        _header(bits=8),
        b"RIFF\x00\x00\x00\x00WAVEdata\x00\x00\x00\x00",  # samples before any format
    ],
)
def test_anything_but_mono_pcm16_is_an_error(data: bytes) -> None:
    with pytest.raises(ProviderError):
        wav_stream_header(data)


def test_a_voice_for_each_language() -> None:
    assert set(VOICES) == set(LANGUAGES)
    assert VOICES["zh"] == "cmn-latn-pinyin"  # plain "cmn" of espeak-ng 1.51 reads pinyin by English rules


@pytest.mark.parametrize(
    ("config", "language"),
    [
        ({"language": {"code": "en_US"}, "espeak": {"voice": "en-us"}}, "en"),
        ({"language": {"code": "de_DE"}}, "de"),
        ({"espeak": {"voice": "fr"}}, "fr"),
        ({"espeak": {"voice": "cmn"}}, "zh"),
        ({"language": {"code": "pt_BR"}}, "pt"),
        ({"language": {"code": "nl_NL"}, "espeak": {"voice": "nl"}}, "nl"),  # not one of the ten
        ({}, ""),
        ({"language": "en", "espeak": None}, ""),
    ],
)
def test_the_language_a_piper_voice_speaks(config: dict[str, object], language: str) -> None:
    assert voice_language(config) == language
