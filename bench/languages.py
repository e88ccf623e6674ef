"""Languages: speech recognition per language with Whisper base (issue 21)

    python bench/languages.py                            # the ten languages, 8 sentences x 2 voices each (~5 min)
    python bench/languages.py --languages de,ko --sentences 4      # a quick look
    python bench/languages.py --rounds 5                 # more latency samples (English turns, base vs tiny.en)
    python bench/languages.py --window-min-s 3 --window-pad-s 0.5  # other fit windows (detection and decoding)
    python bench/languages.py --json > languages.json    # every utterance, with its transcripts
    python bench/languages.py --recorded                 # language ID on recorded Asterisk prompts (en es fr it ru)

**The speech** is made at run time by espeak-ng (nothing downloaded): for each of the ten languages of
``agent.languages`` the same eight sentences a caller might say (a booking, a question, a complaint; 1.5-6 s),
written as natives write them, each said by two espeak-ng voices of that language or two variants and speeds of
its one voice (``VOICES``), with 300 ms of silence before and 200 ms after (what the turn detector keeps).
espeak-ng's Mandarin reads only pinyin well (its Chinese characters turn into English tone numbers), so Chinese
is said from pinyin and scored against the characters; its Japanese reads kana only, so Japanese is said from
kana and scored against the usual kanji and kana. Synthetic speech, and espeak-ng's Korean, Mandarin, Japanese,
Portuguese and Italian are hard to understand even for people: the figures are a floor, not what real callers
get.

**What is measured**, with the server's own adapter (``FasterWhisperASR``, default settings but the model):

- ``ID``: first-turn language identification. Each utterance is the first turn of its own call
  (``LanguageHint(None, detect=True)``): the language detected on the fit window's encoding, over the ten
  languages, must be the one spoken. ``ID>=2s`` counts only utterances of at least 2 s of speech (what a
  first turn usually is); ``p`` is the mean probability of the language chosen; ``mistaken for`` the wrong
  guesses.
- ``call``: the eight sentences of a voice as one call's turns in order (``CallLanguage``: detected on the
  first turn, kept unless a later one is confidently another, ``agent.core.call_language.decide``): turns transcribed in
  the right language.
- ``WER``: word error rate with the language given (recognition alone), CER (characters) for zh, ja and ko;
  lower case, punctuation dropped. ``WER det`` the same for the detected language (what a call with no
  language given gets on its first turn); ``WER plain`` without the filler prompt (``AGENT_ASR__PROMPT=``).
  ``fallbacks``: fit-window decodings that ran to their token limit and were redone in the full 30 s window.
- Latency: the same English turns transcribed by Whisper base (detecting the language, as a call with none
  given does on every turn; and with English given) and by the bundled tiny.en, ``--rounds`` times, one thread
  (``asr.cpu_threads`` 1, the server's default), one at a time: p50, p95 and base's extra p50.

``--recorded``: the same first-turn identification (``LanguageHint(None, detect=True)``) on recorded human
telephone prompts (``bench/turns/recorded.py``: Debian's Asterisk prompt packages, 8 kHz, both splits' speakers),
a table per language (n, correct, confusions) beside the espeak-ng figure (69 % per call on the synthetic speech).

Progress goes to stderr.

This module changes only with the measurement and its tables; what is said in each language is
``bench/languages_sentences.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import jiwer
import numpy as np

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.adapters.faster_whisper_asr import FasterWhisperASR
from agent.audio.pcm import float_to_pcm16
from agent.config import AsrSettings
from agent.core.call_language import CallLanguage
from agent.languages import DEFAULT, LANGUAGES
from agent.ports import LanguageHint
from bench.languages_sentences import SENTENCES, SPOKEN, VOICES
from bench.progress import progress
from testing.echo_audio import espeak

RATE = 16000
CHARACTER_LANGUAGES = ("zh", "ja", "ko")
"""Scored by character error rate: they are not written with spaces between words (or, Korean, not between
every word a speaker would count)."""


@dataclass
class Utterance:
    language: str
    voice: str
    wpm: int
    index: int
    text: str
    seconds: float
    pcm: bytes = field(repr=False)


@dataclass
class Result:
    language: str
    voice: str
    index: int
    seconds: float
    detected: str = ""
    probability: float = 0.0
    heard_detected: str = ""
    heard_given: str = ""
    heard_plain: str = ""
    call_language: str = ""


class FallbackCounter(logging.Handler):
    """Counts the adapter's "retrying with the full window" messages."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += "full window" in record.getMessage()


