"""The Asterisk AudioSocket gateway over a real TCP socket: a simulated Asterisk, real tiny.en and Piper.

A caller asks for a story in signed linear 8 kHz messages, hears about a second and a half of it (paced audio
messages, played as they arrive), then talks over it. AudioSocket has no clear: the server must simply stop
sending, answer the new question, and tell the model only what the caller heard (from its playback clock).
Bad input is dropped and counted while the call, and every other call, goes on.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import struct
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.front_door.listener import RunningServer, running_server
from agent.runtime.components import Components
from clients.audiosocket_client import AudioSocketCaller
from testing.speech import cough, silence, speech_pcm16
from testing.waits import until
from tests.integration.conftest import local_settings, models_at_rest
from tests.integration.scripted import scripted_server
from tests.integration.test_barge_in import STORY

pytestmark = pytest.mark.models

HOST = "127.0.0.1"


def raw(kind: int, payload: bytes = b"") -> bytes:
    return struct.pack(">BH", kind, len(payload)) + payload


@pytest.fixture
async def server(components: Components) -> AsyncIterator[RunningServer]:
    settings = local_settings(audiosocket={"port": 0}, server={"start_timeout_s": 1.0})
    async with running_server(settings, lambda: components) as running:
        await running.wait_ready()
        yield running


async def caller_of(server: RunningServer) -> AudioSocketCaller:
    port = server.listener_port("audiosocket")
    assert port is not None
    return await AudioSocketCaller.connect(HOST, port)


async def test_caller_hears_paced_audio_and_barge_in_stops_it(components: Components) -> None:
    async with scripted_server(
        components, [STORY, ["It is ", "half past three."]], local_settings(audiosocket={"port": 0})
    ) as (server, emulator):
        caller = await caller_of(server)
        await caller.begin()
        caller.say(silence(300, 8000) + speech_pcm16("Please tell me a long story.", 8000))
        got = caller.received
        assert await caller.run_until(lambda: len(got.audio_times) >= 75, 60)  # 1.5 s of story
        story_frames = len(got.audio_times)
        caller.say(speech_pcm16("Stop. What time is it?", 8000))
        barge_ins = server.state.metrics.barge_ins_total
        assert await caller.run_until(lambda: barge_ins.value() >= 1, 10), "no barge-in"
        at_barge_in = len(got.audio_times)
        assert await caller.run_until(lambda: len(emulator.requests) >= 2, 30)
        answer_from = len(got.audio_times)
        assert await caller.run_until(lambda: len(got.audio_times) >= answer_from + 40, 30)
        await caller.hang_up()

    # Only audio messages of 20 ms, paced, not a burst: 75 frames cannot arrive faster than real time minus the
    # lead (a lower bound, which a loaded machine cannot break; the pacer's schedule is unit-tested on an
    # injected clock in tests/unit/test_audiosocket.py).
    assert got.other == [] and set(got.audio_sizes) == {320}
    story = got.audio_times[:story_frames]
    assert story[-1] - story[0] >= 1.2
    # Barge-in: sending stops at once. Between the barge-in and the new question reaching the model (ASR of the
    # whole question, hundreds of milliseconds later) at most the frames already on their way arrive: the frame
    # the pacer held when the barge-in came, and what the client had not read yet.
    assert answer_from - at_barge_in <= 10, answer_from - at_barge_in
    # The model heard only the part of the story that was played.
    second = emulator.requests[1].body["messages"]
    heard = [m["content"] for m in second if m["role"] == "assistant"]
    full_story = "".join(STORY).strip()
    assert len(heard) == 1 and heard[0].startswith("Once upon a time"), heard
    assert len(heard[0]) < len(full_story) / 2, heard[0]


async def test_a_cough_over_the_reply_stops_the_frames_at_once_and_the_reply_goes_on_after_it(
    components: Components,
) -> None:
    """AudioSocket has no clear, but the server paces its audio: it can always pause, by sending no more frames,
    and resume from what the caller heard (the lead already sent plays out). The issue: it waited for words."""
    async with scripted_server(components, [STORY], local_settings(audiosocket={"port": 0})) as (server, _emulator):
        caller = await caller_of(server)
        await caller.begin()
        caller.say(silence(300, 8000) + speech_pcm16("Please tell me a long story.", 8000))
        got = caller.received
        # 6 s of the story: by then the echo gate knows this call has no echo (before, a sound over the reply may
        # be the agent's own voice, and it waits for a barge-in's length to yield)
        assert await caller.run_until(lambda: len(got.audio_times) >= 300, 60)
        caller.say(cough(8000))
        coughed = len(got.audio_times)
        pauses = server.state.metrics.playback_pauses_total
        assert await caller.run_until(lambda: pauses.value(["resumed"]) >= 1, 20), "the reply never paused"
        resumed = len(got.audio_times)
        assert await caller.run_until(lambda: len(got.audio_times) >= resumed + 50, 20), "it did not go on"
        await caller.hang_up()
        barge_ins = server.state.metrics.barge_ins_total.value()

    assert barge_ins == 0 and pauses.value(["interrupted"]) == 0  # a cough, not an interruption
    # The frames stopped while the caller coughed, for at least the cough and the silence that tells it was no
    # more than that, counted in the caller's own audio (frames it sent meanwhile), then the story went on.
    sent = got.audio_sent[coughed - 1 : resumed + 50]
    gaps = [later - earlier for earlier, later in itertools.pairwise(sent)]
    assert max(gaps) >= 15, max(gaps)  # 300 ms of 20 ms frames
    assert set(got.audio_sizes) == {320} and got.other == []


def _get(url: str) -> str:
    with urllib.request.urlopen(url) as response:
        return str(response.read().decode())


async def test_bad_input_is_dropped_and_counted_and_other_calls_go_on(server: RunningServer) -> None:
    question = silence(200, 8000) + speech_pcm16("What time is it?", 8000)
    port = server.listener_port("audiosocket")
    assert port is not None
    # A stranger's HTTP request is never a call: its bytes are no message, and the start deadline closes it.
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(b"GET / HTTP/1.1\r\nHost: agent\r\n\r\n")
    await writer.drain()
    # A caller whose stream is out of step (only bad messages after its UUID) is hung up.
    lost = await caller_of(server)
    await lost.begin()
    await lost.send(raw(0x42, b"?") * 30)  # in one write: nothing of its audio stream comes in between
    # A caller that vanishes mid-reply, without a hangup.
    vanishing = await caller_of(server)
    await vanishing.begin()
    vanishing.say(question)
    # The call that goes on: messages before its UUID, bad ones after it, then a question.
    caller = await caller_of(server)
    await caller.send(raw(0x10, bytes(320)) + raw(0x03, b"1") + raw(0x42, b"abc"))
    await caller.begin()
    for bad in (
        raw(0x42, b"abc"),  # unknown kind
        raw(0x10, bytes(4000)),  # over-long audio
        raw(0x10, b"\x01\x02\x03"),  # half a sample
        raw(0x12, bytes(640)),  # 16 kHz audio
        raw(0x01, caller.call.bytes),  # a second UUID
        raw(0xFF, b"\x02"),  # Asterisk reports a frame forwarding error
        raw(0x03, b"5"),  # a DTMF digit: logged
    ):
        await caller.send(bad)
    caller.say(question)

    got = caller.received
    assert await vanishing.run_until(lambda: bool(vanishing.received.audio_times), 60), "no reply to the vanisher"
    vanishing.writer.transport.abort()
    await vanishing.close()
    assert await caller.run_until(lambda: len(got.audio_times) >= 25, 60), "no reply"
    assert await lost.run_until(lambda: lost.ended, 30) and lost.received.hangup_at is not None
    assert (await asyncio.wait_for(reader.read(), 30)) == b"\x00\x00\x00"  # hung up, then closed
    assert got.hangup_at is None and got.closed_at is None  # the call went on through all of it
    assert await caller.run_until(lambda: server.state.connections == 1, 30), server.state.connections
    await caller.hang_up()
    await lost.close()
    writer.close()
    metrics = await asyncio.to_thread(_get, server.http_url + "/metrics")
    for code in (
        "not_started",
        "unknown_type",
        "frame_too_long",
        "bad_audio",
        "unsupported_sample_rate",
        "already_started",
        "far_end_error",
    ):
        assert f'voice_agent_errors_total{{code="{code}"}}' in metrics, code


async def test_drain_says_goodbye_then_hangs_up(server: RunningServer) -> None:
    caller = await caller_of(server)
    await caller.begin()
    assert await caller.run_until(lambda: len(server.state.calls) == 1, 10)
    assert await server.drain(drain_s=20)
    got = caller.received
    assert got.hangup_at is not None, "no hangup"
    assert got.audio_ms >= 1000, got.audio_ms  # "Sorry, I have to end the call now. Goodbye."
    assert got.audio_times[-1] <= got.hangup_at
    await caller.close()


async def test_a_call_over_the_session_limit_is_hung_up_at_once(components: Components) -> None:
    settings = local_settings(audiosocket={"port": 0}, server={"max_sessions": 1})
    async with running_server(settings, lambda: components) as server:
        await server.wait_ready()
        first = await caller_of(server)
        await first.begin()
        assert await first.run_until(lambda: server.state.sessions == 1, 10)
        second = await caller_of(server)
        await second.begin()
        assert await second.run_until(lambda: second.ended, 10)
        assert second.received.hangup_at is not None and not second.received.audio_times
        assert server.state.metrics.refusals_total.value(["full"]) == 1
        assert first.received.hangup_at is None
        await second.close()
        await first.hang_up()


async def test_cli_audiosocket_mode_calls_and_saves_the_reply(server: RunningServer, tmp_path: Path) -> None:
    from agent.audio.wav import write_wav
    from clients import cli

    wav, out = tmp_path / "q.wav", tmp_path / "reply.wav"
    write_wav(wav, silence(300) + speech_pcm16("What time is it?") + silence(300), 16000)
    err = io.StringIO()
    port = str(server.listener_port("audiosocket"))
    args = cli.parse_args(["--audiosocket", "--port", port, "--wav", str(wav), "--out", str(out)])
    assert await cli.run(args, stderr=err) == cli.EXIT_OK, err.getvalue()
    assert "reply audio" in err.getvalue()
    assert out.stat().st_size > 8000  # over half a second of 8 kHz reply


async def test_connections_that_never_start_a_call_cost_a_real_call_nothing(components: Components) -> None:
    # Ten connections from the PBX's address that never send the call's UUID: not sessions, not load.
    settings = local_settings(audiosocket={"port": 0}, server={"admission_wait_ms": 500})
    async with running_server(settings, lambda: components) as server:
        await server.wait_ready()
        await models_at_rest(components)  # what earlier tests left running is load, and admission counts it
        port = server.listener_port("audiosocket")
        assert port is not None
        idle = [await asyncio.open_connection(HOST, port) for _ in range(10)]
        await until(lambda: server.state.occupancy.opening == 10, what="the listener to take the ten in turn")
        assert server.state.sessions == 0
        assert server.state.refusal(settings.server) is None
        caller = await caller_of(server)
        await caller.begin()
        caller.say(silence(300, 8000) + speech_pcm16("What time is it?", 8000) + silence(1500, 8000))
        assert await caller.run_until(lambda: len(caller.received.audio_times) >= 10, 60), "no reply"
        await caller.hang_up()
        for _, writer in idle:
            writer.close()
