"""The models the end-of-turn bench's effects call for, offline (``bench/end_of_turn.py``): the real recogniser
(``Transcribe``), Smart Turn (``ScoreTurn``) and the text turn model (``ScoreWords``), each loaded once per
setting, with answers to identical audio or text reused across policies.

One reason to change: how the offline bench runs the models.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

from agent.config import Settings
from agent.ports import JobInfo, SpeechToText, Work
from agent.wiring import build_stt
from bench.progress import progress


class Transcriber:
    """The real ASR (one model per distinct ``asr`` settings), with transcripts of identical audio reused."""

    def __init__(self) -> None:
        self._models: dict[str, SpeechToText] = {}
        self._texts: dict[tuple[str, str], str] = {}
        self.runs = 0
        self.reused = 0
        self.seconds = 0.0

    async def text(self, settings: Settings, pcm: bytes, over_agent: bool = False) -> str:
        model_key = settings.asr.model_dump_json()
        key = (model_key, f"{hashlib.sha1(pcm).hexdigest()}:{over_agent}")
        known = self._texts.get(key)
        if known is not None:
            self.reused += 1
            return known
        model = self._models.get(model_key)
        if model is None:
            progress(f"loading the ASR model ({settings.asr.model or 'bundled tiny.en'})")
            model = self._models[model_key] = build_stt(settings)
        started = time.perf_counter()
        text = (await model.transcribe(pcm, JobInfo(Work.FINAL_TRANSCRIPT, plain=over_agent))).text
        self.seconds += time.perf_counter() - started
        self.runs += 1
        self._texts[key] = text
        return text

    def close(self) -> None:
        for model in self._models.values():
            close = getattr(model, "close", None)
            if callable(close):
                close()


class TurnScorer:
    """The acoustic turn-completion model the settings name (``turn.acoustic_model``; empty: the installed Smart
    Turn), one per model file, blocking and on one thread; scores of identical audio reused. A missing model is
    the server's ``ConfigError`` (install it with ``make``, or run with ``{"turn":{"acoustic":"off"}}``). The
    text model (``turn.text_model``, ``words``) likewise, with scores of identical text reused."""

    def __init__(self) -> None:
        self._models: dict[str, Any] = {}
        self._readers: dict[str, Any] = {}
        self._words: dict[tuple[str, str], float] = {}
        self._scores: dict[tuple[str, str], float] = {}
        self.runs = 0
        self.reused = 0
        self.seconds: list[float] = []

    def load(self, settings: Settings) -> Any:
        name = settings.turn.acoustic_model
        model = self._models.get(name)
        if model is None:
            from agent.adapters.smart_turn import SmartTurnModel

            progress(f"loading the acoustic turn model ({name or 'bundled Smart Turn'})")
            model = self._models[name] = SmartTurnModel(Path(name).expanduser() if name else None)
        return model

    def words(self, settings: Settings, text: str, language: str) -> float | None:
        """The text model's probability that ``text`` is a finished turn; ``None`` when it is off or does not read
        ``language`` (the server's ``TurnScored(None)``)."""
        if settings.turn.text_model == "off":
            return None
        name = settings.turn.text_model_dir
        model = self._readers.get(name)
        if model is None:
            from agent.adapters.smollm2_text_turn import SmolLM2TextTurn

            progress(f"loading the text turn model ({name or 'bundled SmolLM2-135M'})")
            model = self._readers[name] = SmolLM2TextTurn.load(Path(name).expanduser() if name else None)
        if not model.reads(language):
            return None
        key = (name, text)
        if key not in self._words:
            self._words[key] = float(model.probability(text))
        return self._words[key]

    def probability(self, settings: Settings, pcm: bytes) -> float:
        key = (settings.turn.acoustic_model, hashlib.sha1(pcm).hexdigest())
        known = self._scores.get(key)
        if known is not None:
            self.reused += 1
            return known
        model = self.load(settings)
        started = time.perf_counter()
        p = float(model.probability_pcm16(pcm))
        self.seconds.append(time.perf_counter() - started)
        self.runs += 1
        self._scores[key] = p
        return p
