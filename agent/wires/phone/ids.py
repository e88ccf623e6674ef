"""The shapes of the call identifiers and keypresses a phone codec accepts (Twilio, Telnyx, Vonage).

Both end up in log lines, so neither may carry a line break or any other control character: a caller who
could put ``\\nCRITICAL agent.security.auth: ...`` in a ``callSid`` could forge a log line. Providers' ids are narrow
(a Twilio ``callSid`` is ``CA`` and 32 hex digits; Telnyx ids are opaque ``v3:``-prefixed URL-safe base64;
Vonage's are UUIDs), but emulators and tests use short ones, so an id is checked for its alphabet and length
only: 1-128 of ``A-Z a-z 0-9 . _ : + / = -``. A DTMF digit is one of ``0-9 * # A-D``. Anything else is a bad
message (``ProtocolError`` ``bad_message``), dropped and counted like any other.
"""

from __future__ import annotations

import re
from typing import Any, TypeGuard

from agent.errors import ProtocolError

MAX_ID_CHARS = 128
_ID = re.compile(rf"[A-Za-z0-9._:+/=-]{{1,{MAX_ID_CHARS}}}")
DTMF_DIGITS = frozenset("0123456789*#ABCD")


def is_id(value: object) -> TypeGuard[str]:
    """``value`` has the shape of a provider's call or stream id."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def call_id(message: dict[str, Any], key: str, what: str) -> str:
    """The id at ``message[key]``; ``bad_message`` unless it has an id's shape."""
    value = message.get(key)
    if not is_id(value):
        raise ProtocolError("bad_message", f"{what} needs {key!r}: 1-{MAX_ID_CHARS} of A-Z a-z 0-9 . _ : + / = -")
    return value


def dtmf_digit(message: dict[str, Any], key: str, what: str) -> str:
    """The keypress at ``message[key]``; ``bad_message`` unless it is one of ``0-9 * # A-D``."""
    value = message.get(key)
    if not isinstance(value, str) or value not in DTMF_DIGITS:
        raise ProtocolError("bad_message", f"{what} needs a {key!r} of 0-9, *, #, A-D")
    return value
