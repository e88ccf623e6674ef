"""Per-turn synthesis pipeline: sentences in, ordered output-rate audio frames out.

This is the one place a reply's sentences are pipelined: they are synthesized as they arrive, up to
``depth`` at once (the next sentence is requested while the current one plays, which hides a remote
voice's time to first audio between sentences), and are always played in order. Audio is resampled to the
session's output rate and cut into fixed frames; each frame waits for room in the outbox (backpressure)
before it is posted to the session, with its place in the turn's audio. All the turn's requests share one
``RetryBudget``.

Pause and resume (``hold``, ``resend``): while the caller makes a sound over the reply, no frame is posted (the
sentence being synthesized waits in memory, and synthesis stops once it is ahead: ``waiting_for``). When the reply
plays on, the frames kept since the position heard (``keep``: the call can pause) are posted again, each waiting
for room like any other, and then the rest follows as it is synthesized. So every frame of reply audio the caller
gets, the first time or again, meets the same backpressure, and the outbox's hard bound is reached only by a client
that really stopped reading.

Each request says how urgent it is (``JobInfo``, ``agent.work.scheduling``): the first sentence and fixed phrases
block the caller's first audio; a later sentence is needed only when playback reaches it, estimated from the
audio sent so far and the sentences ahead of it, so a busy voice serves other callers' first sentences first.

A fixed phrase (``Synthesize.phrase``) is played from the voice's kept recording (``PhraseBook``) when
there is one, and synthesized (then kept) otherwise.

While the voice's endpoint is refused by its circuit breaker (``CircuitOpen``), the sentence that hit it and
the rest of the turn are spoken at once in the fallback (local) voice, without an error. If the voice fails
otherwise, the pipeline reports ``StageFailed(stage="tts")``, plays a short apology (the voice's stored
recording of it if there is one, else the fallback voice), skips the rest of the turn's sentences and ends
normally with ``SpeechEnded``, so the caller hears something and the session goes on.
"""

from __future__ import annotations

import asyncio
import bisect
import logging
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import Literal

from agent.audio.pcm import Framer, float_to_pcm16, pcm16_to_float
from agent.audio.resample import StreamResampler
from agent.core.events import APOLOGY_SENTENCE, Event, SpeechAudio, SpeechEnded, StageFailed
from agent.core.language_text import phrase_text
from agent.errors import AgentError, CircuitOpen
from agent.ports import JobInfo, TextToSpeech, Work
from agent.runtime.call.voicing import Voicing
from agent.work.resilience import RetryBudget

log = logging.getLogger(__name__)

Post = Callable[[Event], Awaitable[None]]

SECONDS_PER_CHAR = 0.05
"""Speech per character of text, on the short side (~20 characters a second), for the audio a sentence will
make before it is made: it errs towards less slack for the sentences after it."""


@dataclass(frozen=True, slots=True)
class _Item:
    text: str
    index: int
    phrase: str | None
    language: str


class _Prefetch:
    """One sentence being synthesized ahead of playback. Its audio is drained from the voice as fast as it
    comes (a sentence is at most a few hundred kB), so a slow listener never stalls a remote stream."""

    _END = object()

    def __init__(self, item: _Item, audio: AsyncIterator[bytes]) -> None:
        self.item = item
        self._chunks: asyncio.Queue[object] = asyncio.Queue()
        self._task = asyncio.create_task(self._fill(audio), name=f"prefetch-{item.index}")

    async def _fill(self, audio: AsyncIterator[bytes]) -> None:
        try:
            async with aclosing(_closable(audio)) as chunks:
                async for chunk in chunks:
                    self._chunks.put_nowait(chunk)
            self._chunks.put_nowait(self._END)
        except Exception as exc:  # a bug too is re-raised where the sentence is played (see TurnSpeech._run)
            self._chunks.put_nowait(exc)

    async def chunks(self) -> AsyncIterator[bytes]:
        """The sentence's audio in order; re-raises the synthesis error where it happened."""
        while (item := await self._chunks.get()) is not self._END:
            if isinstance(item, Exception):
                raise item
            assert isinstance(item, bytes)
            yield item

    def cancel(self) -> None:
        self._task.cancel()


