"""End-of-turn detection: a pure state machine over speech-detector verdicts.

Time here is *audio time* (the sum of frame durations), so the rules are exact and testable without a clock:

- **onset**: ``onset_ms`` of consecutive voiced audio starts an utterance. The ``preroll_ms`` of audio before
  the onset is kept, so first syllables (which VADs flag late) reach the recogniser.
- **confirmed**: in the trailing silence, a voiced frame that a second detector does not hear as speech
  (``speech``: Silero beside webrtcvad, ``agent.audio.speech_confirm``) is part of the pause.
- **resumption**: in the trailing silence of an utterance, ``resume_ms`` of consecutive voiced audio is needed for
  speech to go on; a shorter voiced blip (a keyboard's click, a knock, a line's crackle, which a detector at its
  most sensitive flags as voice) is part of the silence, which keeps counting through it. While such a run is in
  progress the utterance does not end (``resuming``): a caller who goes on is never cut off by the rule.
- **hangover**: ``hangover_ms`` (the detector's, not the policy's: in a session, the end of turn's longest wait)
  of consecutive unvoiced audio ends the utterance.
- **minimum**: utterances with less than ``min_utterance_ms`` of voiced audio are discarded (clicks, coughs).
- **pieces**: a caller still talking when the utterance reaches ``max_utterance_ms`` keeps the floor: the audio so
  far, up to its last pause in the final third if it has one (a word is not split then), is handed on to be
  transcribed (``Piece``) and the utterance goes on with the rest; its ``EndOfTurn`` ends the whole turn.
- **maximum**: a turn reaching ``max_turn_ms`` is cut and handed on (``max_length``), the caller still talking.

``TurnDetector.push`` returns at most one ``TurnSignal`` per frame.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Literal

# Silence kept after the last voiced frame in the audio handed to ASR; Whisper likes a little context.
_TRAILING_KEEP_MS = 200


@dataclass(frozen=True, slots=True)
class TurnPolicy:
    onset_ms: int = 60
    min_utterance_ms: int = 200
    max_utterance_ms: int = 15000
    """The longest audio transcribed at once: a caller talking on past it is transcribed in pieces."""
    max_turn_ms: int = 60000
    """The longest a caller holds the floor: the turn is cut there and answered, the caller still talking."""
    preroll_ms: int = 300
    resume_ms: int = 0
    """Consecutive voiced audio that ends a pause and goes on with the utterance (0: any voiced frame does)."""


@dataclass(frozen=True, slots=True)
class Onset:
    """Speech started; ``audio_ms`` is the stream position of the first voiced frame."""

    audio_ms: int


@dataclass(frozen=True, slots=True)
class EndOfTurn:
    """An utterance ended.

    ``audio`` is the utterance (pre-roll + speech + a little trailing silence) as 16 kHz PCM16LE, or in a turn
    handed on in pieces the part since the last one; ``speech_ms`` the voiced audio of the whole turn,
    ``utterance_ms`` its length; ``reason`` why it ended.
    """

    audio: bytes
    speech_ms: int
    utterance_ms: int
    audio_ms: int
    reason: Literal["silence", "max_length"]
    voiced_until_ms: int = 0
    """Stream position where the last voiced frame ended."""
    audible_until_ms: int | None = None
    """Stream position where the last voiced frame heard as words ended (``AudioFrame.audible``); before
    ``voiced_until_ms`` by the tail the detector calls voice. ``None``: as ``voiced_until_ms``."""
    spec_ms: float | None = None
    """How long the speculative transcript that covers the utterance took to come back (``None``: none did)."""
    spec_at: float | None = field(default=None, compare=False)
    """When that transcript was asked for, on the session's clock (for a trace of the turn)."""
    score_ms: float | None = None
    """How long its sound's score took (``None``: none asked, or none came)."""
    words_ms: float | None = None
    """How long its words' score took, from the transcript's return (``None``: none asked, or none came)."""
    head_text: str = ""
    """The transcript of the turn's earlier pieces (``Piece``), before ``audio``: the turn's words are it and the
    transcript of ``audio`` (set by the speech judge, ``agent.core.pieces``)."""

    @property
    def tail_ms(self) -> int:
        """Voice after the audible end: what the end of turn waited on that the caller did not hear."""
        audible = self.voiced_until_ms if self.audible_until_ms is None else self.audible_until_ms
        return max(self.voiced_until_ms - audible, 0)


@dataclass(frozen=True, slots=True)
class Piece:
    """The caller talks on past the longest utterance: ``audio`` (16 kHz PCM16LE), what they said since the turn
    began or since its last piece, is to be transcribed now; the utterance goes on with what followed it."""

    audio: bytes


@dataclass(frozen=True, slots=True)
class Discarded:
    """The utterance that started was too short to be speech."""

    speech_ms: int


