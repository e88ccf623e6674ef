"""Text to speech with the espeak-ng program: the local voice for languages the Piper voice does not speak.

The bundled Piper voice speaks English only. Rather than read German or Russian words by English rules,
``PiperTTS`` hands such text to this adapter, which speaks it with espeak-ng's voice for that language: a
formant synthesizer, robotic but intelligible, and clearly a fallback. It runs the ``espeak-ng`` program
(Debian's ``espeak-ng`` package, 1.51 in Debian 12: the image and CI install it) with ``--stdout``, about
12 ms a sentence including the process start, and resamples its 22050 Hz output to the rate asked for.

Why a program and not a library: the runtime has no espeak-ng library of its own. piper-tts bundles one
(``piper/espeakbridge.so``) for its phonemizer, but espeak-ng keeps one global voice per process, and Piper's
worker threads set it and read phonemes in separate calls: synthesizing German in the same process would race
with them. A process per sentence shares nothing.

Known limits of espeak-ng 1.51: Japanese is read from kana only (kanji would be spelled out as "Chinese letter"
in English), so text with kanji is refused (``ProviderError``); Chinese needs the ``cmn-latn-pinyin`` voice (the
plain ``cmn`` voice reads half of the characters' pinyin by English rules).
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import shutil
import struct
import subprocess
import threading
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import IO, cast

import numpy as np

from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.resample import StreamResampler
from agent.errors import ProviderError, ProviderUnavailable, UnknownVoice
from agent.ports import URGENT, JobInfo, Retries
from agent.work.workers import WorkPool, stream_job

log = logging.getLogger(__name__)

PROVIDER = "espeak-ng"
VOICE = "espeak-ng"
"""The one voice name of this backend: espeak-ng's voice for the language asked for."""

VOICES: Mapping[str, str] = {
    "en": "en-us",
    "zh": "cmn-latn-pinyin",
    "ja": "ja",
    "ko": "ko",
    "de": "de",
    "fr": "fr-fr",
    "ru": "ru",
    "pt": "pt-br",
    "es": "es",
    "it": "it",
}
"""espeak-ng's voice for each ``agent.languages`` code."""

_KANJI = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CHUNK_S = 0.1
"""Audio is handed on in chunks of at least this long (espeak-ng writes a sentence in a few milliseconds)."""
_HEADER_MAX = 4096

_Item = bytes | BaseException | None  # audio, failure, end of stream


def wav_stream_header(data: bytes) -> tuple[int, int] | None:
    """``(sample_rate, offset of the first sample)`` of the WAV header at the start of ``data``, or ``None``
    while more of it is needed. espeak-ng streams its WAV, so the sizes in the header are placeholders and are
    not read. Raises ``ProviderError`` for anything but mono 16-bit PCM."""
    if len(data) < 12:
        return None
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ProviderError(PROVIDER, "its output is not a WAV stream")
    position, rate = 12, 0
    while position <= _HEADER_MAX:
        if len(data) < position + 8:
            return None
        chunk, size = data[position : position + 4], int.from_bytes(data[position + 4 : position + 8], "little")
        if chunk == b"data":
            if not rate:
                raise ProviderError(PROVIDER, "its WAV stream has no format before the samples")
            return rate, position + 8
        if len(data) < position + 8 + size:
            return None
        if chunk == b"fmt ":
            kind, channels, rate = struct.unpack_from("<HHI", data, position + 8)
            (bits,) = struct.unpack_from("<H", data, position + 22)
            if (kind, channels, bits) != (1, 1, 16):
                raise ProviderError(PROVIDER, f"expected mono 16-bit PCM, got format {kind}, {channels} ch, {bits} bit")
        position += 8 + size + (size & 1)
    raise ProviderError(PROVIDER, "its WAV stream has no samples")


