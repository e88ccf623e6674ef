"""Asterisk AudioSocket: the pure codec, the gateway on the telephony core, the peer check and the settings."""

from __future__ import annotations

import struct
import uuid
from typing import Any

import pytest
from pydantic import ValidationError

from agent.config import Settings
from agent.errors import ProtocolError
from agent.front_door.exposure import check_exposure
from agent.wires.audiosocket import codec as audiosocket
from agent.wires.audiosocket.credential import peer_allowed
from agent.wires.audiosocket.gateway import MAX_BAD_IN_A_ROW, AudioSocketGateway, audiosocket_start
from agent.wires.phone.telephony import HungUp, Keypress, PhoneStart

CALL = uuid.UUID("40325ec2-5efd-4bd3-805f-53576e581d13")
FRAME = bytes(range(256)) + bytes(64)  # 320 bytes: 20 ms at 8 kHz


def raw(kind: int, payload: bytes = b"") -> bytes:
    """A message as the protocol documentation draws it, built without the codec."""
    return struct.pack(">BH", kind, len(payload)) + payload


def split(stream: bytes, chunk: int) -> list[bytes]:
    splitter = audiosocket.Splitter()
    out = []
    for i in range(0, len(stream), chunk):
        splitter.feed(stream[i : i + chunk])
        while (message := splitter.next()) is not None:
            out.append(message)
    assert splitter.pending == 0
    return out


# ------------------------------------------------------------------------------------------- the codec


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 320, 4096])
def test_the_splitter_cuts_whole_messages_whatever_the_reads(chunk: int) -> None:
    messages = [raw(0x01, CALL.bytes), raw(0x10, FRAME), raw(0x03, b"5"), raw(0x10, FRAME[:2]), raw(0x00)]
    assert split(b"".join(messages), chunk) == messages


def test_the_splitter_waits_for_the_whole_payload() -> None:
    splitter = audiosocket.Splitter()
    splitter.feed(raw(0x10, FRAME)[:100])
    assert splitter.next() is None and splitter.pending == 100
    splitter.feed(raw(0x10, FRAME)[100:] + b"\x00")
    assert splitter.next() == raw(0x10, FRAME)
    assert splitter.next() is None and splitter.pending == 1  # half a header


def test_decode_reads_every_kind_asterisk_sends() -> None:
    assert audiosocket.decode(raw(0x01, CALL.bytes)) == audiosocket.Uuid(CALL)
    assert audiosocket.decode(raw(0x10, FRAME)) == audiosocket.Audio(FRAME)
    assert audiosocket.decode(raw(0x03, b"#")) == audiosocket.Dtmf("#")
    assert audiosocket.decode(raw(0x00)) == audiosocket.Hangup()
    assert audiosocket.decode(raw(0xFF, b"\x01")) == audiosocket.Error(1)
    assert audiosocket.decode(raw(0xFF, b"\x01")).caller_hung_up  # type: ignore[union-attr]
    assert audiosocket.decode(raw(0xFF)) == audiosocket.Error(0)


@pytest.mark.parametrize(
    ("message", "code"),
    [
        (raw(0x42, b"abc"), "unknown_type"),
        (raw(0x02, b"\x01\x35\x00\x00\x00\x00"), "unknown_type"),  # an old fork's DTMF, not the protocol's
        (raw(0x12, FRAME), "unsupported_sample_rate"),  # 16 kHz audio: only 8 kHz is taken
        (raw(0x10, FRAME[:3]), "bad_audio"),  # half a sample
        (raw(0x10), "bad_audio"),
        (raw(0x10, bytes(audiosocket.MAX_AUDIO_BYTES + 2)), "frame_too_long"),
        (raw(0x01, CALL.bytes[:8]), "bad_message"),
        (raw(0x03, b"x"), "bad_message"),
        (raw(0x03, b"12"), "bad_message"),
        (raw(0xFF, b"\x01\x02"), "bad_message"),
        (b"\x10\x00", "bad_message"),  # no whole header
        (raw(0x10, FRAME)[:-2], "bad_message"),  # shorter than its header says
    ],
)
def test_decode_refuses_what_is_not_the_protocol(message: bytes, code: str) -> None:
    with pytest.raises(ProtocolError) as info:
        audiosocket.decode(message)
    assert info.value.code == code


def test_messages_to_asterisk_are_audio_and_hangup_only() -> None:
    assert audiosocket.HANGUP == b"\x00\x00\x00"
    assert audiosocket.audio(FRAME) == raw(0x10, FRAME)
    assert audiosocket.uuid_message(CALL) == raw(0x01, CALL.bytes)
    assert audiosocket.audio_messages(FRAME * 2 + FRAME[:100] + b"\x01") == [
        raw(0x10, FRAME),
        raw(0x10, FRAME),
        raw(0x10, FRAME[:100]),
    ]
    for bad in (b"", b"\x01\x02\x03"):
        with pytest.raises(ValueError):
            audiosocket.audio(bad)  # Asterisk drops the call on an empty audio message
    with pytest.raises(ValueError):
        audiosocket.message(0x10, bytes(0x10000))


# ------------------------------------------------------------------------------ the gateway and its wire


