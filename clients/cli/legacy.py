"""The old flag form of ``python -m clients.cli`` (``--twilio --wav q.wav``), translated to the subcommand form
(``twilio --wav q.wav``) before parsing, so that scripts written for it keep working.

Only the subcommand form is documented. Reason to change: the day the old form is dropped (delete this module).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

MODE_FLAGS: tuple[str, ...] = ("--realtime", "--twilio", "--telnyx", "--vonage", "--audiosocket", "--mic")
"""The old mode flags, in the order the old parser named them; each is now the subcommand of its name."""

DEFAULT = "ws"
"""The mode of an old command line without a mode flag: protocol v1 on ``/ws``."""

HELP = ("-h", "--help")


@dataclass(frozen=True, slots=True)
class Translated:
    """A command line in the subcommand form; ``legacy`` says it was written in the old form."""

    argv: list[str]
    legacy: bool


def translate(argv: Sequence[str], commands: Collection[str]) -> Translated:
    """``argv`` in the subcommand form. One already in it (it starts with one of ``commands``, or asks for the
    top-level help), or an empty one, is kept as it is. Otherwise its mode flag, if any, becomes the subcommand
    (none: ``ws``). Raises ``ValueError`` when it holds more than one mode flag."""
    if not argv or argv[0] in commands or argv[0] in HELP:
        return Translated(list(argv), legacy=False)
    flags = [arg for arg in argv if arg in MODE_FLAGS]
    if len(flags) > 1:
        raise ValueError(f"choose one of {', '.join(MODE_FLAGS)} (got {', '.join(flags)})")
    if not flags:
        return Translated([DEFAULT, *argv], legacy=True)
    (flag,) = flags
    rest = [arg for arg in argv if arg != flag]
    return Translated([flag.removeprefix("--"), *rest], legacy=True)


def spelled(command: str, legacy: bool) -> str:
    """How a command is named to someone who wrote the old form (``--vonage``; protocol v1 had no flag) or the
    new one (``vonage``)."""
    if not legacy:
        return command
    return "no mode flag (/ws)" if command == DEFAULT else f"--{command}"
