"""The caller had only paused: speech that takes the floor from a reply soon after the words it answers goes
on with them (``BargeInPolicy.continue_within_ms``). Synchronous, on the session core.

A thinking pause taken for the end of the turn ("I need eggs, milk, | bread and some butter"): the reply to
the first half starts, the caller goes on, the reply yields and is cut as in any barge-in; then instead of a
turn of its own for the second half, the utterance holds the audio of both, so its transcript is the whole
sentence, and the first half and the start of its reply leave the history.
"""

from __future__ import annotations

from agent.core.events import (
    AudioStart,
    CancelTurn,
    Effect,
    GenerateReply,
    HoldSpeech,
    MessageDeleted,
    PlaybackClear,
    PlaybackMark,
    PlaybackPause,
    ReplyDelta,
    ReplyEnded,
    SpeechAudio,
    SpeechStopped,
    Transcribe,
    TranscriptReady,
    TranscriptText,
)
from tests.session_driver import AUDIO_100MS, Driver, events, of, reply_to, requests, say


def spec(effects: list[Effect]) -> Transcribe:
    (look,) = [e for e in effects if isinstance(e, Transcribe)]
    return look


def first_turn(d: Driver) -> tuple[int, Transcribe]:
    """'I need eggs, milk.' ends the turn (a sentence: the short hangover), and its reply starts playing."""
    look = spec(say(d, "S" * 15 + "." * 5))  # the speculative look after 100 ms of silence
    d.at(0.05, TranscriptReady(look.request, "I need eggs, milk.", language="en"))
    say(d, "." * 5)  # 200 ms of silence: over
    return reply_to(d, "Sure, I added eggs and milk. Anything else?"), look


def test_the_caller_goes_on_after_a_pause_and_gets_one_turn_for_the_whole_sentence() -> None:
    d = Driver(pause=True, speculative_ms=100, continue_within_ms=1000)
    turn, first = first_turn(d)
    d.at(0.01, PlaybackMark(turn, 200))  # 200 ms of the reply heard
    effects = say(d, "S" * 15)  # the caller goes on, 300 ms after the end of their words
    assert of(effects, PlaybackPause)  # the reply yields at once, as always
    look = spec(say(d, "." * 5))
    assert look.pcm[: len(first.pcm)] != first.pcm  # a look at the new speech alone
    effects = d.at(0.05, TranscriptReady(look.request, "bread and some butter.", language="en"))
    assert CancelTurn(turn) in effects and PlaybackClear(turn) in events(effects)  # the reply is cut
    assert MessageDeleted(turn, "user") in events(effects) and MessageDeleted(turn, "assistant") in events(effects)
    assert [m.role for m in d.session.history.snapshot()] == ["system"]
    # the next look holds the first words' audio, then the new speech: one utterance
    whole = spec(say(d, "."))
    assert whole.pcm.startswith(first.pcm) and len(whole.pcm) > len(first.pcm) + 15 * 640
    effects = d.at(0.05, TranscriptReady(whole.request, "I need eggs, milk, bread and some butter.", language="en"))
    effects += say(d, "." * 10)
    (text,) = of(effects, TranscriptText)
    assert text == TranscriptText(turn + 1, "I need eggs, milk, bread and some butter.", continues=turn, language="en")
    (ask,) = of(effects, GenerateReply)
    assert [(m.role, m.text) for m in ask.history] == [
        ("system", "sys"),
        ("user", "I need eggs, milk, bread and some butter."),
    ]


def test_speech_long_after_the_words_is_an_ordinary_barge_in() -> None:
    d = Driver(pause=True, speculative_ms=100, continue_within_ms=1000)
    turn, _ = first_turn(d)
    say(d, "." * 50)  # a second more of silence while the reply plays
    d.at(0.01, PlaybackMark(turn, 1200))
    say(d, "S" * 15)
    effects = d.at(0.05, TranscriptReady(spec(say(d, "." * 5)).request, "What about bread?", language="en"))
    assert CancelTurn(turn) in effects and not of(effects, MessageDeleted)
    effects = say(d, "." * 10)
    assert not [e for e in effects if isinstance(e, Transcribe)]  # the look at the new speech covers it all
    (text,) = of(effects, TranscriptText)
    assert text.continues is None
    (ask,) = of(effects, GenerateReply)
    assert [m.role for m in ask.history] == ["system", "user", "assistant", "user"]  # what was heard stays
    assert ask.history[1].text == "I need eggs, milk."