def test_the_start_decoder_waits_for_the_uuid() -> None:
    first = audiosocket_start("alice")
    start = first(raw(0x01, CALL.bytes))
    assert isinstance(start, PhoneStart) and start.voice == "alice"
    assert start.gateway.call_id == str(CALL) and start.gateway.provider == "audiosocket"
    assert isinstance(first(raw(0x00)), HungUp)
    assert isinstance(first(raw(0xFF, b"\x01")), HungUp)
    for early in (raw(0x10, FRAME), raw(0x03, b"1"), "text"):
        with pytest.raises(ProtocolError) as info:
            first(early)
        assert info.value.code in ("not_started", "bad_message")


def test_the_gateway_turns_messages_into_call_events() -> None:
    gateway = AudioSocketGateway(CALL)
    assert gateway.decode(raw(0x10, FRAME)) == FRAME
    assert gateway.decode(raw(0x03, b"7")) == Keypress("7")
    assert isinstance(gateway.decode(raw(0x00)), HungUp)
    assert isinstance(gateway.decode(raw(0xFF, b"\x01")), HungUp)
    for message, code in ((raw(0x01, CALL.bytes), "already_started"), (raw(0xFF, b"\x02"), "far_end_error")):
        with pytest.raises(ProtocolError) as info:
            gateway.decode(message)
        assert info.value.code == code
    assert gateway.media(FRAME) == raw(0x10, FRAME)
    # Called for their value on purpose: the gateway has nothing to send for a mark or a clear.
    assert gateway.mark("1:20") is None and gateway.clear() is None  # type: ignore[func-returns-value]


def test_a_stream_out_of_step_is_hung_up_but_single_bad_messages_are_not() -> None:
    gateway = AudioSocketGateway(CALL)
    for _ in range(3):
        for _ in range(MAX_BAD_IN_A_ROW - 1):
            with pytest.raises(ProtocolError):
                gateway.decode(raw(0x42, b"?"))
        assert gateway.decode(raw(0x10, FRAME)) == FRAME  # a good message: the stream is in step
    for _ in range(MAX_BAD_IN_A_ROW - 1):
        with pytest.raises(ProtocolError):
            gateway.decode(raw(0x42, b"?"))
    assert isinstance(gateway.decode(raw(0x42, b"?")), HungUp)


# -------------------------------------------------------------------------------- security and settings


@pytest.mark.parametrize(
    ("host", "allowed", "taken"),
    [
        ("127.0.0.1", [], True),
        ("127.9.9.9", [], True),
        ("::1", [], True),
        ("::ffff:127.0.0.1", [], True),
        ("10.0.0.5", [], False),
        ("10.0.0.5", ["10.0.0.5/32"], True),
        ("10.0.0.6", ["10.0.0.5/32"], False),
        ("::ffff:10.1.2.3", ["10.1.0.0/16"], True),
        ("fe80::1%eth0", ["fe80::/10"], True),
        ("", ["0.0.0.0/0"], False),
        ("not-an-address", ["0.0.0.0/0"], False),
    ],
)
def test_only_loopback_and_allowed_peers_may_call(host: str, allowed: list[str], taken: bool) -> None:
    assert peer_allowed(host, allowed) is taken


def audiosocket_settings(**values: Any) -> Settings:
    return Settings(audiosocket=values)


def test_settings_normalise_peers_and_refuse_what_is_not_an_address() -> None:
    assert audiosocket_settings().audiosocket.port is None  # off by default
    assert audiosocket_settings(port="").audiosocket.port is None
    cfg = audiosocket_settings(port=9092, allowed_peers=["10.0.0.5", " 10.1.0.7/16"]).audiosocket
    assert cfg.allowed_peers == ["10.0.0.5/32", "10.1.0.0/16"]
    with pytest.raises(ValidationError, match="not an IP address"):
        audiosocket_settings(allowed_peers=["pbx.example.com"])


def test_exposure_refuses_an_audiosocket_open_to_everyone() -> None:
    assert check_exposure(audiosocket_settings()) == check_exposure(Settings())  # off: nothing to say
    local = check_exposure(audiosocket_settings(port=9092, allowed_peers=["0.0.0.0/0"]))
    assert not local.refusals  # on loopback only this machine can connect anyway
    exposed = check_exposure(audiosocket_settings(port=9092, host="0.0.0.0", allowed_peers=["0.0.0.0/0"]))
    assert any("lets everyone in" in refusal for refusal in exposed.refusals)
    allowed = check_exposure(
        Settings(
            audiosocket={"port": 9092, "host": "0.0.0.0", "allowed_peers": ["::/0"]}, auth={"allow_anonymous": True}
        )
    )
    assert not allowed.refusals and any("lets everyone in" in warning for warning in allowed.warnings)
    private = check_exposure(audiosocket_settings(port=9092, host="0.0.0.0", allowed_peers=["10.0.0.5"]))
    assert not private.refusals and not any("AudioSocket" in warning for warning in private.warnings)
    public = check_exposure(audiosocket_settings(port=9092, host="0.0.0.0", allowed_peers=["1.2.3.4"]))
    assert not public.refusals and any("public addresses" in warning for warning in public.warnings)
    useless = check_exposure(audiosocket_settings(port=9092, host="0.0.0.0"))
    assert any("only this machine" in warning for warning in useless.warnings)
