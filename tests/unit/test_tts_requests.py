from __future__ import annotations

import base64
import json

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError

from agent.adapters.retry import RetryPolicy, is_retryable
from agent.adapters.sagemaker_tts import map_error
from agent.adapters.tts_requests import (
    LANGUAGES,
    MAX_BODY_BYTES,
    CloneVoice,
    PcmAligner,
    SseAudioDecoder,
    looks_like_sse,
    model_language,
    parse_wav,
    request_language,
    speech_payload,
    split_text,
    wav_data_uri,
)
from agent.audio.wav import wav_bytes
from agent.errors import ProviderError, ProviderTimeout, ProviderUnavailable
from agent.languages import NAMES

VOICE = CloneVoice("alice", wav_data_uri(wav_bytes(b"\x00\x01" * 100, 24000)), "Hello.", "English")


@pytest.mark.parametrize(
    ("tag", "name"),
    [
        ("en", "English"),
        ("en-US", "English"),
        ("pt_BR", "Portuguese"),
        ("german", "German"),
        ("zh", "Chinese"),
        ("", "Auto"),
        ("auto", "Auto"),
        ("nl", "Auto"),
        (None, "Auto"),
    ],
)
def test_language_names(tag: str | None, name: str) -> None:
    assert model_language(tag) == name


def test_payloads() -> None:
    streamed = json.loads(speech_payload("Hi there.", VOICE, "English", stream=True))
    assert streamed == {
        "input": "Hi there.",
        "task_type": "Base",
        "ref_audio": VOICE.ref_audio,
        "ref_text": "Hello.",
        "language": "English",
        "stream": True,
        "stream_format": "audio",
        "response_format": "pcm",
    }
    whole = json.loads(speech_payload("Hi there.", VOICE, "English", stream=False))
    assert whole["response_format"] == "wav" and "stream" not in whole
    huge = CloneVoice("big", "data:audio/wav;base64," + "A" * MAX_BODY_BYTES, "x", "English")
    with pytest.raises(ProviderError):
        speech_payload("Hi.", huge, "English", stream=False)


def test_split_merges_short_sentences_and_cuts_long_ones() -> None:
    assert split_text("Hi. How are you doing today? Fine.") == ["Hi. How are you doing today? Fine."]
    assert split_text("   ") == []
    long = "word " * 30_000  # a 150k-character reply
    pieces = split_text(long, max_chars=400)
    assert all(len(p) <= 400 for p in pieces) and " ".join(pieces).split() == long.split()
    assert all(len(speech_payload(p, VOICE, "English", stream=True)) < MAX_BODY_BYTES for p in pieces)
    text = "The first sentence is here. The second one follows it. A third."
    assert split_text(text) == ["The first sentence is here.", "The second one follows it. A third."]


def test_split_chinese_and_japanese_sentences() -> None:
    # No space follows 。！？ in Chinese and Japanese: they still end sentences, and merged ones get no space.
    chinese = "您好！我是这个语音助手的离线演示程序，只用来展示语音处理流程。我可以告诉您现在的时间或日期。好的。"
    assert split_text(chinese, min_chars=12) == [
        "您好！我是这个语音助手的离线演示程序，只用来展示语音处理流程。",
        "我可以告诉您现在的时间或日期。好的。",
    ]
    assert "".join(split_text(chinese, min_chars=12)) == chinese
    assert split_text("「はい。」と言いました。それでは。", min_chars=4) == ["「はい。」と言いました。", "それでは。"]
    assert split_text("Hello. 你好吗？我很好。", min_chars=4) == ["Hello.", "你好吗？", "我很好。"]


def test_pcm_aligner_keeps_the_odd_byte() -> None:
    aligner = PcmAligner()
    assert aligner.push(b"\x01\x02\x03") == b"\x01\x02"
    assert aligner.pending == 1
    assert aligner.push(b"\x04") == b"\x03\x04"


def test_sse_decoder_in_any_cut() -> None:
    audio = b"\x01\x02" * 10
    delta = json.dumps({"type": "speech.audio.delta", "audio": base64.b64encode(audio).decode()})
    done = '{"type": "speech.audio.done"}'
    stream = f"event: speech.audio.delta\ndata: {delta}\n\nevent: speech.audio.done\ndata: {done}\n\n"
    decoder = SseAudioDecoder("test")
    raw = stream.encode()
    out = b"".join(decoder.push(raw[i : i + 7]) for i in range(0, len(raw), 7))
    assert out == audio and decoder.done
    failing = SseAudioDecoder("test")
    with pytest.raises(ProviderError, match="boom"):
        failing.push(b'data: {"type": "speech.audio.error", "error": {"message": "boom"}}\n\n')
    assert looks_like_sse("text/event-stream", b"") and not looks_like_sse("audio/pcm", b"data:")
    assert looks_like_sse(None, b"event: x") and not looks_like_sse(None, b"\x00\x01")


def test_parse_wav() -> None:
    assert parse_wav(wav_bytes(b"\x01\x00" * 5, 24000)) == (b"\x01\x00" * 5, 24000)


def _client_error(code: str, status: int, **extra: object) -> ClientError:
    response: dict[str, object] = {
        "Error": {"Code": code, "Message": "m"},
        "ResponseMetadata": {"HTTPStatusCode": status},
    }
    response.update(extra)
    return ClientError(response, "InvokeEndpoint")


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (_client_error("ServiceUnavailable", 503), ProviderUnavailable),
        (_client_error("InternalFailure", 500), ProviderUnavailable),
        (_client_error("ThrottlingException", 400), ProviderUnavailable),
        (_client_error("ModelNotReadyException", 429), ProviderUnavailable),
        (_client_error("ModelError", 424, OriginalStatusCode=502), ProviderUnavailable),
        (_client_error("ModelError", 424, OriginalStatusCode=400), ProviderError),
        (_client_error("ValidationError", 400), ProviderError),
        (ReadTimeoutError(endpoint_url="http://x"), ProviderTimeout),
        (EndpointConnectionError(endpoint_url="http://x"), ProviderUnavailable),
    ],
)
def test_error_mapping(error: Exception, kind: type[ProviderError]) -> None:
    mapped = map_error(error)
    assert type(mapped) is kind
    assert is_retryable(mapped) == (kind is ProviderUnavailable)


def test_backoff_is_capped_and_jittered() -> None:
    policy = RetryPolicy(base_delay_s=0.2, max_delay_s=1.0)
    assert policy.delay(1, lambda: 1.0) == pytest.approx(0.2)
    assert policy.delay(10, lambda: 1.0) == pytest.approx(1.0)
    assert policy.delay(3, lambda: 0.5) == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("asked", "voice_language", "sent"),
    [
        ("de", "English", "German"),  # the text's language, not the voice's
        ("zh", "Auto", "Chinese"),
        ("pt", "Spanish", "Portuguese"),
        ("it", "Italian", "Italian"),
        (None, "French", "French"),  # nothing asked: the voice's own
        ("", "Korean", "Korean"),
        ("xx", "Russian", "Russian"),  # not a language the model takes: the voice's own
        ("German", "English", "German"),
    ],
)
def test_request_language_is_the_texts(asked: str | None, voice_language: str, sent: str) -> None:
    voice = CloneVoice("alice", VOICE.ref_audio, "Hello.", voice_language)
    assert request_language(asked, voice) == sent
    assert json.loads(speech_payload("Hallo.", voice, request_language(asked, voice), stream=True))["language"] == sent


def test_every_language_has_a_model_name() -> None:
    assert {request_language(code, VOICE) for code in NAMES} == set(LANGUAGES)
