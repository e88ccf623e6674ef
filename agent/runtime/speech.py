"""Per-turn synthesis pipeline: sentences in, ordered output-rate audio frames out.

Sentences are synthesized as they arrive, up to ``depth`` at once (the next sentence is requested while the
current one plays, which hides a remote voice's time to first audio between sentences), and are always
played in order. Audio is resampled to the session's output rate and cut into fixed
frames; each frame waits for room in the outbox (backpressure) before it is posted to the session.

If the voice fails, the pipeline reports ``StageFailed(stage="tts")``, speaks a short apology in the
fallback (local) voice when there is one, skips the rest of the turn's sentences and ends normally with
``SpeechEnded``, so the caller hears something and the session goes on.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from agent.audio.pcm import Framer, float_to_pcm16, pcm16_to_float
from agent.audio.resample import StreamResampler
from agent.core.events import Event, SpeechAudio, SpeechEnded, StageFailed
from agent.errors import AgentError
from agent.ports import TextToSpeech

log = logging.getLogger(__name__)

Post = Callable[[Event], Awaitable[None]]
APOLOGY = "Sorry, I couldn't say that. Please try again."


@dataclass(frozen=True, slots=True)
class Fallback:
    """A voice to apologise in when the main voice fails (the local preview voice)."""

    tts: TextToSpeech
    voice: str
    text: str = APOLOGY


class _Prefetch:
    """One sentence being synthesized ahead of playback into a bounded buffer."""

    _END = object()

    def __init__(self, tts: TextToSpeech, text: str, voice: str, index: int) -> None:
        self.index = index
        self._chunks: asyncio.Queue[object] = asyncio.Queue(maxsize=64)
        self._task = asyncio.create_task(self._fill(tts, text, voice), name=f"prefetch-{index}")

    async def _fill(self, tts: TextToSpeech, text: str, voice: str) -> None:
        try:
            async for chunk in tts.synthesize(text, voice):
                await self._chunks.put(chunk)
            await self._chunks.put(self._END)
        except AgentError as exc:
            await self._chunks.put(exc)

    async def chunks(self) -> AsyncIterator[bytes]:
        """The sentence's audio in order; re-raises the synthesis error where it happened."""
        while (item := await self._chunks.get()) is not self._END:
            if isinstance(item, AgentError):
                raise item
            assert isinstance(item, bytes)
            yield item

    def cancel(self) -> None:
        self._task.cancel()


class TurnSpeech:
    """Speaks the sentences of one turn in order. ``add`` then ``finish``; ``cancel`` stops at once."""

    def __init__(
        self,
        turn: int,
        tts: TextToSpeech,
        voice: str,
        output_rate: int,
        frame_ms: int,
        post: Post,
        wait_for_room: Callable[[], Awaitable[None]],
        fallback: Fallback | None = None,
        depth: int = 2,
    ) -> None:
        self._turn = turn
        self._depth = max(1, depth)
        self._ahead: deque[_Prefetch] = deque()
        self._input_done = False
        self._tts = tts
        self._voice = voice
        self._output_rate = output_rate
        self._framer = Framer(output_rate * 2 * frame_ms // 1000)
        self._post = post
        self._wait_for_room = wait_for_room
        self._fallback = fallback
        self._sentences: asyncio.Queue[tuple[str, int] | None] = asyncio.Queue()
        self._sentence = 0
        self._task = asyncio.create_task(self._run(), name=f"speech-turn-{turn}")

    def add(self, text: str, sentence: int = 0) -> None:
        """Queue ``text``; its audio frames are tagged with ``sentence`` (the core's index)."""
        self._sentences.put_nowait((text, sentence))

    def finish(self) -> None:
        self._sentences.put_nowait(None)

    def cancel(self) -> None:
        self._task.cancel()

    async def wait(self) -> None:
        await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        try:
            await self._speak_all(self._tts, self._voice)
        except AgentError as exc:
            log.warning("synthesis failed in turn %d: %s", self._turn, exc)
            await self._post(StageFailed(self._turn, "tts", "tts_failed", f"speech synthesis failed: {exc}"))
            self._drop_prefetches()
            await self._apologise()
            while not self._input_done and await self._sentences.get() is not None:
                pass  # the rest of this turn's text is not spoken
        finally:
            self._drop_prefetches()
        await self._post(SpeechEnded(self._turn))

    async def _speak_all(self, tts: TextToSpeech, voice: str) -> None:
        resampler = StreamResampler(tts.sample_rate, self._output_rate)
        while True:
            if not self._ahead and not self._input_done:
                self._start(await self._sentences.get(), tts, voice)  # wait for text only when idle
            self._top_up(tts, voice)
            if not self._ahead:
                break
            current = self._ahead.popleft()
            self._sentence = current.index
            async for chunk in current.chunks():
                await self._send_pcm(float_to_pcm16(resampler.process(pcm16_to_float(chunk))))
                self._top_up(tts, voice)
        await self._send_pcm(float_to_pcm16(resampler.flush()), last=True)

    def _top_up(self, tts: TextToSpeech, voice: str) -> None:
        """Start synthesizing queued sentences, up to ``depth`` ahead, without waiting for any."""
        while not self._input_done and len(self._ahead) < self._depth:
            try:
                item = self._sentences.get_nowait()
            except asyncio.QueueEmpty:
                return
            self._start(item, tts, voice)

    def _start(self, item: tuple[str, int] | None, tts: TextToSpeech, voice: str) -> None:
        if item is None:
            self._input_done = True
            return
        text, index = item
        self._ahead.append(_Prefetch(tts, text, voice, index))

    def _drop_prefetches(self) -> None:
        while self._ahead:
            self._ahead.popleft().cancel()

    async def _apologise(self) -> None:
        fallback = self._fallback
        if fallback is None:
            return
        self._framer.reset()  # a partial frame of the failed voice is not worth keeping
        self._sentence = -1
        resampler = StreamResampler(fallback.tts.sample_rate, self._output_rate)
        try:
            async for chunk in fallback.tts.synthesize(fallback.text, fallback.voice):
                await self._send_pcm(float_to_pcm16(resampler.process(pcm16_to_float(chunk))))
            await self._send_pcm(float_to_pcm16(resampler.flush()), last=True)
        except AgentError as exc:
            log.warning("the fallback voice failed too in turn %d: %s", self._turn, exc)

    async def _send_pcm(self, pcm: bytes, *, last: bool = False) -> None:
        frames = self._framer.push(pcm)
        if last and self._framer.pending:  # pad the last partial frame with silence rather than drop it
            frames += self._framer.push(bytes(self._framer.frame_bytes - self._framer.pending))
        for frame in frames:
            await self._wait_for_room()
            await self._post(SpeechAudio(self._turn, frame, self._sentence))
