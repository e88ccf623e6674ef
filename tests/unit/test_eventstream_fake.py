from __future__ import annotations

from botocore.eventstream import EventStreamBuffer

from testing.emulators.eventstream import event, exception


def test_botocore_decodes_our_frames() -> None:
    buf = EventStreamBuffer()
    buf.add_data(event("PayloadPart", b"\x01\x02\x03", "application/octet-stream"))
    buf.add_data(exception("ModelStreamError", b'{"Message":"boom"}'))
    first, second = list(buf)
    assert first.headers[":event-type"] == "PayloadPart" and first.payload == b"\x01\x02\x03"
    assert second.headers[":message-type"] == "exception"
    assert second.headers[":exception-type"] == "ModelStreamError"
    assert second.payload == b'{"Message":"boom"}'
