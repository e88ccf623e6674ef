"""``python -m clients.cli mic``: talk live from the default microphone to ``/ws``, replies on the default speaker.

Needs the optional extra ``mic`` (``sounddevice``); barge-in works as in the browser, but there is no echo
cancellation: use headphones. The conversation itself is ``clients.mic.live``.

Reason to change: the options of a live call.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from clients.cli.options import Command, add_language, add_token, add_url, add_voice
from clients.mic import live


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_url(parser, "ws")
    add_token(parser)
    add_voice(parser)
    add_language(parser)


async def run(args: argparse.Namespace, *, stdout: TextIO, stderr: TextIO) -> int:
    """Talk until Ctrl-C; returns the exit status (1 if ``sounddevice`` is missing)."""
    return await live(args.url, args.voice, token=args.token, language=args.language)


COMMAND = Command(
    name="mic",
    help="talk live from the default microphone to the default speaker (/ws; needs the extra 'mic')",
    description=(
        "Talk live with the voice agent: the default microphone streams to /ws (protocol v1) and the replies "
        "play on the default speaker, with barge-in. Needs the optional extra 'mic' (sounddevice); use "
        "headphones, as this client does no echo cancellation. Ctrl-C ends the call."
    ),
    add_arguments=add_arguments,
    run=run,
    examples="""\
  python -m clients.cli mic
  python -m clients.cli mic --voice alice --language de
""",
)
