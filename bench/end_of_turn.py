"""End-of-turn benchmark: false cut-offs, splits, end-of-turn latency and WER per policy, on a dev and a test set.

    python bench/end_of_turn.py --split dev              # the tuning set, every default policy, tables on stdout
    python bench/end_of_turn.py                          # dev + test, policy current only (test is sealed: seal.py)
    python bench/end_of_turn.py --split dev --limit 12   # a quick look (12 utterances per language, every category)
    python bench/end_of_turn.py --split dev --policy 'sure70={"turn":{"acoustic_sure":0.7}}' --only current,sure70
    python bench/end_of_turn.py --split dev --policy 'gate={"vad":{"tail_floor_db":20}}' --list-cutoffs
    python bench/end_of_turn.py --split test --only max1200    # the one policy chosen on dev, scored on test
    python bench/end_of_turn.py --asr-latency-ms 150     # transcripts and sound scores arrive 150 ms later
    python bench/end_of_turn.py --asr-latency /tmp/asr.json    # ... or as late as a live run measured
    python bench/end_of_turn.py --languages en,de        # German sentences too; recorded speech in these languages
    python bench/end_of_turn.py --json > eot.json        # machine-readable, with every utterance
    python bench/end_of_turn.py --split dev --plot /tmp/eot.png   # false cut-offs against latency, per policy
    python bench/end_of_turn.py --save-wav /tmp/eot      # also write the sets as WAV files (never commit them)
    python bench/end_of_turn.py --live --split dev --limit 10 --save-latency /tmp/asr.json   # a real server
    python bench/end_of_turn.py --live --human --split dev --condition clean,telephone+noise  # human rows, live

The bench is the package ``bench/turns/`` (its doc says what is measured and how, and which module holds each
step); this script is its command (``bench.turns.command``), kept here so that the commands above stay as they are.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.turns.command import main

if __name__ == "__main__":
    sys.exit(main())
