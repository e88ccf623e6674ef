"""Which human recordings are dev and which are test, as data, the rule that keeps them apart, and the seal on
test: changes only with the split.

**By speaker, by source.** No person is in both splits, and a source with one recording is wholly in one:

- AMI (pyannote-audio's ``tests/data``): ``AMI_SPLIT`` assigns each 30 s excerpt; excerpts that share a speaker
  share a split (``check_split`` enforces it on the RTTMs: a speaker in dev never appears in test). Dev: pyannote's
  own development excerpts and two groups of its training excerpts; test: pyannote's own test excerpts and three
  other groups.
- ``SOURCE_SPLIT``: JFK's inaugural address is dev (one speaker, one turn: the integration tests' real
  hesitation comes from dev); the VoxConverse news report (derived labels) is test.
- The Debian recordings keep ``bench/turns/recordings.py``'s split by speaker (dev: the Asterisk voices Allison,
  June, Paola; test: the LibriVox reader, the pocketsphinx speaker, Carlo, the ivrvoice.ru and the Colombian and
  Armelle voices).

**The seal.** Thresholds are tuned on dev; test is only scored, through ``bench/turns/seal.py``'s rule (one
committed policy, every scoring logged in ``docs/eot-test-log.md``). ``human_turns("test", ...)`` refuses to hand
out the test rows without an ``Unsealed`` from ``unseal_test``, which runs that seal (counting the rows for a table
is not scoring, and does not need it).
"""

from __future__ import annotations

import argparse
import logging
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from bench.turns.human_labels import Segment
from bench.turns.sentences import Split

log = logging.getLogger(__name__)

AMI_SPLIT: dict[str, Split] = {
    "dev00": "dev",  # pyannote development: MEE009, MEE012
    "dev01": "dev",
    "trn00": "dev",  # MEO069, MEE068, MEE067, FEO066, FEO065
    "trn01": "dev",
    "trn02": "dev",
    "trn03": "dev",
    "trn07": "dev",  # FEE087, FEE088, MEE089, MEO086
    "trn08": "dev",
    "trn04": "test",  # MEE075, MEE076, MEO074
    "trn05": "test",  # FEE078, FEO079, FEE080, FEE081
    "trn06": "test",  # FEE083, MEO082, FEE085, MEE094, MEE095
    "trn09": "test",
    "tst00": "test",  # pyannote test: MEE071, MEE073, FEO070, FEO072
    "tst01": "test",
}
"""Each AMI excerpt (its name made plain: ``trñ00`` is ``trn00``) and its split."""
SOURCE_SPLIT: dict[str, Split] = {"jfk": "dev", "voxconverse": "test"}


class SplitError(ValueError):
    """The split breaks its rule (a speaker on both sides, an excerpt without a split)."""


class SealedSplit(PermissionError):
    """The test rows were asked for without going through the seal."""


def check_split(segments: Mapping[str, Sequence[Segment]], split_of: Mapping[str, Split]) -> dict[Split, set[str]]:
    """The speakers of each split, from every excerpt's speaker ``segments`` and the excerpt's split. Raises
    ``SplitError`` for an excerpt without a split, or a speaker in excerpts of both splits (naming them)."""
    unassigned = sorted(set(segments) - set(split_of))
    if unassigned:
        raise SplitError(f"excerpts without a split: {', '.join(unassigned)}")
    where: dict[str, dict[Split, set[str]]] = defaultdict(lambda: defaultdict(set))
    for name, segs in segments.items():
        for seg in segs:
            where[seg.speaker][split_of[name]].add(name)
    both = {s: sides for s, sides in where.items() if len(sides) > 1}
    if both:
        said = "; ".join(
            f"{s} in dev ({', '.join(sorted(d['dev']))}) and test ({', '.join(sorted(d['test']))})"
            for s, d in sorted(both.items())
        )
        raise SplitError(f"a speaker may be in one split only: {said}")
    out: dict[Split, set[str]] = {"dev": set(), "test": set()}
    for speaker, sides in where.items():
        for side in sides:
            out[side].add(speaker)
    return out


@dataclass(frozen=True, slots=True)
class Unsealed:
    """Proof that the seal let this run score the test split (``unseal_test``): the commit it scores."""

    commit: str


def unseal_test(
    args: argparse.Namespace,
    error: Callable[[str], Any],
    uncommitted: Callable[[], list[str]] | None = None,
    commit: Callable[[], str] | None = None,
) -> Unsealed:
    """Run the seal of ``bench/turns/seal.py`` on a scoring run's ``args`` (``split``, ``policy``, ``only``;
    ``error``: ``parser.error``) and, when it lets the run touch test, the ``Unsealed`` that ``human_turns``
    asks for. ``uncommitted`` and ``commit``: the seal's own git checks by default. Raises ``SealedSplit`` when
    the run does not score test or the seal refused it (if ``error`` returned instead of raising)."""
    from bench.turns import seal  # put off: the seal imports the report (and the report the core)

    def refuse(message: str) -> NoReturn:
        error(message)
        raise SealedSplit(message)

    if not seal.touches_test(args.split):
        refuse(f"--split {args.split} does not score the test split: the human test rows stay sealed")
    seal.seal(args, refuse, uncommitted or seal.uncommitted)
    return Unsealed((commit or seal.git_commit)())


def check_open(split: Split, unsealed: Unsealed | None) -> None:
    """Refuse (``SealedSplit``, and a log line) the test rows without ``unsealed``."""
    if split == "test" and unsealed is None:
        message = (
            "the human test split is sealed: score it through bench/turns/seal.py (one committed policy, logged), "
            "i.e. pass human_turns(..., unsealed=unseal_test(args, parser.error)); tune on dev"
        )
        log.error("refused: %s", message)
        raise SealedSplit(message)