class EspeakTTS:
    """``TextToSpeech`` over the ``espeak-ng`` program at ``sample_rate`` (``executable``: its path).

    ``find`` builds one when the program is installed. Syntheses run on a ``WorkPool`` (the server's shared pool
    when given, so a busy server orders them with the other local model work; else a private one of
    ``max_concurrency`` threads): each holds a worker while its espeak-ng process runs. ``close()`` at shutdown.
    """

    MODEL = "espeak"

    def __init__(
        self,
        sample_rate: int,
        pool: WorkPool | None = None,
        *,
        executable: str = "espeak-ng",
        max_concurrency: int = 1,
    ) -> None:
        self._rate = sample_rate
        self._executable = executable
        self._own_pool = pool is None
        self._pool = pool if pool is not None else WorkPool(max_concurrency)
        self._closed = False

    @classmethod
    def find(cls, sample_rate: int, pool: WorkPool | None = None) -> EspeakTTS | None:
        """An ``EspeakTTS`` over the ``espeak-ng`` on ``PATH``; ``None`` when it is not installed."""
        executable = shutil.which("espeak-ng")
        return None if executable is None else cls(sample_rate, pool, executable=executable)

    @property
    def sample_rate(self) -> int:
        return self._rate

    @property
    def languages(self) -> tuple[str, ...]:
        """The ``agent.languages`` codes it has a voice for."""
        return tuple(VOICES)

    async def resolve_voice(self, name: str | None, tenant: str = "default") -> str:
        """``None`` and ``"espeak-ng"`` give ``"espeak-ng"``; anything else raises ``UnknownVoice``."""
        if name is None or name == VOICE:
            return VOICE
        raise UnknownVoice(name)

    async def synthesize(
        self,
        text: str,
        voice: str,
        budget: Retries | None = None,
        job: JobInfo | None = None,
        language: str | None = None,
    ) -> AsyncGenerator[bytes, None]:
        """``speak`` in ``language`` (``None``: English) after checking ``voice``; ``budget`` is ignored."""
        await self.resolve_voice(voice)
        async for pcm in self.speak(text, language or "en", job):
            yield pcm

    async def speak(self, text: str, language: str, job: JobInfo | None = None) -> AsyncGenerator[bytes, None]:
        """Yield PCM16LE mono at ``sample_rate`` for ``text`` read by the rules of ``language`` (a code).

        Whitespace-only text yields nothing. Raises ``ProviderError`` for a language without a voice (or
        Japanese text with kanji) before any work, and when espeak-ng fails or is missing;
        ``ProviderUnavailable`` after ``close()``. ``job`` places the work in the pool's queue (``None``: first
        audio). Closing the generator early kills the process; a job still queued never starts.
        """
        voice = VOICES.get(language)
        if voice is None:
            raise ProviderError(PROVIDER, f"no voice for language {language!r}")
        if language == "ja" and _KANJI.search(text):
            raise ProviderError(PROVIDER, "it reads Japanese from kana only, and this text has kanji")
        if not text.strip():
            return
        if self._closed:
            raise ProviderUnavailable(PROVIDER, "closed")

        def work(put: Callable[[_Item], None], stop: threading.Event) -> None:
            try:
                self._run(voice, text.replace("\x00", " "), put, stop)
            except ProviderError as exc:
                put(exc)
            except Exception as exc:  # OSError from the pipes, numpy
                error = ProviderError(PROVIDER, f"{type(exc).__name__}: {exc}")
                error.__cause__ = exc
                put(error)

        async for chunk in stream_job(self._pool, self.MODEL, job if job is not None else URGENT, len(text), work):
            yield chunk

    def _run(self, voice: str, text: str, put: Callable[[_Item], None], stop: threading.Event) -> None:
        """One espeak-ng process (in a pool worker): its audio, resampled, through ``put``, then ``None``."""
        command = [self._executable, "-v", voice, "-b", "1", "--stdout"]  # -b 1: the text is UTF-8
        try:
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as exc:
            raise ProviderError(PROVIDER, f"cannot run {self._executable}: {exc}") from exc
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        # The text goes in on stdin (not the command line, which other local users can read). A feeding thread:
        # espeak-ng starts writing audio before it has read all of a long text, and we read that audio here.
        feeder = threading.Thread(target=_feed, args=(process.stdin, text.encode("utf-8")), daemon=True)
        feeder.start()
        try:
            heard = self._read(cast(io.BufferedReader, process.stdout), put, stop)
            if stop.is_set():
                return
            error = process.stderr.read().decode("utf-8", "replace").strip()
            code = process.wait()
            if code != 0 or not heard:
                raise ProviderError(PROVIDER, f"no audio (exit status {code}): {error[:200]}")
            put(None)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            for stream in (process.stdout, process.stderr):
                stream.close()
            feeder.join()

    def _read(self, stdout: io.BufferedReader, put: Callable[[_Item], None], stop: threading.Event) -> bool:
        """Hand on the audio of ``stdout`` until its end (or ``stop``); whether it was a WAV stream at all."""
        buffered = b""
        header: tuple[int, int] | None = None
        resampler: StreamResampler | None = None
        pending: list[np.ndarray] = []
        pending_samples = 0
        chunk_samples = int(self._rate * _CHUNK_S)
        while not stop.is_set():
            data = stdout.read1(65536)
            if not data:
                break
            buffered += data
            if header is None:
                header = wav_stream_header(buffered)
                if header is None:
                    continue
                rate, offset = header
                resampler = StreamResampler(rate, self._rate)
                buffered = buffered[offset:]
            assert resampler is not None
            whole = len(buffered) - len(buffered) % 2
            samples, buffered = buffered[:whole], buffered[whole:]
            out = resampler.process(pcm16_to_float(samples))
            pending.append(out)
            pending_samples += out.size
            if pending_samples >= chunk_samples:
                put(float_to_pcm16(np.concatenate(pending)))
                pending, pending_samples = [], 0
        if stop.is_set() or resampler is None:
            return resampler is not None
        pending.append(resampler.flush())
        tail = np.concatenate(pending)
        if tail.size:
            put(float_to_pcm16(tail))
        return True

    def close(self) -> None:
        """Stop accepting work (later calls raise ``ProviderUnavailable``); a shared pool is closed by its owner."""
        self._closed = True
        if self._own_pool:
            self._pool.close()


def _feed(stdin: IO[bytes], data: bytes) -> None:
    try:
        stdin.write(data)
    except (OSError, ValueError):  # the process was killed (closed early) or already exited
        pass
    finally:
        with contextlib.suppress(OSError):
            stdin.close()
