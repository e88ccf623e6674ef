"""What every command of ``python -m clients.cli`` shares: the exit statuses, the ``Command`` row each mode
supplies, the options several modes take (written once here), and reading the audio file to speak.

Reason to change: an option or an exit status that more than one mode has.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TextIO

from agent.audio.wav import load_pcm16
from agent.errors import AudioFormatError
from agent.languages import AUTO, LANGUAGES, parse_language
from clients.protocol_client import DEFAULT_URL

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONNECT = 2
EXIT_TIMEOUT = 3

EXIT_STATUS = f"""\
exit status:
  {EXIT_OK}  every turn finished
  {EXIT_FAILED}  bad input file, the server refused the session (its error is printed), or a phone call it
     dropped instead of ending it as a hang-up does (how it closed is printed)
  {EXIT_CONNECT}  cannot connect to the server (or bad command-line arguments)
  {EXIT_TIMEOUT}  --timeout ran out before the replies finished (what arrived is still saved)
"""


class Runner(Protocol):
    """Does what a parsed command line asks; returns the exit status."""

    def __call__(self, args: argparse.Namespace, *, stdout: TextIO, stderr: TextIO) -> Awaitable[int]: ...


Fail = Callable[[str], None]
"""Reports a bad command line and exits 2 (``ArgumentParser.error``)."""


def _no_check(args: argparse.Namespace, fail: Fail) -> None:
    """The default ``Command.check``: every combination of the mode's options is valid."""


@dataclass(frozen=True, slots=True)
class Command:
    """One mode of the client: a subcommand with its options, the checks across them, and its run.

    ``add_arguments`` adds the mode's own options to its subparser (the shared ones come from the helpers
    below); ``check`` refuses combinations argparse cannot express by calling ``fail``; ``run`` is awaited
    with the parsed namespace."""

    name: str
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Runner
    check: Callable[[argparse.Namespace, Fail], None] = _no_check
    examples: str = ""


def url_for(path: str) -> str:
    """The server's WebSocket URL for ``path`` on the default address (``ws://127.0.0.1:8765/<path>``)."""
    return DEFAULT_URL.removesuffix("/ws") + "/" + path


def add_url(parser: argparse.ArgumentParser, path: str) -> None:
    """``--url``, defaulting to ``path`` on the local server."""
    default = url_for(path)
    parser.add_argument("--url", default=default, help=f"server WebSocket URL (default: {default})")


def add_token(parser: argparse.ArgumentParser) -> None:
    """``--token``: sent as ``Authorization: Bearer`` on the upgrade; read from ``AGENT_TOKEN`` by default."""
    parser.add_argument(
        "--token",
        default=os.environ.get("AGENT_TOKEN") or None,
        help="access token for a server with auth on, sent as 'Authorization: Bearer' "
        "(default: $AGENT_TOKEN; mint one with python -m agent tokens mint --scope call)",
    )


def add_voice(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--voice", default=None, help="enrolled voice to answer in (default: the server's)")


def add_language(parser: argparse.ArgumentParser) -> None:
    """``--language``: the call's language, sent as ``session.start``'s ``language`` (protocol v1 only)."""
    parser.add_argument(
        "--language",
        type=language,
        default=None,
        metavar="CODE|auto",
        help=f"the call's language, one of {', '.join(LANGUAGES)} (a tag such as de-DE is taken as de), or "
        f"'{AUTO}' to let the server detect it from the caller's speech (default: {AUTO})",
    )


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object per turn to stdout (progress stays on stderr)"
    )


def add_file_call(parser: argparse.ArgumentParser) -> None:
    """What a call that speaks a file takes: ``--wav`` (required), ``--out``, ``--timeout``, ``--trailing-silence``."""
    parser.add_argument(
        "--wav",
        type=Path,
        metavar="IN",
        required=True,
        help="audio to speak: WAV, FLAC or OGG, any sample rate, channels or sample format",
    )
    parser.add_argument(
        "--out", type=Path, default=None, metavar="OUT.wav", help="save all reply audio, concatenated, here"
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=60.0,
        metavar="S",
        help="seconds to wait for the replies after the file has been sent (default: 60)",
    )
    parser.add_argument(
        "--trailing-silence",
        type=positive_float,
        default=1.0,
        metavar="S",
        help="minimum silence sent after the file; keep it above the server's hangover (default: 1.0)",
    )


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def language(text: str) -> str:
    """``--language``: a code of ``LANGUAGES`` (normalised: ``de-DE`` -> ``de``) or ``auto``."""
    try:
        code = parse_language(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if code is None and text.strip().lower() != AUTO:
        raise argparse.ArgumentTypeError(f"language must be '{AUTO}' or one of {', '.join(LANGUAGES)}, got {text!r}")
    return AUTO if code is None else code


def read_audio(path: Path, rate: int, stderr: TextIO) -> bytes | None:
    """``path`` as PCM16 mono at ``rate``; ``None`` (the reason printed to ``stderr``) when it cannot be read."""
    try:
        return load_pcm16(path, rate)
    except (AudioFormatError, OSError) as exc:
        print(f"cannot read {path}: {exc}", file=stderr)
        return None
