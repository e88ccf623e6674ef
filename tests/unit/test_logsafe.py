"""Log hygiene (``agent.security.logsafe``): a peer's text stays on one line, and no credential reaches a log handler.

Records go through a real ``logging.Handler`` protected exactly as ``agent.__main__`` protects its handlers
(``logsafe.protect``, handed the wires' own secret headers: ``agent.wires.endpoints.SECRET_HEADERS``); frames
are the ``websockets`` library's own ``Frame`` objects, as it logs them at DEBUG.
"""

from __future__ import annotations

import logging
import sys

import pytest
from websockets.frames import Frame, Opcode

from agent.security import logsafe
from agent.security.logsafe import REDACTED, redact, shown
from agent.wires.endpoints import SECRET_HEADERS

SECRET = "SECRETVALUE0123456789"


class Collect(logging.Handler):
    """Keeps each record's formatted text, as a stream handler would write it."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def protected() -> Collect:
    handler = Collect()
    logsafe.protect(handler, SECRET_HEADERS)
    return handler


def record(msg: str, *args: object, exc: bool = False, stack: str | None = None) -> logging.LogRecord:
    exc_info = sys.exc_info() if exc else None
    made = logging.LogRecord("websockets.server", logging.DEBUG, __file__, 1, msg, args or None, exc_info)
    made.stack_info = stack
    return made


# --- shown: a peer's value on one line -------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["CA0123456789abcdef0123456789abcdef", "v3:abc-_/+=", "5", "Unknown error"])
def test_plain_values_are_shown_as_they_are(value: str) -> None:
    assert shown(value) == value


@pytest.mark.parametrize(
    "value",
    ["CA1\nCRITICAL agent.security.auth: forged", "a\rb", "x\x1b[2J", "caf\u00e9", "line\u2028sep", "'quoted'", "\x00"],
)
def test_anything_else_is_escaped_onto_one_printable_line(value: str) -> None:
    text = shown(value)
    assert text.isprintable() and "\n" not in text and "\r" not in text
    assert text == repr(value)


def test_long_values_are_cut() -> None:
    assert shown("x" * 500) == repr("x" * logsafe.MAX_SHOWN_CHARS) + "..."
    assert shown("y" * 10, limit=4) == "'yyyy'..."


def test_quote_always_quotes_and_non_strings_are_shown_by_their_text() -> None:
    assert shown("alice", quote=True) == "'alice'"
    assert shown(42) == "42"
    assert shown(ValueError("bad\nthing")) == repr("bad\nthing")


# --- redact: a credential in any shape is gone, its name stays -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (f"< Authorization: Bearer {SECRET}", "< Authorization: "),
        (f"> authorization: {SECRET}", "> authorization: "),
        (f"Authorization: Basic {SECRET}", "Authorization: "),
        (f"< GET /telnyx?token={SECRET} HTTP/1.1", "/telnyx?token="),
        (f"< GET /telnyx?voice=a&token={SECRET}&x=1 HTTP/1.1", "&x=1 HTTP/1.1"),
        (f"< X-Twilio-Signature: {SECRET}=", "X-Twilio-Signature: "),
        (f"< x-telnyx-streaming-auth-token: {SECRET}", "x-telnyx-streaming-auth-token: "),
        (f"< Cookie: session={SECRET}; other=1", "Cookie: "),
        (f'{{"type": "session.start", "token": "{SECRET}"}}', '"token": "'),
        (f"{{'Authorization': b'AWS4-HMAC-SHA256 Credential=AKIA/x, Signature={SECRET}'}}", "'Authorization': b'"),
        (f"[('Authorization', 'Bearer {SECRET}')]", "('Authorization', '"),
        (f"connecting with api_key={SECRET} model=x", " model=x"),
        (f"refused: header was Bearer {SECRET}", "header was Bearer "),
        (f"eyJhbGciOiJIUzI1NiJ9.eyJpYXQiOjF9.{SECRET}", ""),
        (f"token v1.eyJ0ZW4iOiJkZWZhdWx0In0.{SECRET}", "token "),
    ],
)
def test_credentials_are_redacted(text: str, kept: str) -> None:
    safe = redact(text, SECRET_HEADERS)
    assert SECRET not in safe and REDACTED in safe and kept in safe


@pytest.mark.parametrize(
    "text",
    [
        "refused a /v1/realtime handshake: an Authorization: Bearer key is required",
        "refused a /twilio handshake: invalid X-Twilio-Signature",
        "/twilio needs a bearer token (AGENT_TWILIO__AUTH_TOKEN is set but empty (treated as unset))",
        "set AGENT_VONAGE__SIGNATURE_SECRET (NCCO authorization type vonage) or AGENT_VONAGE__AUTHORIZATION",
        'max_tokens=400 "max_tokens": 400',
        "turn 3: 412 ms to first audio",
    ],
)
def test_prose_is_left_alone(text: str) -> None:
    assert redact(text, SECRET_HEADERS) == text


# --- the filter on records ---------------------------------------------------------------------------------------


def test_a_header_and_a_request_line_as_websockets_logs_them() -> None:
    handler = protected()
    handler.handle(record("< %s: %s", "Authorization", f"Bearer {SECRET}"))
    handler.handle(record("< %s %s %s", "GET", f"/telnyx?token={SECRET}", "HTTP/1.1"))
    assert handler.lines == [
        f"DEBUG websockets.server: < Authorization: {REDACTED}",
        f"DEBUG websockets.server: < GET /telnyx?token={REDACTED} HTTP/1.1",
    ]


def test_a_frame_holding_a_token_is_shown_by_its_size_even_where_its_display_is_elided() -> None:
    text = '{"type": "session.start", "sample_rate": 16000, "voice": null, "padding": "' + "p" * 400
    text += f'", "token": "v1.payload.{SECRET}"}}'
    frame = Frame(Opcode.TEXT, text.encode())
    assert SECRET[-10:] in str(frame) and '"token"' not in str(frame)  # only the tail shows: no name to go by
    handler = protected()
    handler.handle(record("< %s", frame))
    (line,) = handler.lines
    assert SECRET[-10:] not in line and f"TEXT [{len(text)} bytes holding a credential: not shown]" in line
    plain = Frame(Opcode.TEXT, b'{"type": "input_audio_buffer.commit"}')
    handler.handle(record("< %s", plain))
    assert handler.lines[-1].endswith(str(plain))


def test_mapping_arguments_tracebacks_and_stacks_are_redacted() -> None:
    handler = protected()
    handler.handle(record("%(header)s", {"header": f"Authorization: Bearer {SECRET}"}))
    try:
        raise ValueError(f"bad header x-telnyx-streaming-auth-token: {SECRET}")
    except ValueError:
        handler.handle(record("handshake failed", exc=True, stack=f"stack with token={SECRET}"))
    assert len(handler.lines) == 2 and all(SECRET not in line for line in handler.lines)
    assert "Traceback" in handler.lines[1] and "ValueError" in handler.lines[1]


def test_a_record_without_a_credential_is_untouched() -> None:
    handler = protected()
    args = ("twilio", "CA1", "5")
    kept = record("%s call %s: DTMF %s", *args)
    handler.handle(kept)
    assert kept.msg == "%s call %s: DTMF %s" and kept.args == args
    assert handler.lines == ["DEBUG websockets.server: twilio call CA1: DTMF 5"]


def test_a_record_that_cannot_be_formatted_is_still_logged_without_its_arguments() -> None:
    class Unprintable:
        def __str__(self) -> str:
            raise RuntimeError(SECRET)

    handler = protected()
    handler.handle(record("value %s", Unprintable()))
    handler.handle(record("two %s %s", f"token={SECRET}"))  # too few arguments
    assert len(handler.lines) == 2 and all("[arguments not shown]" in line for line in handler.lines)
    assert all(SECRET not in line for line in handler.lines)


def test_protect_installs_one_filter() -> None:
    handler = protected()
    logsafe.protect(handler)
    assert sum(isinstance(f, logsafe.Redactor) for f in handler.filters) == 1


def test_the_wires_declare_their_own_secret_headers_and_the_filter_takes_them_as_handed() -> None:
    # The phone providers' headers are named in their wires (security sits below them and imports none).
    assert {"x-twilio-signature", "x-telnyx-streaming-auth-token"} <= {name.lower() for name in SECRET_HEADERS}
    line = f"< x-telnyx-streaming-auth-token: {SECRET}"
    assert SECRET in redact(line)  # not handed over: the filter cannot know a wire's header
    assert SECRET not in redact(line, SECRET_HEADERS)
    handler = Collect()
    logsafe.protect(handler)
    logsafe.protect(handler, SECRET_HEADERS)  # a second call adds the headers to the one filter
    handler.handle(record("< %s: %s", "X-Twilio-Signature", SECRET))
    assert handler.lines == [f"DEBUG websockets.server: < X-Twilio-Signature: {REDACTED}"]
    assert sum(isinstance(f, logsafe.Redactor) for f in handler.filters) == 1
