"""The pure parts of bench/pipecat_side_by_side.py (its client and report) and bench/latency.py's utterance sets.

The protobuf bytes below were made by Pipecat 1.14's own ``frames_pb2`` / ``ProtobufFrameSerializer``.
"""

from __future__ import annotations

import pytest

from bench.latency_sets import SHORT_UTTERANCES, utterance_of, utterance_plan, values_by_set
from bench.pipecat_client import decode_frame, encode_audio
from bench.pipecat_report import Sample, ServerRun, format_table, ratios

PCM = b"\x01\x00\xff\x7f"


def test_encode_audio_matches_pipecats_protobuf() -> None:
    assert encode_audio(PCM, 16000) == b"\x12\x0b\x1a\x04\x01\x00\xff\x7f \x80}(\x01"


def test_decode_pipecats_output_audio_frame() -> None:
    data = b"\x12%\x08\x01\x12\x15OutputAudioRawFrame#0\x1a\x04\x01\x00\xff\x7f \xc0\xbb\x01(\x01"
    frame = decode_frame(data)
    assert (frame.kind, frame.audio, frame.sample_rate, frame.num_channels) == ("audio", PCM, 24000, 1)


def test_decode_message_and_interruption() -> None:
    message = b'"<\n:{"type": "user-transcription", "data": {"text": "Hello."}}'
    assert decode_frame(message).kind == "message"
    assert '"Hello."' in decode_frame(message).data
    assert decode_frame(b"*\x17\x08\x03\x12\x13InterruptionFrame#0").kind == "interruption"


def test_round_trip_of_a_long_frame() -> None:
    pcm = bytes(range(256)) * 3  # length needs a two-byte varint
    frame = decode_frame(encode_audio(pcm, 48000, 2))
    assert (frame.audio, frame.sample_rate, frame.num_channels) == (pcm, 48000, 2)


def test_truncated_frame_is_an_error() -> None:
    with pytest.raises(ValueError):
        decode_frame(encode_audio(PCM, 16000)[:-3])


def test_utterance_plan_alternates_sets() -> None:
    plan = utterance_plan(("short", "long"), 4)
    assert [label for label, _ in plan] == ["short", "long", "short", "long"]
    assert plan[0][1] == SHORT_UTTERANCES[0] and plan[2][1] == SHORT_UTTERANCES[1]
    assert all(1 <= len(text.split()) <= 4 for text in SHORT_UTTERANCES)


def test_turns_map_to_the_utterance_that_held_their_last_speech_frame() -> None:
    ends = [1.0, 2.0, 3.0]
    assert [utterance_of(t, ends) for t in (0.5, 1.0, 1.5, 3.0, 3.5, None)] == [0, 0, 1, 2, None, None]
    values = values_by_set([(0.9, 100.0), (1.9, 300.0), (2.9, None), (9.0, 5.0)], ends, ["short", "long", "short"])
    assert values == {"short": [100.0], "long": [300.0], "all": [100.0, 300.0]}


def test_stats_leave_out_warmup_and_early_replies_and_ratio() -> None:
    ours = ServerRun("ours", [Sample("warmup", "x", 900.0), Sample("short", "a", 300.0), Sample("long", "b", 400.0)])
    theirs = ServerRun(
        "pipecat", [Sample("short", "a", 900.0), Sample("short", "a", 10.0, early=True), Sample("long", "b", 1000.0)]
    )
    assert ours.values("all") == [300.0, 400.0]
    assert theirs.stats("short")["n"] == 1 and theirs.stats("short")["early"] == 1
    assert ratios({"ours": ours, "pipecat": theirs}, ["short", "long"]) == {"short": 3.0, "long": 2.5}
    assert "pipecat / ours at p50: short 3.00x" in format_table({"ours": ours, "pipecat": theirs}, ["short", "long"])


# --- the human rows played to the bot (bench/turns/pipecat_human.py) ------------------------------------------


def test_replies_are_bursts_of_chunks_and_earlier_audio_is_not_this_rows() -> None:
    from bench.turns.pipecat_human import BURST_GAP_S, replies

    chunks = [1.0, 1.04, 1.08, 1.08 + BURST_GAP_S, 1.12 + BURST_GAP_S, 5.0, 5.04]
    assert replies(chunks, since=0.0) == [1.0, 1.08 + BURST_GAP_S, 5.0]
    assert replies(chunks, since=1.05) == [1.08, 1.08 + BURST_GAP_S, 5.0]
    assert replies([], since=0.0) == []


def test_a_rows_log_is_scored_as_our_calls_are() -> None:
    from bench.pipecat_client import PipecatListener
    from bench.turns.corpus import Utterance
    from bench.turns.live_score import LiveOutcome
    from bench.turns.pipecat_human import row_log

    heard = PipecatListener(
        arrivals=[0.5, 12.0, 12.04, 12.08, 14.0], transcripts=[(11.9, "I was, um"), (13.9, "going home.")]
    )
    t0 = 10.0
    log = row_log(heard, t0, audible_end_sent=13.0, timed_out=False)
    assert log.audible_end_sent_ms == 3000.0
    assert log.first_audio == {1: 2000.0, 2: 4000.0}  # the chunk at 0.5 s was the row before's
    assert log.transcripts == {1: "I was, um", 2: "going home."}
    u = Utterance(
        id="r", split="dev", category="thinking", text="", voice="", noise="", pcm=b"", audible_start_ms=0.0,
        audible_end_ms=3000.0, pauses=((1500.0, 2500.0),), source="human", language="en",
    )  # fmt: skip
    scored = LiveOutcome(u, log)
    assert scored.cut_off and scored.latency_ms is None and scored.answered == "I was, um"
    late = LiveOutcome(u, row_log(PipecatListener(arrivals=[13.4, 13.44]), t0, audible_end_sent=13.0, timed_out=False))
    assert not late.cut_off and late.latency_ms == 400.0
    assert row_log(PipecatListener(), t0, None, timed_out=True).audible_end_sent_ms is None
