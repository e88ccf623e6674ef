"""The listening side of the session core, the speech judge: when the caller speaks, pauses, finishes, or takes the
floor.

``SpeechJudge.push(frame, now, busy)`` runs the turn detector (audio time) and returns what it judged (a
``SpeechJudgement``, ``agent.core.heard``):

- ``Began``: an utterance started;
- ``Transcribe``: a transcript is wanted (speculative, early in the trailing silence; a quick look while
  the agent talks; or the final one);
- ``Interrupt``: while the agent holds the floor (``busy``), the caller has said enough real words to
  take it (short sounds never do; acknowledgements such as "uh-huh" do not unless they go on);
- ``CancelTranscriptOrScore``: a transcript or a score it asked for is no longer wanted (a newer speculation
  replaces it, or its utterance ended or was discarded), so the runtime can stop it instead of letting superseded
  transcriptions and scores pile up;
- ``ScoreTurn``, ``ScoreWords``: with each speculative transcript the sound of the same snapshot is scored,
  and once it is back its words, when the policy uses those models (answers come back through ``answer_score``;
  while any is on its way the pause is not judged blind, ``agent.core.turn_end``);
- ``Guessed``: the speculative transcript of everything said so far is known while the caller is silent and
  the turn has not ended yet (a reply can start from it, ``agent.core.preemption``);
- ``Ended``: the utterance is over, with its transcript when the speculative one covers every voiced
  frame, or else the request whose answer will be its transcript (a caller who talked on past the longest
  utterance was transcribed in pieces: it holds their words too, ``agent.core.pieces``);
- ``Passed``: an utterance that began while the agent held the floor ended without taking it (a cough, an
  acknowledgement).

With ``BargeInPolicy.pause`` the agent has already stopped at the sound's onset, so nothing plays over the
caller while it is judged, and the judgement can wait for the words: a sound made over the agent ends like
any utterance (even one shorter than a turn's minimum, so that a quick "wait" or "no" is heard), after only
``resume_after_ms`` of silence when its speculative transcript has no words or only acknowledgements, and
its whole transcript decides (``Ended``: the session resumes the reply, or makes it a barge-in, a turn of
its own); only speech that goes on for ``backchannel_max_ms`` takes the floor before it ends. Quick
transcripts of the first syllables ("Uh" of "uh-huh", "Run!" of "right") are not needed then, nor asked for.

Transcripts of the requests it asked for come back through ``answer``. One reason to change: how the caller's
speech is heard and judged. Pure: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal, assert_never

from agent.core.call_language import CallLanguage
from agent.core.endpointing import EndpointPolicy, claims_floor, is_backchannel, no_bid, normalise_phrase
from agent.core.events import AudioFrame, CancelTranscriptOrScore, ScoreTurn, ScoreWords, Transcribe
from agent.core.heard import Began, Ended, Guessed, Interrupt, Passed, SpeechJudgement, Yield
from agent.core.pieces import Pieces
from agent.core.policies import BargeInPolicy
from agent.core.turn_detector import Discarded, EndOfTurn, Onset, Piece, TurnDetector, TurnPolicy
from agent.core.turn_end import evidence_of, hangover, reads_words, rescore_due
from agent.core.turn_state import AsrRequest, Said, Utterance

__all__ = ["Began", "Ended", "Guessed", "Interrupt", "Passed", "SpeechJudge", "SpeechJudgement", "Yield"]


class SpeechJudge:
    """Judges the caller's speech for the session (see the module doc): what it returns are ``SpeechJudgement``s;
    the transcripts and scores it asked for come back through ``answer`` and ``answer_score``."""

    def __init__(
        self, policy: TurnPolicy, endpointing: EndpointPolicy, barge_in: BargeInPolicy, *, language: CallLanguage
    ) -> None:
        self._endpointing = endpointing
        self._barge = barge_in
        self._policy = policy
        self._detector = TurnDetector(policy, endpointing.hangover_max_ms)
        self._frame_ms = 20
        self._now = 0.0  # the time of the event being handled: when evidence was asked for, and came back
        self._utterances = 0
        self._requests = 0
        self._language = language
        self._utterance: Utterance | None = None
        self._asr: dict[int, AsrRequest] = {}
        self._pieces = Pieces()
        self.last_voice_at: float | None = None
        self.continuable: Said | None = None
        """The caller's words being answered now, set by the session before each push or answer: speech that
        takes the floor within ``BargeInPolicy.continue_within_ms`` of their end continues them."""

    @property
    def language(self) -> str:
        """The call's language now: what the text rules read transcripts as (``agent.core.lexicon``)."""
        return self._language.current

    @property
    def speaking(self) -> bool:
        return self._detector.speaking

    @property
    def position_ms(self) -> int:
        return self._detector.position_ms

    @property
    def voiced_until_ms(self) -> int:
        """Stream position where the last voiced frame of the utterance in progress ended."""
        return self._detector.voiced_until_ms

    def push(self, frame: AudioFrame, now: float, busy: bool) -> list[SpeechJudgement]:
        self._now = now
        self._frame_ms = frame.duration_ms
        detector = self._detector
        signal = detector.push(frame.pcm, frame.voiced, frame.duration_ms, frame.audible, frame.speech)
        if frame.voiced and (isinstance(signal, Onset) or (detector.speaking and not detector.silence_ms)):
            self.last_voice_at = now  # not a blip in a pause (``TurnPolicy.resume_ms``)
        match signal:
            case None:
                heard: list[SpeechJudgement] = []
            case Onset():
                self._utterances += 1
                self._utterance = Utterance(
                    self._utterances, unsure=frame.echo_unsure, onset_ms=signal.audio_ms, over_agent=busy
                )
                heard = [*self._cancel_all(), Began(signal.audio_ms, unsure=frame.echo_unsure)]
            case Discarded():
                self._utterance = None
                heard = self._cancel_all() + ([Passed()] if busy else [])
            case EndOfTurn():
                heard = self._ended(signal, busy)
            case Piece():
                self._pieces.cut(request := self.new_request())
                over = self._utterance is not None and self._utterance.over_agent
                heard = [Transcribe(request, signal.audio, self._language.hint(), over_agent=over)]
            case _:
                assert_never(signal)
        utterance = self._utterance
        if detector.speaking and utterance is not None:
            if busy and utterance.unsure and not utterance.yielded and detector.speech_ms >= self._barge.min_speech_ms:
                utterance.yielded = True
                heard.append(Yield())
            if busy and not utterance.barged_in:
                heard += self._judge_interruption(utterance)
            heard += self._speculate(utterance, busy)
        return heard

    def answer(self, request: int, text: str, busy: bool, now: float = 0.0) -> list[SpeechJudgement]:
        """The transcript of a request this judge asked for (unknown or stale ones are ignored)."""
        self._now = now
        if self._pieces.owns(request):
            return list(self._pieces.answer(request, text))
        req = self._asr.pop(request, None)
        utterance = self._utterance
        if req is None or utterance is None or utterance.id != req.utterance:
            return []
        if req.purpose == "probe":
            utterance.probe_request = None
            language = self.language
            utterance.backchannel = is_backchannel(text, self._barge.acknowledging, language=language)
            utterance.not_backchannel = not utterance.backchannel and bool(normalise_phrase(text, language=language))
            utterance.bid = claims_floor(text, self._barge.acknowledging, language=language)
            return self._judge_interruption(utterance) if busy and not utterance.barged_in else []
        if request == utterance.spec_request:
            utterance.spec_text = text
            utterance.waited_ms = (utterance.since(0, self._now), *utterance.waited_ms[1:])
            taken = self._taken_by_words(utterance, text, busy)
            busy = busy and not taken
            asked = self._ask_words(utterance, text, busy)
            heard = self._maybe_end(utterance, busy)
            fresh = utterance.spec_voiced_until == self._detector.voiced_until_ms
            guess = self._pieces.guess(Guessed(text, utterance.spec_voiced_until))
            if not heard and fresh and text.strip() and guess is not None:
                heard = [guess]
            return taken + asked + heard
        return []

    def answer_score(
        self, request: int, probability: float | None, busy: bool, now: float = 0.0
    ) -> list[SpeechJudgement]:
        """A score (of the sound, or of the words) this judge asked for (unknown or stale ones are ignored)."""
        self._now = now
        utterance = self._utterance
        if self._asr.pop(request, None) is None or utterance is None or not utterance.scored(request, probability, now):
            return []
        return self._maybe_end(utterance, busy)

    def reconfigure(self, policy: TurnPolicy, endpointing: EndpointPolicy, barge_in: BargeInPolicy) -> None:
        """New rules from the next frame on."""
        self._policy, self._endpointing, self._barge = policy, endpointing, barge_in
        self._detector.policy, self._detector.hangover_ms = policy, endpointing.hangover_max_ms

    def commit(self, busy: bool) -> tuple[bool, list[SpeechJudgement]]:
        """The client ends the utterance in progress now: whether there was one (not too short), and the judgements."""
        if self._utterance is None or not self._detector.speaking:
            return False, []
        end = self._detector.end_now(self._frame_ms)
        if end is None:
            self._utterance = None
            return False, self._cancel_all()
        return True, self._ended(end, busy)  # a long turn's end may wait for its pieces: nothing to say yet

    def new_request(self) -> int:
        """An id for a transcription asked for outside the judge's own requests (a committed buffer, a piece)."""
        self._requests += 1
        return self._requests

    def forget(self, request: int) -> list[SpeechJudgement]:
        """A request failed; a final transcript will be asked for at the end anyway (a piece's words are lost)."""
        if self._pieces.owns(request):
            return list(self._pieces.answer(request, ""))
        self._asr.pop(request, None)
        if (utterance := self._utterance) is not None and utterance.probe_request == request:
            utterance.probe_request = None  # so that the next look can be taken
        return []

    def overdue(self, now: float, deadline_s: float) -> list[SpeechJudgement]:
        """An ended turn waiting ``deadline_s`` for its pieces' transcripts goes on without the missing ones."""
        missing, released = self._pieces.overdue(now, deadline_s)
        return [*(CancelTranscriptOrScore(request) for request in missing), *released]

    def _judge_interruption(self, utterance: Utterance) -> list[SpeechJudgement]:
        """Caller speech while the agent holds the floor: interrupt it, or let it pass.

        A client that cannot pause goes on playing the reply while the sound is judged. A quick transcript is
        asked for ``probe_lead_ms`` before the minimum and again every ``min_speech_ms``; it interrupts at once
        only when it claims the floor (an interjection such as "wait", "stop", "no", or several words:
        ``claims_floor``), or has real words said right after the caller's own words (``_soon_after``: they
        are going on). Otherwise speech interrupts once it lasts ``backchannel_max_ms``, and a shorter sound is
        judged by its whole transcript when it ends (``Ended``; the session's rule): the quick look at 180 ms
        of a hum or an "uh-huh" is too often words ("Run!" for "right", "And" for "mm"), and each such guess
        cost the caller the rest of the reply.
        """
        barge, speech = self._barge, self._detector.speech_ms
        if barge.pause:  # the words decide when the utterance ends; only long speech takes the floor before
            if speech >= (barge.backchannel_max_ms if barge.acknowledgements else barge.min_speech_ms):
                return self._interrupt(utterance)
            return []
        early = utterance.bid or (utterance.not_backchannel and self._soon_after(utterance))
        if speech >= barge.min_speech_ms and (
            not barge.acknowledgements or early or speech >= barge.backchannel_max_ms
        ):
            return self._interrupt(utterance)
        if not barge.acknowledgements or utterance.probe_request is not None:
            return []
        due = max(barge.min_speech_ms - barge.probe_lead_ms, 0) + utterance.probes * barge.min_speech_ms
        if speech < due:
            return []
        utterance.probes += 1
        utterance.probe_request = self._request(utterance, "probe")
        snapshot = self._detector.snapshot(self._frame_ms)
        return [Transcribe(utterance.probe_request, snapshot, self._language.hint(), "quick", over_agent=True)]

    def _speculate(self, utterance: Utterance, busy: bool) -> list[SpeechJudgement]:
        detector, ep = self._detector, self._endpointing
        silence = detector.silence_ms
        if silence == 0:
            return []
        heard: list[SpeechJudgement] = []
        voiced_until = detector.voiced_until_ms
        if ep.speculative_ms and silence >= ep.speculative_ms and utterance.spec_voiced_until != voiced_until:
            for superseded in utterance.pause_requests:
                if superseded is not None and self._asr.pop(superseded, None) is not None:
                    heard.append(CancelTranscriptOrScore(superseded))  # the caller went on
            utterance.spec_request = self._request(utterance, "spec")
            utterance.spec_voiced_until = voiced_until
            utterance.spec_text, utterance.score_request, utterance.spec_score = None, None, None
            utterance.words_request, utterance.spec_words = None, None
            utterance.rescore_request, utterance.rescored_at_ms, utterance.rescores = None, silence, 0
            utterance.asked_at, utterance.waited_ms = (self._now, self._now), (None, None, None)
            snapshot = detector.snapshot(self._frame_ms)
            hint = self._language.hint()
            heard.append(
                Transcribe(utterance.spec_request, snapshot, hint, "speculative", over_agent=utterance.over_agent)
            )
            if ep.acoustic and not (busy and not utterance.barged_in):  # a sound over the agent: its words decide
                utterance.score_request = self._request(utterance, "score")
                heard.append(ScoreTurn(utterance.score_request, snapshot))
        elif rescore_due(ep, utterance, silence, voiced_until) and not (busy and not utterance.barged_in):
            utterance.rescore_request = self._request(utterance, "score")
            utterance.rescored_at_ms, utterance.rescores = silence, utterance.rescores + 1
            heard.append(ScoreTurn(utterance.rescore_request, detector.snapshot(self._frame_ms, whole_pause=True)))
        return heard + self._maybe_end(utterance, busy)

    def _ask_words(self, utterance: Utterance, text: str, busy: bool) -> list[SpeechJudgement]:
        """Ask the text model about the pause's transcript ``text`` (``reads_words``); not for a sound made over
        the agent, whose words are judged as a bid for the floor."""
        if (busy and not utterance.barged_in) or not reads_words(self._endpointing, text, self.language):
            return []
        utterance.words_request = self._request(utterance, "words")
        utterance.asked_at = (utterance.asked_at[0], self._now)
        return [ScoreWords(utterance.words_request, text, self.language)]

    def _maybe_end(self, utterance: Utterance, busy: bool) -> list[SpeechJudgement]:
        """End the utterance if the trailing silence is as long as what has been said, and what is still on its
        way about it, call for (``agent.core.turn_end``)."""
        detector, barge = self._detector, self._barge
        fresh = utterance.spec_voiced_until == detector.voiced_until_ms
        text = utterance.spec_text if fresh else None
        evidence = evidence_of(utterance, fresh, in_flight=utterance.spec_request in self._asr)
        wait = hangover(self._endpointing, evidence, self.language)
        paused = busy and barge.pause and not utterance.barged_in
        if busy and not utterance.barged_in and self._passing(utterance, text):
            wait = min(wait, barge.resume_after_ms)  # the agent is waiting, paused or not, to go on
        if detector.silence_ms < wait or detector.resuming:
            return []
        end = detector.end_now(self._frame_ms, self._policy.onset_ms if paused else None)
        if end is None:  # too short to be an utterance at all
            self._utterance = None
            return self._cancel_all() + ([Passed()] if busy else [])
        return self._ended(end, busy)

    def _ended(self, end: EndOfTurn, busy: bool) -> list[SpeechJudgement]:
        utterance, self._utterance = self._utterance, None
        if utterance is None:
            return []
        if busy and not utterance.barged_in and not self._barge.pause and self._quiet(utterance, end.speech_ms):
            return [*self._cancel_all(), Passed()]  # an acknowledgement or a noise while the agent talks
        covered = utterance.spec_request is not None and utterance.spec_voiced_until == end.voiced_until_ms
        text = utterance.spec_text if covered else None
        if covered:
            spec_ms, score_ms, words_ms = utterance.waited_ms
            end = replace(end, spec_ms=spec_ms, score_ms=score_ms, words_ms=words_ms, spec_at=utterance.asked_at[0])
        if covered and text is None and utterance.spec_request in self._asr:
            request = utterance.spec_request  # in flight and covering it all: its answer is the transcript
            del self._asr[request]
        else:
            request = 0
        heard: list[SpeechJudgement] = self._cancel_all()  # probes and partial speculations of the utterance are moot
        if not request:
            self._requests += 1
            request = self._requests
            if text is None:
                heard.append(Transcribe(request, end.audio, self._language.hint(), over_agent=utterance.over_agent))
        return heard + self._pieces.close(Ended(end, self.last_voice_at, text, request, utterance.barged_in), self._now)

    def _taken_by_words(self, utterance: Utterance, text: str, busy: bool) -> list[SpeechJudgement]:
        """Paused: the speculative transcript of a pause in the caller's speech shows real words, and enough of
        them: the floor is theirs now (the turn's work stops, and its reply can be prepared early)."""
        barge = self._barge
        if (
            not (busy and barge.pause)
            or utterance.barged_in
            or no_bid(text, barge.acknowledging, language=self.language)
        ):
            return []
        speech = self._detector.speech_ms
        if speech < barge.min_speech_ms:
            return []
        short = speech < barge.backchannel_max_ms
        if (
            short
            and not claims_floor(text, barge.acknowledging, language=self.language)
            and not self._soon_after(utterance)
        ):
            return []  # a short sound without a claim to the floor: its whole transcript decides when it ends
        return self._interrupt(utterance)

    def _soon_after(self, utterance: Utterance) -> bool:
        """``utterance`` began within ``continue_within_ms`` of the end of the caller's words being answered:
        more likely the caller going on than a reaction to the reply."""
        said, window = self.continuable, self._barge.continue_within_ms
        return said is not None and bool(window) and utterance.onset_ms - said.end.voiced_until_ms <= window

    def _interrupt(self, utterance: Utterance) -> list[SpeechJudgement]:
        """``utterance`` takes the floor. When it began soon enough after the words being answered, it goes on
        with them: their audio goes first, and what was transcribed of it alone is moot."""
        utterance.barged_in = True
        said = self.continuable
        window = self._barge.continue_within_ms
        if said is None or not window or utterance.onset_ms - said.end.voiced_until_ms > window:
            return [Interrupt()]
        self.continuable = None
        self._detector.prepend(said.end.audio)
        self._pieces.continues(said.end.head_text)
        heard: list[SpeechJudgement] = [
            CancelTranscriptOrScore(request)
            for request in utterance.pause_requests
            if request is not None and self._asr.pop(request, None) is not None
        ]
        utterance.spec_request, utterance.spec_voiced_until, utterance.spec_text = None, -1, None
        utterance.score_request, utterance.spec_score, utterance.rescore_request = None, None, None
        utterance.words_request, utterance.spec_words = None, None
        return [*heard, Interrupt(continues=said.turn)]

    def _passing(self, utterance: Utterance, text: str | None) -> bool:
        """Paused: the sound looks like one that does not take the floor, so it is over after a short silence.

        It is too short to be a bid, or its speculative transcript (covering all of it) has no words or only
        acknowledgements. Its whole transcript decides then. Longer speech with real words gets a turn's hangover:
        the caller may go on."""
        if self._quiet(utterance, self._detector.speech_ms):
            return True
        return text is not None and no_bid(text, self._barge.acknowledging, language=self.language)

    def _quiet(self, utterance: Utterance, speech_ms: int) -> bool:
        """Too short to take the floor, or known to be an acknowledgement."""
        return utterance.backchannel or speech_ms < self._barge.min_speech_ms

    def _cancel_all(self) -> list[SpeechJudgement]:
        """Every request still in flight is moot (its utterance is over, or a new one began)."""
        moot: list[SpeechJudgement] = [CancelTranscriptOrScore(request) for request in self._asr]
        self._asr.clear()
        return moot

    def _request(self, utterance: Utterance, purpose: Literal["spec", "probe", "score", "words"]) -> int:
        self._requests += 1
        self._asr[self._requests] = AsrRequest(utterance.id, self._detector.voiced_until_ms, purpose)
        return self._requests
