"""Per-turn synthesis pipeline: sentences in, ordered output-rate audio frames out.

Sentences are synthesized one after another as they arrive, so the first sentence is heard while later ones
are still being written or synthesized. Audio is resampled to the session's output rate and cut into fixed
frames; each frame waits for room in the outbox (backpressure) before it is posted to the session.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from agent.audio.pcm import Framer, float_to_pcm16, pcm16_to_float
from agent.audio.resample import StreamResampler
from agent.core.events import Event, SpeechAudio, SpeechEnded, StageFailed
from agent.errors import AgentError
from agent.ports import TextToSpeech

log = logging.getLogger(__name__)

Post = Callable[[Event], Awaitable[None]]


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
    ) -> None:
        self._turn = turn
        self._tts = tts
        self._voice = voice
        self._output_rate = output_rate
        self._frame_bytes = output_rate * 2 * frame_ms // 1000
        self._post = post
        self._wait_for_room = wait_for_room
        self._sentences: asyncio.Queue[str | None] = asyncio.Queue()
        self._task = asyncio.create_task(self._run(), name=f"speech-turn-{turn}")

    def add(self, text: str) -> None:
        self._sentences.put_nowait(text)

    def finish(self) -> None:
        self._sentences.put_nowait(None)

    def cancel(self) -> None:
        self._task.cancel()

    async def wait(self) -> None:
        await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        resampler = StreamResampler(self._tts.sample_rate, self._output_rate)
        framer = Framer(self._frame_bytes)
        try:
            while (text := await self._sentences.get()) is not None:
                async for chunk in self._tts.synthesize(text, self._voice):
                    pcm = float_to_pcm16(resampler.process(pcm16_to_float(chunk)))
                    for frame in framer.push(pcm):
                        await self._send(frame)
            tail = framer.push(float_to_pcm16(resampler.flush()))
            if framer.pending:  # pad the last partial frame with silence rather than drop it
                tail += framer.push(bytes(framer.frame_bytes - framer.pending))
            for frame in tail:
                await self._send(frame)
            await self._post(SpeechEnded(self._turn))
        except AgentError as exc:
            log.warning("synthesis failed in turn %d: %s", self._turn, exc)
            await self._post(StageFailed(self._turn, "tts", "tts_failed", f"speech synthesis failed: {exc}"))

    async def _send(self, frame: bytes) -> None:
        await self._wait_for_room()
        await self._post(SpeechAudio(self._turn, frame))