async def _closable(audio: AsyncIterator[bytes]) -> AsyncGenerator[bytes, None]:
    """``audio`` as an async generator whose closing closes ``audio`` too (the port promises an iterator)."""
    try:
        async for chunk in audio:
            yield chunk
    finally:
        close = getattr(audio, "aclose", None)
        if close is not None:
            await close()


class TurnSpeech:
    """Speaks the sentences of one turn in order. ``add`` then ``finish``; ``cancel`` stops at once."""

    def __init__(
        self,
        turn: int,
        voicing: Voicing,
        output_rate: int,
        frame_ms: int,
        post: Post,
        wait_for_room: Callable[[], Awaitable[None]],
        *,
        language: str,
        keep: bool = False,
    ) -> None:
        """``language``: the call's language when the turn starts (what an apology is said in before any text is
        queued; each ``add`` says its own). ``keep``: keep the frames posted, to post them again from where the
        caller stopped hearing them (``resend``)."""
        self._turn = turn
        self._voicing = voicing
        self._depth = max(1, voicing.depth)
        self._budget = voicing.budget()
        self._ahead: deque[_Prefetch] = deque()
        self._replay: deque[_Item] = deque()  # sentences to speak again in the fallback voice
        self._input_done = False
        self._output_rate = output_rate
        self._framer = Framer(output_rate * 2 * frame_ms // 1000)
        self._post = post
        self._wait_for_room = wait_for_room
        self._sentences: asyncio.Queue[_Item | None] = asyncio.Queue()
        self._sentence = 0
        self._first_sent_at: float | None = None
        self._sent_s = 0.0
        self._language = language
        """The language of the latest text queued, else the call's at the start (what an apology is said in)."""
        self._keep = keep
        self._kept = bytearray()
        """The frames posted so far (with ``keep``), in order: byte ``n`` is the turn's audio at offset ``n``."""
        self._run_starts: list[int] = []
        """Where each run of kept frames of one sentence begins (its sentence at the same index of ``_run_of``)."""
        self._run_of: list[int] = []
        self._posted = 0
        """Bytes posted so far: the offset of the next new frame."""
        self._open = asyncio.Event()
        """Set while new frames may be posted (not held for the caller, nor behind frames being posted again)."""
        self._open.set()
        self._waiting_for: Literal["resume", "room"] | None = None
        self._resending: asyncio.Task[None] | None = None
        self._task = asyncio.create_task(self._run(), name=f"speech-turn-{turn}")

    def add(self, text: str, sentence: int = 0, phrase: str | None = None, *, language: str) -> None:
        """Queue ``text``, in ``language``; its audio frames are tagged with ``sentence`` (the core's index).
        ``phrase`` names a fixed phrase (``apology``, ``idle_prompt``, ``greeting``, ``hold``) to play from its
        kept recording."""
        self._language = language
        self._sentences.put_nowait(_Item(text, sentence, phrase, language))

    def finish(self) -> None:
        self._sentences.put_nowait(None)

    def cancel(self) -> None:
        self._task.cancel()
        self._stop_resending()

    async def wait(self) -> None:
        await asyncio.gather(self._task, *filter(None, [self._resending]), return_exceptions=True)

    @property
    def waiting_for(self) -> Literal["resume", "room"] | None:
        """What the turn's next new frame, made and ready to post, waits for: ``"resume"`` while the turn is held
        (from ``hold`` until ``resend`` has posted the kept frames again: synthesis has stopped, ahead of the
        caller), ``"room"`` while the outbox is at its high water (backpressure); ``None`` while no frame waits
        (synthesis is making the next one, or waits for text, or the turn is over). It changes when the speech
        task runs again, so it may lag the hold's end or the room made by a step of the loop. A state to observe
        (tests, diagnostics), not a signal to act on."""
        return self._waiting_for

    def hold(self) -> None:
        """Post no more frames until ``resend`` (the caller is making a sound over the reply)."""
        self._stop_resending()
        self._open.clear()

    def resend(self, start: int, keep: bool = True) -> None:
        """Post the frames kept from byte ``start`` again, each as the outbox has room, then go on with new ones;
        ``keep``: go on keeping them (the turn may pause again), else forget them once sent."""
        self.hold()
        self._keep = self._keep and keep
        self._resending = asyncio.create_task(self._post_again(start), name=f"speech-resend-{self._turn}")

    def _stop_resending(self) -> None:
        if self._resending is not None:
            self._resending.cancel()
            self._resending = None

    async def _post_again(self, start: int) -> None:
        if start < self._posted and not self._kept:
            log.error("turn %d: asked to send audio again that was not kept", self._turn)
        position = start
        while position < len(self._kept):
            await self._wait_for_room()
            end = min(position + self._framer.frame_bytes, len(self._kept))  # whole frames from the position heard
            sentence = self._run_of[bisect.bisect_right(self._run_starts, position) - 1]
            await self._post(SpeechAudio(self._turn, bytes(self._kept[position:end]), sentence, position))
            position = end
            await asyncio.sleep(0)  # the loop queues it before this looks for room again
        if not self._keep:
            self._kept.clear()
            self._run_starts.clear()
            self._run_of.clear()
        self._resending = None
        self._open.set()

    async def _run(self) -> None:
        voicing = self._voicing
        try:
            try:
                await self._speak_all(voicing.tts, voicing.voice, self._budget)
            except CircuitOpen as exc:
                if voicing.fallback is None:
                    raise
                log.info("turn %d: %s; speaking in the fallback voice", self._turn, exc)
                self._framer.reset()
                await self._speak_all(voicing.fallback.tts, voicing.fallback.voice, None)
        except Exception as exc:  # never let the turn wedge: a bug is reported like a failure, generically
            if isinstance(exc, AgentError):
                log.warning("synthesis failed in turn %d: %s", self._turn, exc)
                failed = StageFailed(self._turn, "tts", "tts_failed", f"speech synthesis failed: {exc}")
            else:
                log.exception("synthesis of turn %d raised an unexpected error", self._turn)
                failed = StageFailed(self._turn, "tts", "internal_error", "internal error; the session goes on")
            await self._post(failed)
            self._drop_prefetches()
            await self._apologise()
            while not self._input_done and await self._sentences.get() is not None:
                pass  # the rest of this turn's text is not spoken
        finally:
            self._drop_prefetches()
        await self._post(SpeechEnded(self._turn))

    async def _speak_all(self, tts: TextToSpeech, voice: str, budget: RetryBudget | None) -> None:
        resampler = StreamResampler(tts.sample_rate, self._output_rate)
        while True:
            if not self._ahead and not self._replay and not self._input_done:
                self._start(await self._sentences.get(), tts, voice, budget)  # wait for text only when idle
            self._top_up(tts, voice, budget)
            if not self._ahead:
                break
            current = self._ahead[0]
            self._sentence = current.item.index
            fidelity = self._voicing.fidelity
            sampled = fidelity is not None and tts is self._voicing.tts and current.item.phrase is None
            spoken: list[bytes] = []  # kept only for the fidelity sampler
            try:
                async for chunk in current.chunks():
                    if sampled:
                        spoken.append(chunk)
                    await self._send_pcm(float_to_pcm16(resampler.process(pcm16_to_float(chunk))))
                    self._top_up(tts, voice, budget)
            except CircuitOpen:
                self._replay.extendleft(reversed([p.item for p in self._ahead]))
                self._drop_prefetches()
                raise
            self._ahead.popleft()
            if sampled and fidelity is not None:
                await fidelity.offer(voice, current.item.language, b"".join(spoken), tts.sample_rate)
        await self._send_pcm(float_to_pcm16(resampler.flush()), last=True)

    def _top_up(self, tts: TextToSpeech, voice: str, budget: RetryBudget | None) -> None:
        """Start synthesizing queued sentences, up to ``depth`` ahead, without waiting for any."""
        while len(self._ahead) < self._depth:
            if self._replay:
                self._start(self._replay.popleft(), tts, voice, budget)
                continue
            if self._input_done:
                return
            try:
                item = self._sentences.get_nowait()
            except asyncio.QueueEmpty:
                return
            self._start(item, tts, voice, budget)

    def _start(self, item: _Item | None, tts: TextToSpeech, voice: str, budget: RetryBudget | None) -> None:
        if item is None:
            self._input_done = True
            return
        phrases = self._voicing.phrases
        if item.phrase is not None and phrases is not None:
            key = item.phrase
            audio = _phrase(lambda: phrases.audio(tts, voice, key, item.text, item.language))
        else:
            audio = tts.synthesize(item.text, voice, budget, self._job(item), item.language)
        self._ahead.append(_Prefetch(item, audio))

    def _job(self, item: _Item) -> JobInfo:
        """How urgent ``item`` is: first audio, or (a later sentence) the time until playback reaches it."""
        if item.phrase is not None or item.index < 0:
            return JobInfo(Work.PHRASE)
        if item.index == 0 or (self._first_sent_at is None and not self._ahead):
            return JobInfo(Work.FIRST_SENTENCE)
        now = asyncio.get_running_loop().time()
        started = self._first_sent_at if self._first_sent_at is not None else now
        sending = self._sentence if self._first_sent_at is not None else None
        unsent = (p.item.text for p in self._ahead if p.item.index != sending)
        ahead_s = self._sent_s + sum(len(text) * SECONDS_PER_CHAR for text in unsent)
        return JobInfo(Work.LATER_SENTENCE, max(started + ahead_s - now, 0.0))

    def _drop_prefetches(self) -> None:
        while self._ahead:
            self._ahead.popleft().cancel()

    async def _apologise(self) -> None:
        """The stored recording of the apology in the session's voice, else the fallback voice."""
        voicing, language = self._voicing, self._language
        text = phrase_text("apology", voicing.apology_text, language)
        if not text.strip():
            return
        self._framer.reset()  # a partial frame of the failed voice is not worth keeping
        self._sentence = APOLOGY_SENTENCE
        if voicing.phrases is not None:
            stored = await voicing.phrases.stored(voicing.tts, voicing.voice, "apology", text, language)
            if stored:
                await self._play_whole(stored, voicing.tts.sample_rate)
                return
        fallback = voicing.fallback
        if fallback is None:
            return
        try:
            if voicing.phrases is not None:
                pcm = await voicing.phrases.audio(fallback.tts, fallback.voice, "apology", text, language)
            else:
                speech = fallback.tts.synthesize(text, fallback.voice, language=language)
                pcm = b"".join([chunk async for chunk in speech])
        except AgentError as exc:
            log.warning("the fallback voice failed too in turn %d: %s", self._turn, exc)
            return
        await self._play_whole(pcm, fallback.tts.sample_rate)

    async def _play_whole(self, pcm: bytes, rate: int) -> None:
        resampler = StreamResampler(rate, self._output_rate)
        await self._send_pcm(float_to_pcm16(resampler.process(pcm16_to_float(pcm))))
        await self._send_pcm(float_to_pcm16(resampler.flush()), last=True)

    async def _send_pcm(self, pcm: bytes, *, last: bool = False) -> None:
        frames = self._framer.push(pcm)
        if last and self._framer.pending:  # pad the last partial frame with silence rather than drop it
            frames += self._framer.push(bytes(self._framer.frame_bytes - self._framer.pending))
        for frame in frames:
            await self._clear_to_post()
            if self._first_sent_at is None:
                self._first_sent_at = asyncio.get_running_loop().time()
            self._sent_s += len(frame) / (2 * self._output_rate)
            offset = self._posted
            self._posted += len(frame)
            if self._keep:
                if not self._run_of or self._run_of[-1] != self._sentence:
                    self._run_starts.append(offset)
                    self._run_of.append(self._sentence)
                self._kept += frame
            await self._post(SpeechAudio(self._turn, frame, self._sentence, offset))
            await asyncio.sleep(0)  # the loop queues it before the next frame looks for room

    async def _clear_to_post(self) -> None:
        """Wait until a new frame may go: not held, and room in the outbox."""
        try:
            while True:
                if not self._open.is_set():
                    self._waiting_for = "resume"
                    await self._open.wait()
                self._waiting_for = "room"
                await self._wait_for_room()
                if self._open.is_set():
                    return
        finally:
            self._waiting_for = None


async def _phrase(audio: Callable[[], Awaitable[bytes]]) -> AsyncIterator[bytes]:
    pcm = await audio()
    if pcm:
        yield pcm