def make_utterances(languages: Sequence[str], count: int) -> list[Utterance]:
    quiet = np.zeros(RATE * 3 // 10, dtype=np.float32)
    utterances = []
    for code in languages:
        spoken = SPOKEN.get(code, SENTENCES[code])
        for voice, wpm in VOICES[code]:
            for index, text in enumerate(SENTENCES[code][:count]):
                speech = espeak(spoken[index], voice, wpm, RATE)
                audio = np.concatenate([quiet, speech, quiet[: RATE // 5]])
                utterances.append(Utterance(code, voice, wpm, index, text, speech.size / RATE, float_to_pcm16(audio)))
    return utterances


def normalise(text: str, language: str) -> str:
    """Lower case, punctuation and symbols dropped; for zh, ja and ko no spaces at all (scored by character)."""
    kept = "".join(" " if unicodedata.category(ch)[0] in "PSZ" and ch != "'" else ch for ch in text.lower())
    kept = re.sub(r"\s+", " ", kept).strip()
    return kept.replace(" ", "") if language in CHARACTER_LANGUAGES else kept


def error_rate(references: Sequence[str], hypotheses: Sequence[str], language: str) -> float:
    refs = [normalise(r, language) for r in references]
    hyps = [normalise(h, language) for h in hypotheses]
    if language in CHARACTER_LANGUAGES:
        return float(jiwer.cer(refs, hyps))
    return float(jiwer.wer(refs, hyps))


async def measure(
    utterances: Sequence[Utterance], base: FasterWhisperASR, plain: FasterWhisperASR | None
) -> list[Result]:
    results = []
    for n, u in enumerate(utterances):
        if n % 8 == 0:
            progress(f"[{n + 1}/{len(utterances)}] {u.language} {u.voice} {u.wpm}")
        detected = await base.transcribe(u.pcm, hint=LanguageHint(None, detect=True))
        given = await base.transcribe(u.pcm, hint=LanguageHint(u.language, detect=False))
        result = Result(u.language, f"{u.voice} {u.wpm}", u.index, u.seconds)
        result.detected, result.probability = detected.language, detected.language_probability or 0.0
        result.heard_detected, result.heard_given = detected.text, given.text
        if plain is not None:
            result.heard_plain = (await plain.transcribe(u.pcm, hint=LanguageHint(u.language, detect=False))).text
        results.append(result)
    progress("calls: each voice's sentences as one call's turns")
    calls: dict[tuple[str, str], CallLanguage] = {}
    for u, result in zip(utterances, results, strict=True):
        choice = calls.setdefault((u.language, u.voice), CallLanguage(DEFAULT, detect=True))
        transcript = await base.transcribe(u.pcm, hint=choice.hint())
        choice.observe(transcript.language, transcript.language_probability)
        result.call_language = transcript.language
    return results


def language_table(results: Sequence[Result], with_plain: bool, fallbacks: Counter[str]) -> str:
    head = "| language | utterances | ID>=2s | ID (all) | p | mistaken for | call: right language | WER given | WER det"
    rule = "|---|---|---|---|---|---|---|---|---"
    if with_plain:
        head, rule = head + " | WER plain", rule + "|---"
    lines = [head + " | fallbacks |", rule + "|---|"]
    totals = Counter[str]()
    for code in LANGUAGES:
        mine = [r for r in results if r.language == code]
        if not mine:
            continue
        long = [r for r in mine if r.seconds >= 2.0]
        right_long = sum(r.detected == code for r in long)
        right = sum(r.detected == code for r in mine)
        in_call = sum(r.call_language == code for r in mine)
        totals.update(n=len(mine), long=len(long), right_long=right_long, right=right, call=in_call)
        wrong = Counter(r.detected for r in mine if r.detected != code)
        refs = [SENTENCES[code][r.index] for r in mine]
        unit = "CER" if code in CHARACTER_LANGUAGES else "WER"
        row = [
            f"{code}",
            str(len(mine)),
            f"{right_long}/{len(long)} ({100 * right_long / max(len(long), 1):.0f} %)",
            f"{right}/{len(mine)} ({100 * right / len(mine):.0f} %)",
            f"{np.mean([r.probability for r in mine]):.2f}",
            ", ".join(f"{c} {n}" for c, n in wrong.most_common(3)) or "—",
            f"{in_call}/{len(mine)}",
            f"{100 * error_rate(refs, [r.heard_given for r in mine], code):.0f} % {unit}",
            f"{100 * error_rate(refs, [r.heard_detected for r in mine], code):.0f} %",
        ]
        if with_plain:
            row.append(f"{100 * error_rate(refs, [r.heard_plain for r in mine], code):.0f} %")
        row.append(str(fallbacks[code]))
        lines.append("| " + " | ".join(row) + " |")
    count, longer = totals["n"], totals["long"]
    lines.append(
        f"| **all** | {count} | **{totals['right_long']}/{longer} "
        f"({100 * totals['right_long'] / max(longer, 1):.1f} %)** | "
        f"{totals['right']}/{count} ({100 * totals['right'] / max(count, 1):.1f} %) | | | "
        f"{totals['call']}/{count} | | |" + (" |" if with_plain else "") + " |"
    )
    return "\n".join(lines)


async def latency(
    utterances: Sequence[Utterance], engines: dict[str, tuple[FasterWhisperASR, LanguageHint | None]], rounds: int
) -> dict[str, list[float]]:
    english = [u for u in utterances if u.language == "en"]
    times: dict[str, list[float]] = {name: [] for name in engines}
    for round_ in range(rounds):
        progress(f"latency round {round_ + 1}/{rounds}: {len(english)} English turns x {len(engines)} engines")
        for u in english:
            for name, (engine, hint) in engines.items():  # interleaved: the machine's load hits each alike
                started = time.perf_counter()
                await engine.transcribe(u.pcm, hint=hint)
                times[name].append(1000 * (time.perf_counter() - started))
    return times


def latency_table(times: dict[str, list[float]], reference: str) -> str:
    lines = ["| model | turns | p50 | p95 | p50 over tiny.en |", "|---|---|---|---|---|"]
    base_p50 = float(np.percentile(times[reference], 50))
    for name, values in times.items():
        p50, p95 = float(np.percentile(values, 50)), float(np.percentile(values, 95))
        extra = "—" if name == reference else f"{p50 - base_p50:+.0f} ms"
        lines.append(f"| {name} | {len(values)} | {p50:.0f} ms | {p95:.0f} ms | {extra} |")
    return "\n".join(lines)


RECORDED_LANGUAGES = ("en", "es", "fr", "it", "ru")
ESPEAK_ID_PERCENT = 69
"""Per-call language identification on the espeak-ng speech above (the figure the recorded prompts stand beside)."""


async def recorded_main(args: argparse.Namespace) -> int:
    from bench.turns.recorded import recorded

    window = {"window_min_s": args.window_min_s, "window_pad_s": args.window_pad_s}
    base = FasterWhisperASR.load(AsrSettings(model="base", **window))
    base.warm_up()
    rows: list[tuple[str, str, str, float]] = []  # language, speaker, detected, seconds
    try:
        for split in ("dev", "test"):
            for u in recorded(split, progress, RECORDED_LANGUAGES):
                if u.language == "en" and u.category in ("breath", "thinking"):
                    continue  # complete prompts only
                detected = await base.transcribe(u.pcm, hint=LanguageHint(None, detect=True))
                rows.append((u.language, u.voice, detected.language, (u.audible_end_ms - u.audible_start_ms) / 1000))
    finally:
        base.close()
    if not rows:
        print("no recorded prompts: python bench/turns/recorded.py install")
        return 1
    print("## Language identification on recorded telephone prompts (Whisper base, first turn, detect)")
    print()
    print("| language | speakers | n | correct | >=2 s correct | mistaken for | espeak-ng per call |")
    print("|---|---|---|---|---|---|---|")
    for code in RECORDED_LANGUAGES:
        mine = [r for r in rows if r[0] == code]
        if not mine:
            continue
        right = sum(r[2] == code for r in mine)
        long = [r for r in mine if r[3] >= 2.0]
        right_long = sum(r[2] == code for r in long)
        wrong = Counter(r[2] for r in mine if r[2] != code)
        who = "; ".join(sorted({r[1] for r in mine}))
        print(
            f"| {code} | {who} | {len(mine)} | {right}/{len(mine)} ({100 * right / len(mine):.0f} %) | "
            f"{right_long}/{len(long)} ({100 * right_long / max(len(long), 1):.0f} %) | "
            f"{', '.join(f'{c} {n}' for c, n in wrong.most_common(4)) or '—'} | {ESPEAK_ID_PERCENT} % |"
        )
    right = sum(r[0] == r[2] for r in rows)
    share = f"{right}/{len(rows)} ({100 * right / len(rows):.1f} %)"
    print(f"| **all** | | {len(rows)} | {share} | | | {ESPEAK_ID_PERCENT} % |")
    return 0


async def main_async(args: argparse.Namespace) -> int:
    if args.recorded:
        return await recorded_main(args)
    languages = [c.strip() for c in args.languages.split(",")] if args.languages else list(LANGUAGES)
    unknown = [c for c in languages if c not in LANGUAGES]
    if unknown:
        raise SystemExit(f"unknown language(s) {unknown}; known: {', '.join(LANGUAGES)}")
    window = {"window_min_s": args.window_min_s, "window_pad_s": args.window_pad_s}
    progress(f"saying {args.sentences} sentences x 2 voices in {len(languages)} languages with espeak-ng")
    utterances = make_utterances(languages, args.sentences)
    base = FasterWhisperASR.load(AsrSettings(model="base", **window))
    plain = None if args.no_plain else FasterWhisperASR.load(AsrSettings(model="base", prompt="", **window))
    tiny = FasterWhisperASR.load(AsrSettings(**window))
    for engine in (base, plain, tiny):
        if engine is not None:
            engine.warm_up()
    counter = FallbackCounter()
    logger = logging.getLogger("agent.adapters.faster_whisper_asr")
    logger.addHandler(counter)
    logger.setLevel(logging.INFO)
    started = time.perf_counter()
    try:
        fallbacks = Counter[str]()
        results: list[Result] = []
        for code in languages:
            before = counter.count
            results += await measure([u for u in utterances if u.language == code], base, plain)
            fallbacks[code] = counter.count - before
        times: dict[str, list[float]] = {}
        if "en" in languages and args.rounds > 0:
            engines: dict[str, tuple[FasterWhisperASR, LanguageHint | None]] = {
                "tiny.en": (tiny, None),
                "base, detecting": (base, LanguageHint(None, detect=True)),
                "base, en given": (base, LanguageHint("en", detect=False)),
            }
            times = await latency(utterances, engines, args.rounds)
    finally:
        for engine in (base, plain, tiny):
            if engine is not None:
                engine.close()
    elapsed = time.perf_counter() - started
    if args.json:
        print(json.dumps({"results": [asdict(r) for r in results], "latency_ms": times}, ensure_ascii=False))
        return 0
    print(
        f"## Recognition per language (Whisper base, fit window {args.window_min_s} s min, {args.window_pad_s} s pad)"
    )
    print()
    print(language_table(results, plain is not None, fallbacks))
    if times:
        print()
        print("## ASR latency per English turn (one thread, one at a time)")
        print()
        print(latency_table(times, "tiny.en"))
    print()
    print(f"({len(results)} utterances, {elapsed:.0f} s)")
    if args.show_wrong:
        print()
        for r in results:
            if r.detected != r.language:
                print(
                    f"{r.language} {r.voice} #{r.index} {r.seconds:.1f} s -> {r.detected} {r.probability:.2f}: ", end=""
                )
                print(f"{r.heard_detected!r} (given: {r.heard_given!r})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Recognise espeak-ng speech in the ten languages with Whisper base: first-turn language "
        "identification, a call's language, word (character) error rate per language, and ASR latency against "
        "tiny.en.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="voices: " + "; ".join(f"{c}: {a[0]} {a[1]}, {b[0]} {b[1]}" for c, (a, b) in VOICES.items()),
    )
    parser.add_argument("--languages", help=f"comma-separated codes (default: all of {','.join(LANGUAGES)})")
    parser.add_argument("--sentences", type=int, default=8, choices=range(1, 9), help="sentences per voice (8)")
    parser.add_argument("--rounds", type=int, default=3, help="latency rounds over the English turns (3; 0 = none)")
    parser.add_argument("--window-min-s", type=float, default=AsrSettings().window_min_s, help="asr.window_min_s")
    parser.add_argument("--window-pad-s", type=float, default=AsrSettings().window_pad_s, help="asr.window_pad_s")
    parser.add_argument("--no-plain", action="store_true", help="skip the unprompted WER column (faster)")
    parser.add_argument("--show-wrong", action="store_true", help="list every misidentified utterance")
    parser.add_argument("--recorded", action="store_true", help="language ID on the recorded Asterisk prompts only")
    parser.add_argument("--json", action="store_true", help="every utterance and latency as JSON instead of tables")
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
