"""A turn transcribed in pieces: a caller who talks on past the longest utterance keeps the floor.

One reason to change: how the words of a turn longer than the longest utterance are put together. The turn detector
hands on each piece of it while the caller talks on (``agent.core.turn_detector.Piece``); the speech judge has each
transcribed at once (a ``final`` transcript, never skipped), and when the turn ends its words are those transcripts
in order, then the last part's. The turn's ``Ended`` is held here until every piece's transcript is back (or failed,
or overdue: the piece's words are lost then), so its reply answers all the caller said, once, after they stopped;
an utterance that ends behind a held one waits its turn. The pieces' words go with the turn (``EndOfTurn.head_text``),
so speech that continues it continues them too. Pure: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agent.core.heard import Ended, Guessed
from agent.core.turn_state import joined


@dataclass(slots=True)
class _Held:
    ended: Ended
    prefix: str
    texts: dict[int, str | None]
    """Each piece's request and its transcript, in the order said (``None``: still on its way); last, that of the
    turn's last part when it is awaited too (``ended.request``)."""
    at: float

    def release(self) -> Ended:
        ended, texts = self.ended, self.texts
        head = _words(self.prefix, {r: t for r, t in texts.items() if r != ended.request})
        if ended.request in texts:
            text: str | None = joined(head, texts[ended.request] or "")
        else:
            text = None if ended.text is None else joined(head, ended.text)
        return replace(ended, end=replace(ended.end, head_text=head), text=text)


def _words(prefix: str, texts: dict[int, str | None]) -> str:
    """The words before the turn's last part: the earlier words it continues, then each piece's (a failed one left
    out)."""
    return joined(prefix, *(text or "" for text in texts.values()))


class Pieces:
    """The pieces of the utterance in progress and the ended turns waiting for theirs (see the module doc)."""

    def __init__(self) -> None:
        self._texts: dict[int, str | None] = {}
        self._prefix = ""
        self._held: list[_Held] = []

    def cut(self, request: int) -> None:
        """The utterance in progress handed on a piece, to be transcribed as ``request``."""
        self._texts[request] = None

    def continues(self, head_text: str) -> None:
        """The utterance in progress goes on with earlier words whose pieces' transcript was ``head_text``."""
        self._prefix = head_text

    def owns(self, request: int) -> bool:
        return request in self._texts or any(request in held.texts for held in self._held)

    def guess(self, guessed: Guessed) -> Guessed | None:
        """``guessed`` with the pieces' words before it; ``None`` while one of them is still on its way."""
        if not self._texts and not self._prefix:
            return guessed
        if any(text is None for text in self._texts.values()):
            return None
        return replace(guessed, text=joined(_words(self._prefix, self._texts), guessed.text))

    def close(self, ended: Ended, now: float) -> list[Ended]:
        """The utterance ended: ``ended`` goes out with its pieces' words, now or once they are back (in order)."""
        texts, prefix, self._texts, self._prefix = self._texts, self._prefix, {}, ""
        if not texts and not prefix and not self._held:
            return [ended]
        if ended.text is None and (self._held or None in texts.values()):
            texts[ended.request] = None  # held: the last part's transcript comes here too, none is waiting for it
        self._held.append(_Held(ended, prefix, texts, now))
        return self._release()

    def answer(self, request: int, text: str) -> list[Ended]:
        """A piece's transcript (``""``: it failed)."""
        if request in self._texts:
            self._texts[request] = text
            return []
        for held in self._held:
            if request in held.texts:
                held.texts[request] = text
        return self._release()

    def overdue(self, now: float, deadline_s: float) -> tuple[list[int], list[Ended]]:
        """The oldest held turn has waited ``deadline_s`` for its pieces: it goes on without the missing ones (their
        requests, to cancel)."""
        if not self._held or not deadline_s or now - self._held[0].at < deadline_s:
            return [], []
        texts = self._held[0].texts
        missing = [request for request, text in texts.items() if text is None]
        texts.update(dict.fromkeys(missing, ""))
        return missing, self._release()

    def _release(self) -> list[Ended]:
        out: list[Ended] = []
        while self._held and all(text is not None for text in self._held[0].texts.values()):
            out.append(self._held.pop(0).release())
        return out
