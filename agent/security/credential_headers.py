"""The headers that carry a credential: each name written here once, for the protocol and the log filter.

Its one reason to change is a credential header added or renamed. A protocol that checks one takes its name from
here (Telnyx's ``AUTH_HEADER`` in ``agent.wires.phone.telnyx.codec``, Twilio's in
``agent.wires.phone.twilio.credential``), and the log filter (``agent.security.logsafe``) redacts the value of
every header in ``SECRET_HEADERS``: a protocol's secret header is kept out of the logs by being declared here, never
by a copy of its name. It imports nothing, so the wires and the log filter, a band below them, can both read it.
``Authorization`` is not listed: a name that also occurs in prose, the log filter matches it on its own terms.
"""

from __future__ import annotations

TWILIO_SIGNATURE = "X-Twilio-Signature"
"""A Twilio Media Streams handshake's HMAC of the URL called."""
TELNYX_STREAM_TOKEN = "x-telnyx-streaming-auth-token"
"""The handshake header carrying the ``stream_auth_token`` given to Telnyx when the stream was started."""

SECRET_HEADERS: tuple[str, ...] = (
    "Proxy-Authorization",
    TWILIO_SIGNATURE,
    TELNYX_STREAM_TOKEN,
    "Set-Cookie",
    "Cookie",
    "X-Api-Key",
    "X-Amz-Security-Token",
)
"""Headers whose name is never prose: their value is redacted wherever ``Name: value`` shows in a log record."""
