"""The phone gateways' commands as one table: which gateway a parsed command line names, and its call's rate.

Reason to change: a phone gateway is added to the client.
"""

from __future__ import annotations

import argparse

from clients.cli import telnyx, twilio, vonage
from clients.cli.gateway import Gateway
from clients.cli.options import Command

GATEWAYS: dict[str, Gateway] = {g.name: g for g in (twilio.GATEWAY, telnyx.GATEWAY, vonage.GATEWAY)}
COMMANDS: tuple[Command, ...] = (twilio.COMMAND, telnyx.COMMAND, vonage.COMMAND)
PROVIDERS: tuple[str, ...] = tuple(GATEWAYS)


def provider(args: argparse.Namespace) -> str | None:
    """The gateway the command line asks for (``twilio``, ``telnyx``, ``vonage``), if any."""
    name: str = args.command
    return name if name in GATEWAYS else None


def call_rate(args: argparse.Namespace) -> int:
    """The call's sample rate: Twilio and G.711 are 8 kHz; L16 and Vonage take ``--phone-rate``."""
    name = provider(args)
    if name is None:
        raise ValueError(f"{args.command} is not a phone gateway")
    return GATEWAYS[name].rate(args)
