"""The phone gateways' settings: Twilio, Telnyx, Vonage (``AGENT_TWILIO__*`` ...) and Asterisk AudioSocket
(``AGENT_AUDIOSOCKET__*``); see docs/telephony.md.

Reason to change: a phone gateway gains or loses a credential or a pacing option.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr, field_validator

from agent.config.addresses import cidrs
from agent.config.credentials import WithSecrets


class TwilioSettings(WithSecrets):
    """The phone gateway at ``/twilio`` (Twilio Media Streams); see docs/telephony.md."""

    auth_token: SecretStr | None = Field(
        None, description="Twilio auth token; when set, X-Twilio-Signature is verified on every handshake."
    )
    public_url: str = Field(
        "",
        description="The exact public wss:// URL Twilio connects to (signed by Twilio); empty = ws://HOST:PORT/twilio.",
    )
    lead_ms: int = Field(100, ge=20, le=2000, description="Reply audio sent ahead of real time to the caller.")


class TelnyxSettings(WithSecrets):
    """The phone gateway at ``/telnyx`` (Telnyx media streaming); see docs/telephony.md."""

    stream_auth_token: SecretStr | None = Field(
        None,
        description="The stream_auth_token given to Telnyx when the stream starts; when set, every handshake "
        "must carry it (header x-telnyx-streaming-auth-token, or ?token= in the stream URL for TeXML).",
    )
    lead_ms: int = Field(100, ge=20, le=2000, description="Reply audio sent ahead of real time to the caller.")


class VonageSettings(WithSecrets):
    """The phone gateway at ``/vonage`` (Vonage Voice API WebSockets); see docs/telephony.md."""

    signature_secret: SecretStr | None = Field(
        None,
        description="Vonage signature secret; when set, every handshake must carry Authorization: Bearer <JWT> "
        "signed with it (NCCO endpoint authorization type vonage).",
    )
    authorization: SecretStr | None = Field(
        None,
        description="When set, every handshake must carry exactly this Authorization header value (NCCO endpoint "
        "authorization type custom).",
    )
    max_token_age_s: int = Field(300, ge=10, le=86400, description="Oldest JWT (its iat) accepted at a handshake.")
    lead_ms: int = Field(100, ge=20, le=2000, description="Reply audio sent ahead of real time to the caller.")


class AudioSocketSettings(BaseModel):
    """The Asterisk AudioSocket gateway (TCP, no authentication of its own); see docs/telephony.md.

    Off unless ``port`` is set. Only loopback peers and the ``allowed_peers`` may connect."""

    port: int | None = Field(
        None, ge=0, le=65535, description="TCP port to listen on; unset = no AudioSocket listener (0 = a free port)."
    )
    host: str = Field("127.0.0.1", description="Address to listen on (another one needs allowed_peers).")
    allowed_peers: list[str] = Field(
        default_factory=list,
        description="Addresses or networks (CIDR) of the Asterisk servers allowed to connect, besides loopback; "
        "a connection from anywhere else is closed before a byte is read.",
    )
    voice: str = Field("", description="Voice the calls are answered in; empty = tts.default_voice.")
    lead_ms: int = Field(100, ge=20, le=2000, description="Reply audio sent ahead of real time to Asterisk.")

    @field_validator("port", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("allowed_peers")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        return cidrs(value)
