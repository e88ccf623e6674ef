"""The session core: one caller's conversation as a pure state machine, with no I/O and no clock.

The runtime feeds ``Session.handle(event, now)`` (``agent.core.session``) the events of a call
(``agent.core.events``) and carries out the effects it returns, in order; every turn-taking rule is therefore a
synchronous unit test on a simulated clock. The parts, each with its own reason to change:

- Listening (``agent.core.listening``, the ``SpeechJudge``; what it decides: ``agent.core.heard``): the turn
  detector (audio time, ``agent.core.turn_detector``) finds utterances. Early in the trailing silence a
  speculative transcript is requested; when it ends like a finished sentence the turn ends after a short hangover
  and the transcript is reused, when it trails off the agent waits longer (``agent.core.endpointing``, with each
  language's words in ``agent.core.lexicon``). A caller who talks on past the longest utterance keeps the floor:
  their words are transcribed in pieces while they talk and answered once, after they stop (``agent.core.pieces``).
- Speaking (``agent.core.speaking``): an utterance that ends becomes turn ``n``. Its reply is streamed, cut
  into sentences (``agent.core.chunker``) and synthesized; its audio is accounted for on the way out
  (``agent.core.reply_audio``); the turn lasts until the caller has heard the reply (client
  ``playback.mark``s, or the clock: ``agent.core.playback``), and the history (``agent.core.history``) keeps
  only what was heard.
- Preemption (``agent.core.preemption``): with ``SessionConfig.preemption`` on, the reply to the speculative
  transcript starts before the end of turn with its output held, is released the moment the utterance ends
  as guessed, and is discarded unheard when the caller goes on.
- Barge-in: caller speech of at least ``BargeInPolicy.min_speech_ms`` over a reply stops it (``CancelTurn``,
  ``playback.clear``). Backchannels ("uh-huh", "yeah") are recognised from a quick transcript and do not
  interrupt. With ``BargeInPolicy.pause`` the reply yields at once (``agent.core.yielding``): it stops at the
  caller's speech onset at the position heard (the start of its frame), resumes from exactly there when the
  sound does not take the floor (a cough, an acknowledgement), and is cut at that position when it does.
- Recovery (``agent.core.recovery``): nothing can wedge a turn and every failure is spoken. Each stage has a
  deadline checked on every event (``Deadlines``); a failed or overdue stage is reported with an ``error``
  and, when nothing of the reply was said, answered with the apology phrase. The agent also speaks on its
  own: a greeting, a "one moment" when a reply is late (``Phrases``, in the caller's language:
  ``agent.core.language_text``).
- Tools (``agent.core.tools``, ``agent.core.reply_text``): a reply may call the functions of the session's
  ``ToolPolicy``. A server tool's call is run by the runtime (``RunTool``), a client's is sent to it
  (``ToolCalled``), and each is answered only from where it runs (a client's result for another call is refused:
  ``not_your_call``); the reply waits until every call of a round is answered and asks the model again with the
  results, for at most ``max_rounds`` rounds. A call pending ``filler_after_ms`` before anything was said plays
  the hold phrase once; one past its timeout is stopped and the model told; barge-in cancels the reply and the
  history records the calls and what became of them. On the Realtime path (``client_waits`` off) the reply
  ends with a client's call, and its result joins the history for the next reply.
- Closing (``agent.core.closing``): a drain lets the turn in progress finish (or cuts it at its deadline),
  says goodbye and closes 1001; an idle caller is prompted once, then the session ends.
- A client that edits the conversation itself (the Realtime path): its requests (``agent.core.requests``)
  and, with turn detection off, the audio it commits (``agent.core.input_buffer``).

The settings are ``agent.core.policies``; the state of turns is ``agent.core.turn_state``. Nothing here
imports asyncio, a socket library, the runtime, the wires or the configuration.
"""
