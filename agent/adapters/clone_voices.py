"""The enrolled voices a cloned-voice backend speaks in: loaded from the store, consent checked, kept fresh.

``CloneVoices.resolve(name, tenant)`` loads a voice of a tenant from the ``VoiceStore`` and refuses it
(``UnknownVoice``) unless its consent record covers the SHA-256 of its reference audio and the tenant; the
voice is then known by its handle ``"{tenant}/{name}"``. Its reference clip becomes a data URI once per clip
(keyed by its sha256), so every request carries the byte-identical string (the server's ref-audio cache).
``get(handle)`` looks a voice in use up again every ``VOICE_RECHECK_S``, so a voice removed (or whose
consent no longer holds) during a call stops speaking.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from agent.adapters.tts_requests import CloneVoice, model_language, wav_data_uri
from agent.config import TtsSettings
from agent.errors import ProviderError, UnknownVoice, VoiceRequired
from agent.ports import VoiceStore

log = logging.getLogger(__name__)

VOICE_RECHECK_S = 30.0
"""How long a loaded voice is used before the store is asked again (removed? consent still valid?)."""


@dataclass(frozen=True, slots=True)
class _Loaded:
    voice: CloneVoice
    checked_at: float


class CloneVoices:
    """Voices by handle, for one backend. ``clock`` (monotonic seconds) times the re-checks."""

    def __init__(self, settings: TtsSettings, store: VoiceStore, clock: Callable[[], float] = time.monotonic) -> None:
        self._settings = settings
        self._store = store
        self._clock = clock
        self._uris: dict[str, str] = {}  # sha256 of the clip -> its data URI
        self._loaded: dict[str, _Loaded] = {}  # handle -> what its requests carry

    async def resolve(self, name: str | None, tenant: str) -> str:
        """Load ``name`` (``None``: ``AGENT_TTS__DEFAULT_VOICE``) of ``tenant``; return ``"{tenant}/{name}"``.

        Raises ``UnknownVoice`` if the tenant has no such voice, or its consent record does not cover its
        reference audio and tenant (``VoiceRequired``, a subclass, if no voice was named and there is no
        default), and ``ProviderError`` if the store fails.
        """
        chosen = name or self._settings.default_voice
        if not chosen:
            raise VoiceRequired()
        voice = await self._store.get(tenant, chosen)
        record = voice.record
        sha256 = hashlib.sha256(voice.wav).hexdigest()
        if not record.consent.covers(sha256, tenant) or record.tenant != tenant:
            log.warning("refused voice %s/%s: its consent record does not cover its audio and tenant", tenant, chosen)
            raise UnknownVoice(chosen)
        uri = self._uris.get(sha256)
        if uri is None:
            uri = self._uris[sha256] = wav_data_uri(voice.wav)
        # The voice's own language; a synthesis asked for another language sends that (``request_language``).
        language = model_language(self._settings.language or record.language)
        handle = f"{tenant}/{chosen}"
        loaded = CloneVoice(
            name=record.name, ref_audio=uri, ref_text=record.transcript, language=language, tenant=tenant
        )
        self._loaded[handle] = _Loaded(loaded, self._clock())
        return handle

    async def get(self, handle: str) -> CloneVoice:
        """The voice of ``handle``, loaded (again, when it was loaded ``VOICE_RECHECK_S`` ago) from the store.

        A voice removed meanwhile, or whose consent no longer holds, raises ``UnknownVoice``; if only the
        store fails, a loaded voice goes on being used until the next check."""
        loaded = self._loaded.get(handle)
        if loaded is not None and self._clock() - loaded.checked_at < VOICE_RECHECK_S:
            return loaded.voice
        tenant, _, name = handle.rpartition("/")
        if not tenant or not name:
            raise UnknownVoice(handle)
        try:
            await self.resolve(name, tenant)
        except UnknownVoice:
            self._loaded.pop(handle, None)
            raise
        except ProviderError as exc:
            if loaded is None:
                raise
            log.warning("cannot re-check voice %s (%s); using it as loaded", handle, exc)
            self._loaded[handle] = _Loaded(loaded.voice, self._clock())
        return self._loaded[handle].voice
