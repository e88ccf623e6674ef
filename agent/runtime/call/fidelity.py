"""Voice fidelity sampling: does the server's speech still sound like the voice it was asked for?

A cloned voice can drift (a new endpoint model, a bad reference, a language the voice speaks poorly) without any
error. ``FidelitySampler`` scores a few replies against their voice's reference audio with a speaker-similarity
model (``SpeakerScorer``: cosine of speaker embeddings, ``agent.adapters.resemblyzer_similarity``) and keeps the
latest score per voice and language, for the gauge ``voice_agent_voice_similarity{voice, language}``. A score is a
drift signal to watch over time and across voices, not a verifier: the embedding was trained on read English
speech, and a text-to-speech voice scores lower than its speaker reading the same words would.

Rules (server-wide, one sampler per server):

- at most one reply per ``(voice, language)`` every ``every_s`` (the first reply of each is scored);
- only cloned voices (a handle ``"tenant/name"``, ``agent.runtime.call.phrases.voice_owner``): the reference audio is
  fetched from the ``VoiceStore`` when scoring;
- one scoring at a time: a reply offered while another is being scored is skipped, not queued;
- replies shorter than ``min_reply_s`` are skipped (too little to judge), longer ones scored on their first
  ``max_reply_s``.

``offer`` never raises and never waits: it decides at once and scores in a task of its own (the scorer runs its
work off the event loop). Failures (a removed voice, the store down, a reply without speech) are logged and
forgotten. Never on the hot path of a turn: the caller hands over audio it has already sent.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from agent.errors import AgentError
from agent.ports import SpeakerScorer, VoiceStore
from agent.runtime.call.phrases import voice_owner

log = logging.getLogger(__name__)

Publish = Callable[[str, str, float], None]
"""Told each new score: ``(voice, language, similarity)`` (``ServerMetrics.voice_similarity_scored``)."""


class FidelitySampler:
    """Samples replies for their speaker similarity to their voice; ``scores()`` and ``publish`` give the
    results. Call ``aclose()`` at shutdown. ``clock``: monotonic seconds (the sampling interval)."""

    def __init__(
        self,
        scorer: SpeakerScorer,
        voices: VoiceStore,
        every_s: float,
        publish: Publish | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        min_reply_s: float = 1.0,
        max_reply_s: float = 12.0,
        max_voices: int = 1024,
    ) -> None:
        self._scorer = scorer
        self._voices = voices
        self.every_s = every_s
        self._publish = publish
        self._clock = clock
        self._min_reply_s = min_reply_s
        self._max_reply_s = max_reply_s
        self._max_voices = max_voices
        self._last: dict[tuple[str, str], float] = {}  # (voice, language) -> when its last sample was taken
        self._scores: dict[tuple[str, str], float] = {}
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    async def offer(self, voice: str, language: str, pcm: bytes, sample_rate: int) -> None:
        """A reply spoken in ``voice`` (a handle) and ``language``: its PCM16LE mono audio at ``sample_rate``.
        Scores it in the background when it is due (see the module docstring); never raises, never waits."""
        try:
            self._offer(voice, language, pcm, sample_rate)
        except Exception:  # a metric must never cost a call its reply
            log.exception("voice fidelity: could not take a sample of %s", voice)

    def _offer(self, voice: str, language: str, pcm: bytes, sample_rate: int) -> None:
        owner = voice_owner(voice)
        if self._closed or self.every_s <= 0 or owner is None or sample_rate <= 0:
            return
        if len(pcm) < 2 * self._min_reply_s * sample_rate:
            return
        key = (voice, language)
        now = self._clock()
        last = self._last.get(key)
        if last is not None and now - last < self.every_s:
            return
        running = self._task
        if running is not None and not running.done() and running.get_loop() is asyncio.get_running_loop():
            return
        self._last.pop(key, None)
        self._last[key] = now  # newest last: the oldest are forgotten first
        while len(self._last) > self._max_voices:
            del self._last[next(iter(self._last))]
        clip = pcm[: 2 * int(self._max_reply_s * sample_rate)]
        self._task = asyncio.create_task(self._score(owner, key, clip, sample_rate), name="voice-fidelity")

    async def _score(self, owner: tuple[str, str], key: tuple[str, str], pcm: bytes, sample_rate: int) -> None:
        try:
            reference = await self._voices.get(*owner)
            value = await self._scorer.similarity(reference.wav, pcm, sample_rate)
        except AgentError as exc:
            log.info("voice fidelity of %s (%s) not scored: %s", *key, exc)
            return
        except Exception:
            log.warning("voice fidelity of %s (%s) failed", *key, exc_info=True)
            return
        self._scores.pop(key, None)
        self._scores[key] = value
        while len(self._scores) > self._max_voices:
            del self._scores[next(iter(self._scores))]
        log.info("voice fidelity of %s (%s): similarity %.3f", key[0], key[1], value)
        if self._publish is not None:
            try:
                self._publish(key[0], key[1], value)
            except Exception:
                log.exception("voice fidelity: could not publish the score of %s (%s)", *key)

    def scores(self) -> dict[tuple[str, str], float]:
        """The latest score of each ``(voice, language)`` sampled so far."""
        return dict(self._scores)

    async def wait_idle(self) -> None:
        """Until the scoring in progress (if any) has finished."""
        task = self._task
        if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
            await asyncio.wait({task})

    async def aclose(self) -> None:
        """Take no more samples; cancel the scoring in progress."""
        self._closed = True
        task = self._task
        if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
            task.cancel()
            await asyncio.wait({task})
