"""``python -m clients.cli --twilio | --telnyx | --vonage``: one simulated phone call through a gateway.

The command line is parsed in ``clients.cli``; this module plays the call with the provider's simulated
caller (``clients.twilio_client``, ``clients.telnyx_client``, ``clients.vonage_client``), reports progress
on stderr and saves the reply audio, at the call's rate, to ``--out``.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import TextIO

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import InvalidStatus

from agent.audio.wav import load_pcm16, write_wav
from agent.errors import AudioFormatError
from agent.wires.phone.telnyx import codec as telnyx
from agent.wires.phone.twilio import codec as twilio
from clients import phone_caller
from clients.phone_caller import FRAME_MS, PhoneCaller
from clients.telnyx_client import TelnyxCaller
from clients.twilio_client import TwilioCaller
from clients.vonage_client import VonageCaller, vonage_jwt

EXIT_OK, EXIT_FAILED, EXIT_CONNECT, EXIT_TIMEOUT = 0, 1, 2, 3  # as clients.cli's
PROVIDERS = ("twilio", "telnyx", "vonage")

Dial = Callable[[bytes, Callable[[str], None]], Awaitable[tuple[PhoneCaller, bool]]]
"""Places the call with this audio, reporting progress to the callable."""


def provider(args: argparse.Namespace) -> str | None:
    """The gateway the command line asks for (``--twilio``, ``--telnyx``, ``--vonage``), if any."""
    return next((name for name in PROVIDERS if getattr(args, name, False)), None)


def call_rate(args: argparse.Namespace) -> int:
    """The call's sample rate: Twilio and G.711 are 8 kHz; L16 and Vonage take ``--phone-rate``."""
    name = provider(args)
    if name == "vonage" or (name == "telnyx" and args.encoding == "L16"):
        return int(args.phone_rate or 16000)
    return twilio.RATE


def _dial(args: argparse.Namespace, name: str) -> tuple[Dial, str]:
    """How to place the call, and what it sends (for the progress line)."""
    headers: dict[str, str] = {}
    rate = call_rate(args)
    make: Callable[[ClientConnection], PhoneCaller]
    if name == "twilio":
        if args.auth_token:
            headers["X-Twilio-Signature"] = twilio.signature(args.auth_token, args.public_url or args.url)
        make, sends = (lambda ws: TwilioCaller(ws, voice=args.voice)), "μ-law 8 kHz"
    elif name == "telnyx":
        if args.auth_token:
            headers[telnyx.AUTH_HEADER] = args.auth_token
        make = lambda ws: TelnyxCaller(ws, voice=args.voice, encoding=args.encoding, rate=rate)  # noqa: E731
        sends = f"{args.encoding} {rate // 1000} kHz ({'stream token' if args.auth_token else 'no stream token'})"
    else:
        authorization = args.authorization
        if args.signature_secret:
            authorization = vonage_jwt(args.signature_secret)
        if authorization:
            headers["Authorization"] = authorization
        make, sends = (lambda ws: VonageCaller(ws, voice=args.voice, rate=rate)), f"binary L16 {rate // 1000} kHz"
    token = None if "Authorization" in headers else args.token

    def dial(pcm: bytes, say: Callable[[str], None]) -> Awaitable[tuple[PhoneCaller, bool]]:
        settle_s = max(2.0, args.trailing_silence)
        return phone_caller.call(
            make,
            args.url,
            pcm,
            headers=headers,
            token=token,
            settle_s=settle_s,
            timeout_s=args.timeout,
            on_progress=say,
        )

    return dial, sends


async def run_gateway(args: argparse.Namespace, *, stderr: TextIO) -> int:
    """One simulated phone call on the gateway ``args`` names; returns the exit status."""
    name = provider(args)
    assert name is not None
    rate = call_rate(args)
    try:
        pcm = load_pcm16(args.wav, rate)
    except (AudioFormatError, OSError) as exc:
        print(f"cannot read {args.wav}: {exc}", file=stderr)
        return EXIT_FAILED
    dial, sends = _dial(args, name)
    print(f"calling {args.url} with {len(pcm) / 2 / rate:.2f} s of {args.wav} ({sends})", file=stderr)
    try:
        caller, settled = await dial(pcm, lambda text: print(text, file=stderr, flush=True))
    except InvalidStatus as exc:
        print(f"error: the server refused the call: HTTP {exc.response.status_code}", file=stderr)
        return EXIT_CONNECT
    except OSError as exc:
        print(f"error: cannot connect to {args.url}: {exc}. Is the server running (python -m agent)?", file=stderr)
        return EXIT_CONNECT
    got = caller.received
    heard = len(got.audio) / 2 / rate
    received = len(got.media_times) * FRAME_MS / 1000
    print(f"call ended: {received:.2f} s of reply audio, {len(got.clears)} clears", file=stderr)
    if args.out is not None:
        write_wav(args.out, bytes(got.audio), rate)
        print(f"saved {heard:.2f} s of reply audio to {args.out}", file=stderr)
    if not settled:
        print(f"timed out after {args.timeout:g} s waiting for the replies", file=stderr)
        return EXIT_TIMEOUT
    return EXIT_OK
