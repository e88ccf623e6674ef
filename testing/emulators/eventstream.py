"""AWS event-stream framing (``application/vnd.amazon.eventstream``): the encoder botocore lacks.

A message is: total length (4 bytes), headers length (4), CRC32 of those 8 bytes (4), headers, payload,
CRC32 of everything before it (4). Every header used here is a string (type 7). Emulators use this to
speak the real wire format of SageMaker ``InvokeEndpointWithResponseStream`` and Bedrock
``ConverseStream``; botocore's own decoder reads it on the client side.
"""

from __future__ import annotations

import struct
import zlib

_STRING = 7


def _headers(headers: dict[str, str]) -> bytes:
    out = bytearray()
    for name, value in headers.items():
        raw_name, raw_value = name.encode(), value.encode()
        out += struct.pack("!B", len(raw_name)) + raw_name
        out += struct.pack("!BH", _STRING, len(raw_value)) + raw_value
    return bytes(out)


def encode_message(headers: dict[str, str], payload: bytes) -> bytes:
    head = _headers(headers)
    total = 12 + len(head) + len(payload) + 4
    prelude = struct.pack("!II", total, len(head))
    prelude += struct.pack("!I", zlib.crc32(prelude) & 0xFFFFFFFF)
    body = prelude + head + payload
    return body + struct.pack("!I", zlib.crc32(body) & 0xFFFFFFFF)


def event(event_type: str, payload: bytes, content_type: str = "application/json") -> bytes:
    """An ``event`` message, e.g. SageMaker's ``PayloadPart`` or Bedrock's ``contentBlockDelta``."""
    return encode_message({":message-type": "event", ":event-type": event_type, ":content-type": content_type}, payload)


def exception(exception_type: str, payload: bytes) -> bytes:
    """An ``exception`` message, e.g. ``ModelStreamError``; botocore raises ``EventStreamError`` for it."""
    return encode_message(
        {":message-type": "exception", ":exception-type": exception_type, ":content-type": "application/json"},
        payload,
    )
