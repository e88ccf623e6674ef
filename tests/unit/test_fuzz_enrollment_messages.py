"""Fuzzing the enrollment exchange at the codec level: any sequence of ``voice.enroll.*`` / ``voices.*``
messages decodes message by message to an enrollment message or a ``ProtocolError``, and an upload cut
into base64 chunks the documented way is reassembled byte for byte."""

from __future__ import annotations

import base64
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agent.errors import ProtocolError
from agent.wires.browser import codec as browser
from tests.fuzzing import JSON_VALUES, budget

ENROLL_CODES = {"bad_json", "bad_message", "bad_name", "consent_required", "unauthorized", "unknown_type"}


def begin_messages() -> st.SearchStrategy[dict[str, Any]]:
    text = st.text(max_size=30) | JSON_VALUES
    return st.fixed_dictionaries(
        {"type": st.just("voice.enroll.begin")},
        optional={
            "name": text,
            "consent": text,
            "size": st.integers(min_value=-5, max_value=20 * 1024 * 1024) | JSON_VALUES,
            "transcript": text,
            "language": text,
            "speaker": text | st.text(min_size=190, max_size=210),
            "token": text | st.text(min_size=4090, max_size=4100),
        },
    )


def chunk_messages() -> st.SearchStrategy[dict[str, Any]]:
    good = st.binary(max_size=300).map(lambda b: base64.b64encode(b).decode())
    odd = st.text(alphabet="ABCDabcd0123+/=-_ \n\u00e9", max_size=40)
    return st.fixed_dictionaries({"type": st.just("voice.enroll.chunk")}, optional={"data": good | odd | JSON_VALUES})


MESSAGES = st.one_of(
    begin_messages(),
    chunk_messages(),
    st.fixed_dictionaries({"type": st.sampled_from(["voice.enroll.end", "voice.enroll.cancel", "voice.enroll.x"])}),
    st.fixed_dictionaries({"type": st.just("voices.list")}, optional={"token": JSON_VALUES}),
    st.fixed_dictionaries({"type": st.just("voices.remove")}, optional={"name": JSON_VALUES, "token": JSON_VALUES}),
)


@given(st.lists(MESSAGES, max_size=12))
@budget(500)
def test_any_sequence_of_enrollment_messages(sequence: list[dict[str, Any]]) -> None:
    for body in sequence:
        try:
            message = browser.decode_text(json.dumps(body))
        except ProtocolError as exc:
            assert exc.code in ENROLL_CODES, exc.code
            continue
        assert isinstance(message, browser.EnrollmentMessage)
        if isinstance(message, browser.EnrollChunk):
            assert message.data == base64.b64decode(body["data"], validate=True)
        if isinstance(message, browser.EnrollBegin):
            assert message.size == body["size"] and message.size > 0


@given(st.binary(min_size=1, max_size=20_000), st.integers(min_value=1, max_value=4096))
@budget(200)
def test_an_upload_in_chunks_is_reassembled_exactly(upload: bytes, chunk_bytes: int) -> None:
    begin = browser.decode_text(
        json.dumps({"type": "voice.enroll.begin", "name": "a", "consent": "y", "size": len(upload)})
    )
    assert isinstance(begin, browser.EnrollBegin)
    received = b""
    for start in range(0, len(upload), chunk_bytes):
        data = base64.b64encode(upload[start : start + chunk_bytes]).decode()
        chunk = browser.decode_text(json.dumps({"type": "voice.enroll.chunk", "data": data}))
        assert isinstance(chunk, browser.EnrollChunk)
        received += chunk.data
    assert received == upload and len(received) == begin.size
    assert browser.decode_text('{"type":"voice.enroll.end"}') == browser.EnrollEnd()
