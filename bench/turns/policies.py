"""The end-of-turn bench's policies: the defaults it compares, how a policy's settings overrides make its Settings,
and which of them a run compares (``--policy``, ``--only``); changes only with which policies exist and how one is
written or chosen.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from agent.config import Settings

DEFAULT_POLICIES: dict[str, dict[str, Any]] = {
    "current": {},
    "text_only": {"turn": {"acoustic": "off"}},
    "rules_sound": {"turn": {"text_model": "off"}},
    "fixed420": {
        "turn": {
            "acoustic": "off",
            "text_model": "off",
            "hangover_min_ms": 420,
            "hangover_max_ms": 420,
            "fragment_words": 0,
            "fragment_numbers": False,
        },
        "vad": {"hangover_ms": 420},
    },
    "sure_fragments": {"turn": {"acoustic_sure_fragments": True}},
    "sure90": {"turn": {"acoustic_sure": 0.9}},
    "unsure40": {"turn": {"acoustic_unsure": 0.4}},
    "wait1500": {"turn": {"acoustic_unsure": 0.4, "acoustic_unsure_ms": 1500}},
    "max1200": {"turn": {"hangover_max_ms": 1200}},
}


# --- policies -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Policy:
    name: str
    overrides: dict[str, Any]
    settings: Settings

    def describe(self) -> str:
        vad, turn = self.settings.vad, self.settings.turn
        detector = f"webrtc mode {vad.webrtc_mode}" if vad.backend == "webrtc" else f"silero >= {vad.threshold:g}"
        if self.settings.speculative_ms:
            hangover = (
                f"speculative transcript after {self.settings.speculative_ms} ms, hangover min/default/max "
                f"{turn.hangover_min_ms}/{vad.hangover_ms}/{turn.hangover_max_ms} ms"
            )
        else:
            hangover = f"no speculative transcript, one hangover of {vad.hangover_ms} ms"
        fragments = (
            f"fragments (<= {turn.fragment_words} words{' or a number' if turn.fragment_numbers else ''}) "
            f"{turn.fragment_ms or turn.hangover_max_ms} ms"
        )
        acoustic = (
            f"acoustic {turn.acoustic} (sure >= {turn.acoustic_sure:g}, unsure < {turn.acoustic_unsure:g})"
            if turn.acoustic != "off" and self.settings.speculative_ms
            else "acoustic off"
        )
        return (
            f"{hangover}, {fragments}, {acoustic}, vad {detector}, onset {vad.onset_ms} ms, "
            f"tail floor {vad.tail_floor_db:g} dB"
        )


def with_overrides(base: Settings, overrides: dict[str, Any]) -> Settings:
    """``base`` with ``overrides`` (``{"section": {"field": value}}``) applied and validated.

    Raises ``ValueError`` for an unknown section or field (``Settings`` itself ignores unknown keys, which
    would turn a typo into a silent no-op) and for values ``Settings`` rejects.
    """
    merged = base.model_dump()
    for section, values in overrides.items():
        current = getattr(base, section, None)
        if section not in Settings.model_fields:
            raise ValueError(f"unknown settings section {section!r}")
        if isinstance(current, BaseModel):
            if not isinstance(values, dict):
                raise ValueError(f"settings section {section!r} takes an object of fields")
            unknown = sorted(set(values) - set(type(current).model_fields))
            if unknown:
                raise ValueError(f"unknown field(s) in {section!r}: {', '.join(unknown)}")
            merged[section] = {**merged[section], **values}
        else:
            merged[section] = values
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        raise ValueError(str(exc)) from exc


def parse_policy(value: str) -> tuple[str, dict[str, Any]]:
    """``--policy NAME=JSON``."""
    name, sep, text = value.partition("=")
    name = name.strip()
    if not sep or not name or "," in name:
        raise argparse.ArgumentTypeError('expected NAME=JSON, e.g. \'short={"turn":{"hangover_min_ms":250}}\'')
    try:
        overrides = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"policy {name}: not JSON: {exc}") from exc
    if not isinstance(overrides, dict):
        raise argparse.ArgumentTypeError(f"policy {name}: expected a JSON object")
    return name, overrides


def acoustic_on(settings: Settings) -> bool:
    """Whether the core will ask for sound scores under ``settings`` (with each speculative transcript)."""
    return settings.turn.acoustic != "off" and bool(settings.speculative_ms)


def select_policies(args: argparse.Namespace, base: Settings, error: Callable[[str], Any]) -> list[Policy]:
    """The policies a run compares: the defaults and ``--policy``'s, or those ``--only`` names, in its order, on
    ``base``; an unknown name or a setting ``Settings`` rejects goes to ``error`` (``parser.error``)."""
    known: dict[str, dict[str, Any]] = dict(DEFAULT_POLICIES)
    for name, overrides in args.policy:
        known[name] = overrides
    names = list(known) if args.only is None else [n.strip() for n in args.only.split(",") if n.strip()]
    missing = [n for n in names if n not in known]
    if missing or not names:
        error(f"--only: unknown policy {', '.join(missing) or '(none given)'}; known: {', '.join(known)}")
    policies = []
    for name in dict.fromkeys(names):
        try:
            policies.append(Policy(name, known[name], with_overrides(base, known[name])))
        except (ValueError, TypeError) as exc:
            error(f"policy {name}: {exc}")
    return policies
