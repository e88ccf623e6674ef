"""The command line of ``python -m clients.cli``: one subcommand per mode, built from the ``COMMANDS`` table;
parsing (the old flag form translated first), the checks across options, and the run of the chosen mode.

Reason to change: how the command line is put together; a new mode is one module and one row of ``COMMANDS``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import textwrap
from collections.abc import Sequence
from typing import TextIO

from clients.cli import audiosocket, legacy, mic, phone, realtime, ws
from clients.cli.options import EXIT_STATUS, Command

COMMANDS: dict[str, Command] = {
    c.name: c for c in (ws.COMMAND, mic.COMMAND, realtime.COMMAND, *phone.COMMANDS, audiosocket.COMMAND)
}

PROG = "python -m clients.cli"

_EPILOG = f"""\
{EXIT_STATUS}
examples:
  {PROG} ws --wav question.wav --out reply.wav
  {PROG} ws --url ws://10.0.0.5:8765/ws --wav q.flac --voice alice --json > turns.jsonl
  {PROG} mic --language de
  {PROG} realtime --voice alice --instructions "Be brief." --wav q.wav --out reply.wav
  {PROG} twilio --url wss://agent.example.com/twilio --wav q.wav --out reply.wav
  {PROG} telnyx --encoding PCMA --wav q.wav --out reply.wav
  {PROG} vonage --signature-secret "$SECRET" --wav q.wav --out reply.wav
  {PROG} audiosocket --port 9092 --wav q.wav --out reply.wav

Each command's options: {PROG} COMMAND --help.
"""


def _fill(text: str) -> str:
    return textwrap.fill(text, width=78)


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top-level parser, and each command's subparser by name (to report a bad command line with its usage).

    Built anew for each command line: ``--token`` defaults to ``$AGENT_TOKEN`` as it is now."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=_fill(
            "Talk to the voice agent as each of its callers would: speak an audio file (or the microphone) to "
            "it, print what it heard and answered, and save its spoken replies."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, title="commands")
    parsers: dict[str, argparse.ArgumentParser] = {}
    for command in COMMANDS.values():
        epilog = EXIT_STATUS + (f"\nexamples:\n{command.examples}" if command.examples else "")
        sub = subparsers.add_parser(
            command.name,
            help=command.help,
            description=_fill(command.description),
            epilog=epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.add_arguments(sub)
        parsers[command.name] = sub
    return parser, parsers


def _takers(option: str, parsers: dict[str, argparse.ArgumentParser], is_legacy: bool) -> str:
    """The commands that take ``option`` (``--phone-rate=16000`` is looked up as ``--phone-rate``), as named to
    the writer of the command line."""
    name = option.split("=", 1)[0]
    takers = [n for n, sub in parsers.items() if name in sub._option_string_actions]
    return ", ".join(legacy.spelled(n, is_legacy) for n in takers)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line (``sys.argv[1:]`` by default), in the subcommand form or the old flag form;
    exits 2 with usage on bad arguments. ``args.command`` names the mode."""
    parser, parsers = build_parser()
    try:
        translated = legacy.translate(sys.argv[1:] if argv is None else argv, COMMANDS)
    except ValueError as exc:
        parser.error(str(exc))
    args, unknown = parser.parse_known_args(translated.argv)
    sub = parsers[args.command]
    if unknown:
        hints = [
            f"{arg} is for {takers}"
            for arg in unknown
            if arg.startswith("-") and (takers := _takers(arg, parsers, translated.legacy))
        ]
        sub.error(f"unrecognized arguments: {' '.join(unknown)}" + "".join(f"; {hint}" for hint in hints))
    COMMANDS[args.command].check(args, sub.error)
    return args


async def run(args: argparse.Namespace, *, stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr) -> int:
    """Do what the parsed command line asks; returns the exit status."""
    return await COMMANDS[args.command].run(args, stdout=stdout, stderr=stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return asyncio.run(run(args))
    except KeyboardInterrupt:
        return 130
