"""``python -m clients.cli vonage``: one simulated phone call as a Vonage Voice API WebSocket would place it on
``/vonage`` (binary L16 at ``--phone-rate``; the handshake's Authorization a signed JWT or a custom value).

Reason to change: how Vonage's handshake is authorised or its caller is made.
"""

from __future__ import annotations

import argparse

from clients.cli.gateway import Dialing, Gateway, gateway_command
from clients.cli.options import Fail
from clients.vonage_client import VonageCaller, vonage_jwt


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--phone-rate",
        type=int,
        choices=(8000, 16000),
        default=None,
        help="the call's sample rate (default: 16000)",
    )
    parser.add_argument(
        "--signature-secret",
        default=None,
        help="send Authorization: Bearer <JWT> signed with this Vonage signature secret",
    )
    parser.add_argument(
        "--authorization", default=None, help="send this Authorization value verbatim (custom authorization)"
    )


def check(args: argparse.Namespace, fail: Fail) -> None:
    if args.signature_secret and args.authorization:
        fail("--signature-secret and --authorization both set the Authorization header: choose one")


def rate(args: argparse.Namespace) -> int:
    return int(args.phone_rate or 16000)


def dialing(args: argparse.Namespace, rate: int) -> Dialing:
    authorization = vonage_jwt(args.signature_secret) if args.signature_secret else args.authorization
    headers = {"Authorization": authorization} if authorization else {}
    return Dialing(lambda ws: VonageCaller(ws, voice=args.voice, rate=rate), f"binary L16 {rate // 1000} kHz", headers)


GATEWAY = Gateway("vonage", rate=rate, dialing=dialing)

COMMAND = gateway_command(
    GATEWAY,
    help="act as a Vonage Voice API WebSocket on /vonage (binary L16, --phone-rate)",
    description=(
        "Play a phone call as a Vonage Voice API WebSocket would, against /vonage: binary L16 at --phone-rate. "
        "--signature-secret signs the handshake's JWT (NCCO authorization type vonage), --authorization sends a "
        "custom value. The reply audio, at the call's rate, goes to --out."
    ),
    add_arguments=add_arguments,
    check=check,
    examples="""\
  python -m clients.cli vonage --wav question.wav --out reply.wav                  # L16 16 kHz
  python -m clients.cli vonage --signature-secret "$SECRET" --url wss://agent.example.com/vonage --wav q.wav
""",
)