def test_off_by_default_in_the_core() -> None:
    d = Driver(pause=True, speculative_ms=100)
    turn, _ = first_turn(d)
    say(d, "S" * 15)
    effects = d.at(0.05, TranscriptReady(spec(say(d, "." * 5)).request, "bread and some butter.", language="en"))
    assert CancelTurn(turn) in effects and not of(effects, MessageDeleted)


def test_going_on_before_the_first_words_were_even_transcribed_keeps_them() -> None:
    """The pause was taken for the end; the caller goes on while its transcript is still awaited: the first
    words' transcription is dropped, their audio joins the new speech, nothing is lost."""
    d = Driver(pause=True, continue_within_ms=1000)  # no speculative look: the end asks for the transcript
    (final,) = [e for e in say(d, "S" * 15 + "." * 20) if isinstance(e, Transcribe)]
    effects = say(d, "S" * 31)  # speech long enough to take the floor before its transcript (600 ms)
    assert not of(effects, GenerateReply)
    assert MessageDeleted not in {type(e) for e in events(effects)}  # nothing of it was in the history yet
    effects += say(d, "." * 20)
    (whole,) = [e for e in effects if isinstance(e, Transcribe)]
    assert whole.pcm.startswith(final.pcm)
    effects = d.at(0.1, TranscriptReady(whole.request, "I need eggs, milk, bread and some butter.", language="en"))
    (text,) = of(effects, TranscriptText)
    assert text.text == "I need eggs, milk, bread and some butter." and text.continues is not None
    (ask,) = of(effects, GenerateReply)
    assert [m.role for m in ask.history] == ["system", "user"]


def test_words_cut_at_the_longest_turn_are_not_joined_to_what_follows() -> None:
    # A caller who talks on past the longest turn (1 s here, 60 s on the server) gets a turn per stretch. Joined to
    # what follows, the words cut would make the next utterance that long at once: it was cut, transcribed and
    # answered anew every ~220 ms (3 s of talk: 10 turns, 19 transcripts of 1.0, 1.2 ... 3.0 s of audio).
    d = Driver(max_utterance_ms=1000, max_turn_ms=1000, continue_within_ms=1000)
    stopped, transcribed, answered = 0, [], 0
    for _ in range(150):  # 3 s without a pause
        effects = d.audio("S")
        stopped += len(of(effects, SpeechStopped))
        for asked in of(effects, Transcribe):
            transcribed.append(len(asked.pcm) // 32)  # ms of 16 kHz PCM16
            answered += len(
                of(d.at(0.0, TranscriptReady(asked.request, "one two three", language="en")), GenerateReply)
            )
    assert stopped == answered == 3
    assert sorted(ms for ms in transcribed if ms >= 500) == [1000, 1000, 1000]  # each stretch once (and quick probes)


def test_the_reply_to_words_cut_at_the_longest_turn_waits_while_the_caller_talks_on() -> None:
    # Cut for its length, not for a pause: the caller is still talking when its transcript comes back, so its reply
    # does not start over them; what they go on to say decides (real words: the reply goes, unheard).
    d = Driver(max_utterance_ms=1000, max_turn_ms=1000, continue_within_ms=1000)
    (final,) = requests(d.audio("S" * 50))  # 1 s without a pause: cut, its transcript asked for
    (quick,) = requests(d.audio("S" * 5))  # the caller talks on
    effects = d.at(0.0, TranscriptReady(final, "I was calling about my order from last week and", language="en"))
    turn = d.session.active_turn
    assert turn is not None and of(effects, GenerateReply) and HoldSpeech(turn) in effects
    d.at(0.01, ReplyDelta(turn, "Sure, let me look that up."))
    d.at(0.01, ReplyEnded(turn))
    assert not of(d.at(0.001, SpeechAudio(turn, AUDIO_100MS, 0)), AudioStart)  # nothing plays over the caller
    effects = d.at(0.0, TranscriptReady(quick, "and it", language="en"))
    for _ in range(30):  # 600 ms more of it, each quick look answered
        step = d.audio("S")
        effects += step + [e for r in requests(step) for e in d.at(0.0, TranscriptReady(r, "and it never came", "en"))]
    assert of(effects, CancelTurn) and not of(effects, AudioStart)
