"""One call's setup of the moment: its session core, the voice it speaks in, the language it is in, and how it
hears the caller. The one place a client's change of settings (``Reconfigure``) is applied.

A ``CallSetup`` is made when the session starts, from what the opening fixed (``Opened``) and the server's
settings. The connection loop reads its parts (``session``, ``audio``, ``voicing``, ``language``) and tells it
what the caller's device is playing (``played``, ``cleared``: the echo gate's reference). A Realtime client may
change the voice, the audio format, the turn-taking rules and the language during the call; the wire checks the
request and says what it means (``agent.runtime.call.wire.Reconfigure``), this module carries it out. It
changes when what a call may change does.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from dataclasses import replace
from typing import Any

from agent.config import Settings
from agent.core.events import LanguageHeard
from agent.core.language_text import phrase_text
from agent.core.policies import SessionConfig, ToolPolicy
from agent.core.session import Session
from agent.errors import AgentError
from agent.ports import ToolSpec
from agent.runtime.call.caller_audio import CallerAudio, echo_guard
from agent.runtime.call.outbox import Payload
from agent.runtime.call.policies import session_config
from agent.runtime.call.prestart import Opened, display_name, heard_language
from agent.runtime.call.wire import Reconfigure, Wire
from agent.runtime.components import Components


async def server_tools(components: Components, tenant: str, log: logging.LoggerAdapter[Any]) -> tuple[ToolSpec, ...]:
    """The server's own tools a call of ``tenant`` may use, as the runner knows them now: it never waits on a tool
    server (MCP listings are refreshed in the background; a later call sees the new ones). None when the server
    runs none, or they cannot be listed now: the call goes on without them."""
    if components.tools is None:
        return ()
    try:
        return await components.tools.tools(tenant)
    except AgentError as exc:
        log.warning("the server's tools could not be listed: %s", exc)
        return ()


def _tools(policy: ToolPolicy, server: tuple[ToolSpec, ...], opened: Opened, settings: Settings) -> ToolPolicy:
    """The tools of the call: the server's, then the client's (which a client's own name cannot shadow), each
    client tool waited on for ``tools.client_timeout_s``."""
    taken = {spec.name for spec in server}
    timeout = settings.tools.client_timeout_s
    client = tuple(replace(spec, timeout_s=timeout) for spec in opened.tools if spec.name not in taken)
    return replace(policy, specs=(*server, *client))


class CallSetup:
    """The session, voice, language and caller audio of the call ``opened`` started (``log``: the connection's)."""

    def __init__(
        self,
        settings: Settings,
        components: Components,
        opened: Opened,
        log: logging.LoggerAdapter[Any],
        server_tools: tuple[ToolSpec, ...] = (),
    ) -> None:
        wire = opened.wire
        self._settings = settings
        self._components = components
        self._tenant = opened.principal.tenant
        self._log = log
        self.voicing = components.voicing(settings, opened.voice, fallback=opened.parting is not None)
        rate, frame_ms, overrun = wire.output_rate, wire.frame_ms, wire.pause_overrun_ms
        base = session_config(settings, rate, frame_ms, wire.can_pause, overrun, language=opened.language)
        base = replace(base, tools=_tools(base.tools, server_tools, opened, settings))
        if opened.parting is not None:  # the call cannot be served: say why, then close
            goodbye = phrase_text("no_voice", settings.turn.no_voice_text, base.language)
            base = replace(base, phrases=replace(base.phrases, greeting="", goodbye=goodbye))
        self._base: SessionConfig = base
        """The session's rules from the settings (a client may change them: ``reconfigure``)."""
        self.session = Session(base)
        self._phone_line = wire.phone_line
        self.audio = self._caller_audio(wire.input_rate, settings.vad.threshold)

    def _caller_audio(self, input_rate: int, threshold: float) -> CallerAudio:
        echo = echo_guard(self._settings.echo, self._phone_line)
        detector = self._components.new_detector()
        new_confirmer = self._components.new_confirmer
        confirm = new_confirmer() if new_confirmer is not None else None
        vad = self._settings.vad
        return CallerAudio(
            input_rate,
            detector,
            threshold,
            vad.tail_floor_db,
            echo,
            vad.tail_over_noise_db,
            confirm,
            vad.confirm_threshold,
        )

    def played(self, pcm: bytes, sample_rate: int, now: float) -> None:
        """Reply audio went to the socket at ``now`` (for the echo gate)."""
        self.audio.played(pcm, sample_rate, now)

    def cleared(self, now: float) -> None:
        """The caller's device dropped what it had buffered at ``now`` (for the echo gate)."""
        self.audio.cleared(now)

    def language_heard(self, heard: LanguageHeard) -> None:
        """The call's language is now ``heard.language`` (the session core's choice): its fixed phrases are made
        ready in the call's voice."""
        if heard.change:
            self._log.info("the caller's language changed from %s to %s", heard.was, heard.language)
        self.voicing.warm_phrases(heard.language)

    def _lookup(self, name: str | None) -> Awaitable[str]:
        default = self._settings.tts.default_voice
        return self._components.tts.resolve_voice(default if name is None else name, self._tenant)

    async def reconfigure(self, change: Reconfigure, wire: Wire) -> list[Payload]:
        """Carry out ``change`` on the call running on ``wire``; returns what to send the client. Raises
        ``ProtocolError`` (an unknown voice, a language the recogniser cannot hear), and then nothing changes."""
        voice = self.voicing.voice
        if change.voice is not None:
            voice = await change.voice(self._lookup)
        language = heard_language(change.language, self._components.stt.languages)  # refused: nothing changes
        input_rate = wire.input_rate
        payloads = change.applied(display_name(voice))  # the wire's formats change here
        if voice != self.voicing.voice:
            self.voicing = self._components.voicing(self._settings, voice)
            self.voicing.warm_phrases(self.session.language)
        if change.language_set:
            for heard in self.session.choose_language(language):
                self.language_heard(heard)
        if wire.input_rate != input_rate or change.threshold is not None:
            threshold = change.threshold if change.threshold is not None else self._settings.vad.threshold
            self.audio = self._caller_audio(wire.input_rate, threshold)
        self.session.reconfigure(change.rules(self.session.config, self._base))
        return payloads
