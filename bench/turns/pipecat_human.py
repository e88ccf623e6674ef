"""``bench/end_of_turn.py --live --human --pipecat``: the human rows played to a Pipecat 1.14 bot with its default turn
strategy, scored as our calls are. It changes when how the Pipecat side of a human run is driven changes.

**The bot** is ``bench/pipecat/bot.py`` in ``.venv-pipecat`` (``python bench/pipecat_side_by_side.py --setup``):
Silero VAD and Smart Turn v3 alone (Pipecat's default user turn strategy), our bundled tiny.en and Piper voice, and
the same language-model emulator our server is given in such a run (``pipecat_side_by_side.ReplyEmulator``).

**The caller**: the bot takes one caller and exits when it leaves, so the rows go in one session, one after
another: a warm-up sentence first (not scored), then each row as ``live.call`` plays it to us (its audio from its
start in 20 ms frames paced by the wall clock, then silence) until a reply began after its audible end and has
played out with ``QUIET_S`` of quiet after it, or ``--reply-timeout`` after the audible end; then ``SETTLE_S`` more
silence. Reply audio arrives in Pipecat's 40 ms chunks at the pace of playout; a gap of ``BURST_GAP_S`` or more
between chunks starts another reply. Each row's ``CallLog`` (times from its first frame sent) is scored by
``live_human`` exactly as ours: a cut-off when reply audio arrived before the audible end was sent, latency last
audible frame sent -> first reply audio received. Pipecat's wire carries no turn events, so a row's ``stopped`` is
empty; transcripts are recorded where the bot sends them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Sequence

from websockets.asyncio.client import ClientConnection, connect

from bench.pipecat_client import PipecatListener, encode_audio
from bench.turns.corpus import Utterance
from bench.turns.live_score import FRAME_MS, CallLog, frame_of
from bench.turns.voices import RATE
from testing.sockets import FrameClock

FRAME_BYTES = RATE * FRAME_MS // 1000 * 2
QUIET_S = 0.5
"""After a reply has played, this much quiet before the row is over."""
SETTLE_S = 1.0
"""Silence between one row's end and the next row's first frame."""
SETTLE_MAX_S = 30.0
"""... but never longer than this (a reply that does not end)."""
BURST_GAP_S = 0.3
"""A gap between reply chunks at least this long starts another reply."""


def replies(arrivals: Sequence[float], since: float) -> list[float]:
    """The first chunk of each reply among ``arrivals`` at or after ``since`` (a gap of ``BURST_GAP_S`` or more
    between chunks starts another). Pure."""
    firsts: list[float] = []
    last: float | None = None
    for at in arrivals:
        if at < since:
            continue
        if last is None or at - last >= BURST_GAP_S:
            firsts.append(at)
        last = at
    return firsts


def row_log(heard: PipecatListener, t0: float, audible_end_sent: float | None, timed_out: bool) -> CallLog:
    """A row's ``CallLog`` from what was heard since its first frame went out at ``t0``. Pure."""
    log = CallLog(timed_out=timed_out)
    log.audible_end_sent_ms = None if audible_end_sent is None else round((audible_end_sent - t0) * 1000, 1)
    for turn, first in enumerate(replies(heard.arrivals, t0), start=1):
        log.first_audio[turn] = round((first - t0) * 1000, 1)
        said = [text for at, text in heard.transcripts if t0 <= at <= first]
        if said:
            log.transcripts[turn] = said[-1]
    return log


class PipecatCaller:
    """One session with the bot at ``url``: ``play`` each row in turn (see the module doc)."""

    def __init__(self, url: str, reply_timeout_s: float) -> None:
        self.url = url
        self.reply_timeout_s = reply_timeout_s
        self.heard = PipecatListener()

    async def play(
        self, utterances: Sequence[Utterance], warm_up: bytes, scored: Callable[[int, CallLog], None]
    ) -> None:
        """Say ``warm_up`` (not scored), then each utterance; ``scored(i, log)`` after each."""
        async with connect(self.url, compression=None, max_size=None, open_timeout=10) as ws:

            async def receive() -> None:
                async for message in ws:
                    self.heard.on_message(message, time.monotonic())

            receiver = asyncio.create_task(receive())
            try:
                await self._say(ws, warm_up, len(warm_up) / 2 / RATE * 1000, receiver)
                for i, u in enumerate(utterances):
                    scored(i, await self._say(ws, u.pcm, u.audible_end_ms, receiver))
            finally:
                receiver.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await receiver

    async def _say(
        self, ws: ClientConnection, pcm: bytes, audible_end_ms: float, receiver: asyncio.Task[None]
    ) -> CallLog:
        send = ws.send
        frames = [pcm[i : i + FRAME_BYTES].ljust(FRAME_BYTES, b"\0") for i in range(0, len(pcm), FRAME_BYTES)]
        silence = encode_audio(bytes(FRAME_BYTES), RATE)
        end_frame = frame_of(audible_end_ms)
        heard = self.heard
        t0 = time.monotonic()
        sent_at: float | None = None
        timed_out = False
        async for n in FrameClock(FRAME_MS / 1000):
            if receiver.done():
                raise RuntimeError("the Pipecat bot closed the session")
            await send(encode_audio(frames[n], RATE) if n < len(frames) else silence)
            now = time.monotonic()
            if n == end_frame:
                sent_at = now
            if sent_at is None:
                continue
            replied = any(at >= sent_at for at in heard.arrivals[-200:])
            if replied and now >= heard.played_until + QUIET_S:
                break
            if not replied and now - sent_at > self.reply_timeout_s:
                timed_out = True
                break
        log = row_log(heard, t0, sent_at, timed_out)
        async for n in FrameClock(FRAME_MS / 1000):
            await send(silence)
            quiet = time.monotonic() >= heard.played_until + QUIET_S
            if n * FRAME_MS >= SETTLE_S * 1000 and (quiet or n * FRAME_MS >= SETTLE_MAX_S * 1000):
                break
        return log


async def play_to_bot(
    utterances: Sequence[Utterance],
    llm_url: str,
    python: str,
    reply_timeout_s: float,
    scored: Callable[[int, CallLog], None],
) -> None:
    """Start the bot (``python``: ``.venv-pipecat``'s) with our models and the emulator at ``llm_url``, play the
    utterances to it in one session, and stop it."""
    from bench.latency_sets import caller_speech
    from bench.pipecat_side_by_side import BOT, WARMUP_TEXT, model_paths, process, wait_ready
    from bench.remote_backends import LLM_MODEL
    from testing.sockets import free_port

    port = free_port()
    whisper, voice = model_paths()
    argv = [python, str(BOT), "--port", str(port), "--whisper-model", whisper, "--piper-voice", voice]
    argv += ["--llm-base-url", llm_url, "--llm-model", LLM_MODEL]
    warm_up = caller_speech(WARMUP_TEXT, RATE)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    async with process(argv, env, stdout=asyncio.subprocess.PIPE) as proc:
        await wait_ready(proc, 300)
        await PipecatCaller(f"ws://127.0.0.1:{port}", reply_timeout_s).play(utterances, warm_up, scored)
