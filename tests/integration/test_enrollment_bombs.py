"""Decoding bombs sent to a real ``python -m agent`` over /ws: refused, with the server's memory barely moving.

Each upload is small and inside the upload limit, but would decode to gigabytes: a 390 KB FLAC of silence
declaring 8 channels at 384 kHz for 119 s (1.5 GB as float32 before issue 19) and a 60 KB OGG Vorbis of
64 channels at 48 kHz for 119 s (1.4 GB). With them go the worst that is still decoded, streamed: 8 channels
at 192 kHz for 59 s (refused as silent only after decoding all of it, twice at once on two connections), and
a FLAC whose header does not say how long it is (decoding is stopped by counting). The files are made here.

The measure is the server's own memory, never time: its peak resident size (``VmHWM`` in ``/proc/PID/status``,
reset to the current size through ``clear_refs`` once the server has enrolled one voice, so that start-up and
first-use costs are not counted) must grow less than ``LIMIT_MB``. Afterwards the server still answers
``/healthz`` and has stored nothing but that first voice.
"""

from __future__ import annotations

import asyncio
import functools
import io
import json
import struct
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from websockets.asyncio.client import connect

from testing.sockets import http_get, next_json
from tests.integration.test_drain_process import agent
from tests.integration.test_enrollment_ws import enroll

pytestmark = pytest.mark.models
LIMIT_MB = 50
TRANSCRIPT = "A gliding tone."


def silent_flac(rate: int, channels: int, seconds: int) -> bytes:
    """Silence, written a second at a time (FLAC packs it to about 3 KB a second at 384 kHz × 8)."""
    out = io.BytesIO()
    with sf.SoundFile(out, "w", rate, channels, format="FLAC", subtype="PCM_16") as f:
        second = np.zeros((rate, channels), dtype=np.int16)
        for _ in range(seconds):
            f.write(second)
    return out.getvalue()


def without_length(flac: bytes) -> bytes:
    """The FLAC with 0 (unknown, as a streaming encoder leaves it) as STREAMINFO's total sample count."""
    data = bytearray(flac)
    fields = int.from_bytes(data[18:26], "big")  # rate (20 bits), channels, bits, total samples (36 bits)
    data[18:26] = (fields & ~((1 << 36) - 1)).to_bytes(8, "big")
    return bytes(data)


def _crc_table() -> list[int]:
    table = []
    for i in range(256):
        r = i << 24
        for _ in range(8):
            r = ((r << 1) ^ 0x04C11DB7) if r & 0x80000000 else r << 1
        table.append(r & 0xFFFFFFFF)
    return table


_CRC = _crc_table()


