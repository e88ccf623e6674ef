"""Recorded human speech for the end-of-turn sets: Debian's telephone prompts and read speech, cut and laid out
like ``bench/turns/corpus.py``'s synthetic utterances (``source="human"``). Changes when the recordings used change.

    python bench/turns/recorded.py install        # print the apt-get line (``--run``: run it, as root)
    python bench/turns/recorded.py list           # the utterances per split, category, language and speaker

**Speakers split between dev and test** (no speaker in both):

- dev: Allison Smith (``asterisk-core-sounds-en-wav``, en-US, and ``-es-wav``, es-MX), June Wallack
  (``-fr-wav``, fr-CA), Marco Menardi's voice Paola Dal Zot (``asterisk-prompt-it-menardi-wav``);
- test: the LibriVox reader of *Sense and Sensibility* ch. 1 and the speaker of the ``cards``, ``goforward`` and
  ``something`` clips (``pocketsphinx-testdata``, read speech, 16 kHz), Carlo Flora (``asterisk-core-sounds-it-wav``),
  the ivrvoice.ru speaker (``-ru-wav``), the Colombian voice of ``asterisk-prompt-es-co`` and Armelle Desjardins
  (``asterisk-prompt-fr-armelle``; both GSM 06.10, decoded by libsndfile).

**Licences**: asterisk-core-sounds-{en,es,fr}: CC-BY-SA-3.0; -ru: CC-BY-3.0; -it (Carlo Flora): CC-BY-SA-3.0;
asterisk-prompt-it-menardi: CC-BY-SA-3.0 (Italian); asterisk-prompt-es-co: GPL-2; asterisk-prompt-fr-armelle:
GPL-2+; pocketsphinx-testdata: BSD-2 (CMU). Nothing is copied into the repository: the audio is read from the
installed packages at run time.

**English utterances** (the end-of-turn set): dev, Allison's complete prompts (``short``/``long``/``question`` by
their text: "?" a question, up to three words short), prompts cut at a real pause at a comma (``breath``), and
prompts the way a telephone system joins them ("You have | two new messages": ``thinking``, the first prompt a
fragment that cannot end a turn). Test: the five LibriVox sentences whole (``long``), cut at word boundaries
(Whisper base word times, checked by ear-free means: each boundary moved to the quietest 10 ms within 60 ms) after
"and", "to", an article, before a word being searched for (``thinking``) and at the reader's real breath after
"woman," (``breath``); the card and command clips whole, and the long card list cut after an item. Pauses from
``corpus.PAUSES_MS``. Reference texts: the upstream prompt lists (core-sounds-en.txt; numbers as words),
checked against Whisper base transcripts of the recordings, and pocketsphinx's own transcripts.

**Other languages** (``languages``, for language identification): 24 prompts per speaker, category from the
English original of the same prompt; their ``text`` is empty (Debian ships no transcript of them).

**Layout**: resampled to 16 kHz, each part trimmed by ``corpus``'s audible rule (``loud_span``,
``AUDIBLE_DB``), laid out by ``corpus.assemble`` (``LEAD_MS``, pauses, ``TRAIL_MS``) with a white noise
floor at -60 dBFS so the line is never digitally silent. The LibriVox clips keep their own room noise inside
the parts (about 35 dB below the speech, so within ``AUDIBLE_DB``: their parts are audible to their edges).
``codec2-examples`` was checked and is not used: its radio clips are call signs and CQ calls with no
transcript, and its few read sentences have no reference text to check a transcript against.

This module changes only with how the recordings are read, cut and made into utterances; which recordings, and
where each is cut, is ``bench/turns/recordings.py``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agent.audio.resample import resample
from bench.turns.corpus import ANALYSIS_MS, PAUSES_MS, Plan, Utterance, assemble
from bench.turns.recordings import (
    ALLISON_EN,
    BREATHS,
    CARD_LIST,
    COMMANDS,
    CUTS,
    JOINS,
    LID_PROMPTS,
    SPEAKERS,
    WHOLE,
    Speaker,
)
from bench.turns.sentences import Category, Split
from bench.turns.voices import RATE, Voice

PACKAGES = (
    "asterisk-core-sounds-en-wav",
    "asterisk-core-sounds-es-wav",
    "asterisk-core-sounds-fr-wav",
    "asterisk-core-sounds-it-wav",
    "asterisk-core-sounds-ru-wav",
    "asterisk-prompt-it-menardi-wav",
    "asterisk-prompt-es-co",
    "asterisk-prompt-fr-armelle",
    "pocketsphinx-testdata",
)
INSTALL = "apt-get install -y --no-install-recommends " + " ".join(PACKAGES)


def category_of(text: str) -> Category:
    """A complete turn's category from its text: a question ("?"), short (up to three words) or long."""
    if text.rstrip().endswith("?"):
        return "question"
    return "short" if len(text.replace("|", " ").split()) <= 3 else "long"


