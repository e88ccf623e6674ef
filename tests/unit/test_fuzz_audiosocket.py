"""Fuzzing the AudioSocket codec and gateway: any byte stream, cut anywhere, gives whole messages that decode
to a message or a ``ProtocolError`` with a documented code, and the splitter never loses or invents a byte."""

from __future__ import annotations

import struct
import uuid

from hypothesis import given
from hypothesis import strategies as st

from agent.errors import ProtocolError
from agent.wires.audiosocket import codec as audiosocket
from agent.wires.audiosocket.gateway import AudioSocketGateway, audiosocket_start
from tests.fuzzing import budget

CODES = {"bad_message", "bad_audio", "frame_too_long", "unsupported_sample_rate", "unknown_type"}
GATEWAY_CODES = CODES | {"already_started", "far_end_error", "not_started"}

KINDS = st.sampled_from([0x00, 0x01, 0x03, 0x10, 0x11, 0x12, 0x16, 0xFF]) | st.integers(0, 255)
MESSAGES = st.builds(
    lambda kind, payload: struct.pack(">BH", kind, len(payload)) + payload,
    KINDS,
    st.binary(max_size=700) | st.sampled_from([b"", b"5", uuid.uuid4().bytes, bytes(320), bytes(3201)]),
)
STREAMS = st.lists(MESSAGES, max_size=12).map(b"".join) | st.binary(max_size=3000)


@budget(600)
@given(STREAMS, st.lists(st.integers(1, 400), min_size=1, max_size=40))
def test_any_stream_cut_anywhere_splits_and_decodes_or_is_refused(stream: bytes, cuts: list[int]) -> None:
    splitter = audiosocket.Splitter()
    gateway = AudioSocketGateway(uuid.UUID(int=1))
    first = audiosocket_start(None)
    messages: list[bytes] = []
    position = 0
    for cut in cuts * (len(stream) // max(1, sum(cuts)) + 1):
        if position >= len(stream):
            break
        splitter.feed(stream[position : position + cut])
        position += cut
        while (message := splitter.next()) is not None:
            messages.append(message)
    assert sum(map(len, messages)) + splitter.pending == len(stream)  # nothing lost, nothing invented
    for message in messages:
        _, length = struct.unpack_from(">BH", message)
        assert len(message) == 3 + length
        try:
            decoded = audiosocket.decode(message)
        except ProtocolError as exc:
            assert exc.code in CODES, exc.code
            assert len(exc.message) < 200
        else:
            if isinstance(decoded, audiosocket.Audio):
                assert 0 < len(decoded.pcm) <= audiosocket.MAX_AUDIO_BYTES and len(decoded.pcm) % 2 == 0
        for decode in (gateway.decode, first):
            try:
                decode(message)
            except ProtocolError as exc:
                assert exc.code in GATEWAY_CODES, exc.code
