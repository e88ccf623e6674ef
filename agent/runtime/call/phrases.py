"""Fixed phrases (apology, idle prompt, greeting, "one moment", goodbye) in the session's own voice.

Each phrase is synthesized once per voice and text, then played from where it was kept, instantly and even
while the voice's endpoint is down:

- a cloned voice (handle ``"{tenant}/{name}"``) keeps it with the voice in the ``VoiceStore``, as the asset
  ``phrase-<key>-<digest>`` (raw PCM16LE mono at the voice backend's ``sample_rate``). The digest is of the
  text and the rate, so a changed phrase text is synthesized again; removing the voice removes its phrases;
- a voice without a store (the local Piper voice) keeps it in memory (a small LRU).

A phrase not kept yet is synthesized whole in a task of its own and kept when done, so a turn cancelled by
barge-in still leaves it for next time, and two sessions asking at once share one synthesis.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections import OrderedDict
from collections.abc import Mapping

from agent.errors import AgentError, CircuitOpen, UnknownVoice
from agent.languages import DEFAULT
from agent.ports import TextToSpeech, VoiceStore

log = logging.getLogger(__name__)

PHRASE_KEYS = ("apology", "idle_prompt", "greeting", "hold", "goodbye")


def asset_key(key: str, text: str, sample_rate: int, language: str) -> str:
    """The store key of phrase ``key`` with this text at this rate, in ``language`` (``phrase-apology-de-9b1c…`` in
    German; in the default language ``phrase-apology-3f2a…``, the key phrases were kept under before a call had a
    language, so that what is stored is still found)."""
    if language == DEFAULT:
        digest = hashlib.sha256(f"{sample_rate}:{text}".encode()).hexdigest()[:16]
        return f"phrase-{key}-{digest}"
    digest = hashlib.sha256(f"{sample_rate}:{language}:{text}".encode()).hexdigest()[:16]
    return f"phrase-{key}-{language}-{digest}"


def voice_owner(handle: str) -> tuple[str, str] | None:
    """``(tenant, name)`` of a cloned voice's handle; ``None`` for a voice that is not in a store."""
    tenant, _, name = handle.rpartition("/")
    return (tenant, name) if tenant and name else None


class PhraseBook:
    """Server-wide keeper of fixed phrases. One per server (``Components.phrases``)."""

    def __init__(self, store: VoiceStore | None, memory_items: int = 64) -> None:
        self._store = store
        self._memory: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self._memory_items = memory_items
        self._pending: dict[tuple[str, str], asyncio.Task[bytes]] = {}
        self._warming: dict[str, asyncio.Task[None]] = {}  # voice -> its running ``warm``

    async def stored(self, tts: TextToSpeech, voice: str, key: str, text: str, language: str) -> bytes | None:
        """The kept recording of the phrase, or ``None`` (never synthesizes; store errors give ``None``)."""
        name = asset_key(key, text, tts.sample_rate, language)
        owner = voice_owner(voice)
        if owner is None or self._store is None:
            found = self._memory.get((voice, name))
            if found is not None:
                self._memory.move_to_end((voice, name))
            return found
        try:
            return await self._store.get_asset(*owner, name)
        except AgentError as exc:  # a removed voice, or the store is down: synthesize instead
            log.info("phrase %s of %s not readable: %s", key, voice, exc)
            return None

    async def audio(self, tts: TextToSpeech, voice: str, key: str, text: str, language: str) -> bytes:
        """The phrase's PCM at ``tts.sample_rate``, said as ``language``: kept, else synthesized now and kept for
        next time.

        Raises like ``tts.synthesize`` (``CircuitOpen`` while the endpoint's breaker is open)."""
        found = await self.stored(tts, voice, key, text, language)
        if found is not None:
            return found
        slot = (voice, asset_key(key, text, tts.sample_rate, language))
        task = self._pending.get(slot)
        if task is None or task.get_loop() is not asyncio.get_running_loop():
            task = asyncio.create_task(self._make(tts, voice, slot[1], text, language), name=f"phrase-{key}")
            self._pending[slot] = task
            task.add_done_callback(lambda done: self._done(slot, done))
        return await asyncio.shield(task)

    def warm_soon(self, tts: TextToSpeech, voice: str, texts: Mapping[str, str], language: str) -> None:
        """Run ``warm`` in the background (once at a time per voice and language); it outlives the session that
        asked."""
        slot = f"{voice}|{language or ''}"
        running = self._warming.get(slot)
        if running is not None and not running.done() and running.get_loop() is asyncio.get_running_loop():
            return
        task = asyncio.create_task(self.warm(tts, voice, texts, language), name="phrase-warm")
        self._warming[slot] = task
        task.add_done_callback(lambda done: self._warming.pop(slot, None) if self._warming.get(slot) is done else None)

    async def warm(self, tts: TextToSpeech, voice: str, texts: Mapping[str, str], language: str) -> None:
        """Make sure every phrase in ``texts`` (key → text in ``language``; empty texts skipped) is kept. Never
        raises."""
        for key, text in texts.items():
            if not text.strip():
                continue
            try:
                await self.audio(tts, voice, key, text, language)
            except CircuitOpen:
                return  # the endpoint is down; the next session tries again
            except AgentError as exc:
                log.info("could not prepare phrase %s of %s: %s", key, voice, exc)
                return

    async def _make(self, tts: TextToSpeech, voice: str, name: str, text: str, language: str) -> bytes:
        pcm = b"".join([chunk async for chunk in tts.synthesize(text, voice, language=language)])
        if pcm:
            await self._keep(voice, name, pcm)
        return pcm

    async def _keep(self, voice: str, name: str, pcm: bytes) -> None:
        owner = voice_owner(voice)
        if owner is None or self._store is None:
            self._memory[(voice, name)] = pcm
            while len(self._memory) > self._memory_items:
                self._memory.popitem(last=False)
            return
        try:
            await self._store.put_asset(*owner, name, pcm)
            log.info("stored phrase %s of %s (%d bytes)", name, voice, len(pcm))
        except UnknownVoice:
            pass  # removed meanwhile: nothing to keep it with
        except AgentError as exc:
            log.warning("could not store phrase %s of %s: %s", name, voice, exc)

    def _done(self, slot: tuple[str, str], task: asyncio.Task[bytes]) -> None:
        if self._pending.get(slot) is task:
            del self._pending[slot]
        if not task.cancelled():
            task.exception()  # retrieved here: every waiter got it already
