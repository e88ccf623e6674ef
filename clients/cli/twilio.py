"""``python -m clients.cli twilio``: one simulated phone call as Twilio Media Streams would place it on
``/twilio`` (μ-law 8 kHz ``media``, ``mark`` echoed as the reply "plays", ``clear`` honoured).

Reason to change: how Twilio's handshake is signed or its caller is made.
"""

from __future__ import annotations

import argparse

from agent.wires.phone.twilio import codec as twilio
from clients.cli.gateway import Dialing, Gateway, gateway_command
from clients.twilio_client import TwilioCaller


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--auth-token", default=None, help="sign the handshake (X-Twilio-Signature) with this Twilio auth token"
    )
    parser.add_argument(
        "--public-url", default=None, help="the public URL to sign (default: --url), as the server sees it"
    )


def dialing(args: argparse.Namespace, rate: int) -> Dialing:
    headers = {}
    if args.auth_token:
        headers["X-Twilio-Signature"] = twilio.signature(args.auth_token, args.public_url or args.url)
    return Dialing(lambda ws: TwilioCaller(ws, voice=args.voice), "μ-law 8 kHz", headers)


GATEWAY = Gateway("twilio", rate=lambda args: twilio.RATE, dialing=dialing)

COMMAND = gateway_command(
    GATEWAY,
    help="act as a Twilio Media Streams caller on /twilio (μ-law 8 kHz)",
    description=(
        "Play a phone call as Twilio Media Streams would, against /twilio: μ-law 8 kHz media, mark echoes as "
        "the reply plays, clear honoured. With --auth-token the handshake is signed (X-Twilio-Signature) for "
        "--public-url. The reply audio (8 kHz) goes to --out."
    ),
    add_arguments=add_arguments,
    examples="""\
  python -m clients.cli twilio --wav question.wav --out reply.wav
  python -m clients.cli twilio --url wss://agent.example.com/twilio --auth-token "$TOKEN" --wav q.wav
""",
)