TurnSignal = Onset | EndOfTurn | Piece | Discarded


class TurnDetector:
    """Feeds on (frame, voiced) pairs; tells when an utterance starts and ends."""

    def __init__(self, policy: TurnPolicy, hangover_ms: int) -> None:
        self.policy = policy
        self.hangover_ms = hangover_ms
        """Unvoiced audio that ends an utterance (in a session, the longest the end of turn may wait:
        ``EndpointPolicy.hangover_max_ms``; ``agent.core.endpointing`` ends it sooner)."""
        self._position_ms = 0
        self._preroll: deque[tuple[bytes, int]] = deque()
        self._preroll_ms = 0
        self._run_ms = 0  # consecutive voiced audio while idle (onset candidate)
        self._run: list[bytes] = []
        self._speaking = False
        self._utterance: list[bytes] = []
        self._voiced: list[bool] = []  # per entry of ``_utterance``: a voiced frame (or an earlier utterance)
        self._utterance_ms = 0
        self._pieces_ms = 0  # audio of the turn already handed on in pieces
        self._speech_ms = 0
        self._silence_ms = 0
        self._silence_frames = 0
        self._resume_ms = 0  # consecutive voiced audio in the trailing silence, not yet enough to go on
        self._audible_until_ms = 0

    @property
    def speaking(self) -> bool:
        return self._speaking

    @property
    def position_ms(self) -> int:
        return self._position_ms

    @property
    def speech_ms(self) -> int:
        """Voiced audio in the utterance in progress (0 when idle)."""
        return self._speech_ms if self._speaking else 0

    @property
    def silence_ms(self) -> int:
        """Trailing unvoiced audio of the utterance in progress (0 when idle)."""
        return self._silence_ms if self._speaking else 0

    @property
    def resuming(self) -> bool:
        """Voiced audio in the trailing silence may be the caller going on (fewer than ``resume_ms`` of it so
        far): the utterance must not end on its silence yet."""
        return self._speaking and self._resume_ms > 0

    @property
    def voiced_until_ms(self) -> int:
        """Stream position where the last voiced frame of the utterance in progress ended."""
        return self._position_ms - self._silence_ms

    def snapshot(self, frame_ms: int, whole_pause: bool = False) -> bytes:
        """The utterance so far, as ``EndOfTurn.audio`` would hold it if it ended now; ``whole_pause``: with all
        of its trailing silence (what an acoustic model hears of the pause), not only the first 200 ms."""
        if not self._speaking:
            return b""
        return b"".join(self._utterance if whole_pause else self._trimmed(frame_ms)[0])

    def end_now(self, frame_ms: int, min_utterance_ms: int | None = None) -> EndOfTurn | None:
        """End the utterance in progress at once (the session judged the caller finished); ``None`` when it is
        shorter than ``min_utterance_ms`` (default: the policy's) and so discarded."""
        if not self._speaking:
            return None
        signal = self._finish("silence", frame_ms, min_utterance_ms)
        return signal if isinstance(signal, EndOfTurn) else None

    def push(
        self, frame: bytes, voiced: bool, duration_ms: int, audible: bool = True, speech: bool = True
    ) -> TurnSignal | None:
        """One frame and the verdicts on it: ``voiced`` (speech), ``audible`` (heard as words, not a tail),
        ``speech`` (a second detector agrees: in a pause, a voiced frame it does not is part of the pause)."""
        self._position_ms += duration_ms
        if voiced and not speech and self._speaking and self._silence_ms:
            voiced = audible = False  # a click in the pause, not the caller going on
        if voiced and audible:
            self._audible_until_ms = self._position_ms
        if self._speaking:
            return self._push_speaking(frame, voiced, duration_ms)
        return self._push_idle(frame, voiced, duration_ms)

    def prepend(self, audio: bytes) -> None:
        """Put ``audio`` (16 kHz PCM16LE: an earlier utterance) before the utterance in progress, so that its
        snapshots and its ``EndOfTurn.audio`` hold both. ``speech_ms`` stays that of the utterance in progress."""
        if self._speaking and audio:
            self._utterance.insert(0, audio)
            self._voiced.insert(0, True)
            self._utterance_ms += len(audio) // 32

    def reset(self) -> None:
        self._begin_idle()
        self._preroll.clear()
        self._preroll_ms = 0

    def _push_idle(self, frame: bytes, voiced: bool, duration_ms: int) -> TurnSignal | None:
        if not voiced:
            for held in self._run:  # a voiced blip too short for onset becomes pre-roll
                self._remember(held, duration_ms)
            self._run.clear()
            self._run_ms = 0
            self._remember(frame, duration_ms)
            return None
        self._run.append(frame)
        self._run_ms += duration_ms
        if self._run_ms < self.policy.onset_ms and self.policy.onset_ms > 0:
            return None
        onset_at = self._position_ms - self._run_ms
        self._audible_until_ms = max(self._audible_until_ms, onset_at)
        self._speaking = True
        self._utterance = [f for f, _ in self._preroll] + self._run
        self._voiced = [False] * len(self._preroll) + [True] * len(self._run)
        self._utterance_ms = self._preroll_ms + self._run_ms
        self._speech_ms = self._run_ms
        self._silence_ms = 0
        self._silence_frames = 0
        self._run = []
        self._run_ms = 0
        self._preroll.clear()
        self._preroll_ms = 0
        return Onset(audio_ms=onset_at)

    def _push_speaking(self, frame: bytes, voiced: bool, duration_ms: int) -> TurnSignal | None:
        self._utterance.append(frame)
        self._utterance_ms += duration_ms
        self._voiced.append(voiced)
        if voiced and self._silence_ms and self.policy.resume_ms:
            self._resume_ms += duration_ms
            voiced = self._resume_ms >= self.policy.resume_ms  # a blip in the pause stays part of it
            duration_ms, self._resume_ms = (self._resume_ms, 0) if voiced else (duration_ms, self._resume_ms)
        elif not voiced:
            self._resume_ms = 0
        if voiced:
            self._speech_ms += duration_ms
            self._silence_ms = 0
            self._silence_frames = 0
        else:
            self._silence_ms += duration_ms
            self._silence_frames += 1
        if self._silence_ms >= self.hangover_ms and not self._resume_ms:
            return self._finish("silence", duration_ms)
        if self._pieces_ms + self._utterance_ms >= self.policy.max_turn_ms:
            return self._finish("max_length", duration_ms)
        if self._utterance_ms >= self.policy.max_utterance_ms and voiced:
            return self._piece(duration_ms)
        return None

    def _piece(self, frame_ms: int) -> Piece:
        """Hand on the utterance so far, up to the middle of its last pause (three frames or more) in the final
        third, or else all but the frame just heard, and keep the rest: the caller is talking on."""
        flags = self._voiced
        first, i = max(len(flags) - self.policy.max_utterance_ms // (3 * max(frame_ms, 1)), 1), len(flags)
        while i > first:
            while i > first and flags[i - 1]:
                i -= 1
            end = i
            while i > first and not flags[i - 1]:
                i -= 1
            if end - i >= 3:
                cut = (i + end) // 2
                break
        else:
            cut = len(flags) - 1
        head, self._utterance, self._voiced = self._utterance[:cut], self._utterance[cut:], flags[cut:]
        audio = b"".join(head)
        self._pieces_ms += len(audio) // 32
        self._utterance_ms -= len(audio) // 32
        return Piece(audio)

    def _finish(
        self, reason: Literal["silence", "max_length"], frame_ms: int, min_utterance_ms: int | None = None
    ) -> TurnSignal:
        speech_ms = self._speech_ms
        minimum = self.policy.min_utterance_ms if min_utterance_ms is None else min_utterance_ms
        if reason == "silence" and speech_ms < minimum:
            self._begin_idle()
            return Discarded(speech_ms=speech_ms)
        frames, cut = self._trimmed(frame_ms)
        signal = EndOfTurn(
            audio=b"".join(frames),
            speech_ms=speech_ms,
            utterance_ms=self._pieces_ms + self._utterance_ms - cut * frame_ms,
            audio_ms=self._position_ms,
            reason=reason,
            voiced_until_ms=self._position_ms - self._silence_ms,
            audible_until_ms=min(self._audible_until_ms, self._position_ms - self._silence_ms),
        )
        self._begin_idle()
        return signal

    def _trimmed(self, frame_ms: int) -> tuple[list[bytes], int]:
        keep_silent = min(self._silence_frames, _TRAILING_KEEP_MS // max(frame_ms, 1))
        cut = self._silence_frames - keep_silent
        return (self._utterance[: len(self._utterance) - cut] if cut else self._utterance), cut

    def _begin_idle(self) -> None:
        self._speaking = False
        self._utterance = []
        self._voiced = []
        self._utterance_ms = 0
        self._pieces_ms = 0
        self._speech_ms = 0
        self._silence_ms = 0
        self._silence_frames = 0
        self._resume_ms = 0
        self._run = []
        self._run_ms = 0

    def _remember(self, frame: bytes, duration_ms: int) -> None:
        self._preroll.append((frame, duration_ms))
        self._preroll_ms += duration_ms
        while self._preroll and self._preroll_ms - self._preroll[0][1] >= self.policy.preroll_ms:
            _, dropped = self._preroll.popleft()
            self._preroll_ms -= dropped
