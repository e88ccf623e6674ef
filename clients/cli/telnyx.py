"""``python -m clients.cli telnyx``: one simulated phone call as Telnyx media streaming would place it on
``/telnyx`` (PCMU, PCMA or L16; the ``stream_auth_token`` presented on the handshake).

Reason to change: Telnyx's codecs or how its handshake is authenticated.
"""

from __future__ import annotations

import argparse

from agent.audio.codecs import G711_RATE
from agent.wires.phone.telnyx import codec as telnyx
from clients.cli.gateway import Dialing, Gateway, gateway_command
from clients.cli.options import Fail
from clients.telnyx_client import TelnyxCaller


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--encoding",
        choices=("PCMU", "PCMA", "L16"),
        default="PCMU",
        help="the stream's codec (PCMU and PCMA are 8 kHz; L16 takes --phone-rate) (default: PCMU)",
    )
    parser.add_argument(
        "--phone-rate",
        type=int,
        choices=(8000, 16000),
        default=None,
        help="--encoding L16: the call's sample rate (default: 16000)",
    )
    parser.add_argument("--auth-token", default=None, help="the stream_auth_token to present on the handshake")


def check(args: argparse.Namespace, fail: Fail) -> None:
    if args.phone_rate is not None and args.encoding != "L16":
        fail("--phone-rate is for --encoding L16 (G.711 is 8 kHz)")


def rate(args: argparse.Namespace) -> int:
    """G.711 is 8 kHz; L16 takes ``--phone-rate`` (default 16 kHz)."""
    return int(args.phone_rate or 16000) if args.encoding == "L16" else G711_RATE


def dialing(args: argparse.Namespace, rate: int) -> Dialing:
    headers = {telnyx.AUTH_HEADER: args.auth_token} if args.auth_token else {}
    token = "stream token" if args.auth_token else "no stream token"
    return Dialing(
        lambda ws: TelnyxCaller(ws, voice=args.voice, encoding=args.encoding, rate=rate),
        f"{args.encoding} {rate // 1000} kHz ({token})",
        headers,
    )


GATEWAY = Gateway("telnyx", rate=rate, dialing=dialing)

COMMAND = gateway_command(
    GATEWAY,
    help="act as Telnyx media streaming on /telnyx (--encoding, default PCMU 8 kHz)",
    description=(
        "Play a phone call as Telnyx media streaming would, against /telnyx, in --encoding (PCMU, PCMA or "
        "L16 at --phone-rate); --auth-token is the stream_auth_token presented on the handshake. The reply "
        "audio, at the call's rate, goes to --out."
    ),
    add_arguments=add_arguments,
    check=check,
    examples="""\
  python -m clients.cli telnyx --wav question.wav --out reply.wav                  # PCMU 8 kHz
  python -m clients.cli telnyx --encoding L16 --phone-rate 16000 --wav question.wav --out reply.wav
""",
)
