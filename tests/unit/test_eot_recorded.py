"""The recorded human utterances (bench/turns/recorded.py) and the German synthetic plans (bench/turns/corpus.py).

Pure: synthetic arrays and made-up transcripts; no package, model or speech engine is needed.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from bench.turns.corpus import plain_text, plan
from bench.turns.german import SENTENCES_DE, VOICES_DE
from bench.turns.recorded import category_of, cut_at_pause, joined, pauses_in, quietest, speakers, utterance
from bench.turns.recordings import BREATHS, CUTS, JOINS, SPEAKERS, WHOLE, Speaker
from bench.turns.sentences import CATEGORIES, PAUSED, SPLITS
from bench.turns.voices import RATE


def tone(ms: int, level: float = 0.5, hz: float = 220.0) -> npt.NDArray[np.float32]:
    t = np.arange(RATE * ms // 1000) / RATE
    return (level * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def hush(ms: int) -> npt.NDArray[np.float32]:
    return np.full(RATE * ms // 1000, 1e-5, np.float32)


def test_the_category_of_a_complete_turn_comes_from_its_text() -> None:
    assert category_of("Thank you.") == "short"
    assert category_of("Hello world.") == "short"
    assert category_of("Ten of clubs.") == "short"
    assert category_of("Change to which folder?") == "question"
    assert category_of("Login incorrect. Mailbox?") == "question"
    assert category_of("Your message has been saved.") == "long"


def test_no_speaker_is_in_both_splits_and_every_split_has_english() -> None:
    names = {s.name: s.split for s in SPEAKERS}
    assert len(names) == len(SPEAKERS)
    dev = {s.name for s in speakers("dev", ("en", "es", "fr", "it", "ru"))}
    test = {s.name for s in speakers("test", ("en", "es", "fr", "it", "ru"))}
    assert dev and test and not dev & test
    for split in SPLITS:
        assert speakers(split), split
    for table in (WHOLE, BREATHS, CUTS):
        assert all(s in SPEAKERS for s in table)
    assert {s.language for s in SPEAKERS} == {"en", "es", "fr", "it", "ru"}


def test_the_reference_texts_mark_one_cut_where_there_is_a_pause() -> None:
    for whole in WHOLE.values():
        assert all("|" not in text for _, text in whole)
    for breaths in BREATHS.values():
        assert all(text.count("|") == 1 for _, text in breaths)
    for cuts in CUTS.values():
        assert all(text.count("|") == 1 and category in PAUSED for _, text, _, category in cuts)
    for files, text in JOINS:
        assert files.count("|") == 1 and text.count("|") == 1


def test_a_real_pause_is_found_and_cut_at_its_centre() -> None:
    audio = np.concatenate([tone(400), hush(200), tone(300), hush(90), tone(500)])
    runs = pauses_in(audio)
    assert [(round(a / RATE * 1000), round(b / RATE * 1000)) for a, b in runs] == [(400, 600), (900, 990)]
    # The "|" a third of the way in: the first pause; two thirds: the second.
    assert abs(cut_at_pause(audio, 0.3) / RATE * 1000 - 500) <= 10
    assert abs(cut_at_pause(audio, 0.7) / RATE * 1000 - 945) <= 10


def test_a_word_boundary_moves_to_the_quietest_frame_near_it() -> None:
    audio = np.concatenate([tone(500), hush(30), tone(500)])
    # A transcript that puts the boundary 40 ms late is pulled back into the gap (500-530 ms).
    at_ms = quietest(audio, 570) / RATE * 1000
    assert 495 <= at_ms <= 535


def test_recorded_parts_are_laid_out_as_a_human_utterance_with_the_pause_asked_for() -> None:
    speaker = Speaker("someone", SPEAKERS[0].base, "en", "test")
    audio = np.concatenate([tone(400), hush(60), tone(600)])
    at = cut_at_pause(audio, 0.4)
    u = utterance("th999", speaker, "thinking", "I need | a moment.", [audio[:at], audio[at:]], 800)
    assert (u.source, u.language, u.voice, u.split, u.category) == ("human", "en", "someone", "test", "thinking")
    assert u.text == "I need a moment."
    ((start, end),) = u.pauses
    assert abs((end - start) - 800) <= 1
    assert u.audible_start_ms < start < end < u.audible_end_ms


def test_joined_prompts_are_trimmed_and_spaced() -> None:
    out = joined([np.concatenate([hush(100), tone(200)]), np.concatenate([tone(300), hush(100)])], gap_ms=80)
    assert abs(out.size / RATE * 1000 - (200 + 80 + 300)) <= 20


def test_german_plans_have_distinct_sentences_and_voices_across_splits() -> None:
    dev = {plain_text(s).lower() for c in CATEGORIES for s in SENTENCES_DE["dev"][c]}
    test = {plain_text(s).lower() for c in CATEGORIES for s in SENTENCES_DE["test"][c]}
    assert not dev & test
    assert not {v[1] for v in VOICES_DE["dev"]} & {v[1] for v in VOICES_DE["test"]}
    for split in SPLITS:
        assert set(SENTENCES_DE[split]) == set(CATEGORIES)
        for category, sentences in SENTENCES_DE[split].items():
            assert all(s.count("|") == (1 if category in PAUSED else 0) for s in sentences), category
        german = plan(split, languages=("de",))
        assert german and all(p.language == "de" and p.id.startswith(f"{split[0]}de") for p in german)
        assert {p.category for p in german} == set(CATEGORIES)
    dev_voices = {p.voice.label for p in plan("dev", languages=("de",))}
    test_voices = {p.voice.label for p in plan("test", languages=("de",))}
    assert not dev_voices & test_voices


def test_the_english_plan_is_unchanged_by_default() -> None:
    for split in SPLITS:
        english = plan(split)
        assert english == plan(split, languages=("en",))
        assert all(p.language == "en" and p.source == "synthetic" for p in english)
        both = plan(split, languages=("en", "de"))
        assert both[: len(english)] == english


def test_a_recording_s_own_room_noise_is_not_audible_speech() -> None:
    from bench.turns.corpus import OVER_NOISE_DB, loud_span
    from bench.turns.voices import RATE

    rng = np.random.default_rng(0)
    noise = (10 ** (-40 / 20) * rng.standard_normal(RATE)).astype(np.float32)  # 1 s of room noise, 35 dB down
    t = np.arange(RATE // 2) / RATE
    speech = (0.8 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)  # 0.5 s of "speech" at about -5 dB
    clip = np.concatenate([noise, noise + np.pad(speech, (0, RATE - speech.size)), noise])
    start, end = loud_span(clip)
    assert (start, end) == (0, clip.size)  # within 45 dB of the speech: the noise counts, to the last sample
    start, end = loud_span(clip, OVER_NOISE_DB)
    assert abs(start - RATE) <= RATE // 100 and abs(end - (RATE + speech.size)) <= RATE // 100
