"""Log hygiene: a peer's text shown safely on one log line, and no credential in any log record.

Changes when what counts as a credential in a log record changes (``redact``'s patterns), or how a value from a
peer is shown (``shown``).

- ``shown(value)``: anything a caller, a gateway or a provider sent (a call id, a keypress, an error detail, a
  voice name) as it goes into a log line: printable, never a line break (so a caller cannot forge a
  ``CRITICAL agent.security.auth:`` line of its own), at most ``MAX_SHOWN_CHARS``.
- ``Redactor``: a ``logging.Filter`` that rewrites any record holding a credential: the values of the
  ``Authorization`` header, of every one ``agent.security.credential_headers`` declares (``Cookie``...) and of
  every one it is handed (``secret_headers``: the wires' own, each phone provider's signature or token, which
  the composition root reads from ``agent.wires.endpoints``; this module knows no wire),
  ``token=``-like pairs (a query string's, a JSON object's, a dict's), bearer tokens and JWTs, in the formatted
  message, the traceback and the stack; a WebSocket frame (``websockets`` logs them at DEBUG, elided in the
  middle, so a token could show only in part) whose whole payload holds one is shown by its size only.
  ``websockets`` writes the request line and every header of a handshake at DEBUG, which is where
  ``?token=`` and ``Authorization`` would otherwise leak.
- ``configure(level, secret_headers=...)``: the one set-up of logging (``agent.__main__``): stderr, the format,
  and the ``Redactor`` on every handler of the root logger (``protect``), whatever the level.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from agent.security.credential_headers import SECRET_HEADERS

MAX_SHOWN_CHARS = 80
REDACTED = "[redacted]"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

_PLAIN = re.compile(r"[\x20-\x7e]*")


def shown(value: object, limit: int = MAX_SHOWN_CHARS, *, quote: bool = False) -> str:
    """``value`` (a string, or its ``str``) for a log line: as it is when it is printable ASCII of at most
    ``limit`` characters (unless ``quote`` is asked, or it starts with a quote and would look escaped); else the
    ``repr`` of its first ``limit`` characters (line breaks and every other unprintable character escaped),
    with ``...`` after it when it was cut."""
    text = value if isinstance(value, str) else str(value)
    if not quote and len(text) <= limit and _PLAIN.fullmatch(text) and not text.startswith(("'", '"')):
        return text
    return repr(text[:limit]) + ("..." if len(text) > limit else "")


_KEYS = (
    r"(?:access_|auth_|stream_auth_|refresh_|id_|session_)?token|api[_-]?key|apikey|(?:client_|signature_)?secret"
    r"|password|passwd|authorization"
)
"""Names of credentials in ``name=value`` pairs and in quoted ``"name": "value"`` pairs."""
_AUTH_LINE = re.compile(r"(?P<name>^(?:[<>] )?authorization)(?P<sep>\s*:\s*)(?P<value>[^\r\n]*)", re.I | re.M)
"""``< Authorization: ...`` as ``websockets`` logs a handshake's header: the rest of the line. (Only at the start
of a line: "an Authorization: Bearer key is required" is prose; ``_SCHEME`` still takes a bearer token there.)"""
_SCHEME = re.compile(r"\b(?P<name>bearer|basic)(?P<sep>\s+)(?P<value>[A-Za-z0-9._~+/=-]{8,})", re.IGNORECASE)
"""``Bearer <token>`` anywhere, even without its header's name."""
_TOKEN = re.compile(
    r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"  # a JWT (a Vonage handshake's)
    r"|\bv1\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # one of our tokens (agent.security.auth)
)


def secret_header_names(secret_headers: Iterable[str] = ()) -> tuple[str, ...]:
    """The headers whose values are redacted: ``credential_headers``' and ``secret_headers`` (lower case, once)."""
    return tuple(dict.fromkeys(name.lower() for name in (*SECRET_HEADERS, *secret_headers)))


