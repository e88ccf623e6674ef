"""End to end over a real socket: Piper speech in, real tiny.en transcript, a spoken reply back."""

from __future__ import annotations

import numpy as np
import pytest

from agent.front_door.listener import RunningServer
from clients.protocol_client import converse, converse_utterances
from testing.speech import silence, speech_pcm16, wer

pytestmark = pytest.mark.models


def rms(pcm: bytes) -> float:
    x = np.frombuffer(pcm, dtype="<i2").astype(np.float64) / 32768.0
    return float(np.sqrt(np.mean(x * x))) if x.size else 0.0


async def test_spoken_question_gets_transcribed_answered_and_spoken(server: RunningServer) -> None:
    sentence = "Please tell me what time it is."
    pcm = silence(400) + speech_pcm16(sentence) + silence(200)
    conversation = await converse(server.ws_url, pcm, 16000, realtime=True, speed=2.0, timeout_s=30)

    assert conversation.session["protocol"] == 1
    assert conversation.errors == []
    (turn,) = conversation.turns
    assert turn.transcript is not None
    assert wer(sentence, turn.transcript) <= 0.15, turn.transcript
    assert "it's" in turn.reply.lower() or "it is" in turn.reply.lower(), turn.reply
    assert turn.audio_seconds > 0.5
    assert rms(bytes(turn.audio)) > 0.02  # audible, not silence
    metrics = turn.metrics
    assert metrics is not None
    for key in ("endpoint_ms", "asr_ms", "llm_first_text_ms", "tts_first_audio_ms", "voice_to_voice_ms"):
        assert isinstance(metrics[key], int | float) and metrics[key] >= 0, key
    assert metrics["interrupted"] is False
    assert conversation.close_code == 1000


async def test_two_turns_in_one_session_and_48k_input(server: RunningServer) -> None:
    first, second = "Hello there, how are you doing today?", "Could you tell me a story, please?"
    utterances = [speech_pcm16(first, 48000), speech_pcm16(second, 48000)]
    conversation = await converse_utterances(server.ws_url, utterances, 48000, speed=2.0, turn_timeout_s=30)

    assert [t.turn for t in conversation.turns] == [1, 2]
    assert wer(first, conversation.turns[0].transcript or "") <= 0.15
    assert wer(second, conversation.turns[1].transcript or "") <= 0.15
    story = conversation.turns[1]
    assert story.reply.count(".") >= 4  # a multi-sentence reply, split and pipelined
    assert story.audio_seconds > 5
    # Measured, not bounded here: how fast the first audio comes is bench/latency.py's figure (tts_first_audio_ms).
    assert story.metrics is not None and story.metrics["tts_first_audio_ms"] is not None
