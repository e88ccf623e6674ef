"""Secure by default: may the server start with these settings, and what should the operator be told?

Pure (settings in, sentences out). ``python -m agent`` refuses to start (exit code 2) on any refusal:
a non-loopback address with auth off, which also leaves the phone gateways (``/twilio``, ``/telnyx``,
``/vonage``) open unless their provider's credential is set; an AudioSocket listener whose
allowed peers include everyone (``0.0.0.0/0``: AudioSocket has no authentication of its own).
``AGENT_AUTH__ALLOW_ANONYMOUS=true`` turns the refusals into warnings, for a trusted network.

A credential given empty or blank (``AGENT_TWILIO__AUTH_TOKEN=``) is unset (``agent.config.WithSecrets``), and
every sentence about it says it was set but empty, so that a forgotten value is not mistaken for a check.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from agent.config import Settings, WithSecrets

MAKE_SECRET = "python -c 'import secrets; print(secrets.token_urlsafe(48))'"


def is_loopback(host: str) -> bool:
    """Only this machine can connect: ``localhost``, 127.0.0.0/8, ``::1``. Wildcards and names are not."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class Exposure:
    refusals: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Gateway:
    """A phone gateway path and what makes its provider's handshakes verifiable."""

    path: str
    signed: bool
    setting: str
    """The setting that turns the provider's check on, as the operator writes it."""
    missing: str
    """Why the check is off: ``AGENT_TWILIO__AUTH_TOKEN is not set`` (or ``is set but empty ...``)."""
    blank: tuple[str, ...]
    """Its settings given empty or blank, which ``missing`` names."""
    fix: str
    """How to set them (a clause after ``Fix:``)."""
    sends_bearer: bool
    """The provider can be told to send our bearer token (so auth on is enough to take its calls)."""


def env_name(section: str, field: str) -> str:
    """``("twilio", "auth_token")`` -> ``AGENT_TWILIO__AUTH_TOKEN``."""
    return f"AGENT_{section}__{field}".upper()


def blank_secrets(settings: Settings) -> list[str]:
    """The credentials given empty or blank (now unset), as the operator writes them."""
    names = []
    for section in type(settings).model_fields:
        value = getattr(settings, section)
        if isinstance(value, WithSecrets):
            names += [env_name(section, field) for field in value.secret_fields() if field in value.blank_secrets]
    return names


def _missing(setting: str, names: tuple[str, ...], blank: list[str]) -> tuple[str, tuple[str, ...]]:
    """Why a gateway's check is off, naming ``setting``, or the ones of ``names`` that were given empty."""
    given_empty = tuple(name for name in names if name in blank)
    if not given_empty:
        return f"{setting} is not set", ()
    verb = "is" if len(given_empty) == 1 else "are"
    return f"{' and '.join(given_empty)} {verb} set but empty (treated as unset)", given_empty


def _gateways(settings: Settings, blank: list[str]) -> list[_Gateway]:
    vonage = settings.vonage
    twilio_token, telnyx_token = "AGENT_TWILIO__AUTH_TOKEN", "AGENT_TELNYX__STREAM_AUTH_TOKEN"
    vonage_secret, vonage_custom = "AGENT_VONAGE__SIGNATURE_SECRET", "AGENT_VONAGE__AUTHORIZATION"
    return [
        _Gateway(
            "/twilio",
            settings.twilio.auth_token is not None,
            twilio_token,
            *_missing(twilio_token, (twilio_token,), blank),
            f"set {twilio_token} (and AGENT_TWILIO__PUBLIC_URL) so every handshake must carry Twilio's signature",
            False,
        ),
        _Gateway(
            "/telnyx",
            settings.telnyx.stream_auth_token is not None,
            telnyx_token,
            *_missing(telnyx_token, (telnyx_token,), blank),
            f"set {telnyx_token} (and give Telnyx the same stream_auth_token) so every handshake must carry it",
            False,
        ),
        _Gateway(
            "/vonage",
            vonage.signature_secret is not None or vonage.authorization is not None,
            vonage_secret,
            *_missing(vonage_secret, (vonage_secret, vonage_custom), blank),
            f"set {vonage_secret} (NCCO authorization type vonage) or {vonage_custom} (type custom) so every "
            "handshake must carry it",
            True,
        ),
    ]


