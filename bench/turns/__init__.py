"""The end-of-turn bench (``python bench/end_of_turn.py``): when is the caller finished, on speech nobody tuned for.

**Dev and test.** Thresholds and rules are chosen on the ``dev`` set; the ``test`` set is only ever scored, never
tuned on. A change that moves a threshold or a rule reports dev and test side by side (the default, ``--split
both``): a gain on dev that does not show on test is a fit to dev. **The seal** (``seal``): a run that touches test
runs one policy that is in the code (``--only NAME``; ``current`` without it) and refuses a grid or ``--policy``,
and a tree with uncommitted changes (commit first: the log names the commit scored); every such run, offline or
live, appends a line to ``docs/eot-test-log.md``. The sets share no sentence and no voice; test adds room noise
(pink, brown, mains hum at 20-35 dB SNR), longer pauses (breath up to 400 ms, thinking up to 1.5 s) and Piper with
its sampling noise on. Both are made at start-up, nothing downloaded, no audio committed (``corpus`` says how):
about 110 utterances each, in five categories reported on their own: ``short`` (1-3 word turns), ``long``
statements, ``question``s, ``breath`` (a 150-400 ms pause mid-sentence) and ``thinking`` (0.5-1.5 s after "um",
"and", "to", "the", half a number, a list item, a spelled name). Their utterances are synthetic speech (Piper and
espeak-ng); where the packages of ``recorded`` are installed, recorded human speech (other speakers per set) is
added to each.

**The pipeline** (``pipeline``) is the server's own, driven purely in audio time (no sockets, no clock): each
utterance is cut into 20 ms chunks and fed to ``CallerAudio`` (the VAD from settings, exactly as a connection builds
it), whose frames go to a fresh ``agent.core.session.Session`` configured by
``agent.runtime.call.policies.session_config``. The bench carries out the effects the end of turn depends on:
``Transcribe`` (the real faster-whisper model, ``agent.wiring.build_stt``) posts ``TranscriptReady``; ``ScoreTurn``
(the acoustic turn-completion model, ``agent.adapters.smart_turn.SmartTurnModel``, when the settings turn it on)
and ``ScoreWords`` (the text turn model) post ``TurnScored``; all **at once in audio time** (zero latency;
``--asr-latency-ms`` delays them by that much audio; ``--asr-latency FILE`` by delays drawn from a live run's
measurements, ``delays``); ``CancelTranscriptOrScore`` drops a pending answer. Identical audio is transcribed and
scored once, and reused across policies (``models``). Replies are never produced (the agent stays silent), so what
is measured is the core's own decision, not a copy of it.

**Per utterance**: the turn ends at the core's ``Notify(SpeechStopped)``; the server releases a prepared reply
exactly then. A *false cut-off*: the first end of turn came before the audible end of the final part (reply audio
would reach the caller before they finished). Then the rest of the utterance is streamed on and every further end
of turn counted: a *split* is an utterance that made more than one turn. *Latency* = end of turn - audible end,
over utterances not cut off (the VAD's tail plus the hangover). *WER*: the transcript the turn was answered with
(the final transcript, or the speculative one the core reused), fillers left out of both sides, over utterances
not cut off. A turn that never ends within the audio is *no end*.

**Policies** (``policies``) are ``Settings`` overrides on top of the environment's settings (``AGENT_*``), so every
rule is the server's: ``current`` (as configured), ``text_only`` (acoustic model off: the words alone, by the rules
and the text model), ``rules_sound`` (text model off: the rules and the sound, as before issue 29), ``fixed420``
(one 420 ms hangover whatever was said or how it sounded; the speculative transcript still runs, as the answer),
``sure_fragments`` (a sure score ends fragments at the minimum too: "Hello world."), ``sure90``
(``turn.acoustic_sure``: the score that ends a turn at the minimum hangover), ``unsure40`` (``turn.acoustic_unsure``:
the score at or below which the caller sounds unfinished), ``wait1500`` (a sentence that sounds unfinished waits
1.5 s, not 700 ms: the fewest cut-offs on dev, at a p95 of 1.5 s) and ``max1200`` (words that trail off and unsure
fragments wait up to 1.2 s instead of 1.5 s). ``--policy NAME=JSON`` adds one (or replaces a default of that name).

**Output** (``report``, ``plot``): per policy one table by category, dev and test side by side; then one summary
line per policy per set, and rows by source (``human``: ``recorded``'s recordings, when installed; ``synthetic``)
and language. Progress goes to stderr. A dev run of the 8 policies takes about 2-3 minutes on 2 cores, most of it
transcribing each distinct audio once.

**Live** (``--live``, ``live``): the same sets through a real server (``python -m agent``, one per policy, or
``--url``; ``server``) over a socket in real time, one call per utterance, scored at the caller (``live_score``):
reply audio before the audible end is a false cut-off, latency runs from the last audible frame sent to the first
reply audio received; ``--load N`` adds N other callers. ``--live --human`` plays the human rows instead (one
call per row and condition; docs/turn-sets.md, "Live").

**The modules, one step each**, in the order they import each other (a module imports only from its own step
and those above it; nothing here imports the command):

- the sets' parts: ``sentences`` (the splits, categories and English text), ``german`` (the German text and
  voices), ``voices`` (the speech engines, the rate, the noise) and ``recordings`` (which recordings, cut where);
- the sets and their labels: ``corpus`` (an utterance planned, said and laid out, with its audible end and pauses),
  ``recorded`` (the recordings read, cut and laid out the same way; ``python bench/turns/recorded.py install|list``)
  and ``sets`` (which utterances a run uses, made in the background, written out as WAV);
- the policies: ``policies`` (the defaults, a policy's settings, the ones a run selects);
- the report and the plots: ``report`` (results, figures, tables, JSON) and ``plot`` (cut-offs against latency);
- the field's method (eot-bench's, on labelled silences): ``field`` (a policy's decision at each silence, the
  sweep, the four figures, the Pareto frontier; pure) and ``field_report`` (the figures beside the published ones,
  the Pareto plot);
- the recorded human sets (docs/turn-sets.md): ``human_sources`` (the hash-locked packages, downloaded and
  extracted at bench time), ``human_labels`` (speaker turns and silences labelled as eot-bench labels them),
  ``human_turn`` (a row cut, led in, padded and levelled), ``human_conditions`` (8 kHz, μ-law, real noise),
  ``human_split`` (dev and test by speaker and source; test sealed), ``human_table`` and ``human_sets`` (the rows,
  ``python -m bench.turns.human_sets``);
- the field's method on the human sets: ``field_scores`` (each system's evidence at each silence: silence,
  Smart Turn, the text model, the server's own decision) and ``field_run`` (``python -m bench.turns.field_run``);
- the seal of the test split: ``seal`` (one committed policy on test, every scoring logged);
- the offline run: ``models`` (the models answering the core's effects), ``delays`` (how late the answers come),
  ``pipeline`` (one utterance through the core) and ``offline`` (every policy over the sets, and its output);
- the live calls and their server: ``server`` (``python -m agent`` per policy, the other callers), ``live_score``
  (one call scored from what the caller saw) and ``live`` (the calls, the live run and its options);
- the live calls on the human sets (``--live --human``): ``live_human`` (a row's call scored: cut-offs among turns
  with a pause of 300 ms or more, latency at the true ends, a condition minus clean; pure) and ``live_human_run``
  (the rows, through the seal for test, played through ``live``'s calls; the tables and the test log's lines);
- the command line: ``command`` (the options and what runs), behind ``bench/end_of_turn.py``.
"""
