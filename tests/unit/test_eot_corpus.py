"""The end-of-turn sets (bench/turns/corpus.py): dev is tuned on, test only scored, and test must be unlike dev.

Pure: plans, noise and the layout of made-up parts; no speech engine runs here.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

from bench.turns.corpus import (
    EDGE_MS,
    LEAD_MS,
    PAUSES_MS,
    ROOM_NOISES,
    ROOM_SNRS_DB,
    TRAIL_MS,
    VOICES,
    Plan,
    RoomNoise,
    assemble,
    plain_text,
    plan,
)
from bench.turns.sentences import CATEGORIES, PAUSED, SENTENCES, SPLITS
from bench.turns.voices import RATE, Voice, coloured_noise, espeak_command, noise_rms


def words(text: str) -> list[str]:
    return re.sub(r"[^a-z' ]+", " ", plain_text(text).lower()).split()


def test_both_sets_have_every_category() -> None:
    for split in SPLITS:
        assert set(SENTENCES[split]) == set(CATEGORIES)
        assert all(SENTENCES[split][c] for c in CATEGORIES)


def test_dev_and_test_share_no_sentence() -> None:
    dev = {" ".join(words(s)) for sentences in SENTENCES["dev"].values() for s in sentences}
    test = {" ".join(words(s)) for sentences in SENTENCES["test"].values() for s in sentences}
    assert not dev & test


def test_dev_and_test_share_no_voice() -> None:
    def identity(v: Voice) -> tuple[object, ...]:
        return (v.engine, v.name, round(v.speed, 3), v.pitch, v.noise)

    dev, test = VOICES["dev"], VOICES["test"]
    assert not {identity(v) for v in dev} & {identity(v) for v in test}
    assert not {v.label for v in dev} & {v.label for v in test}
    # Nor an espeak-ng English variant, nor a Piper speed.
    assert not {v.name.split("+")[0] for v in dev if v.engine == "espeak"} & {
        v.name.split("+")[0] for v in test if v.engine == "espeak"
    }
    assert not {round(v.speed, 3) for v in dev if v.engine == "piper"} & {
        round(v.speed, 3) for v in test if v.engine == "piper"
    }
    assert all(v.noise for v in test if v.engine == "piper")
    assert not any(v.noise for v in dev)


def test_only_the_paused_categories_have_a_pause_in_one_place() -> None:
    for split in SPLITS:
        for category, sentences in SENTENCES[split].items():
            for sentence in sentences:
                assert sentence.count("|") == (1 if category in PAUSED else 0), sentence


def test_short_turns_are_a_few_words_and_long_ones_are_not() -> None:
    for split in SPLITS:
        assert all(1 <= len(words(s)) <= 4 for s in SENTENCES[split]["short"])
        assert all(len(words(s)) >= 4 for s in SENTENCES[split]["long"])
        assert all(len(words(s)) >= 5 for s in SENTENCES[split]["breath"] + SENTENCES[split]["thinking"])
        assert all(s.endswith("?") for s in SENTENCES[split]["question"])


def trails(first_part: str) -> str:
    """What kind of word a thinking pause comes after."""
    last = words(first_part)[-1]
    if re.search(r"\b[a-z],\s*$", first_part.lower()):
        return "spelling"
    if first_part.rstrip().endswith(","):
        return "list"
    kinds = {
        "filler": {"um", "uh"},
        "conjunction": {"and", "so", "because", "but", "or"},
        "preposition": {"to", "from", "with", "for", "like"},
        "article": {"the", "a", "an"},
        "number": {"four", "hundred"},
    }
    return next((kind for kind, members in kinds.items() if last in members), "other")


def test_the_test_set_pauses_after_every_kind_of_unfinished_word() -> None:
    kinds = Counter(trails(s.split("|")[0]) for s in SENTENCES["test"]["thinking"])
    for kind in ("filler", "conjunction", "preposition", "article", "number", "list", "spelling"):
        assert kinds[kind] >= 1, kind
    assert "other" not in kinds


@pytest.mark.parametrize("split", SPLITS)
def test_a_plan_is_about_a_hundred_utterances_balanced_over_the_categories(split: str) -> None:
    plans = plan(split)  # type: ignore[arg-type]
    assert 100 <= len(plans) <= 130
    counts = Counter(p.category for p in plans)
    assert set(counts) == set(CATEGORIES)
    assert max(counts.values()) <= 1.3 * min(counts.values())
    assert len({p.id for p in plans}) == len(plans)
    assert all(p.id.startswith(split[0]) and p.split == split for p in plans)
    # --limit takes the first ones: they cover every category.
    assert {p.category for p in plans[: len(CATEGORIES)]} == set(CATEGORIES)


@pytest.mark.parametrize("split", SPLITS)
def test_each_sentence_is_said_by_distinct_voices_of_its_own_set_one_of_them_piper(split: str) -> None:
    for renditions in (1, 3):
        by_text: dict[str, list[Voice]] = {}
        for p in plan(split, renditions):  # type: ignore[arg-type]
            by_text.setdefault(p.text, []).append(p.voice)
            assert p.voice in VOICES[split]  # type: ignore[index]
        for voices in by_text.values():
            assert len(voices) == renditions
            assert len({v.label for v in voices}) == renditions
        if renditions == 3:
            assert all(sum(v.engine == "piper" for v in vs) == 1 for vs in by_text.values())


def test_renditions_are_bounded_by_the_voices_of_the_set() -> None:
    with pytest.raises(ValueError):
        plan("dev", 0)
    with pytest.raises(ValueError):
        plan("dev", len(VOICES["dev"]) + 1)
    assert len(plan("test", len(VOICES["test"]))) == len(VOICES["test"]) * sum(
        len(s) for s in SENTENCES["test"].values()
    )


def test_pauses_come_from_the_set_and_category_ranges() -> None:
    for split in SPLITS:
        for p in plan(split, 3):
            if p.category in PAUSED:
                assert p.pause_ms in PAUSES_MS[split][p.category]
            else:
                assert p.pause_ms == 0
    assert (min(PAUSES_MS["test"]["breath"]), max(PAUSES_MS["test"]["breath"])) == (150, 400)
    assert (min(PAUSES_MS["test"]["thinking"]), max(PAUSES_MS["test"]["thinking"])) == (500, 1500)
    assert max(PAUSES_MS["dev"]["breath"]) <= 400 and max(PAUSES_MS["dev"]["thinking"]) <= 1500


def test_only_test_utterances_get_room_noise_and_every_kind_and_level_is_used() -> None:
    assert all(p.noise is None for p in plan("dev"))
    noises = [p.noise for p in plan("test")]
    assert all(n is not None for n in noises)
    assert {n.kind for n in noises if n} == set(ROOM_NOISES)
    assert {n.snr_db for n in noises if n} == set(ROOM_SNRS_DB)
    assert all(20 <= s <= 35 for s in ROOM_SNRS_DB)


def test_espeak_command_sets_voice_rate_and_pitch() -> None:
    voice = Voice("x", "espeak", "en-gb-scotland+f3", 150, 65)
    assert espeak_command("Hi.", voice) == [
        "espeak-ng", "--stdout", "-v", "en-gb-scotland+f3", "-s", "150", "-p", "65", "Hi.",
    ]  # fmt: skip
    assert "-p" not in espeak_command("Hi.", Voice("y", "espeak", "en-us", 175))


def band_power(noise: np.ndarray, low: float, high: float) -> float:
    spectrum = np.abs(np.fft.rfft(noise)) ** 2
    freqs = np.fft.rfftfreq(noise.size, 1 / RATE)
    return float(spectrum[(freqs >= low) & (freqs < high)].sum())


def test_coloured_noise_has_unit_rms_and_its_colour() -> None:
    rng = np.random.default_rng(1)
    n = RATE * 4
    for kind in ("white", "pink", "brown", "hum", "pink+hum"):
        noise = coloured_noise(kind, n, rng)
        assert abs(float(np.sqrt(np.mean(noise**2))) - 1) < 1e-6
        assert abs(float(np.mean(noise))) < 1e-6
    # Power per octave: rising (white), flat (pink), falling (brown), from 100-200 Hz to 1.6-3.2 kHz.
    ratio = {
        kind: band_power(coloured_noise(kind, n, rng), 100, 200) / band_power(coloured_noise(kind, n, rng), 1600, 3200)
        for kind in ("white", "pink", "brown")
    }
    assert ratio["white"] < 1 / 8
    assert 0.5 < ratio["pink"] < 2
    assert ratio["brown"] > 8
    hum = coloured_noise("hum", n, rng)
    peak = np.fft.rfftfreq(n, 1 / RATE)[int(np.argmax(np.abs(np.fft.rfft(hum))))]
    assert round(peak) in (50, 60)


def test_noise_is_the_same_for_the_same_seed() -> None:
    a = coloured_noise("pink+hum", 8000, np.random.default_rng(7))
    b = coloured_noise("pink+hum", 8000, np.random.default_rng(7))
    assert np.array_equal(a, b)


def test_noise_rms_is_snr_below_the_speech() -> None:
    assert noise_rms(1.0, 20) == pytest.approx(0.1)
    assert 20 * np.log10(0.3 / noise_rms(0.3, 35)) == pytest.approx(35)


def tone(ms: int, silence_ms: int = 50) -> np.ndarray:
    """A 200 Hz tone of ``ms`` with digital silence either side (as a speech engine pads its output)."""
    t = np.arange(RATE * ms // 1000) / RATE
    pad = np.zeros(RATE * silence_ms // 1000, np.float32)
    return np.concatenate([pad, (0.5 * np.sin(2 * np.pi * 200 * t)).astype(np.float32), pad])


def item(split: str, pause_ms: int, noise: RoomNoise | None = None) -> Plan:
    voice = VOICES[split][1]  # type: ignore[index]
    category = "breath" if pause_ms else "long"
    return Plan(f"{split[0]}999", split, category, "One two, | three four.", voice, pause_ms, noise)  # type: ignore[arg-type]


def test_assemble_lays_out_the_parts_with_exactly_the_pause_asked_for() -> None:
    u = assemble(item("dev", 250), [tone(800), tone(600)], noise_dbfs=None)
    assert u.audible_start_ms == pytest.approx(LEAD_MS + EDGE_MS, abs=1)
    (start, end), = u.pauses  # fmt: skip
    assert end - start == pytest.approx(250, abs=1)
    assert start - u.audible_start_ms == pytest.approx(800, abs=ANALYSIS_TOLERANCE_MS)
    assert u.audible_end_ms - end == pytest.approx(600, abs=ANALYSIS_TOLERANCE_MS)
    assert u.duration_ms == pytest.approx(u.audible_end_ms + EDGE_MS + TRAIL_MS, abs=1)
    assert u.text == "One two, three four." and u.noise == "none"
    assert u.where(100) == "before speech"
    assert u.where(start + 10) == "pause 1"
    assert u.where(end + 10) == "speech after pause 1"
    assert u.where(u.audible_end_ms) == "after speech"
    pcm = np.frombuffer(u.pcm, np.int16)
    assert not pcm[: RATE * LEAD_MS // 1000 - RATE // 100].any()  # digital silence without noise


ANALYSIS_TOLERANCE_MS = 10  # the audible span is found on 10 ms frames


def test_assemble_puts_room_noise_at_the_snr_asked_for() -> None:
    for kind in ROOM_NOISES:
        u = assemble(item("test", 300, RoomNoise(kind, 25.0)), [tone(900), tone(700)])
        audio = np.frombuffer(u.pcm, np.int16).astype(np.float64)
        ms = RATE // 1000
        speech = np.concatenate(
            [
                audio[int(u.audible_start_ms * ms) : int(u.pauses[0][0] * ms)],
                audio[int(u.pauses[0][1] * ms) : int(u.audible_end_ms * ms)],
            ]
        )
        quiet = audio[int((u.audible_end_ms + 50) * ms) :]
        snr = 10 * np.log10(np.mean(speech**2) / np.mean(quiet**2))
        assert snr == pytest.approx(25.0, abs=1.5), kind
        assert u.noise == f"{kind} 25 dB SNR"


def test_dev_gets_the_white_noise_floor() -> None:
    u = assemble(item("dev", 0), [tone(500)], noise_dbfs=-60.0)
    lead = np.frombuffer(u.pcm, np.int16)[: RATE * LEAD_MS // 1000 - RATE // 50].astype(np.float64) / 32768
    assert 20 * np.log10(np.sqrt(np.mean(lead**2))) == pytest.approx(-60, abs=1)
    assert u.noise == "white -60 dBFS"