def quietest(audio: npt.NDArray[np.float32], at_ms: float, within_ms: float = 60.0) -> int:
    """The sample at the centre of the quietest ``ANALYSIS_MS`` frame within ``within_ms`` of ``at_ms``: where a
    word boundary from a word-timing estimate is cut."""
    hop = RATE * ANALYSIS_MS // 1000
    first = max(0, int((at_ms - within_ms) * RATE / 1000))
    last = min(audio.size - hop, int((at_ms + within_ms) * RATE / 1000))
    starts = np.arange(first, max(first, last) + 1, hop // 2)
    energy = [float(np.mean(np.square(audio[s : s + hop], dtype=np.float64))) for s in starts]
    return int(starts[int(np.argmin(energy))]) + hop // 2


def pauses_in(audio: npt.NDArray[np.float32], min_ms: float = 60.0, below_db: float = 35.0) -> list[tuple[int, int]]:
    """Real pauses inside speech: runs of ``ANALYSIS_MS`` frames ``below_db`` under the loudest frame, at least
    ``min_ms`` long, not touching either end (samples [start, end))."""
    hop = RATE * ANALYSIS_MS // 1000
    frames = audio[: audio.size - audio.size % hop].reshape(-1, hop).astype(np.float64)
    level = 10 * np.log10(np.mean(frames * frames, axis=1) + 1e-20)
    quiet = level < float(np.max(level)) - below_db
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for i, q in enumerate([*quiet.tolist(), False]):
        if q and start is None:
            start = i
        elif not q and start is not None:
            if start > 0 and i < quiet.size and (i - start) * ANALYSIS_MS >= min_ms:
                runs.append((start * hop, i * hop))
            start = None
    return runs


def cut_at_pause(audio: npt.NDArray[np.float32], fraction: float) -> int:
    """The centre of the real pause nearest ``fraction`` of the way through ``audio`` (where the "|" falls)."""
    runs = pauses_in(audio)
    if not runs:
        raise ValueError("no pause to cut at")
    target = fraction * audio.size
    start, end = min(runs, key=lambda r: abs((r[0] + r[1]) / 2 - target))
    return (start + end) // 2


def speakers(split: Split, languages: Sequence[str] = ("en",)) -> list[Speaker]:
    return [s for s in SPEAKERS if s.split == split and s.language in languages]


def missing_packages() -> list[str]:
    """The packages of ``PACKAGES`` not installed (dpkg's status), all of them where there is no dpkg."""
    if shutil.which("dpkg-query") is None:
        return list(PACKAGES)
    done = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package} ${Status}\\n", *PACKAGES], capture_output=True, text=True, check=False
    )
    installed = {line.split()[0] for line in done.stdout.splitlines() if line.endswith("install ok installed")}
    return [p for p in PACKAGES if p not in installed]


def load(path: Path) -> npt.NDArray[np.float32]:
    """A recording as float32 at 16 kHz: WAV, raw GSM 06.10 (.gsm, 8 kHz) or raw PCM16 (.raw, 16 kHz)."""
    import soundfile

    if path.suffix == ".gsm":
        audio, rate = soundfile.read(path, format="RAW", subtype="GSM610", samplerate=8000, channels=1, dtype="float32")
    elif path.suffix == ".raw":
        audio, rate = soundfile.read(path, format="RAW", subtype="PCM_16", samplerate=RATE, channels=1, dtype="float32")
    else:
        audio, rate = soundfile.read(path, dtype="float32", always_2d=True)
        audio = audio[:, 0]
    audio = np.ascontiguousarray(audio, dtype=np.float32)
    return resample(audio, int(rate), RATE) if rate != RATE else audio


def _file(speaker: Speaker, name: str) -> Path:
    if "." in Path(name).name:
        return speaker.base / name
    found = sorted(speaker.base.glob(f"{name}.*"))
    if not found:
        raise FileNotFoundError(f"{speaker.base / name}.*")
    return found[0]


