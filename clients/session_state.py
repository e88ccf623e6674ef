"""The protocol client's view of one session, updated from the server's messages as they arrive.

``SessionState`` gathers each turn into a ``TurnResult`` (``clients/conversation.py``) and simulates a player
for the reply audio: it plays in order, starting no earlier than it arrives. With the ``playback.pause``
capability (``capabilities`` of ``converse``), a ``playback.pause`` stops that player at once and cuts the
turn's audio back to the server's ``played_ms``; the frames that follow resume the turn from there, so a turn's
``audio`` is its reply as it would be heard: the part played before each pause, then what was resumed.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from clients.conversation import Conversation, Message, TurnResult

EventCallback = Callable[[Message], None]


class SessionState:
    """Client-side view of the session; updated only by the receiver, read by the sender."""

    def __init__(self, conversation: Conversation, on_event: EventCallback | None) -> None:
        self.conv = conversation
        self.on_event = on_event
        self.started = False
        self.closed = False
        self.speaking = False
        self.announced: set[int] = set()
        self.audio_turn: int | None = None
        """The turn the binary audio frames belong to (``None`` outside ``audio.start`` … ``audio.end``)."""
        self.latest_audio_turn: int | None = None
        """The latest ``audio.start`` turn: the only one a ``playback.pause`` can name."""
        self.last_voice_sent_at: float | None = None
        self.playback_end = 0.0

    def is_closed(self) -> bool:
        # A method, not the attribute: the receiver task flips it while the sender awaits.
        return self.closed

    def turn(self, turn_id: int) -> TurnResult:
        turn = self.conv.turns_by_id.get(turn_id)
        if turn is None:
            turn = TurnResult(turn=turn_id, sample_rate=self.conv.output_sample_rate)
            self.conv.turns_by_id[turn_id] = turn
        return turn

    def pending(self) -> list[int]:
        return sorted(t for t in self.announced if not self.conv.turns_by_id[t].done)

    def settled(self, now: float, *, playback: bool, ignore_speaking: bool) -> bool:
        if self.pending():
            return False
        if self.speaking and not ignore_speaking:
            return False
        return not (playback and now < self.playback_end)

    def on_text(self, raw: str, now: float) -> None:
        try:
            msg = json.loads(raw)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        kind = msg.get("type")
        turn_id = msg.get("turn")
        turn = self.turn(turn_id) if isinstance(turn_id, int) else None
        if kind == "session.started":
            self.started = True
            self.conv.session = msg
            self.conv.output_sample_rate = int(msg.get("output_sample_rate") or self.conv.output_sample_rate)
        elif kind == "speech.started":
            self.speaking = True
        elif kind == "speech.stopped":
            self.speaking = False
            if turn is not None:
                self.announced.add(turn.turn)
                turn.stopped_at = now
                turn.last_voice_sent_at = self.last_voice_sent_at
                turn.speech_end_audio_ms = msg.get("audio_ms")
        elif kind == "transcript" and turn is not None:
            turn.transcript = str(msg.get("text") or "")
            continues = msg.get("continues")
            turn.continues = continues if isinstance(continues, int) else None
            language = msg.get("language")
            turn.language = language if isinstance(language, str) else None
        elif kind == "reply.delta" and turn is not None:
            turn.reply += str(msg.get("text") or "")
        elif kind == "reply.done" and turn is not None:
            turn.reply = str(msg.get("text") or "")
        elif kind == "audio.start" and turn is not None:
            self.audio_turn = self.latest_audio_turn = turn.turn
            turn.sample_rate = int(msg.get("sample_rate") or turn.sample_rate)
        elif kind == "audio.end" and turn is not None:
            turn.audio_ended = True
            if self.audio_turn == turn.turn:
                self.audio_turn = None
        elif kind == "playback.pause" and turn is not None:
            self._pause(turn, msg.get("played_ms"), now)
        elif kind == "turn.metrics" and turn is not None:
            turn.metrics = msg
        elif kind == "error":
            self.conv.errors.append(msg)
            if turn is not None:
                turn.errors.append(msg)
        elif kind == "session.ended":
            self.conv.ended_reason = str(msg.get("reason") or "")
        if self.on_event is not None:
            self.on_event(msg)

    def on_audio(self, data: bytes, now: float) -> None:
        if self.audio_turn is None:
            return  # audio outside audio.start/audio.end: nothing to attach it to
        turn = self.turn(self.audio_turn)
        if turn.first_audio_at is None:
            turn.first_audio_at = now
        if turn.paused:
            turn.paused = False
            turn.resumes += 1
        elif turn.audio:
            turn.starved_ms += max(0.0, now - self.playback_end) * 1000  # the player ran dry before this frame
        turn.audio += data
        # A simulated player: audio plays in order, starting no earlier than it arrives.
        self.playback_end = max(self.playback_end, now) + len(data) / 2 / turn.sample_rate

    def _pause(self, turn: TurnResult, played_ms: object, now: float) -> None:
        """``playback.pause``: the simulated player stops at once, and the turn's audio is cut back to
        ``played_ms``; the frames that follow resume it from there (and ``audio.end`` comes again)."""
        if turn.turn != self.latest_audio_turn or not isinstance(played_ms, int | float):
            return
        position = max(0.0, float(played_ms))
        del turn.audio[2 * round(position * turn.sample_rate / 1000) :]
        turn.pauses.append(position)
        turn.paused = True
        turn.audio_ended = False
        self.audio_turn = turn.turn
        self.playback_end = min(self.playback_end, now)
