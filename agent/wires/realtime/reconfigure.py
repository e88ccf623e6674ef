"""A checked ``session.update``, as the connection applies it (``Reconfigure``): the session the client will see,
and the core's rules that go with it. Pure.

The patch (``agent.wires.realtime.session_update``) is checked against the session as it stands (the output
format is fixed once a response has spoken; ``tool_choice`` must name one of the tools in effect) and becomes the
core's rules: the turn-taking of its ``turn_detection`` (``agent.wires.realtime.turn_detection``), its
instructions as the system prompt, and its tools as exactly the functions the model may call, as on OpenAI's
API (a reply ends at a call; the client adds the result and asks for the next one). This module changes when
what a ``session.update`` does to the session does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial

from agent.core.policies import SessionConfig
from agent.runtime.call.outbox import Payload
from agent.runtime.call.wire import Reconfigure
from agent.wires.realtime.events import SessionView
from agent.wires.realtime.fields import RealtimeError
from agent.wires.realtime.formats import FORMAT_RATES
from agent.wires.realtime.session_update import UNSET, SessionPatch
from agent.wires.realtime.tools import settle
from agent.wires.realtime.turn_detection import turn_rules
from agent.wires.realtime.voices import find_voice


def reconfigure(
    view: SessionView, patch: SessionPatch, answered: bool, applied: Callable[[SessionView], list[Payload]]
) -> Reconfigure:
    """The change ``patch`` makes to the session ``view``; once applied, ``applied(new_view)`` says so to the
    client. ``answered``: a response has spoken. Raises ``RealtimeError`` (nothing changes)."""
    if patch.output_format not in (None, view.output_format) and answered:
        raise RealtimeError(
            "invalid_value",
            "the output format cannot change once audio has been sent",
            "session.audio.output.format",
        )
    changed = replace(
        view,
        instructions=view.instructions if patch.instructions is None else patch.instructions,
        input_format=patch.input_format or view.input_format,
        output_format=patch.output_format or view.output_format,
        turn_detection=view.turn_detection if patch.turn_detection is UNSET else patch.turn_detection,  # type: ignore[arg-type]
        transcription_model=patch.transcription_model or view.transcription_model,
        language=patch.language if isinstance(patch.language, str | None) else view.language,
    )
    changed.tools, changed.tool_choice = settle(
        patch.tools, patch.tool_choice, (view.tools, view.tool_choice), "session"
    )
    detection = changed.turn_detection

    def rules(current: SessionConfig, base: SessionConfig) -> SessionConfig:
        config = turn_rules(current, base, detection)
        tools = replace(config.tools, specs=changed.tools, choice=changed.tool_choice, client_waits=False)
        return replace(
            config,
            system_prompt=changed.instructions,
            output_sample_rate=FORMAT_RATES[changed.output_format],
            tools=tools,
        )

    def in_voice(voice: str) -> list[Payload]:
        return applied(replace(changed, voice=voice))

    threshold = detection.threshold if detection is not None else None
    language_set = patch.language is not UNSET
    voice = None if patch.voice is None else partial(find_voice, patch.voice)
    return Reconfigure(voice, threshold, rules, in_voice, language_set, changed.language)