@lru_cache(maxsize=16)
def _pairs(headers: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """The patterns of ``name: value`` and ``name=value`` pairs, for these credential headers (never prose)."""
    names = "|".join(re.escape(name) for name in headers)
    quoted = re.compile(
        rf"(?<![\w-])(?P<name>{names}|{_KEYS})(?P<sep>[\"']\s*[:=,]\s*b?[\"'])(?P<value>[^\"'\r\n]*)", re.IGNORECASE
    )  # ``"token": "..."`` (JSON), ``'Authorization': b'...'`` (a dict), ``('Cookie', '...')`` (header pairs)
    header = re.compile(rf"(?<![\w-])(?P<name>{names})(?P<sep>\s*:\s*)(?P<value>[^\"'\r\n]*)", re.IGNORECASE)
    # ``X-Twilio-Signature: ...`` anywhere: up to a quote or the end of the line
    key_value = re.compile(rf"(?<![\w-])(?P<name>{names}|{_KEYS})(?P<sep>=)(?P<value>[^\s&;,\"'#]*)", re.IGNORECASE)
    # ``?token=...&`` (a query string), ``api_key=...`` (keyword arguments, ``key=value`` pairs)
    return (quoted, _AUTH_LINE, header, key_value, _SCHEME)


def _blank_value(match: re.Match[str]) -> str:
    if not match["value"] or match["value"] == REDACTED:
        return match[0]
    return f"{match['name']}{match['sep']}{REDACTED}"


def redact(text: str, secret_headers: Iterable[str] = ()) -> str:
    """``text`` with every credential it shows replaced by ``[redacted]`` (the names stay, to say what it was);
    ``secret_headers``: the wires' own credential headers, besides ``credential_headers``'."""
    return _redact(text, secret_header_names(secret_headers))


def _redact(text: str, headers: tuple[str, ...]) -> str:
    for pattern in _pairs(headers):
        text = pattern.sub(_blank_value, text)
    return _TOKEN.sub(REDACTED, text)


def _payload(arg: object) -> bytes | None:
    """The bytes a log argument carries in full: a bytes-like, or a WebSocket frame's ``data``."""
    data = getattr(arg, "data", arg)
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data)
    return None


def _guarded(arg: object, headers: tuple[str, ...]) -> object:
    """``arg``, or its size alone when its whole payload holds a credential (its display may show only a part)."""
    payload = _payload(arg)
    if payload is None:
        return arg
    text = payload.decode("utf-8", "replace")
    if _redact(text, headers) == text:
        return arg
    opcode = getattr(arg, "opcode", None)
    kind = getattr(opcode, "name", type(arg).__name__)
    return f"{kind} [{len(payload)} bytes holding a credential: not shown]"


class Redactor(logging.Filter):
    """Rewrites a record holding a credential (``redact``, with ``secret_headers``) before any handler formats it;
    passes every record.

    A record that cannot be checked (its arguments do not format, a ``__str__`` raises) is shown by its
    message template only: a log call must never raise, nor a failure let a credential through."""

    def __init__(self, secret_headers: Iterable[str] = ()) -> None:
        super().__init__()
        self.headers = secret_header_names(secret_headers)
        """Every header whose value is redacted (``credential_headers``' and the ones handed over)."""

    def declare(self, secret_headers: Iterable[str]) -> None:
        """Redact these headers' values as well."""
        self.headers = secret_header_names((*self.headers, *secret_headers))

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            self._redact(record)
        except Exception:  # the message could not be read: never show what could not be checked
            record.msg, record.args = f"{_redact(str(record.msg), self.headers)} [arguments not shown]", None
            record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True

    def _redact(self, record: logging.LogRecord) -> None:
        headers = self.headers
        raw = record.args
        args: Any = raw
        guarded = False
        if isinstance(raw, tuple):
            args = tuple(_guarded(arg, headers) for arg in raw)
            guarded = any(new is not old for new, old in zip(args, raw, strict=True))
        elif isinstance(raw, Mapping):
            args = {key: _guarded(value, headers) for key, value in raw.items()}
            guarded = any(args[key] is not value for key, value in raw.items())
        message = str(record.msg) % args if args else str(record.msg)
        safe = _redact(message, headers)
        if guarded or safe != message:
            record.msg, record.args = safe, None
        if record.exc_info and not record.exc_text:
            text = logging.Formatter().formatException(record.exc_info)
            if _redact(text, headers) != text:
                record.exc_text = _redact(text, headers)
        if record.stack_info:
            record.stack_info = _redact(record.stack_info, headers)


def protect(handler: logging.Handler, secret_headers: Iterable[str] = ()) -> None:
    """Install the ``Redactor`` on ``handler`` (once; a second call adds its ``secret_headers`` to it): nothing it
    writes shows a credential. ``secret_headers``: the wires' own (``agent.wires.endpoints.SECRET_HEADERS``)."""
    names = tuple(secret_headers)
    for existing in handler.filters:
        if isinstance(existing, Redactor):
            existing.declare(names)
            return
    handler.addFilter(Redactor(names))


def configure(level: int | str, *, fmt: str = LOG_FORMAT, secret_headers: Iterable[str] = ()) -> None:
    """Logging for a command of ``python -m agent``: records of ``level`` and above to stderr in ``fmt``, every
    handler of the root logger protected (``protect``, with the wires' ``secret_headers``)."""
    names = tuple(secret_headers)
    logging.basicConfig(level=level, format=fmt, stream=sys.stderr)
    for handler in logging.getLogger().handlers:
        protect(handler, names)
    quiet = max(logging.WARNING, logging.getLogger().getEffectiveLevel())
    for chatty in ("httpx", "httpx2", "mcp"):  # a line per request of an MCP tool: the audit line says enough
        logging.getLogger(chatty).setLevel(quiet)