def _ogg_page(serial: int, seq: int, granule: int, flags: int, packets: list[bytes]) -> bytes:
    """One Ogg page holding whole ``packets`` (RFC 3533), with its CRC."""
    lacing = b"".join(b"\xff" * (len(p) // 255) + bytes([len(p) % 255]) for p in packets)
    page = bytearray(b"OggS" + bytes([0, flags]) + struct.pack("<qIII", granule, serial, seq, 0) + bytes([len(lacing)]))
    page += lacing + b"".join(packets)
    crc = 0
    for byte in page:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ _CRC[(crc >> 24) ^ byte]
    struct.pack_into("<I", page, 22, crc)
    return bytes(page)


def _ogg_packets(data: bytes) -> Iterator[bytes]:
    at, packet = 0, b""
    while at < len(data):
        count = data[at + 26]
        lacing = data[at + 27 : at + 27 + count]
        body = at + 27 + count
        for size in lacing:
            packet += data[body : body + size]
            body += size
            if size < 255:
                yield packet
                packet = b""
        at = body


def ogg_bomb(channels: int = 64, rate: int = 48000, seconds: int = 119) -> bytes:
    """Silent OGG Vorbis of ``channels`` × ``seconds``: one second encoded, its steady packet repeated.

    (Encoding 119 s of 64 channels would take 20 s of CPU; every Vorbis packet of steady silence is the same,
    a long block adding half its length to the stream.)"""
    out = io.BytesIO()
    with sf.SoundFile(out, "w", rate, channels, format="OGG", subtype="VORBIS") as f:
        f.write(np.zeros((rate, channels), dtype=np.float32))
    data = out.getvalue()
    serial = struct.unpack_from("<I", data, 14)[0]
    ident, comment, setup, *audio = _ogg_packets(data)
    per_packet = (1 << (ident[28] >> 4)) // 2  # half the long block size (identification header)
    steady, count = audio[len(audio) // 2], seconds * rate // per_packet + 1
    pages = [_ogg_page(serial, 0, 0, 2, [ident]), _ogg_page(serial, 1, 0, 0, [comment, setup])]
    for first in range(0, count, 200):
        n = min(200, count - first)
        last = first + n == count
        pages.append(_ogg_page(serial, len(pages), (first + n - 1) * per_packet, 4 if last else 0, [steady] * n))
    return b"".join(pages)


def tone_flac(seconds: float = 3.0, rate: int = 48000) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    x = 0.4 * np.sin(2 * np.pi * (180 + 60 * t) * t) + 0.01 * np.random.default_rng(1).standard_normal(t.size)
    out = io.BytesIO()
    sf.write(out, x.astype(np.float32), rate, format="FLAC")
    return out.getvalue()


BOMBS: list[tuple[str, Callable[[], bytes], str]] = [
    ("flac-8ch-384khz-119s", lambda: silent_flac(384000, 8, 119), "bad_audio"),
    ("ogg-64ch-48khz-119s", ogg_bomb, "bad_audio"),
    ("flac-8ch-192khz-59s", lambda: silent_flac(192000, 8, 59), "silent"),
    ("flac-8ch-48khz-90s-no-length", lambda: without_length(silent_flac(48000, 8, 90)), "too_long"),
]


@functools.cache
def built(name: str) -> bytes:
    return next(build for bomb, build, _ in BOMBS if bomb == name)()


def test_the_bombs_are_what_they_claim() -> None:
    """Each header declares the size that made the old decoder allocate it whole."""
    flac = sf.info(io.BytesIO(built("flac-8ch-384khz-119s")))
    assert (flac.channels, flac.samplerate, round(flac.duration)) == (8, 384000, 119)
    ogg_data = built("ogg-64ch-48khz-119s")
    assert len(ogg_data) < 100_000
    with sf.SoundFile(io.BytesIO(ogg_data)) as ogg:
        assert (ogg.channels, ogg.samplerate, round(ogg.frames / ogg.samplerate)) == (64, 48000, 119)
        block = np.empty((48000, 64), dtype=np.float32)
        decoded = sum(len(ogg.read(out=block)) for _ in range(3))
    assert decoded == 3 * 48000  # real, decodable Vorbis


def kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    raise KeyError(key)


def reset_peak(pid: int) -> int:
    """Reset the process's peak resident size (``VmHWM``) to its current size; returns that size in KiB."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError as exc:  # not Linux, or no right to the server's /proc entry
        pytest.skip(f"cannot reset the server's peak memory: {exc}")
    return kib(pid, "VmHWM")


async def test_bombs_are_refused_and_the_server_memory_barely_grows(tmp_path: Path) -> None:
    uploads = [(name, built(name), code) for name, _, code in BOMBS]
    assert all(len(data) < 1_000_000 for _, data, _ in uploads)  # far inside the 10 MiB upload limit
    twin = built("flac-8ch-192khz-59s")
    settings = {
        "AGENT_VOICES__DIR": str(tmp_path / "voices"),
        "AGENT_VOICES__ENROLL_BURST": "50",  # the rate is not what is tested here
        "AGENT_SERVER__START_TIMEOUT_S": "3600",  # no session is started: nothing may depend on how fast this runs
    }
    async with agent(tmp_path, **settings) as server:
        pid = server.proc.pid
        async with connect(server.ws_url) as ws, connect(server.ws_url) as other:
            warm = await enroll(ws, "warmup", tone_flac(), transcript=TRANSCRIPT)
            assert warm["type"] == "voice.enrolled", warm
            base = reset_peak(pid)
            answers = {}
            for name, data, code in uploads:
                answer = answers[name] = await enroll(ws, name, data, transcript=TRANSCRIPT)
                assert (answer["type"], answer.get("code")) == ("error", code), answer
                assert "0x" not in answer["message"] and "object at" not in answer["message"]
            both = await asyncio.gather(  # two at once: the server decodes two uploads at a time
                enroll(ws, "twin-a", twin, transcript=TRANSCRIPT), enroll(other, "twin-b", twin, transcript=TRANSCRIPT)
            )
            assert [a.get("code") for a in both] == ["silent", "silent"]
            growth_mb = (kib(pid, "VmHWM") - base) / 1024
            print(f"server peak RSS growth over {len(uploads) + 2} bombs: {growth_mb:.1f} MB")
            assert growth_mb < LIMIT_MB, (growth_mb, answers)
            await ws.send(json.dumps({"type": "voices.list"}))
            listed = await next_json(ws)
        assert [v["name"] for v in listed["voices"]] == ["warmup"]
        got = await asyncio.to_thread(http_get, server.health_url)
        status, body = got.status, got.json()
        assert (status, body["status"]) == (200, "ok")
    assert "Traceback" not in server.log.read_text()
