"""A phone gateway's command, whatever the provider: the options every gateway takes and the run of one
simulated call (``python -m clients.cli twilio | telnyx | vonage``).

A provider's module (``clients.cli.twilio``, ``telnyx``, ``vonage``) supplies a ``Gateway``: the call's sample
rate and how the call is placed (its simulated caller from ``clients.twilio_client`` and the like, and the
handshake's headers). This module plays the call with ``clients.phone_caller.call``, reports progress on stderr
and saves the reply audio, at the call's rate, to ``--out``.

Reason to change: what every gateway's command takes, prints or saves.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TextIO

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import InvalidStatus

from agent.audio.wav import write_wav
from clients import phone_caller
from clients.cli.options import (
    EXIT_CONNECT,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_TIMEOUT,
    Command,
    Fail,
    add_file_call,
    add_token,
    add_url,
    add_voice,
    read_audio,
)
from clients.phone_caller import FRAME_MS, PhoneCaller


@dataclass(frozen=True, slots=True)
class Dialing:
    """How one call is placed: the simulated caller on the open socket, the handshake's headers, and what the
    call sends (for the progress line)."""

    make: Callable[[ClientConnection], PhoneCaller]
    sends: str
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Gateway:
    """One provider: its name (the subcommand and the server's path), the call's sample rate as the command
    line sets it, and how the call is placed at that rate."""

    name: str
    rate: Callable[[argparse.Namespace], int]
    dialing: Callable[[argparse.Namespace, int], Dialing]


def add_phone_call(parser: argparse.ArgumentParser, path: str) -> None:
    """The options every gateway takes: ``--url`` (default: ``path`` on the local server), ``--token``, the
    file to speak and where the replies go, ``--voice``."""
    add_url(parser, path)
    add_token(parser)
    add_file_call(parser)
    add_voice(parser)


async def run_gateway(gateway: Gateway, args: argparse.Namespace, *, stderr: TextIO) -> int:
    """One simulated phone call on ``gateway``; returns the exit status."""
    rate = gateway.rate(args)
    pcm = read_audio(args.wav, rate, stderr)
    if pcm is None:
        return EXIT_FAILED
    dialing = gateway.dialing(args, rate)
    # A provider's own Authorization (Vonage) replaces the bearer token: one header, one credential.
    token = None if "Authorization" in dialing.headers else args.token
    print(f"calling {args.url} with {len(pcm) / 2 / rate:.2f} s of {args.wav} ({dialing.sends})", file=stderr)
    try:
        caller, settled = await phone_caller.call(
            dialing.make,
            args.url,
            pcm,
            headers=dict(dialing.headers),
            token=token,
            settle_s=max(2.0, args.trailing_silence),
            timeout_s=args.timeout,
            on_progress=lambda text: print(text, file=stderr, flush=True),
        )
    except InvalidStatus as exc:
        print(f"error: the server refused the call: HTTP {exc.response.status_code}", file=stderr)
        return EXIT_CONNECT
    except OSError as exc:
        print(f"error: cannot connect to {args.url}: {exc}. Is the server running (python -m agent)?", file=stderr)
        return EXIT_CONNECT
    got, ending = caller.received, caller.ending
    heard = len(got.audio) / 2 / rate
    received = len(got.media_times) * FRAME_MS / 1000
    print(f"call ended: {received:.2f} s of reply audio, {len(got.clears)} clears; {ending}", file=stderr)
    if args.out is not None:
        write_wav(args.out, bytes(got.audio), rate)
        print(f"saved {heard:.2f} s of reply audio to {args.out}", file=stderr)
    if not settled:
        print(f"timed out after {args.timeout:g} s waiting for the replies", file=stderr)
        return EXIT_TIMEOUT
    if ending is None or not ending.clean:
        print("error: the server dropped the call instead of ending it as a hang-up does", file=stderr)
        return EXIT_FAILED
    return EXIT_OK


def _no_check(args: argparse.Namespace, fail: Fail) -> None:
    """Every combination of the gateway's options is valid."""


def gateway_command(
    gateway: Gateway,
    *,
    help: str,
    description: str,
    add_arguments: Callable[[argparse.ArgumentParser], None],
    check: Callable[[argparse.Namespace, Fail], None] = _no_check,
    examples: str = "",
) -> Command:
    """The subcommand of ``gateway``: the shared options, then the provider's own (``add_arguments``)."""

    def add_all(parser: argparse.ArgumentParser) -> None:
        add_phone_call(parser, gateway.name)
        add_arguments(parser)

    async def run(args: argparse.Namespace, *, stdout: TextIO, stderr: TextIO) -> int:
        return await run_gateway(gateway, args, stderr=stderr)

    return Command(gateway.name, help, description, add_all, run, check, examples)
