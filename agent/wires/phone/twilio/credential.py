"""Twilio's credential: every Media Streams handshake carries ``X-Twilio-Signature``, an HMAC of the URL called.

Its one reason to change is how Twilio signs a stream. On when ``AGENT_TWILIO__AUTH_TOKEN`` is set; the signature
must match the public URL Twilio called (``AGENT_TWILIO__PUBLIC_URL``, else ``wss://Host`` and the path). Twilio
cannot send our bearer token, so with auth on and no token its calls are refused.
"""

from __future__ import annotations

from agent.config import Settings
from agent.runtime.server.responses import single_header
from agent.runtime.server.upgrade import Upgrade
from agent.security.auth import TWILIO_CALLER
from agent.wires.phone.credential import ProviderCredential
from agent.wires.phone.twilio import codec as twilio

TOKEN = "AGENT_TWILIO__AUTH_TOKEN"
TWILIO_SIGNATURE = "X-Twilio-Signature"
"""A Twilio Media Streams handshake's HMAC of the URL called (a secret: its row in ``agent.wires.endpoints``
declares it, so the log filter redacts it)."""


def _configured(settings: Settings) -> bool:
    return settings.twilio.auth_token is not None


def _signed(upgrade: Upgrade) -> str | None:
    """The signature matches the public URL Twilio called (``public_url``, else ``wss://Host/<path>``)."""
    cfg = upgrade.settings.twilio
    token = cfg.auth_token
    assert token is not None
    try:
        host = single_header(upgrade.request.headers, "Host") or ""
        signature = single_header(upgrade.request.headers, TWILIO_SIGNATURE)
    except ValueError:
        return f"invalid {TWILIO_SIGNATURE}"
    url = cfg.public_url or f"wss://{host}{upgrade.path}"
    return None if twilio.valid_signature(token.get_secret_value(), url, signature) else f"invalid {TWILIO_SIGNATURE}"


SIGNATURE = ProviderCredential(
    caller=TWILIO_CALLER,
    settings=(TOKEN,),
    fix=f"set {TOKEN} (and AGENT_TWILIO__PUBLIC_URL) so every handshake must carry Twilio's signature",
    sends_bearer=False,
    configured=_configured,
    verify=_signed,
)