def check_exposure(settings: Settings) -> Exposure:
    host = settings.server.host
    auth_on = settings.auth.secret is not None
    exposed = not is_loopback(host)
    allowed = settings.auth.allow_anonymous
    refusals: list[str] = []
    warnings: list[str] = []
    if exposed and not auth_on:
        problem = (
            f"auth is off (AGENT_AUTH__SECRET is not set) while listening on {host!r}, an address other "
            "machines can reach: anyone who reaches it can hold conversations, enrol and list voices and "
            "spend your cloud credits"
        )
        if allowed:
            warnings.append(f"{problem} (allowed by AGENT_AUTH__ALLOW_ANONYMOUS=true)")
        else:
            refusals.append(
                f"{problem}. Fix: set AGENT_AUTH__SECRET to a random value of 32+ bytes ({MAKE_SECRET}) "
                "and give callers tokens (python -m agent tokens mint ...), or listen on 127.0.0.1, or, on a "
                "trusted network only, set AGENT_AUTH__ALLOW_ANONYMOUS=true"
            )
    blank = blank_secrets(settings)
    told: set[str] = set()
    for gateway in _gateways(settings, blank):
        if not gateway.signed and _open_gateway(gateway, host, exposed, auth_on, allowed, refusals, warnings):
            told.update(gateway.blank)
    warnings += [
        f"{name} is set but empty: treated as unset (give it its value, or remove the line)"
        for name in blank
        if name not in told
    ]
    _audiosocket(settings, refusals, warnings)
    return Exposure(refusals=refusals, warnings=warnings)


def _open_gateway(
    gateway: _Gateway,
    host: str,
    exposed: bool,
    auth_on: bool,
    allowed: bool,
    refusals: list[str],
    warnings: list[str],
) -> bool:
    """A gateway whose provider's credential is not configured: open with auth off, bearer-only with it on.
    Returns whether a refusal or warning said so (naming the settings given empty, if any)."""
    path, setting, missing = gateway.path, gateway.setting, gateway.missing
    if exposed and not auth_on:
        problem = f"{path} is open on {host!r}: {missing}, so any client can place calls there"
        if allowed:
            warnings.append(f"{problem} (allowed by AGENT_AUTH__ALLOW_ANONYMOUS=true)")
        else:
            refusals.append(
                f"{problem}. Fix: {gateway.fix}, or set AGENT_AUTH__SECRET (then {path} needs a bearer token)"
            )
    elif not auth_on:
        warnings.append(
            f"{path} is open: {missing}, so anyone who can reach this server can place calls there "
            f"(fine for local tests; set it before exposing {path} through a tunnel)"
        )
    elif not gateway.sends_bearer:
        provider = path.strip("/").capitalize()
        warnings.append(
            f"{path} needs a bearer token ({missing}); {provider} itself cannot send one, so set "
            f"{setting} to take phone calls"
        )
    else:
        return False
    return True


def _audiosocket(settings: Settings, refusals: list[str], warnings: list[str]) -> None:
    """AudioSocket has no authentication: the peer's address is all there is (``audiosocket.allowed_peers``)."""
    cfg = settings.audiosocket
    if cfg.port is None or is_loopback(cfg.host):
        return  # off, or only this machine can connect
    networks = [ipaddress.ip_network(peer, strict=False) for peer in cfg.allowed_peers]
    everyone = [str(net) for net in networks if net.prefixlen == 0]
    if everyone:
        problem = (
            f"AGENT_AUDIOSOCKET__ALLOWED_PEERS lets everyone in ({', '.join(everyone)}): AudioSocket has no "
            "authentication, so anyone who reaches the port can place calls and spend your cloud credits"
        )
        if settings.auth.allow_anonymous:
            warnings.append(f"{problem} (allowed by AGENT_AUTH__ALLOW_ANONYMOUS=true)")
        else:
            refusals.append(
                f'{problem}. Fix: list only your Asterisk servers\' addresses (e.g. ["10.0.0.5"]), or, on a '
                "trusted network only, set AGENT_AUTH__ALLOW_ANONYMOUS=true"
            )
    public = [str(net) for net in networks if net.prefixlen and not (net.is_private or net.is_loopback)]
    if public:
        warnings.append(
            f"AudioSocket peers on public addresses ({', '.join(public)}): its audio is neither encrypted nor "
            "authenticated; carry it over a VPN or a private network"
        )
    if not networks:
        warnings.append(
            f"AudioSocket listens on {cfg.host!r} but AGENT_AUDIOSOCKET__ALLOWED_PEERS is empty: only this machine "
            "may call; list your Asterisk servers' addresses there"
        )
