"""Telnyx's credential: the ``stream_auth_token`` it is given, presented in its header or in the stream URL.

Its one reason to change is how Telnyx authenticates a stream. On when ``AGENT_TELNYX__STREAM_AUTH_TOKEN`` is
set: the token in ``x-telnyx-streaming-auth-token``, else in the URL's ``token`` (TeXML has no header). Telnyx
cannot send our bearer token, so with auth on and no token its calls are refused.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from agent.config import Settings
from agent.runtime.server.responses import single_header
from agent.runtime.server.upgrade import Upgrade
from agent.security.auth import DEFAULT_TENANT, Principal
from agent.wires.phone.credential import ProviderCredential
from agent.wires.phone.telnyx import codec as telnyx

TOKEN = "AGENT_TELNYX__STREAM_AUTH_TOKEN"


def _configured(settings: Settings) -> bool:
    return settings.telnyx.stream_auth_token is not None


def _token(upgrade: Upgrade) -> str | None:
    """The ``stream_auth_token`` in Telnyx's header, else in the URL's ``token``."""
    token = upgrade.settings.telnyx.stream_auth_token
    assert token is not None
    try:
        presented = single_header(upgrade.request.headers, telnyx.AUTH_HEADER)
    except ValueError:
        return f"{telnyx.AUTH_HEADER} repeated"
    if presented is None:
        query = parse_qs(urlsplit(upgrade.request.path).query).get("token", [])
        presented = query[0] if len(query) == 1 else None
    ok = telnyx.valid_auth_token(token.get_secret_value(), presented)
    return None if ok else f"invalid or missing {telnyx.AUTH_HEADER}"


STREAM_TOKEN = ProviderCredential(
    caller=Principal(tenant=DEFAULT_TENANT, scopes=frozenset({"call"}), subject="telnyx"),
    settings=(TOKEN,),
    fix=f"set {TOKEN} (and give Telnyx the same stream_auth_token) so every handshake must carry it",
    sends_bearer=False,
    configured=_configured,
    verify=_token,
)