def joined(parts: Sequence[npt.NDArray[np.float32]], gap_ms: int = 80) -> npt.NDArray[np.float32]:
    """Recordings played one after another as a telephone system plays them: each trimmed to its loud span,
    ``gap_ms`` of silence between them."""
    from bench.turns.corpus import OVER_NOISE_DB, loud_span

    gap = np.zeros(RATE * gap_ms // 1000, np.float32)
    pieces: list[npt.NDArray[np.float32]] = []
    for i, audio in enumerate(parts):
        start, end = loud_span(audio, OVER_NOISE_DB)
        pieces += [gap, audio[start:end]] if i else [audio[start:end]]
    return np.concatenate(pieces)


def utterance(
    uid: str, speaker: Speaker, category: Category, text: str, said: list[npt.NDArray[np.float32]], pause_ms: int
) -> Utterance:
    """Lay out recorded parts (16 kHz float32) as ``corpus.assemble`` does, as a human utterance."""
    voice = Voice(speaker.name, "recorded", speaker.name, 1.0)
    item = Plan(uid, speaker.split, category, text, voice, pause_ms, language=speaker.language, source="human")
    return assemble(item, said)


def _english(split: Split) -> list[tuple[Speaker, Category, str, list[npt.NDArray[np.float32]], str]]:
    """(speaker, category, text, parts, pause kind) of every English utterance of ``split``."""
    out: list[tuple[Speaker, Category, str, list[npt.NDArray[np.float32]], str]] = []
    for speaker in speakers(split):
        for name, text in WHOLE.get(speaker, ()):
            out.append((speaker, category_of(text), text, [load(_file(speaker, name))], ""))
        for name, text in BREATHS.get(speaker, ()):
            audio = load(_file(speaker, name))
            at = cut_at_pause(audio, text.index("|") / len(text))
            out.append((speaker, "breath", text, [audio[:at], audio[at:]], "breath"))
        for name, text, at_ms, category in CUTS.get(speaker, ()):
            audio = load(_file(speaker, name))
            at = quietest(audio, at_ms)
            out.append((speaker, category, text, [audio[:at], audio[at:]], category))
        if speaker is ALLISON_EN:
            for files, text in JOINS:
                said = [joined([load(_file(speaker, f)) for f in part.strip().split("+")]) for part in files.split("|")]
                out.append((speaker, "thinking", text, said, "thinking"))
        if speaker is COMMANDS:
            audio = load(_file(speaker, CARD_LIST[0]))
            at = cut_at_pause(audio, CARD_LIST[1].index("|") / len(CARD_LIST[1]))
            out.append((speaker, "thinking", CARD_LIST[1], [audio[:at], audio[at:]], "thinking"))
    return out


def recorded(
    split: Split, progress: Callable[[str], None] | None = None, languages: Sequence[str] = ("en",)
) -> list[Utterance]:
    """The human utterances of ``split`` in ``languages`` (ids ``dh001``/``th001``...; other languages' prompts
    after the English ones). [] when the packages are missing (``progress`` says which apt-get line to run)."""
    say = progress or (lambda _message: None)
    missing = missing_packages()
    if missing:
        say(f"recorded speech: {len(missing)} package(s) missing, none used; as root run: {INSTALL}")
        return []
    items: list[tuple[Speaker, Category, str, list[npt.NDArray[np.float32]], str]] = []
    if "en" in languages:
        items += _english(split)
    for speaker in speakers(split, [c for c in languages if c != "en"]):
        for name, gist in LID_PROMPTS.items():
            items.append((speaker, category_of(gist), "", [load(_file(speaker, name))], ""))
    out: list[Utterance] = []
    counts = Counter[str]()
    for n, (speaker, category, text, said, kind) in enumerate(items, 1):
        pauses = PAUSES_MS[split]["breath" if kind == "breath" else "thinking"] if kind else (0,)
        pause = pauses[counts[kind] % len(pauses)]
        counts[kind] += 1
        out.append(utterance(f"{split[0]}h{n:03d}", speaker, category, text, said, pause))
    say(f"recorded speech {split}: {len(out)} human utterances in {', '.join(languages)}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True)
    install = commands.add_parser("install", help="print the apt-get line for the recordings (--run: run it)")
    install.add_argument("--run", action="store_true", help="run apt-get update and the line (needs root)")
    listing = commands.add_parser("list", help="the utterances per split, category, language and speaker")
    listing.add_argument("--languages", default="en,es,fr,it,ru", help="comma-separated (en,es,fr,it,ru)")
    listing.add_argument("--texts", action="store_true", help="every utterance with its text and pauses")
    args = parser.parse_args(argv)
    if args.command == "install":
        print(INSTALL)
        if args.run:
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
            return subprocess.run(INSTALL.split(), check=False, env=env).returncode
        return 0
    languages = [c.strip() for c in args.languages.split(",") if c.strip()]
    for split in ("dev", "test"):
        utterances = recorded(split, lambda m: print(m, file=sys.stderr), languages)
        table = Counter((u.language, u.voice, u.category) for u in utterances)
        print(f"## {split}: {len(utterances)} human utterances")
        for (language, voice, category), count in sorted(table.items()):
            print(f"  {language}  {voice:45s} {category:9s} {count}")
        if args.texts:
            for u in utterances:
                gaps = ", ".join(f"{e - s:.0f} ms" for s, e in u.pauses)
                print(f"  {u.id} {u.category:9s} {u.duration_ms / 1000:5.2f} s [{gaps}] {u.text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
